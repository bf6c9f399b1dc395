#!/usr/bin/env bash
# Boots Debian's 6.12 kernel in QEMU (TCG, no KVM needed) with kgc.ko and runs
# kgc's kselftests (plus the library's VM tests when lib/ has `make vm-tests`).
#
#   bash selftests/vm/run.sh                 run the tests (make check-kmod)
#   bash selftests/vm/run.sh --demo [CMD]    boot the same VM, run CMD (or $KGC_VM_CMD)
#                                            instead of the tests; exits with its status
# Outputs in selftests/vm/out/: console.log, dmesg.txt, ksft_NAME.tap per kselftest,
# lib_NAME.log per library test, results.txt, summary.txt (--demo: out/cmd/, cmd.out).
# Exit status is non-zero on any failure.
#
# env: KGC_VM_CMD        same as --demo CMD
#      KGC_VM_FILES      host files to copy into the VM's /usr/local/bin (on PATH)
#      KGC_VM_TIMEOUT    whole-VM timeout in seconds (900)
#      KGC_VM_MEM        guest memory in MiB (1024)
#      KGC_TEST_TIMEOUT  per-binary timeout in seconds (300)
#      KGC_VM_REFRESH=1  re-pick the newest 6.12 kernel instead of the cached one
#      KGC_KMOD_DIR, KGC_SELFTESTS_DIR, KGC_LIB_DIR   source dirs (kmod, selftests, lib)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cd "$top"
t0=$SECONDS
say() { echo "vm-rig: $*"; }
die() { echo "vm-rig: ERROR: $*" >&2; exit 1; }
phase() { say "[$((SECONDS - t0))s] $*"; }

if [ "${1:-}" = --demo ]; then
	shift
	[ $# -eq 0 ] || KGC_VM_CMD="$*"
	export KGC_VM_CMD="${KGC_VM_CMD:-ls -l /dev/kgc; grep -H . /sys/module/kgc/parameters/* 2>/dev/null; true}"
elif [ $# -gt 0 ]; then
	die "unknown argument '$1' (usage: $0 [--demo [CMD]])"
fi
mode=tests
[ -z "${KGC_VM_CMD:-}" ] || mode=cmd
kmod_dir=${KGC_KMOD_DIR:-$top/kmod}
st_dir=${KGC_SELFTESTS_DIR:-$top/selftests}
lib_dir=${KGC_LIB_DIR:-$top/lib}
vm_timeout=${KGC_VM_TIMEOUT:-900}
# One host thread runs both vCPUs (TCG's round robin): with a thread per vCPU
# (MTTCG) a CPU once kept running a stale translation of kernel text that
# text_poke_bp had patched - enabling the kgc trace events, kselftest
# kgc_watch.trace_events - and panicked ("Oops: int3" in ttwu_do_activate,
# 2026-12-05). Guest threads still interleave preemptively on 2 vCPUs.
# KGC_VM_ACCEL=tcg runs a thread per vCPU again.
vm_accel=${KGC_VM_ACCEL:-tcg,thread=single}
jobs=$(nproc)

phase "installing packages (scripts/deps.sh)"
bash scripts/deps.sh check

[ -f "$kmod_dir/Makefile" ] || [ -f "$kmod_dir/Kbuild" ] ||
	die "$kmod_dir/Makefile not found: the kernel module (kmod/) is not in this tree yet"
[ $mode = cmd ] || [ -f "$st_dir/Makefile" ] ||
	die "$st_dir/Makefile not found: the kselftests (selftests/Makefile, selftests/kgc_*.c) are not in this tree yet"

mkdir -p .cache/vm
work=$(mktemp -d "$top/.cache/vm/run.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Fetching and building share the cache and the source dirs with any other run:
# one at a time. Booting and checking run unlocked.
exec 9> .cache/vm/lock
flock -n 9 || { say "waiting for another run to finish building (.cache/vm/lock)"; flock 9; }
phase "kernel: fetching Debian 6.12 (cached after the first run)"
kver=$(bash "$here/fetch-kernel.sh")
kdir=$top/.cache/kernel/headers/linux-headers-$kver
vmlinuz=$top/.cache/kernel/image/boot/vmlinuz-$kver
bash "$here/fetch-ksft.sh"

phase "building kgc.ko against $kver"
make -j"$jobs" -C "$kmod_dir" KDIR="$kdir" >"$work/kmod.log" 2>&1 ||
	{ cat "$work/kmod.log"; die "module build failed (make -C $kmod_dir KDIR=$kdir)"; }
ko=$kmod_dir/kgc.ko
[ -f "$ko" ] || die "make -C $kmod_dir succeeded but $ko does not exist"
modver=$(modinfo -F vermagic "$ko" | cut -d' ' -f1)
[ "$modver" = "$kver" ] || die "kgc.ko was built for '$modver', the VM runs '$kver'"

libt=
if [ $mode = tests ]; then
	phase "building kselftests"
	make -j"$jobs" -C "$st_dir" KSFT_INC="$top/.cache/ksft" OUT="$work/ksft" >"$work/ksft.log" 2>&1 ||
		{ cat "$work/ksft.log"; die "kselftest build failed (make -C $st_dir KSFT_INC=.cache/ksft OUT=...)"; }
	if make -C "$lib_dir" -n vm-tests >/dev/null 2>&1; then
		phase "building library VM tests (make -C lib vm-tests)"
		libt=$work/lib
		make -j"$jobs" -C "$lib_dir" vm-tests VMOUT="$libt" >"$work/lib.log" 2>&1 ||
			{ cat "$work/lib.log"; die "library VM test build failed (make -C $lib_dir vm-tests VMOUT=...)"; }
	fi
fi

phase "packing initramfs"
initrd=$work/initramfs.cpio.gz
bash "$here/build-initramfs.sh" "$initrd" "$kver" "$ko" "$work/ksft" "$libt"
ksft_bins=$(sed -n 's|^ksft/||p' "$initrd.list")
lib_bins=$(sed -n 's|^lib/||p' "$initrd.list")
flock -u 9

# ---- boot ----------------------------------------------------------------
if [ $mode = tests ]; then out=$here/out; else out=$here/out/cmd; fi
mkdir -p "$out"
find "$out" -maxdepth 1 -type f -delete
log=$work/serial.log
: > "$log"
# Cheap memory-debugging the stock Debian kernel offers: slab red zones/poison,
# page poisoning (checked on reuse), KFENCE sampling.
debug_opts="slub_debug=FZP page_poison=1 kfence.sample_interval=10"
phase "booting $kver under QEMU/TCG (timeout ${vm_timeout}s)"
timeout -k 10 "$vm_timeout" qemu-system-x86_64 -accel "$vm_accel" -smp 2 -m "${KGC_VM_MEM:-1024}" -nodefaults -display none \
	-no-reboot -serial "file:$log" -kernel "$vmlinuz" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic quiet mitigations=off $debug_opts" </dev/null &
qpid=$!
# Echo the console as it comes, minus the kernel log (saved to dmesg.txt);
# with --demo only the command's own output, as is.
tail -n +1 -s 0.3 -f --pid=$qpid "$log" | awk -v mode=$mode '{ sub(/\r$/, "") }
	mode == "cmd" && /^KGC-RESULT cmd / { c = 0 }
	mode == "cmd" { if (c) { print; fflush() } if (/^KGC-BEGIN cmd$/) c = 1; next }
	/^KGC-DMESG-BEGIN/ { d = 1; print "vm| (kernel log -> out/dmesg.txt)"; fflush() }
	!d { print "vm| " $0; fflush() }
	/^KGC-DMESG-END/ { d = 0 }' &
tpid=$!
qrc=0
wait $qpid || qrc=$?
wait $tpid || true
phase "VM exited (status $qrc)"

# ---- collect ---------------------------------------------------------------
tr -d '\r' < "$log" > "$out/console.log"
awk -v out="$out" '
	/^KGC-DMESG-BEGIN/ { d = 1; next }
	/^KGC-DMESG-END/   { d = 0; next }
	d                  { print > (out "/dmesg.txt"); next }
	/^KGC-BEGIN /      { f = $2; ext = f ~ /^ksft\// ? ".tap" : f == "cmd" ? ".out" : ".log"
	                     gsub("/", "_", f); f = out "/" f ext; printf "" > f; next }
	/^KGC-RESULT /     { print $2, $3 > (out "/results.txt"); f = ""; next }
	f != ""            { print >> f }' "$out/console.log"
touch "$out/results.txt"
describe() { # exit status of a test binary, in words
	case $1 in
	137) echo "killed: timed out after ${KGC_TEST_TIMEOUT:-300}s (or SIGKILL)" ;;
	1[3-9][0-9]|2[0-9][0-9]) echo "crashed: killed by signal $(($1 - 128)) ($(kill -l $(($1 - 128)) 2>/dev/null || echo '?'))" ;;
	*) echo "exit status $1" ;;
	esac
}
rc_of() { awk -v n="$1" '$1 == n { print $2; exit }' "$out/results.txt"; }

failures=()
fail() { failures+=("$*"); }
[ "$qrc" != 124 ] && [ "$qrc" != 137 ] || fail "QEMU timed out after ${vm_timeout}s"
[ "$qrc" = 0 ] || [ "$qrc" = 124 ] || [ "$qrc" = 137 ] || fail "QEMU exited with status $qrc"
if ! grep -q '^KGC-DONE' "$out/console.log"; then
	last=$(awk '/^KGC-BEGIN / { n = $2 } /^KGC-RESULT / && $2 == n { n = "" } END { print n }' "$out/console.log")
	why="did not finish"
	grep -q 'Kernel panic' "$out/console.log" && why="kernel panicked"
	fail "the VM $why${last:+ while running $last} (no KGC-DONE; see out/console.log)"
fi
for step in insmod-brd insmod-kgc; do
	rc=$(rc_of $step)
	[ "$rc" = 0 ] || fail "$step: status ${rc:-missing}"
done

pass=0 failed=0 skip=0
if [ $mode = tests ]; then
	for b in $ksft_bins; do
		rc=$(rc_of "ksft/$b")
		tap=$out/ksft_$b.tap
		read -r p f s < <(awk '
			/^ok [0-9]+.*# *(SKIP|skip)/ { s++; next }
			/^ok [0-9]+/                 { p++; next }
			/^not ok [0-9]+/             { f++ }
			END { print p + 0, f + 0, s + 0 }' "$tap" 2>/dev/null || echo 0 0 0)
		pass=$((pass + p)) failed=$((failed + f)) skip=$((skip + s))
		if [ -z "$rc" ]; then
			failed=$((failed + 1)); fail "ksft/$b: never reported (crashed or hung the VM?)"
		elif [ "$rc" != 0 ] && [ "$rc" != 4 ]; then   # 4 = KSFT_SKIP
			[ "$f" -gt 0 ] || failed=$((failed + 1))    # died without a "not ok"
			names=$(sed -n 's/^not ok [0-9]* //p' "$tap" 2>/dev/null | tr '\n' ' ')
			fail "ksft/$b: $(describe "$rc")${names:+; not ok: $names}"
		elif [ "$rc" = 4 ] && [ $((p + f + s)) = 0 ]; then
			skip=$((skip + 1))
		fi
	done
	lp=0 lf=0 ls=0
	for b in $lib_bins; do
		rc=$(rc_of "lib/$b")
		case "$rc" in
		0) lp=$((lp + 1)) ;;
		77) ls=$((ls + 1)) ;;
		'') lf=$((lf + 1)); fail "lib/$b: never reported (crashed or hung the VM?)" ;;
		*) lf=$((lf + 1)); fail "lib/$b: $(describe "$rc")" ;;
		esac
	done
	held=$(awk '/^KGC-PAGES-HELD / { print $2 }' "$out/console.log")
	[ "${held:-0}" = 0 ] || fail "kgc still holds $held pages after every test ended (pages_held)"
	rc=$(rc_of rmmod)
	[ "$rc" = 0 ] || fail "rmmod kgc: status ${rc:-missing}"
else
	rc=$(rc_of cmd)
	[ -n "$rc" ] || fail "the command never finished"
fi

# Kernel log: complete in dmesg.txt; if the VM died before printing it, scan the console.
scan=$out/dmesg.txt
[ -s "$scan" ] || scan=$out/console.log
bad=$(grep -E '\b(WARNING|BUG|Oops)\b|Bad page|general protection|Call Trace|kernel BUG|UBSAN:|KASAN:|soft lockup|hung_task|rcu_sched detected stalls|memory corruption|KFENCE:' "$scan" || true)
[ -z "$bad" ] || fail "kernel log has warnings/oopses:"$'\n'"$bad"

{
	if [ $mode = tests ]; then
		[ -z "$lib_bins" ] || echo "lib vm tests: $lp passed, $lf failed, $ls skipped"
	fi
	for f in "${failures[@]}"; do echo "FAIL: $f"; done
} > "$out/summary.txt"
say "[$((SECONDS - t0))s] outputs in ${out#"$top"/}/"
if [ ${#failures[@]} -gt 0 ]; then
	if [ $mode = cmd ]; then echo "---- last console lines ----"; tail -n 30 "$out/console.log"; fi
	echo
	echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!! kgc VM tests FAILED !!!!!!!!!!!!!!!!!!!!!!!!!!!!"
	for f in "${failures[@]}"; do sed 's/^/!! /' <<< "$f"; done
	echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
fi
if [ $mode = tests ]; then
	[ -z "$lib_bins" ] || echo "lib vm tests: $lp passed, $lf failed, $ls skipped"
	echo "kselftests: $pass passed, $failed failed, $skip skipped" | tee -a "$out/summary.txt"
	[ ${#failures[@]} -eq 0 ]
else
	[ ${#failures[@]} -eq 0 ] || exit 1
	exit "$(rc_of cmd)"
fi
