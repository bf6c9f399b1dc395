#!/usr/bin/env bash
# CI check: "dkms build" of kgc succeeds against the Debian 6.12 headers the
# VM rig unpacked (.cache/kernel, fetched by selftests/vm/fetch-kernel.sh).
# Uses private DKMS trees under a temp dir: nothing is installed system-wide
# (besides the dkms package itself).
#   bash scripts/dkms-check.sh        (make check-dkms)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "dkms-check: ERROR: $*" >&2; exit 1; }
command -v dkms >/dev/null || {
	echo "dkms-check: installing dkms"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends dkms >/dev/null
}
kver=$(bash "$top/selftests/vm/fetch-kernel.sh")
kdir=$top/.cache/kernel/headers/linux-headers-$kver
[ -f "$kdir/Makefile" ] || die "no kbuild tree at $kdir"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src/kgc-$ver
mkdir -p "$src" "$tmp/tree" "$tmp/install"
cp -r "$top/kmod" "$top/uapi" "$top/dkms.conf" "$src/"
rm -f "$src"/kmod/*.o "$src"/kmod/*.ko "$src"/kmod/*.mod* "$src"/kmod/.*.cmd \
	"$src"/kmod/modules.order "$src"/kmod/Module.symvers
opts=(--dkmstree "$tmp/tree" --sourcetree "$tmp/src" --installtree "$tmp/install")
dkms add "${opts[@]}" -m kgc -v "$ver"
dkms build "${opts[@]}" -m kgc -v "$ver" -k "$kver" --kernelsourcedir "$kdir" ||
	{ cat "$tmp/tree/kgc/$ver/build/make.log" 2>/dev/null; die "dkms build failed"; }
ko=$(find "$tmp/tree/kgc/$ver/$kver" -name 'kgc.ko*' | head -n 1)
[ -n "$ko" ] || die "dkms build produced no kgc.ko"
[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$kver" ] || die "$ko not built for $kver"
echo "dkms-check: ok: kgc/$ver built for $kver ($(basename "$ko"))"
