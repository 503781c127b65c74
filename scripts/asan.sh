#!/usr/bin/env bash
# Every test under AddressSanitizer + UndefinedBehaviorSanitizer: builds the dev-asan preset
# (build-asan: clang 19, -O2, the parsers also instrumented for libFuzzer, so scripts/fuzz.sh reuses
# the tree) and runs the suite there. Any sanitizer report fails its test: UBSan aborts, LSan reports
# leaks at exit. Extra arguments go to ctest, e.g. `scripts/asan.sh -R '^(core|backend|app)\.'`.
#
# clang 19, not Debian 12's default clang 14: the code base uses C++20 that clang 14-16 do not compile
# (aggregate class template argument deduction, lambdas capturing structured bindings).
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help) sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
# llvm-19 brings the llvm-symbolizer that turns a report's stack into file:line.
scripts/deps.sh clang-19 libclang-rt-19-dev llvm-19
[ -f build-asan/build.ninja ] || cmake --preset dev-asan >/dev/null
# Only what the tests run (no benchmark), and the fuzz targets, which share the objects.
cmake --build --preset dev-asan --target kvscope_tests kvscope_fuzzers -- -k 0
ctest --preset dev-asan -j "$(nproc)" "$@"
