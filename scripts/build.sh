#!/usr/bin/env bash
# Configures (once) and builds incrementally with the `dev` preset.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -f build/build.ninja ] || cmake --preset dev >/dev/null
cmake --build --preset dev -- -k 0 "$@"
