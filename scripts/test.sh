#!/usr/bin/env bash
# README command 2: builds everything and runs every test under CTest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
ctest --preset dev -j "$(nproc)" "$@"
