#!/usr/bin/env bash
# package.deb (CTest): the .deb made from this build (cpack runs the install rules over the built
# programs; nothing is compiled), checked for its files and Depends, unpacked with dpkg-deb -x into a
# temporary root and run from there: kvscope-cli simulate and kvscope --screenshot, with the source
# and build trees hidden behind empty mounts (a private mount namespace, unshare -m) and the working
# directory in the temporary folder. The programs must find their scenarios in <root>/usr/share/kvscope.
# Usage: tests/package/test_deb.sh SOURCE_DIR BUILD_DIR VERSION
set -euo pipefail
src=$(cd "${1:?usage: test_deb.sh SOURCE_DIR BUILD_DIR VERSION}" && pwd -P)
build=$(cd "${2:?}" && pwd -P)
version=${3:?}
source "$src/scripts/sanitizer_paths.sh"
tmp=$(mktemp -d /tmp/kvscope-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() {
  echo "package.deb: FAIL: $*" >&2
  exit 1
}
case "$tmp/" in "$src"/* | "$build"/*) fail "the temporary folder $tmp lies inside the trees it must not see" ;; esac

# 1. The package.
if ! cpack -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" >"$tmp/cpack.log" 2>&1; then
  cat "$tmp/cpack.log" >&2
  fail "cpack could not make the package (log above)"
fi
debs=("$tmp"/out/kvscope_"$version"_*.deb)
[ -f "${debs[0]}" ] || fail "cpack made no kvscope_${version}_*.deb in $tmp/out: $(ls "$tmp/out")"
deb=${debs[0]}
echo "package.deb: $(basename "$deb"), $(stat -c %s "$deb") bytes"

# 2. What it holds and what it depends on.
dpkg-deb -c "$deb" | awk '{print $NF}' | sed 's|^\./|/|' >"$tmp/list"
expect=(/usr/bin/kvscope /usr/bin/kvscope-cli
  /usr/share/applications/kvscope.desktop /usr/share/icons/hicolor/scalable/apps/kvscope.svg
  /usr/share/kvscope/examples/router_client.py /usr/share/kvscope/python/kvscope/v1/router_pb2_grpc.py)
for dir in scenarios profiles clusters sweeps; do
  for f in "$src/resources/$dir"/*; do expect+=("/usr/share/kvscope/$dir/$(basename "$f")"); done
done
for f in "$src"/backend/proto/kvscope/v1/*.proto; do expect+=("/usr/share/kvscope/proto/kvscope/v1/$(basename "$f")"); done
for path in "${expect[@]}"; do
  grep -qxF -- "$path" "$tmp/list" || fail "the package lacks $path; it holds:
$(cat "$tmp/list")"
done
if grep -E '(^/usr/(lib|include)/|\.a$|/tests?/|bench_)' "$tmp/list"; then
  fail "the package holds build or test files (above)"
fi
[ "$(dpkg-deb -f "$deb" Package)" = kvscope ] || fail "Package is not kvscope"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "Version is not $version"
depends=$(dpkg-deb -f "$deb" Depends)
echo "package.deb: Depends: $depends"
for lib in libqt6widgets6 libqt6charts6 libqt6gui6 'libgrpc++1' libprotobuf libyaml-cpp libc6; do
  grep -qF -- "$lib" <<<"$depends" || fail "Depends does not name $lib: '$depends'"
done

# 3. Unpacked: stripped of any path of the trees it was built in.
root=$tmp/root
dpkg-deb -x "$deb" "$root"
for bin in "$root/usr/bin/kvscope" "$root/usr/bin/kvscope-cli"; do
  if readelf -d "$bin" | grep -E 'R(UN)?PATH'; then fail "$bin has an RPATH or RUNPATH (above)"; fi
  for tree in "$src" "$build"; do
    # A sanitised build's own metadata names source files (scripts/check_paths.sh says why).
    if strings -a "$bin" | grep -F -- "$tree" | sanitizer_metadata_dropped "$tree" | head -n 5 | grep .; then
      fail "$bin names $tree (above)"
    fi
  done
done

# 4. Run from the temporary root with the trees out of reach.
if git -C "$src" rev-parse --show-toplevel >/dev/null 2>&1 &&
   [ "$(cd "$(git -C "$src" rev-parse --show-toplevel)" && pwd -P)" = "$src" ]; then
  revision=$(git -C "$src" rev-parse --short=12 HEAD)
else
  revision=unknown
fi
mkdir -p "$tmp/run" "$tmp/home"
cat >"$tmp/run.sh" <<'EOF'
#!/bin/bash
# Inside the mount namespace: $1 the source tree, $2 the build tree, $3 the unpacked root.
set -euo pipefail
src=$1 build=$2 root=$3
mount -t tmpfs -o ro,size=1m kvscope-hidden "$src"
case "$build/" in "$src"/*) ;; *) mount -t tmpfs -o ro,size=1m kvscope-hidden "$build" ;; esac
if [ -e "$src/resources" ] || [ -e "$build/bin" ]; then echo "the trees are still visible" >&2; exit 1; fi
cd "$(dirname "$root")/run"
run() { env -i PATH=/usr/bin:/bin HOME="$(dirname "$root")/home" QT_QPA_PLATFORM=offscreen "$@"; }
run "$root/usr/bin/kvscope-cli" --version >cli-version.txt
run "$root/usr/bin/kvscope" --version >gui-version.txt
run "$root/usr/bin/kvscope-cli" scenarios >scenarios.txt
run "$root/usr/bin/kvscope-cli" simulate --scenario e3-load-floor --duration 60 >simulate.txt
run "$root/usr/bin/kvscope" --screenshot x.png --run-for 5 >gui.txt 2>&1
run env PYTHONPATH="$root/usr/share/kvscope/python" /usr/bin/python3 "$root/usr/share/kvscope/examples/router_client.py" --help >client.txt
EOF
hidden="unshare -m --propagation private"
if ! $hidden true 2>/dev/null; then
  hidden="unshare -r -m --propagation private"  # not root: a user namespace may mount
  $hidden true 2>/dev/null || fail "unshare cannot make a mount namespace here, so the trees cannot be hidden"
fi
if ! $hidden bash "$tmp/run.sh" "$src" "$build" "$root" 2>"$tmp/run.err"; then
  cat "$tmp/run.err" >&2
  for f in "$tmp"/run/*.txt; do echo "--- $f" >&2; cat "$f" >&2; done
  fail "a program failed when run from the unpacked package (output above)"
fi
cd "$tmp/run"
grep -qE "^kvscope-cli $version \(git ($revision|$revision-dirty)\)$" cli-version.txt ||
  fail "kvscope-cli --version says '$(cat cli-version.txt)', expected 'kvscope-cli $version (git $revision)' (rebuild after a commit)"
grep -qE "^kvscope $version \(git ($revision|$revision-dirty)\)$" gui-version.txt ||
  fail "kvscope --version says '$(cat gui-version.txt)', expected 'kvscope $version (git $revision)'"
for f in "$src"/resources/scenarios/*.json; do
  name=$(basename "$f" .json)
  grep -qw -- "$name" scenarios.txt || fail "kvscope-cli scenarios does not list $name: $(cat scenarios.txt)"
done
grep -q '^scenario e3-load-floor  policy kv-aware' simulate.txt || fail "simulate printed: $(cat simulate.txt)"
grep -qE '^requests +[1-9][0-9]* total' simulate.txt || fail "simulate served no request: $(cat simulate.txt)"
[ "$(head -c 8 x.png | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "kvscope --screenshot wrote no PNG: $(cat gui.txt)"
grep -q -- '--target' client.txt || fail "router_client.py --help printed: $(cat client.txt)"
echo "package.deb: ok: $(cat cli-version.txt); simulate and a $(stat -c %s x.png)-byte screenshot ran from $root with $src hidden"
