#!/usr/bin/env bash
# Calls between the files of libkgc, read from the objects with nm (make
# check-deps, so every make check-one):
#   - no two files of libkgc (lib/<layer>/*.c), nor two of libkgc-native
#     (lib/native/*.c), nor two of libkgc-jni (lib/jni/*.c), call each other (A uses a symbol B defines and B one
#     A defines) unless ARCHITECTURE.md lists the pair as "`a.c` <-> `b.c`"
#     under "Calls between files", and every pair listed there still exists;
#   - every file has a rank in ARCHITECTURE.md's table under "## Layers"; no
#     call goes from a lower rank to a higher one, and no strongly connected
#     component of the call graph is larger than a documented pair
#     (layers.awk), leaving out the known calls test/layers_allow.txt lists;
#   - the young pause's files (young.h) call nothing of the concurrent cycle
#     but what cm_young.h declares (and gc_internal.h's kgci_cm_retained_evac_ok
#     is the policy's, not theirs).
# usage: check_cycles.sh OBJ_DIR
set -u
obj=$1
here=$(cd "$(dirname "$0")" && pwd)
lib=$here/..
arch=$lib/../ARCHITECTURE.md
fail=0
bad() { echo "check-cycles: FAIL: $*"; fail=1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# symbol/file tables of one library: $1 objects, $2 its sources
tables() {
	for o in "$1"/*.o; do
		f=$(basename "$o" .o).c
		[ -f "$2/$(basename "$(dirname "$o")")/$f" ] || [ -f "$2/$f" ] || continue	# a stale object of a removed file
		echo "$f $(basename "$(dirname "$o")")/$f" >>"$tmp/where"
		# ASan's ODR indicators and sanitizer runtime symbols are not calls between files
		nm --defined-only -g "$o" | awk 'NF == 3 {print $3}' | grep -v '^__' | sed "s|\$| $f|" >>"$tmp/def"
		nm --undefined-only -g "$o" | awk '{print $NF}' | grep -v '^__' | sed "s|\$| $f|" >>"$tmp/undef"
	done
}
: >"$tmp/edges"; : >"$tmp/where"
# libkgc: every layer folder of lib/ (file names are unique across them)
for lib_dir in "$obj/*:$lib" "$obj/native:$lib/native" "$obj/jni:$lib/jni"; do
	: >"$tmp/def"; : >"$tmp/undef"
	if [ "${lib_dir#*:}" = "$lib" ]; then
		for d in "$obj"/*/; do
			case $(basename "$d") in native|jni) ;; *) tables "${d%/}" "$lib" ;; esac
		done
	else
		tables "${lib_dir%%:*}" "${lib_dir#*:}"
	fi
	[ -s "$tmp/def" ] || { bad "no objects in ${lib_dir%%:*}"; exit 1; }
	sort -k1,1 "$tmp/undef" >"$tmp/undef.k"
	sort -k1,1 "$tmp/def" >"$tmp/def.k"
	# edges "user definer" (a file's undefined symbol that another file defines)
	join "$tmp/undef.k" "$tmp/def.k" | awk '$2 != $3 {print $2, $3, $1}' >>"$tmp/edges"
	[ "${lib_dir#*:}" = "$lib" ] && cp "$tmp/undef.k" "$tmp/core_undef"
done
awk '{print $1, $2}' "$tmp/edges" | sort -u >"$tmp/e"
awk '{print $2, $1}' "$tmp/e" | sort -u >"$tmp/rev"
comm -12 "$tmp/e" "$tmp/rev" | awk '$1 < $2' >"$tmp/pairs"

sed -n '/^## Calls between files/,/^## /p' "$arch" |
	grep -o '`[a-z_0-9]*\.c` <-> `[a-z_0-9]*\.c`' | tr -d '`' |
	awk '{ if ($1 < $3) print $1, $3; else print $3, $1 }' | sort -u >"$tmp/allowed"
[ -s "$tmp/allowed" ] || bad "ARCHITECTURE.md lists no \"a.c <-> b.c\" pair under \"## Calls between files\""
while read -r a b; do
	grep -qx "$a $b" "$tmp/allowed" && continue
	why=$(awk -v a="$a" -v b="$b" '($1 == a && $2 == b) || ($1 == b && $2 == a) {print $1 "->" $3}' \
		"$tmp/edges" | sort -u | head -n 6 | tr '\n' ' ')
	bad "$a and $b call each other, not a documented cycle: $why"
done <"$tmp/pairs"
while read -r a b; do
	grep -qx "$a $b" "$tmp/pairs" || bad "ARCHITECTURE.md lists $a <-> $b, but they no longer call each other: drop it"
done <"$tmp/allowed"

# the young pause reaches the cycle only through cm_young.h
iface=$(grep -o 'kgci_cm_[a-z_]*(' "$lib/cycle/cm_young.h" | tr -d '(' | sort -u)
for f in $(grep -l '#include "gc/young.h"' "$lib"/*/*.c); do
	f=$(basename "$f")
	for s in $(awk -v f="$f" '$2 == f {print $1}' "$tmp/core_undef" | grep '^kgci_\(cm\|satb\|sweep\|mixed\)_'); do
		echo "$iface" | grep -qx "$s" || bad "$f calls $s: the young pause reaches the cycle through cm_young.h only"
	done
done

# the layers: ARCHITECTURE.md's table gives every folder (or file) a rank; no
# call goes up a rank, no cycle is longer than a documented pair (layers.awk)
sed -n '/^## Layers/,/^## /p' "$arch" | awk -F'|' '$2 ~ /^ *[0-9]+ *$/ {
	n = split($4, m, "`"); gsub(/ /, "", $2); gsub(/^ +| +$/, "", $3); gsub(/ /, "-", $3)
	for (i = 2; i <= n; i += 2) print $2, $3, m[i] }' >"$tmp/ranks"
[ -s "$tmp/ranks" ] || bad "ARCHITECTURE.md has no layer table under \"## Layers\""
sed 's/#.*//' "$here/layers_allow.txt" | awk 'NF {print $1, $3}' >"$tmp/allow"
awk -f "$here/layers.awk" "$tmp/ranks" "$tmp/where" "$tmp/allow" "$tmp/allowed" "$tmp/edges" || fail=1

n=$(wc -l <"$tmp/pairs")
[ "$fail" -eq 0 ] && echo "check-cycles: ok ($n file pairs call each other, each documented in ARCHITECTURE.md)"
exit "$fail"
