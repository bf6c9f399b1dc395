#!/usr/bin/env bash
# make check-install: the tree as a package.
#   1. make install into a temporary DESTDIR (PREFIX=/usr/local);
#   2. the installed files: sonames and symlinks, .pc, headers, uapi header,
#      man pages, DKMS sources, udev rule, tools;
#   3. examples/klisp.c copied out of the tree, built with nothing but
#      pkg-config (PKG_CONFIG_LIBDIR + PKG_CONFIG_SYSROOT_DIR into the
#      DESTDIR) and run on two example programs; a minimal program linked
#      statically (pkg-config --static) and one using <linux/kgc.h>;
#   4. every installed man page renders without a warning (groff -ww -z);
#   5. the functions named in the NAME sections of man/*.3 are exactly the
#      exported kgc_* symbols of libkgc.so, libkgc-native.so and libkgc-jni.so (nm -D;
#      kgc__* are the inline fast paths' helpers, not API), plus names the
#      installed headers define as macros or static inline functions;
#      every KGC_* option of lib/support/options.c's table has an entry in
#      kgc(7) (and the table yields at least one option);
#   6. make uninstall leaves no file in the DESTDIR.
# Usage: bash scripts/install-check.sh    (from anywhere)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root prefix=/usr/local
fails=0
fail() { echo "install-check: FAIL: $*" >&2; fails=$((fails + 1)); }
ok() { echo "install-check: ok: $*"; }
mk() { make -s --no-print-directory -C "$top" DESTDIR="$root" PREFIX=$prefix "$@"; }

mk install >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "make install"; exit 1; }
lib=$root$prefix/lib inc=$root$prefix/include

# 2. the files
for l in libkgc libkgc-native libkgc-jni; do
	soname=$(readelf -d "$lib/$l.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	[ "$soname" = "$l.so.0" ] || fail "$l.so: soname '$soname', want $l.so.0"
	[ "$(readlink "$lib/$l.so")" = "$l.so.0" ] || fail "$l.so is not a symlink to $l.so.0"
	[ -f "$lib/$l.so.0" ] && [ -L "$lib/$l.so.0" ] || fail "$l.so.0 is not a symlink to a file"
	[ -f "$lib/$l.a" ] || fail "no $l.a"
	[ -f "$lib/pkgconfig/$l.pc" ] || fail "no $l.pc"
done
for f in include/kgc.h include/kgc_ext.h include/kgc_native.h include/kgc_jni.h include/linux/kgc.h bin/kgcstat \
	 share/man/man7/kgc.7 share/man/man4/kgc.4 share/man/man1/kgcstat.1; do
	[ -f "$root$prefix/$f" ] || fail "not installed: $prefix/$f"
done
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$top/dkms.conf")
for f in dkms.conf kmod/Kbuild kmod/kgc_main.c uapi/kgc.h; do
	[ -f "$root/usr/src/kgc-$ver/$f" ] || fail "DKMS source missing: /usr/src/kgc-$ver/$f"
done
rc=0; out=$("$root$prefix/bin/kgcstat" 1 2>&1) || rc=$?
[ "$rc" = 1 ] && grep -q "has no kgc heap" <<<"$out" || fail "installed kgcstat on pid 1: exit $rc: $out"
grep -q 'GROUP="kgc", MODE="0660"' "$root/usr/lib/udev/rules.d/70-kgc.rules" || fail "udev rule"
ok "installed $(find "$root" -type f | wc -l) files, $(find "$root" -type l | wc -l) symlinks"

# 3. out-of-tree builds with pkg-config only
# the install first, then the system's own .pc files (libkgc's Requires.private: liburing);
# the sysroot prefix makes theirs point at nothing under $root, and the compiler's
# default paths find them
sys_pc=$(pkg-config --variable pc_path pkg-config)
export PKG_CONFIG_LIBDIR=$lib/pkgconfig:$sys_pc PKG_CONFIG_SYSROOT_DIR=$root
mkdir -p "$tmp/src"
cp "$top/examples/klisp.c" "$tmp/src/"
(cd "$tmp/src" && cc -O2 -std=gnu11 -pthread $(pkg-config --cflags libkgc libkgc-native) klisp.c -o klisp \
	-rdynamic $(pkg-config --libs libkgc libkgc-native)) || fail "klisp does not build against the install"
if [ -x "$tmp/src/klisp" ]; then
	ldd_out=$(LD_LIBRARY_PATH=$lib ldd "$tmp/src/klisp")
	grep -q "libkgc.so.0 => $lib/libkgc.so.0" <<<"$ldd_out" || fail "klisp does not resolve libkgc.so.0 in the install: $ldd_out"
	for t in basics native; do
		LD_LIBRARY_PATH=$lib KGC_VERIFY=1 "$tmp/src/klisp" -X heap_max=64m -X young_size=2m \
			-D N=20000 "$top/examples/tests/$t.scm" >"$tmp/$t.out" 2>"$tmp/$t.err" &&
			cmp -s "$tmp/$t.out" "$top/examples/tests/$t.out" ||
			{ fail "installed klisp on $t.scm"; head -5 "$tmp/$t.err"; }
	done
	ok "klisp built with pkg-config against the install ran basics.scm, native.scm"
fi
cat >"$tmp/src/mini.c" <<'C'
#include <kgc.h>
#include <linux/kgc.h>
#include <stdio.h>
int main(void)
{
	struct kgc_options o; kgc_heap *h; kgc_thread *t;
	struct kgc_type_desc d = { .name = "cell", .payload_size = 32 };
	kgc_type_id ty;
	unsigned long ioc = KGC_IOC_INFO;
	if (kgc_options_init(&o) || kgc_options_set(&o, "KGC_BACKEND", "anon") ||
	    kgc_heap_create(&o, &h) || kgc_type_register(h, &d, &ty) || kgc_thread_attach(h, "main", &t))
		return printf("mini: %s\n", kgc_last_error()), 1;
	for (int i = 0; i < 100000; i++)
		if (!kgc_alloc(t, ty))
			return printf("mini: alloc: %s\n", kgc_last_error()), 1;
	kgc_collect(t, KGC_GC_FULL);
	kgc_thread_detach(t);
	kgc_heap_destroy(h);
	printf("mini ok %d\n", ioc != 0);
	return 0;
}
C
(cd "$tmp/src" && cc -std=gnu11 -pthread $(pkg-config --cflags libkgc) mini.c -o mini -static \
	$(pkg-config --static --libs libkgc)) || fail "a static program does not build against the install"
[ -x "$tmp/src/mini" ] && { out=$(KGC_VERIFY=1 "$tmp/src/mini"); [ "$out" = "mini ok 1" ] || fail "static mini: $out"; }
ok "static program with <kgc.h> and <linux/kgc.h> (pkg-config --static)"

cat >"$tmp/src/jni.c" <<'C'
#include <kgc_jni.h>
#include <stdio.h>
int main(void)
{
	struct kgc_options o; kgc_heap *h; kgc_thread *t; JavaVM *vm; JNIEnv *env;
	jstring s;
	if (kgc_options_init(&o) || kgc_options_set(&o, "KGC_BACKEND", "anon") ||
	    kgc_heap_create(&o, &h) || kgc_thread_attach(h, "main", &t) ||
	    kgc_jni_vm_create(h, t, &vm) || kgc_jni_env(vm, t, &env))
		return printf("jni: %s\n", kgc_last_error()), 1;
	if ((*env)->PushLocalFrame(env, 16)) return 1;
	s = (*env)->NewStringUTF(env, "h\xc3\xa9llo");
	printf("jni ok %d %d %x\n", (int)(*env)->GetStringLength(env, s),
	       (int)(*env)->GetStringUTFLength(env, s), (unsigned)(*env)->GetVersion(env));
	(*env)->PopLocalFrame(env, NULL);
	kgc_jni_vm_destroy(vm, t);
	kgc_thread_detach(t);
	return kgc_heap_destroy(h);
}
C
# the JDK's include directories are the system's, not the DESTDIR's (the sysroot prefix is undone)
jh=$(pkg-config --variable=jni_home libkgc-jni)	# sysroot-prefixed
jcf=$(pkg-config --cflags libkgc-jni | sed "s|$jh|${jh#"$root"}|g")
(cd "$tmp/src" && cc -std=gnu11 -pthread $jcf jni.c -o jnitest \
	$(pkg-config --libs libkgc-jni)) || fail "a JNI program does not build against the install (pkg-config libkgc-jni)"
[ -x "$tmp/src/jnitest" ] && { out=$(LD_LIBRARY_PATH=$lib "$tmp/src/jnitest"); [ "$out" = "jni ok 5 6 a0000" ] || fail "jni program: $out"; }
ok "JNI program (pkg-config libkgc-jni, the JDK's <jni.h>) against the shared libraries"

# 4. man pages lint clean
nman=0
for m in "$root$prefix"/share/man/man*/*; do
	w=$(LC_ALL=C.UTF-8 groff -man -ww -z -Tutf8 "$m" 2>&1) || w="groff failed: $w"
	[ -z "$w" ] || fail "$(basename "$m"): $w"
	nman=$((nman + 1))
done
[ "$nman" -ge 10 ] || fail "only $nman man pages installed"
ok "$nman man pages render without warnings (groff -ww)"

# 5. documented functions == exported symbols (+ header-only API)
names() {	# the comma-separated list before \- in each NAME section
	awk '/^\.SH +"?NAME"?/ { on = 1; next } /^\.SH/ { on = 0 } on && !/^\./ { printf "%s ", $0 }
	     END { print "" }' "$@" | sed 's/\\-.*//' | tr ',' '\n' | sed 's/\\//g; s/^ *//; s/ *$//' | grep .
}
: >"$tmp/doc"
for m in "$top"/man/*.3; do
	n=$(awk '/^\.SH +"?NAME"?/ { on = 1; next } /^\.SH/ { on = 0 } on && !/^\./' "$m" | tr '\n' ' ')
	case $n in *'\-'*) ;; *) fail "$(basename "$m"): NAME has no '\\-'" ;; esac
	names "$m" >>"$tmp/doc"
done
sort -u "$tmp/doc" -o "$tmp/doc"
nm -D --defined-only "$lib/libkgc.so" "$lib/libkgc-native.so" "$lib/libkgc-jni.so" | awk '{ sub(/@.*/, "", $3); print $3 }' |
	grep '^kgc_' | grep -v '^kgc__' | sort -u >"$tmp/sym"
missing=$(comm -13 "$tmp/doc" "$tmp/sym")
[ -z "$missing" ] || fail "exported but in no man/*.3 NAME section: $(echo $missing)"
for n in $(comm -23 "$tmp/doc" "$tmp/sym"); do	# not exported: must be header-only API
	grep -Eq "^#define $n\(|^static inline .*\b$n\(|^$n\(" "$inc"/kgc*.h ||
		fail "man NAME names $n: not exported, not a macro or inline function of the headers"
done
ok "$(wc -l <"$tmp/sym") exported kgc_* functions, $(wc -l <"$tmp/doc") documented names: they match"

# 5b. every KGC_* option of the one table (lib/support/options.c) has an entry
# in kgc(7) ENVIRONMENT; no option extracted fails (a moved file or a changed
# table layout must not make this check vacuous)
optsrc=$top/lib/support/options.c
opts=$(sed -n 's/^\t{ "\(KGC_[A-Z0-9_]*\)", O_.*/\1/p' "$optsrc" 2>/dev/null || true)
if [ -z "$opts" ]; then
	fail "no KGC_* option found in $optsrc: moved, or its table's layout changed"
else
	nopt=0 undoc=0
	for v in $opts; do
		nopt=$((nopt + 1))
		grep -q "^\.B $v\$" "$top/man/kgc.7" ||
			{ fail "option $v (lib/support/options.c) has no '.B $v' entry in man/kgc.7 ENVIRONMENT"; undoc=$((undoc + 1)); }
	done
	[ "$undoc" -ne 0 ] || ok "every one of the $nopt KGC_* options of lib/support/options.c is in kgc(7)"
fi

# 6. uninstall leaves nothing
mk uninstall >"$tmp/uninstall.log" 2>&1 || { cat "$tmp/uninstall.log"; fail "make uninstall"; }
left=$(find "$root" ! -type d)
[ -z "$left" ] || fail "left after make uninstall: $(echo $left)"
[ "$fails" -eq 0 ] || { echo "install-check: $fails failure(s)"; exit 1; }
ok "make uninstall left no file"
