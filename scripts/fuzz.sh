#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, ASan and UBSan in build-fuzz and runs each for a
# bounded time under CTest: KVSCOPE_FUZZ_SECONDS per target (default 60). Exits non-zero on any
# finding (crash, sanitizer report, broken invariant, hang, out-of-memory); the input that caused it
# is kept in build-fuzz/fuzz-artifacts/<target>/. Extra arguments go to ctest.
#
# clang 19: the code base uses C++20 that clang 14-16 (Debian 12's default clang) do not compile
# (aggregate class template argument deduction, lambdas capturing structured bindings).
set -euo pipefail
cd "$(dirname "$0")/.."
clang_version="${KVSCOPE_FUZZ_CLANG_VERSION:-19}"
# llvm-N brings the llvm-symbolizer that turns a finding's stack into file:line.
scripts/deps.sh "clang-${clang_version}" "libclang-rt-${clang_version}-dev" "llvm-${clang_version}"

seconds="${KVSCOPE_FUZZ_SECONDS:-60}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "kvscope: KVSCOPE_FUZZ_SECONDS must be a whole number of seconds > 0, got '$seconds'" >&2
  exit 2
fi

# Configured every time (cheap) so a changed KVSCOPE_FUZZ_SECONDS reaches the tests' command and timeout.
CC="clang-${clang_version}" CXX="clang++-${clang_version}" cmake -S . -B build-fuzz -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKVSCOPE_FUZZ=ON -DKVSCOPE_FUZZ_SECONDS="$seconds" >/dev/null
cmake --build build-fuzz --target kvscope_fuzzers
ctest --test-dir build-fuzz -L fuzz --no-tests=error --output-on-failure "$@"
