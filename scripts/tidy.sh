#!/usr/bin/env bash
# clang-tidy 19 (.clang-tidy) on C++ sources, and clazy on those of the Qt layers (widgets/, app/);
# any finding fails. Reads build-asan's compile commands (scripts/asan.sh builds it first, so the
# generated protobuf and moc headers exist).
#   scripts/tidy.sh                 every .cpp in the tree (slow: about an hour of CPU)
#   scripts/tidy.sh --changed N     the .cpp files the last N commits changed, and the .cpp beside each
#                                   changed header (CI: N=3)
#   scripts/tidy.sh FILE...         these files
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
scripts/deps.sh clang-tidy-19 clazy
db=build-asan
if [ ! -f "$db/compile_commands.json" ]; then
  echo "kvscope: $db/compile_commands.json is missing: run scripts/asan.sh first" >&2
  exit 2
fi
source_dirs='^(core|backend|widgets|app|tests|fuzz|bench)/'
files=()
if [ "${1:-}" = --changed ]; then
  changed_headers=""  # set (maybe empty) only in this mode: the header filter below
  n="${2:-}"
  if ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then
    echo "kvscope: --changed takes a number of commits > 0, got '${n}'" >&2
    exit 2
  fi
  # A shallow clone may hold fewer commits than asked: take what is there.
  depth=$(git rev-list --count HEAD)
  [ "$n" -lt "$depth" ] || n=$((depth - 1))
  if [ "$n" -eq 0 ]; then
    echo "kvscope: one commit in this clone: nothing to compare, no file to tidy" >&2
    exit 0
  fi
  while read -r f; do
    case "$f" in
      *.cpp) [ -f "$f" ] && files+=("$f") ;;
      *.h)
        [ -f "${f%.h}.cpp" ] && files+=("${f%.h}.cpp")
        changed_headers+="${changed_headers:+|}/${f//./\\.}\$"
        ;;
    esac
  done < <(git diff --name-only "HEAD~$n" HEAD | grep -E "$source_dirs" | sort -u)
elif [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files '*.cpp' | grep -E "$source_dirs")
fi
mapfile -t files < <(printf '%s\n' "${files[@]}" | sort -u | grep -v '^$' || true)
if [ "${#files[@]}" -eq 0 ]; then
  echo "kvscope: no C++ source to tidy" >&2
  exit 0
fi
# Only files the build compiles (a fuzz target in a tree configured without fuzz/ has no command).
known=$(python3 -c 'import json,sys; print("\n".join(e["file"] for e in json.load(open(sys.argv[1]))))' \
  "$db/compile_commands.json")
checked=()
for f in "${files[@]}"; do
  grep -qxF "$PWD/$f" <<<"$known" && checked+=("$f")
done
# With --changed, a finding counts only in a file the commits changed: the headers a changed .cpp
# includes are checked only when they changed too (the tree's other findings are not the change's).
header_args=()
if [ -n "${changed_headers+set}" ]; then
  header_args=(--header-filter="${changed_headers:-^\$}")
fi
echo "kvscope: clang-tidy on ${#checked[@]} file(s)" >&2
failed=0
printf '%s\0' "${checked[@]}" | xargs -0 -P "$(nproc)" -n 4 clang-tidy-19 -p "$db" --quiet "${header_args[@]}" || failed=1
qt=()
for f in "${checked[@]}"; do
  case "$f" in widgets/* | app/*) qt+=("$f") ;; esac
done
if [ "${#qt[@]}" -gt 0 ]; then
  echo "kvscope: clazy on ${#qt[@]} file(s) of the Qt layers" >&2
  # level0 and level1: the checks with few false positives. clazy is built on clang 14, which does not
  # know the sanitizer-coverage flags of the asan tree; they change nothing it checks.
  printf '%s\0' "${qt[@]}" | xargs -0 -P "$(nproc)" -n 4 clazy-standalone -p "$db" \
    --checks=level0,level1,no-non-pod-global-static \
    --extra-arg=-Wno-unknown-warning-option --extra-arg=-Wno-unused-command-line-argument \
    --extra-arg=-Werror --header-filter="${changed_headers-/(widgets|app)/.*\\.h\$}" || failed=1
fi
exit "$failed"
