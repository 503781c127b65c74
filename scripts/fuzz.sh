#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) in the sanitised tree that scripts/asan.sh also uses (build-asan:
# clang 19, ASan + UBSan) and runs each for a bounded time under CTest: KVSCOPE_FUZZ_SECONDS per target
# (default 60), as many at once as there are cores. Exits non-zero on any finding (crash, sanitizer
# report, broken invariant, hang, out-of-memory); the input that caused it is kept in
# build-asan/fuzz-artifacts/<target>/. Extra arguments go to ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
# llvm-19 brings the llvm-symbolizer that turns a finding's stack into file:line.
scripts/deps.sh clang-19 libclang-rt-19-dev llvm-19

seconds="${KVSCOPE_FUZZ_SECONDS:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "kvscope: KVSCOPE_FUZZ_SECONDS must be a whole number of seconds > 0, got '$seconds'" >&2
  exit 2
fi

# Configured every time (cheap) so a changed KVSCOPE_FUZZ_SECONDS reaches the tests' command and timeout.
cmake --preset dev-asan -DKVSCOPE_FUZZ_SECONDS="$seconds" >/dev/null
cmake --build --preset dev-asan --target kvscope_fuzzers
ctest --test-dir build-asan -L fuzz -j "$(nproc)" --no-tests=error --output-on-failure "$@"
