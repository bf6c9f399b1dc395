#!/usr/bin/env bash
# Runs every test program in DIR. Exit status of a test: 0 pass, 77 skip, else fail.
# Under tsan only tests whose name starts with mt_ (threaded) or io_ (kgc_io
# rings: completions reaped while collections run) run.
# Each line gives the test's wall time (a test near the 600 s timeout
# under a sanitizer is a CI failure waiting to happen).
# Prints one closing line: "N passed, N failed, N skipped".
set -u
dir=$1; san=${2:-}
pass=0; fail=0; skip=0; failed=()
export KGC_VERIFY=${KGC_VERIFY:-1}
[ "$san" = tsan ] && export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
[ "$san" = asan ] && export ASAN_OPTIONS="detect_leaks=1 abort_on_error=1 ${ASAN_OPTIONS:-}" UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1"
for t in "$dir"/*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	if [ "$san" = tsan ] && [[ "$name" != mt_* && "$name" != io_* ]]; then continue; fi
	log="$dir/$name.log"
	t0=$SECONDS
	timeout 600 "$t" >"$log" 2>&1
	rc=$?
	secs=$((SECONDS - t0))
	case $rc in
	0) pass=$((pass + 1)); echo "ok   ${san:-rel} $name (${secs} s)" ;;
	77) skip=$((skip + 1)); echo "skip ${san:-rel} $name: $(tail -n1 "$log")" ;;
	*) fail=$((fail + 1)); failed+=("$name"); echo "FAIL ${san:-rel} $name (rc=$rc, ${secs} s)"; tail -n 30 "$log" | sed 's/^/    /' ;;
	esac
done
echo "lib-tests${san:+-$san}: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
