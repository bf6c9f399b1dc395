#!/bin/bash
# run-check.sh - runs klisp on every tests/*.scm and compares stdout with
# tests/*.out, in three modes:
#   plain    -D N=1000000 (churn.scm conses a million cells)
#   checked  KGC_CHECK=1 KGC_VERIFY=1 (checked barriers/roots, heap verified around every GC)
#   stale    KGC_STALE_CHECK=50 (a young GC every 50 allocations, evacuated regions
#            PROT_NONE: an unrooted pointer faults), -D N=2000 to keep it fast
# plus one negative test: a deliberate rooting bug (%stale-demo) must be caught
# by the stale mode. Prints "examples: N passed, N failed"; exits 1 on failure.
# Usage: run-check.sh [klisp binary]   (default: ./klisp next to this script)
cd "$(dirname "$0")" || exit 1
KLISP=${1:-./klisp}
# collector options through kgc_options_set (-X): a small heap and young
# generation, so that even short programs collect
OPTS=(-X heap_max=64m -X young_size=2m)
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run <mode> <file> <env...> -- <klisp args...>
check() {
	local mode=$1 scm=$2 n=$3
	shift 3
	local exp=${scm%.scm}.out out=$tmp/out err=$tmp/err rc
	env -u KGC_CHECK -u KGC_VERIFY -u KGC_STALE_CHECK "$@" \
		"$KLISP" "${OPTS[@]}" -D N="$n" "$scm" >"$out" 2>"$err"
	rc=$?
	if [ $rc -eq 0 ] && cmp -s "$exp" "$out"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL [$mode] $scm (exit $rc)"
		diff -u "$exp" "$out" | head -20
		head -5 "$err"
	fi
}

for scm in tests/*.scm; do
	check plain "$scm" 1000000
	check checked "$scm" 1000000 KGC_CHECK=1 KGC_VERIFY=1
	check stale "$scm" 2000 KGC_STALE_CHECK=50
done

# the negative test: the debug mode must catch the interpreter's planted bug
echo '(display (%stale-demo))' >"$tmp/bug.scm"
# (a subshell: the abort is expected, so no "Aborted" job message from this shell)
(env KGC_STALE_CHECK=50 "$KLISP" "$tmp/bug.scm" >/dev/null 2>"$tmp/err"; exit $?) 2>/dev/null
if [ $? -ne 0 ] && grep -q "stale pointer" "$tmp/err"; then
	pass=$((pass + 1))
else
	fail=$((fail + 1))
	echo "FAIL [stale] the planted stale pointer was not caught"
	head -5 "$tmp/err"
fi

echo "examples: $pass passed, $fail failed"
[ $fail -eq 0 ]
