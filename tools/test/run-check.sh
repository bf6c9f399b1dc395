#!/usr/bin/env bash
# tools/test/run-check.sh BUILD - kgcstat against a live process
# (build/test/kgcstat_target, KGC_STATS_PUBLISH=1, driven through a fifo):
#   the page: mode 0600, the caller's; gone when the process ends;
#   kgcstat <pid>: YGC moves as the process allocates and equals what the
#     process itself reports; <pid> 100 3: a header and three lines;
#   --map: old, survivor, humongous, pinned (a held kgc_critical_get) and
#     free regions; --png: a valid PNG (png_check) with the same counts;
#   seqlock_check: no torn copy of a page updated hundreds of times;
#   errors: a pid without a kgc heap, no such pid, bad arguments, a page of
#     another user (as root: a copy chowned to nobody), a page that is not
#     a kgc page.
# Every collection runs with KGC_VERIFY=1. Prints "tools: N passed, N failed".
set -u
b=$(cd "${1:-build}" && pwd)
ks=$b/kgcstat
pass=0 fail=0
tmp=$(mktemp -d)
pid= sleeper=
cleanup() {
	exec 7>&- 2>/dev/null
	[ -n "$pid" ] && kill "$pid" 2>/dev/null
	[ -n "$sleeper" ] && { kill "$sleeper" 2>/dev/null; rm -f "/dev/shm/kgc-$sleeper"; }
	rm -rf "$tmp"
}
trap cleanup EXIT
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; shift; [ $# -gt 0 ] && printf '    %s\n' "$@"; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else bad "$name"; fi; }
# cmd "alloc 64": send a command, wait for its answer line
cmd() {
	local n
	n=$(grep -c '' "$tmp/out")
	echo "$1" >&7
	for _ in $(seq 1200); do	# up to 60 s on a loaded host
		[ "$(grep -c '' "$tmp/out")" -gt "$n" ] && { tail -n 1 "$tmp/out"; return 0; }
		sleep 0.05
	done
	echo "no answer to '$1'" >&2
	cat "$tmp/err" >&2
	return 1
}
col() { awk -v c="$1" 'NR == 2 { print $c }'; }	# a column of kgcstat's first data line

mkfifo "$tmp/in"
KGC_STATS_PUBLISH=1 KGC_VERIFY=1 KGC_BACKEND=anon "$b/test/kgcstat_target" <"$tmp/in" >"$tmp/out" 2>"$tmp/err" &
pid=$!
exec 7>"$tmp/in"
for _ in $(seq 600); do grep -q ready "$tmp/out" && break; sleep 0.05; done
page=/dev/shm/kgc-$pid
check "page $page exists, mode 0600, owned by $(id -un)" \
	test "$(stat -c '%a %u' "$page" 2>/dev/null)" = "600 $(id -u)"

y0=$("$ks" "$pid" | col 8)
a1=$(cmd "alloc 64") || a1=
y1=$("$ks" "$pid" | col 8)
check "YGC moves as the process allocates ($y0 -> $y1) and matches its own count ($a1)" \
	test -n "$y1" -a "${y0:-x}" = 0 -a "$y1" -gt 0 -a "ok $y1" = "$a1"
"$ks" "$pid" 100 3 >"$tmp/lines"
check "kgcstat <pid> 100 3: a header and three lines" \
	test "$(grep -c EDEN "$tmp/lines") $(grep -vc EDEN "$tmp/lines")" = "1 3"

cmd keep >/dev/null && cmd pin >/dev/null
"$ks" --map "$pid" >"$tmp/map"
kinds=$(sed -n 's/^ *[0-9][0-9]* //p' "$tmp/map" | tr -d '\n' | fold -w1 | sort -u | tr -d '\n')
check "--map has old, survivor, humongous, pinned and free regions (kinds '$kinds')" \
	test "$(echo "$kinds" | grep -c '^[.]HOPS$')" = 1
pins=$("$ks" "$pid" | col 5)
check "kgcstat <pid> counts the pinned region ($pins)" test "${pins:-0}" -ge 1
"$ks" --png "$tmp/map.png" "$pid"
want=$(tail -n 1 "$tmp/map" | sed 's/ [a-z-]*\( [0-9]\)/\1/g; s/  */ /g')
got=$("$b/test/png_check" "$tmp/map.png" 2>&1)
check "--png: a valid PNG whose cells match --map ($got)" test "${got#* }" = "$want"
check "--png: 64 cells of 9 pixels per row" test "${got%%x*}" = $((64 * 9 + 1))
cmd unpin >/dev/null
echo quit >&7
exec 7>&-
wait "$pid"
rc=$?
pid=
check "the process exits cleanly and its page is gone" test "$rc" = 0 -a ! -e "$page"

out=$(KGC_VERIFY=1 "$b/test/seqlock_check" 2>&1)
check "no torn copy while a process updates its page ($out)" test $? = 0

# errors
expect() {	# expect NAME RC PATTERN kgcstat-args...
	local name=$1 rc=$2 pat=$3 out got
	shift 3
	out=$("$ks" "$@" 2>&1)
	got=$?
	if [ "$got" = "$rc" ] && grep -q -- "$pat" <<<"$out"; then ok "$name"; else bad "$name" "exit $got: $out"; fi
}
sleep 60 &
sleeper=$!
expect "a process without a kgc heap" 1 "has no kgc heap publishing statistics" "$sleeper"
expect "no such process" 1 "no process" 2147483646
: >/dev/shm/kgc-2147483646
expect "a page left by a dead process" 1 "is left from a crash" 2147483646
rm -f /dev/shm/kgc-2147483646
expect "bad arguments" 2 "usage:" --bogus
expect "bad interval" 2 "usage:" "$sleeper" 10x
head -c 4096 /dev/zero >"/dev/shm/kgc-$sleeper"
chmod 600 "/dev/shm/kgc-$sleeper"
expect "a file that is not a kgc page" 1 "is not a kgc statistics page" "$sleeper"
if [ "$(id -u)" = 0 ]; then
	chown 65534 "/dev/shm/kgc-$sleeper"
	expect "a page of another user (uid 65534), even for root" 1 "belongs to uid 65534, not to you" "$sleeper"
	expect "--map of another user's page" 1 "belongs to uid 65534" --map "$sleeper"
else
	echo "skip another user's page: needs root to chown a page to another user"
fi
echo "tools: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
