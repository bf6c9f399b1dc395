#!/usr/bin/env bash
# Fetches Debian's newest 6.12 amd64 kernel image + matching headers into the
# git-ignored cache, unpacked (never installed on the host):
#   .cache/kernel/image/boot/vmlinuz-$KVER, .cache/kernel/image/lib/modules/$KVER/...
#   .cache/kernel/headers/linux-headers-$KVER   (kbuild-able: make -C it M=...)
#   .cache/kernel/kver                          (written last: the cache is complete)
# A complete cache is reused as is; KGC_VM_REFRESH=1 picks the newest version again.
# Prints the kernel release ($KVER) on stdout; messages go to stderr.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=$top/.cache/kernel
log() { echo "fetch-kernel: $*" >&2; }
die() { echo "fetch-kernel: ERROR: $*" >&2; exit 1; }

if [ -s "$cache/kver" ] && [ "${KGC_VM_REFRESH:-0}" != 1 ]; then
	kver=$(cat "$cache/kver")
	if [ -f "$cache/image/boot/vmlinuz-$kver" ] && [ -f "$cache/headers/linux-headers-$kver/Makefile" ]; then
		log "using cached $kver"
		echo "$kver"
		exit 0
	fi
fi

has_candidate() { local p; p=$(apt-cache policy "$1" 2>/dev/null) && [[ $p == *'Candidate: '[0-9]* ]]; }

# Newest N with linux-image-6.12.N+deb12-amd64-unsigned and all header packages.
pick_version() {
	local n v
	for n in $(apt-cache pkgnames linux-image-6.12. 2>/dev/null |
		   sed -n 's/^linux-image-6\.12\.\([0-9]\+\)+deb12-amd64-unsigned$/\1/p' | sort -rn); do
		v=6.12.$n+deb12
		has_candidate "linux-image-$v-amd64-unsigned" && has_candidate "linux-headers-$v-amd64" &&
			has_candidate "linux-headers-$v-common" && has_candidate "linux-kbuild-$v" &&
			{ echo "$v"; return 0; }
	done
	return 1
}

download() { # $1 = 6.12.N+deb12; downloads into $cache/debs
	rm -rf "$cache/debs" && mkdir -p "$cache/debs"
	(cd "$cache/debs" && apt-get download -q "linux-image-$1-amd64-unsigned" "linux-headers-$1-amd64" \
		"linux-headers-$1-common" "linux-kbuild-$1" 2>&1 |
		{ grep -v '^W: Download is performed unsandboxed' >&2 || true; })
	[ "$(ls "$cache/debs"/*.deb | wc -l)" = 4 ]
}

v=$(pick_version) || { log "no 6.12 kernel in the apt lists, running apt-get update"; apt-get update -qq; v=$(pick_version); } ||
	die "no linux-image-6.12.*+deb12-amd64-unsigned with matching headers in the apt sources (Debian 12 + bookworm-security needed)"
log "downloading $v (image, headers, kbuild)"
if ! download "$v"; then
	log "download failed (stale apt lists?), running apt-get update and retrying"
	apt-get update -qq
	v=$(pick_version) || die "no usable 6.12 kernel after apt-get update"
	download "$v" || die "apt-get download of the $v kernel packages failed"
fi
kver=$v-amd64

rm -f "$cache/kver"
rm -rf "$cache/image" "$cache/headers" "$cache/stage"
mkdir -p "$cache/image" "$cache/headers" "$cache/stage"
log "unpacking"
dpkg -x "$cache/debs"/linux-image-*.deb "$cache/image"
for d in "$cache/debs"/linux-headers-*.deb "$cache/debs"/linux-kbuild-*.deb; do
	dpkg -x "$d" "$cache/stage"
done

# Flatten to headers/{linux-headers-$v-amd64,linux-headers-$v-common,linux-kbuild-$v}
# and point the links that left the tree (../../lib/linux-kbuild-*, /usr/src/...) inside it.
mv "$cache/stage/usr/src/linux-headers-$kver" "$cache/stage/usr/src/linux-headers-$v-common" \
   "$cache/stage/usr/lib/linux-kbuild-$v" "$cache/headers/"
rm -rf "$cache/stage"
for h in "$cache/headers/linux-headers-$kver" "$cache/headers/linux-headers-$v-common"; do
	for l in scripts tools; do
		[ -L "$h/$l" ] && ln -sfn "../linux-kbuild-$v/$l" "$h/$l"
	done
done
# The arch Makefile is one line: include /usr/src/linux-headers-$v-common/Makefile
sed -i "s|^include /usr/src/\(linux-headers-[^/]*\)/Makefile|include \$(dir \$(lastword \$(MAKEFILE_LIST)))../\1/Makefile|" \
	"$cache/headers/linux-headers-$kver/Makefile"
if grep -rqs '/usr/src/linux-headers' "$cache/headers/linux-headers-$kver/Makefile"; then
	die "could not rewrite $cache/headers/linux-headers-$kver/Makefile"
fi
broken=$(find "$cache/headers" -xtype l | head -5)
[ -z "$broken" ] || die "dangling links in the headers tree: $broken"

# busybox insmod does not read .ko.xz (Debian compresses its modules with xz)
brd=$cache/image/lib/modules/$kver/kernel/drivers/block/brd.ko
if [ -f "$brd.xz" ]; then xz -dkf "$brd.xz"; fi
[ -f "$brd" ] || die "brd.ko(.xz) missing in the image package ($brd)"
[ -f "$cache/image/boot/vmlinuz-$kver" ] || die "vmlinuz-$kver missing in the image package"

rm -rf "$cache/debs"
echo "$kver" > "$cache/kver"
log "ready: $kver"
echo "$kver"
