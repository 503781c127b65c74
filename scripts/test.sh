#!/usr/bin/env bash
# README command 2: builds everything and runs every test under CTest.
#   scripts/test.sh [ctest args]              the dev build (build/, the system's g++)
#   scripts/test.sh --sanitize [ctest args]   the same tests under ASan + UBSan (scripts/asan.sh; CI)
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  --sanitize) shift; exec scripts/asan.sh "$@" ;;
  -h|--help) sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
scripts/build.sh
ctest --preset dev -j "$(nproc)" "$@"
