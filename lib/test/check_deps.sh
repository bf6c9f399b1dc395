#!/usr/bin/env bash
# The layering of the two libraries, checked on what was built (make check-deps):
#   libkgc.so       no libffi/libdl in NEEDED, no ffi_*/dl* symbol used, no
#                   kgc_native_* exported; libkgc.a holds no native_* object
#   libkgc-native   NEEDED libkgc.so.0, libffi (libdl, or libc's dlopen on
#                   glibc >= 2.34); exports kgc_native_* only;
#                   its sources include no collector internals
#   libkgc-jni      NEEDED libkgc-native.so.0 and libkgc.so.0; exports
#                   kgc_jni_* only; includes no internals of the other two
#   static link   every global in libkgc.a carries kgc_ (API, kgc__ inline
#                   helpers) or kgci_ (internal), in libkgc-native.a kgc_ or
#                   kgcn_, in libkgc-jni.a kgc_ or kgcj_: nothing clashes with a program's own fatal() or log_line()
#   a program linked against both shared libraries (test/so/native_so.c)
#                   registers and calls natives and destroys its heap.
# usage: check_deps.sh BUILD_DIR "CC CFLAGS LDFLAGS"
set -u
b=$1; cc=$2
here=$(cd "$(dirname "$0")" && pwd)
fail=0
bad() { echo "check-deps: FAIL: $*"; fail=1; }

for f in libkgc.so libkgc-native.so libkgc.a libkgc-jni.so libkgc-jni.a; do
	[ -f "$b/$f" ] || { echo "check-deps: FAIL: $b/$f missing"; exit 1; }
done

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }

core_needed=$(needed "$b/libkgc.so")
echo "check-deps: libkgc.so NEEDED: $(echo $core_needed)"
echo "$core_needed" | grep -Eq '^lib(ffi|dl)\.' && bad "libkgc.so needs libffi or libdl"
undef=$(nm -D --undefined-only "$b/libkgc.so" | awk '{print $NF}' | grep -E '^(ffi_|dl(open|sym|close|error)\b)')
[ -n "$undef" ] && bad "libkgc.so uses $(echo $undef)"
exp=$(nm -D --defined-only "$b/libkgc.so" | awk '{print $NF}' | grep '^kgc_native')
[ -n "$exp" ] && bad "libkgc.so exports $(echo $exp)"
objs=$(ar t "$b/libkgc.a" | grep '^native')
[ -n "$objs" ] && bad "libkgc.a holds $(echo $objs)"

# (ASan's ODR indicators __odr_asan.NAME are NAME's: checked as NAME;
# other sanitizer runtime globals are not ours)
unprefixed() { nm -g --defined-only "$1" | awk 'NF == 3 {print $3}' | sed 's/^__odr_asan\.//' |
	grep -Ev "^($2|__asan|__tsan|__ubsan|__sanitizer)" | sort -u; }
u=$(unprefixed "$b/libkgc.a" 'kgc_|kgci_')
[ -n "$u" ] && bad "libkgc.a defines globals without a kgc prefix: $(echo $u)"
u=$(unprefixed "$b/libkgc-native.a" 'kgc_|kgcn_')
[ -n "$u" ] && bad "libkgc-native.a defines globals without a kgc prefix: $(echo $u)"

u=$(unprefixed "$b/libkgc-jni.a" 'kgc_|kgcj_')
[ -n "$u" ] && bad "libkgc-jni.a defines globals without a kgc prefix: $(echo $u)"

# libkgc-jni: layered on libkgc-native (NEEDED), exports kgc_jni_* only,
# includes neither collector nor bridge internals
jni_needed=$(needed "$b/libkgc-jni.so")
echo "check-deps: libkgc-jni.so NEEDED: $(echo $jni_needed)"
for lib in libkgc-native.so.0 libkgc.so.0; do
	echo "$jni_needed" | grep -q "^$lib" || bad "libkgc-jni.so does not need $lib"
done
exp=$(nm -D --defined-only "$b/libkgc-jni.so" | awk '{print $NF}' | grep -v '^kgc_jni_' | grep -v '^KGC_JNI_')
[ -n "$exp" ] && bad "libkgc-jni.so exports $(echo $exp)"
inc=$(grep -ln '^#include.*\(gc_internal\|crit_fast\|native_internal\)\.h' "$here"/../jni/*.[ch])
[ -n "$inc" ] && bad "libkgc-jni includes internals of libkgc or libkgc-native: $inc"

nat_needed=$(needed "$b/libkgc-native.so")
echo "check-deps: libkgc-native.so NEEDED: $(echo $nat_needed)"
for lib in libkgc.so.0 'libffi\.so'; do
	echo "$nat_needed" | grep -q "^$lib" || bad "libkgc-native.so does not need $lib"
done
# libdl: glibc >= 2.34 has dlopen in libc.so.6 (-ldl links an empty libdl.a),
# so NEEDED shows libdl only on older systems; the imports show the use.
nat_undef=$(nm -D --undefined-only "$b/libkgc-native.so" | awk '{print $NF}')
for sym in dlopen dlsym ffi_call ffi_prep_cif; do
	echo "$nat_undef" | grep -q "^$sym\(@\|$\)" || bad "libkgc-native.so does not import $sym"
done
readelf -d "$b/libkgc-native.so" | grep -q 'SONAME.*\[libkgc-native\.so\.0\]' || bad "libkgc-native.so: soname"
exp=$(nm -D --defined-only "$b/libkgc-native.so" | awk '{print $NF}' | grep -v '^kgc_native_' | grep -v '^KGC_NATIVE_')
[ -n "$exp" ] && bad "libkgc-native.so exports $(echo $exp)"
inc=$(grep -ln '^#include.*\(gc_internal\|crit_fast\)\.h' "$here"/../native/*.[ch])
[ -n "$inc" ] && bad "the bridge includes collector internals: $inc"

prog=$b/test-so/native_so
mkdir -p "$b/test-so"
if $cc -I"$here/../include" "$here/so/native_so.c" -o "$prog" -L"$b" -lkgc-native -lkgc >"$prog.log" 2>&1; then
	if LD_LIBRARY_PATH="$b${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$prog" >>"$prog.log" 2>&1; then
		echo "check-deps: $prog (dynamic libkgc-native + libkgc): ok"
	else
		bad "$prog failed:"; tail -n 20 "$prog.log"
	fi
else
	bad "$prog did not link:"; tail -n 20 "$prog.log"
fi
[ "$fail" -eq 0 ] && echo "check-deps: ok"
exit "$fail"
