#!/usr/bin/env bash
# The README's commands on a fresh machine (make check-front-door):
#  1. every top-level make target (the .PHONY lists of Makefile and
#     install.mk, less the ones that build nothing) runs scripts/deps.sh
#     before its first compile: `make -n TARGET` in a clean copy of the tree
#     (no build products, so every compile shows), in its printed order;
#     the targets that compile in the open must show a compile (or the check
#     would pass on an empty list);
#  2. scripts/deps.sh, against stub dpkg-query/apt-get/id/sudo: silent and
#     apt-free when all is installed; one line naming the missing packages
#     and the command when it cannot install; installs exactly the missing.
# A machine with the packages installed hides a missing step; this does not.
set -u
cd "$(dirname "$0")/.."
root=$PWD
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { echo "front-door: FAIL: $*"; fail=$((fail + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- 1. deps before the first compile -------------------------------------
# targets that build nothing
no_build=' clean deps deps-build deps-check deps-bench uninstall check-front-door '
# targets whose compiles make -n shows (kmod skips without a kernel tree here;
# the check-kmod/check-dkms scripts compile inside, after the deps line)
must_compile=' all lib demo bench soak tools install check check-lib check-examples check-tools check-install '
tree=$tmp/tree
mkdir -p "$tree"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
	# the tracked files as they are in the work tree (uncommitted edits included)
	git -C "$root" ls-files -z | (cd "$root" && xargs -0 cp --parents -t "$tree" 2>/dev/null)
else
	cp -r "$root/." "$tree" && find "$tree" -name build -o -name out -prune -exec rm -rf {} + 2>/dev/null
fi
targets=$(awk '/^\.PHONY:/ { on = 1; sub(/^\.PHONY:/, "") }
	on { c = sub(/\\$/, ""); print; on = c }' "$root/Makefile" "$root/install.mk" |
	tr ' \t' '\n\n' | sed '/^$/d' | sort -u)
[ -n "$targets" ] || bad "no .PHONY targets found in Makefile/install.mk"
compile_re='(^|[ ;(&|])(cc|gcc|g\+\+|clang|javac)( |$)'
for t in $targets; do
	case "$no_build" in *" $t "*) continue ;; esac
	out=$tmp/n.$t
	(cd "$tree" && timeout 300 make -n "$t" >"$out" 2>&1)
	d=$(grep -n 'scripts/deps\.sh' "$out" | head -1 | cut -d: -f1)
	c=$(grep -nE "$compile_re" "$out" | head -1 | cut -d: -f1)
	if [ -z "$d" ]; then
		bad "make $t never runs scripts/deps.sh${c:+ (first compile at line $c of make -n: $(sed -n "${c}p" "$out" | cut -c1-80))}"
	elif [ -n "$c" ] && [ "$c" -lt "$d" ]; then
		bad "make $t compiles (make -n line $c) before scripts/deps.sh (line $d)"
	elif [ -z "$c" ] && [[ "$must_compile" == *" $t "* ]]; then
		bad "make -n $t shows no compile: the order check would be empty (see $out)"
	else
		ok
	fi
done

# --- 2. deps.sh's answers --------------------------------------------------
stub=$tmp/stub
mkdir -p "$stub"
cat >"$stub/dpkg-query" <<'EOF'
#!/bin/sh
for a; do p=$a; done
case " $STUB_MISSING " in *" $p "*) echo "unknown ok not-installed" ;; *) echo "install ok installed" ;; esac
EOF
cat >"$stub/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >>"$STUB_LOG"
[ "$1" = install ] && [ -n "${STUB_APT_FAIL:-}" ] && { echo "E: Unable to locate package x"; exit 100; }
exit 0
EOF
printf '#!/bin/sh\n[ "$1" = -u ] && echo "${STUB_UID:-0}" || exec /usr/bin/id "$@"\n' >"$stub/id"
printf '#!/bin/sh\nexit 1\n' >"$stub/sudo"
chmod +x "$stub"/*

# deps [VAR=value ...] PROFILE: deps.sh PROFILE with the stubs and those
# variables; sets rc, out, err, apt
deps() {
	local profile=${*: -1}

	: >"$tmp/apt.log"
	env PATH="$stub:$PATH" STUB_LOG="$tmp/apt.log" "${@:1:$#-1}" bash "$root/scripts/deps.sh" \
		"$profile" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out") err=$(cat "$tmp/err") apt=$(cat "$tmp/apt.log")
}

deps STUB_MISSING= build
[ "$rc" = 0 ] && [ -z "$out$err" ] && [ -z "$apt" ] && ok ||
	bad "all installed: want exit 0, silent, no apt call (rc=$rc out='$out' err='$err' apt='$apt')"

deps STUB_MISSING="libffi-dev liburing-dev" STUB_UID=1000 build
[ "$rc" = 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [ -z "$apt" ] &&
	[[ "$err" == *"packages: libffi-dev liburing-dev;"* && "$err" == *"sudo apt-get install libffi-dev liburing-dev" ]] && ok ||
	bad "not root, no sudo: want exit 1, one line naming the packages and the command, no apt (rc=$rc err='$err' apt='$apt')"

deps STUB_MISSING="liburing-dev" STUB_APT_FAIL=1 build
[ "$rc" = 1 ] && [[ "$(printf '%s\n' "$err" | tail -1)" == *"could not install liburing-dev"*"apt-get install liburing-dev" ]] && ok ||
	bad "apt fails: want exit 1, a last line naming the package and the command (rc=$rc err='$err')"

deps STUB_MISSING="liburing-dev groff-base libgc-dev" check
[ "$rc" = 0 ] && [ "$(grep '^apt-get install' "$tmp/apt.log" | tr -s ' ' | sed 's/.*--no-install-recommends //')" = "liburing-dev groff-base" ] && ok ||
	bad "root, missing two of the check profile: want exactly those installed (rc=$rc apt='$apt' err='$err')"

deps STUB_MISSING="libgc-dev" build
[ "$rc" = 0 ] && [ -z "$apt" ] && ok || bad "build profile asked for a bench-only package (rc=$rc apt='$apt')"

deps STUB_MISSING="liburing-dev" KGC_DEPS=skip build
[ "$rc" = 0 ] && [ -z "$apt$err" ] && ok || bad "KGC_DEPS=skip: want exit 0 and no apt (rc=$rc apt='$apt')"

deps STUB_MISSING= nonsense
[ "$rc" = 2 ] && [[ "$err" == *"unknown profile 'nonsense'"* ]] && ok || bad "unknown profile: want exit 2 and its name (rc=$rc err='$err')"

echo "front-door: $pass passed, $fail failed"
[ "$fail" = 0 ]
