#!/usr/bin/env bash
# Installs the Debian packages kgc needs to build, test and benchmark.
# Idempotent: only calls apt when something is missing.
# (dwarves, libelf1, libssl3: what the Debian 6.12 kbuild tools need in the VM rig;
#  groff-base: make check-install lints the man pages;
#  openjdk-17-jdk-headless: <jni.h> for libkgc-jni (lib/jni/);
#  the -jni packages: Debian's JNI libraries the libkgc-jni tests run unmodified)
# --bench: also what only `make bench` needs (a JDK for the HotSpot G1 reference).
set -euo pipefail
pkgs=(build-essential pkg-config libffi-dev libgc-dev liburing-dev gnuplot-nox
      qemu-system-x86 busybox-static cpio xz-utils kmod dwarves libelf1 libssl3 groff-base
      openjdk-17-jdk-headless liblz4-jni libsnappy-jni libzstd-jni1 libxerial-sqlite-jdbc-jni)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
