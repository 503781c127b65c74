#!/usr/bin/env bash
# Formats every C++ file git knows with the tree's .clang-format (Debian 12's clang-format, 14).
#   scripts/format.sh           rewrite the files in place
#   scripts/format.sh --check   change nothing; list the files that differ and exit 1 if any (CI)
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
case "${1:-}" in
  --check) check=1 ;;
  "") ;;
  -h|--help) sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "kvscope: format.sh takes --check or nothing, got '$1'" >&2; exit 2 ;;
esac
command -v clang-format >/dev/null || scripts/deps.sh clang-format
mapfile -t files < <(git ls-files '*.cpp' '*.h' | grep -v '^tests/data/')
if [ "$check" -eq 0 ]; then
  printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -n 20 clang-format -i
  exit 0
fi
# --dry-run --Werror exits non-zero on a file that would change: first all files in parallel
# batches; only when some batch fails, one by one for the names, which are the report.
if printf '%s\0' "${files[@]}" | xargs -0 -P "$(nproc)" -n 50 clang-format --dry-run --Werror >/dev/null 2>&1; then
  echo "kvscope: ${#files[@]} files formatted"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  echo "kvscope: ${#bad[@]} file(s) are not formatted (run scripts/format.sh):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "kvscope: ${#files[@]} files formatted"
