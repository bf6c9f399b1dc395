#!/usr/bin/env bash
# Packs the test VM's initramfs (cpio newc, gzip).
# usage: build-initramfs.sh OUT.cpio.gz KVER KGC_KO KSFT_DIR LIB_DIR
#   KSFT_DIR: its executable kgc_* files are the kselftests (run as ksft/NAME)
#   LIB_DIR:  all its executables are library VM tests (lib/NAME); may be ""
# Writes OUT.cpio.gz.list: the test names the VM will run, one a line.
# env: KGC_VM_CMD         run this shell command instead of the tests
#      KGC_VM_FILES       extra host files, copied into /usr/local/bin (on PATH)
#      KGC_TEST_TIMEOUT   seconds per test binary (default 300)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
die() { echo "build-initramfs: ERROR: $*" >&2; exit 1; }
[ $# -eq 5 ] || die "usage: $0 OUT.cpio.gz KVER KGC_KO KSFT_DIR LIB_DIR"
out=$1 kver=$2 ko=$3 ksft=$4 libt=$5
image=$top/.cache/kernel/image
brd=$image/lib/modules/$kver/kernel/drivers/block/brd.ko
is_dynamic() { readelf -l "$1" 2>/dev/null | grep 'program interpreter' >/dev/null; }
bb=$(command -v busybox || true)
[ -n "$bb" ] && ! is_dynamic "$bb" || die "static busybox missing (apt-get install busybox-static)"
[ -f "$brd" ] || die "$brd missing (run fetch-kernel.sh)"
[ -f "$ko" ] || die "$ko missing"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,tmp,etc,lib/modules,tests/ksft,tests/lib,usr/local/bin}
cp "$bb" "$root/bin/busybox"
install -m 755 "$here/init" "$root/init"
cp "$brd" "$ko" "$root/lib/modules/"

# Copies a program; a dynamic one also gets its shared libraries (static is the norm).
add_prog() { # $1 = file, $2 = destination dir inside the root
	install -m 755 "$1" "$root/$2/"
	is_dynamic "$1" || return 0
	ldd "$1" | grep -o '/[^ ]*' | while read -r so; do
		mkdir -p "$root$(dirname "$so")" && cp -L "$so" "$root$so"
	done
}
n=0
mkdir -p "$(dirname "$out")"
: > "$out.list"
for f in "$ksft"/kgc_*; do
	[ -f "$f" ] && [ -x "$f" ] || continue
	add_prog "$f" tests/ksft; n=$((n + 1))
	echo "ksft/${f##*/}" >> "$out.list"
done
[ "${KGC_VM_CMD:+x}" = x ] || [ $n -gt 0 ] || die "no kgc_* test binaries in $ksft"
if [ -n "$libt" ] && [ -d "$libt" ]; then
	for f in "$libt"/*; do
		[ -f "$f" ] && [ -x "$f" ] || continue
		add_prog "$f" tests/lib
		echo "lib/${f##*/}" >> "$out.list"
	done
fi
for f in ${KGC_VM_FILES:-}; do
	[ -f "$f" ] || die "KGC_VM_FILES: $f not found"
	add_prog "$f" usr/local/bin
done

{
	if [ -n "${KGC_VM_CMD:-}" ]; then echo "KGC_MODE=cmd"; else echo "KGC_MODE=tests"; fi
	echo "KGC_TEST_TIMEOUT=${KGC_TEST_TIMEOUT:-300}"
} > "$root/etc/kgc-vm.conf"
printf '%s\n' "${KGC_VM_CMD:-}" > "$root/etc/kgc-cmd"

(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 > "$out"
echo "build-initramfs: $out ($(du -h "$out" | cut -f1); $n kselftests, $(ls "$root/tests/lib" | wc -l) lib tests)" >&2
