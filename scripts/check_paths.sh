#!/usr/bin/env bash
# The repo is self-contained, checked by CTest as repo.self_contained:
#   1. no build file, source, test, benchmark, script, example or resource names a path outside the
#      repo (a sibling checkout's "../shared", an absolute /work, /home or /root path, or a
#      *_SOURCE_DIR}/.. in CMake);
#   2. each given binary holds no absolute path of the source or build tree (its RUNPATH, if any,
#      excepted: it is dropped at install). With KVSCOPE_SANITIZED=1 (a sanitised tree, never
#      shipped), the sanitizers' own metadata is excepted too: clang writes ASan's global locations
#      and UBSan's type names ("(lambda at FILE:L:C)") with the source file's absolute path, which
#      -ffile-prefix-map does not reach. Any other path (a data or resource directory) still fails.
# Usage: scripts/check_paths.sh SOURCE_DIR [BUILD_DIR BINARY...]
set -euo pipefail
src=$(cd "${1:?usage: check_paths.sh SOURCE_DIR [BUILD_DIR BINARY...]}" && pwd -P)
build=${2:-}
shift $(( $# < 2 ? $# : 2 ))
binaries=()
for bin in "$@"; do binaries+=("$(realpath -m -- "$bin")"); done
[ -z "$build" ] || build=$(realpath -m -- "$build")
failed=0
source "$(dirname "${BASH_SOURCE[0]}")/sanitizer_paths.sh"

# 1. Text files of the repo: the tracked ones in a git checkout, otherwise everything outside build
# trees. This script is left out: it spells the patterns.
cd "$src"
if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1 &&
   [ "$(cd "$(git -C "$src" rev-parse --show-toplevel)" && pwd -P)" = "$src" ]; then
  mapfile -t files < <(git -C "$src" ls-files --cached --others --exclude-standard)
else
  mapfile -t files < <(find . -path ./.git -prune -o -path './build*' -prune -o -type f -print | sed 's|^\./||')
fi
patterns=(
  '\.\./shared([/"[:space:]]|$)'          # the sibling shared/ folder the samples used to come from
  '(^|[^[:alnum:]_.~-])/(work|home)/'     # absolute paths of a particular machine
  '(^|[[:space:]"=(])/root/'
  '_(SOURCE|BINARY)_DIR\}/\.\.'           # CMake reaching above the repo
)
scan=()
for f in "${files[@]}"; do
  [ "$f" = scripts/check_paths.sh ] || [ ! -f "$f" ] && continue
  case "$f" in *.png|*.jpg|*.gz|*.kvrec) continue ;; esac
  scan+=("$f")
done
args=()
for p in "${patterns[@]}"; do args+=(-e "$p"); done
hits=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  file=${line%%:*} rest=${line#*:}
  echo "check_paths: $file:${rest%%:*}: names a path outside the repo: ${rest#*:}" >&2
  hits=$((hits + 1))
done < <(printf '%s\0' "${scan[@]}" | xargs -0 grep -nIHE "${args[@]}" -- || true)
[ "$hits" -eq 0 ] || failed=1
echo "check_paths: ${#scan[@]} files scanned, $hits references outside the repo"

# 2. Binaries: no absolute path of this source tree (which holds the usual build tree) or build tree.
roots=("$src")
if [ -n "$build" ]; then
  case "$build/" in "$src"/*) ;; *) roots+=("$build") ;; esac
fi
for bin in "${binaries[@]}"; do
  if [ ! -f "$bin" ]; then
    echo "check_paths: $bin: no such binary (build it first)" >&2
    failed=1
    continue
  fi
  runpath=$(readelf -d "$bin" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
  found=0
  for root in "${roots[@]}"; do
    while IFS= read -r s; do
      [ -n "$s" ] || continue
      [ -n "$runpath" ] && [ "$s" = "$runpath" ] && continue
      echo "check_paths: $bin holds the path '${s:0:160}'" >&2
      found=$((found + 1))
    done < <(strings -a "$bin" | grep -F -- "$root" | sanitizer_metadata_dropped "$root" | sort -u | head -n 20)
  done
  if [ "$found" -gt 0 ]; then
    echo "check_paths: $bin: $found strings name ${roots[*]} (an object compiled without -ffile-prefix-map?)" >&2
    failed=1
  else
    echo "check_paths: $bin: no path of ${roots[*]}${runpath:+ (RUNPATH $runpath excepted)}"
  fi
done
exit "$failed"
