#!/usr/bin/env bash
# README command 1: the main job on the embedded default.
# Until the console exists this is `kvscope-cli simulate` on the bundled e3-load-floor scenario.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
exec build/bin/kvscope-cli simulate --scenario e3-load-floor "$@"
