# Sourced by scripts/check_paths.sh and tests/package/test_deb.sh. sanitizer_metadata_dropped ROOT
# reads strings found in a binary and, when KVSCOPE_SANITIZED=1 (a sanitised tree, never shipped),
# drops the sanitizers' own metadata: clang writes ASan's global locations (a bare source file path)
# and UBSan's type names ("(lambda at FILE:L:C)") with the absolute source path, which
# -ffile-prefix-map does not reach. Any other path of ROOT (a data or resource directory) stays.
sanitizer_metadata_dropped() {
  if [ "${KVSCOPE_SANITIZED:-0}" != 1 ]; then
    cat
    return
  fi
  local root_re
  root_re=$(printf '%s' "$1" | sed 's/[.[\*^$()+?{|]/\\&/g')
  grep -vF -- "(lambda at $1/" | grep -vE "^${root_re}/[A-Za-z0-9_./+-]+\.(h|hpp|cpp|cc|inc)\$" || true
}
