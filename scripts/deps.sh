#!/usr/bin/env bash
# Installs the Debian packages kgc needs, by what is about to run:
#   deps.sh build   compile the libraries, tools, demos, examples, kgc.ko
#                   (openjdk-17-jdk-headless: the JDK's <jni.h> for libkgc-jni)
#   deps.sh check   build + the test rig: QEMU and what Debian's 6.12 kbuild
#                   tools need inside it (dwarves, libelf1, libssl3), groff-base
#                   (make check-install lints the man pages), Debian's JNI
#                   libraries that libkgc-jni's tests run unmodified (the -jni
#                   packages)   [the default]
#   deps.sh bench   build + Boehm GC, gnuplot and a JDK (the HotSpot rows)
#                   (--bench is the same)
# Every top-level make target that compiles runs this first (Makefile), so a
# fresh clone needs nothing installed by hand.
#
# Idempotent and quiet: it only calls apt when a package is missing. When it
# cannot install (not root and no password-less sudo, or apt fails: no
# network, no Debian mirror), it exits 1 with one line naming the missing
# packages and the command to run. KGC_DEPS=skip skips it (a build that gets
# its packages some other way, e.g. a distribution package's build chroot).
set -euo pipefail

build=(build-essential pkg-config libffi-dev liburing-dev openjdk-17-jdk-headless liblz4-jni)
check=(qemu-system-x86 busybox-static cpio xz-utils kmod dwarves libelf1 libssl3 groff-base
       libsnappy-jni libzstd-jni1 libxerial-sqlite-jdbc-jni)
bench=(libgc-dev gnuplot-nox liblz4-java)

case "${1:-check}" in
build) pkgs=("${build[@]}") ;;
check) pkgs=("${build[@]}" "${check[@]}") ;;
bench | --bench) pkgs=("${build[@]}" "${bench[@]}") ;;
all) pkgs=("${build[@]}" "${check[@]}" "${bench[@]}") ;;
*)
	echo "deps: unknown profile '$1' (build, check, bench, all)" >&2
	exit 2
	;;
esac
[ "${KGC_DEPS:-}" = skip ] && exit 0

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

cmd="apt-get install ${missing[*]}"
sudo=()
if [ "$(id -u)" != 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
		sudo=(sudo -n)
	else
		echo "deps: missing Debian packages: ${missing[*]}; install them as root: sudo $cmd" >&2
		exit 1
	fi
fi

echo "deps: installing ${missing[*]}"
log=$(mktemp "${TMPDIR:-/tmp}/kgc-deps.XXXXXX")
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
# an unreachable third-party source fails the update but not the install
"${sudo[@]}" apt-get update -qq >"$log" 2>&1 || true
if ! "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
	tail -n 5 "$log" | sed 's/^/deps: apt: /' >&2
	echo "deps: could not install ${missing[*]} (apt-get failed: no network or no Debian mirror?); install them, then rerun: $cmd" >&2
	exit 1
fi
