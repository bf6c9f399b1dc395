/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - the library's own threads (kgc-gc, kgc-marker, kgc-kpinwatch,
 * kgc-pretouch): started with every signal blocked - signals are the
 * program's threads' business - and named for top, perf and gdb; and the
 * pool threads steered off the pausing thread's CPU for a pause.
 */
#define _GNU_SOURCE	/* pthread_setname_np, sched_getcpu, cpu_set_t */
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "gc_internal.h"

/* 0 or the positive error of pthread_create. */
int kgci_spawn(pthread_t *th, void *(*fn)(void *), void *arg, const char *name)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		pthread_setname_np(*th, name);
	return err;
}

/*
 * Steering a pause's pool threads off the pausing thread's CPU.
 *
 * A futex wake-up puts the woken thread on the waker's CPU unless the
 * kernel finds an idle one in the waker's last-level cache; where it sees
 * no cache shared between CPUs (a VM that reports no cache topology, as
 * on this project's 2-vCPU guest) it searches nothing, and the pool thread
 * queues behind the pausing thread while the other CPU idles until the
 * load balancer moves it, milliseconds later: 2790 of 2804 wake-ups of
 * kgc-gc under GCOld landed on the waker's CPU, and in the pauses over
 * 6 ms the two workers took turns on one CPU (bench/RESULTS-ab.md,
 * 2026-12-07 night). So for the pause each pool thread may run on its own
 * CPUs but the one the pausing thread is on, and gets its own set back
 * afterwards. Where that would leave it none (one CPU allowed) or the
 * kernel refuses, nothing changes.
 */
struct kgci_steer {
	int tid;		/* the pool thread's kernel id; 0 until it set it */
	bool steered;		/* saved holds its own set, to restore */
	cpu_set_t saved;
};

struct kgci_steer *kgci_steer_new(unsigned n)
{
	return calloc(n ? n : 1, sizeof(struct kgci_steer));
}

/* By pool thread i itself, once. */
void kgci_steer_self(struct kgci_steer *s, unsigned i)
{
	__atomic_store_n(&s[i].tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
}

/* By the pausing thread before it wakes them: the CPU steered off, or -1. */
int kgci_steer_away(struct kgci_steer *s, unsigned n)
{
	int cpu = sched_getcpu(), done = -1;
	cpu_set_t set;

	if (cpu < 0 || cpu >= CPU_SETSIZE)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		int tid = __atomic_load_n(&s[i].tid, __ATOMIC_ACQUIRE);

		if (!tid || sched_getaffinity(tid, sizeof(s[i].saved), &s[i].saved) < 0)
			continue;
		set = s[i].saved;
		CPU_CLR(cpu, &set);
		if (!CPU_COUNT(&set) || !CPU_ISSET(cpu, &s[i].saved) ||
		    sched_setaffinity(tid, sizeof(set), &set) < 0)
			continue;
		s[i].steered = true;
		done = cpu;
	}
	return done;
}

/* After the pause: every steered thread gets its own set back. */
void kgci_steer_restore(struct kgci_steer *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (!s[i].steered)
			continue;
		sched_setaffinity(s[i].tid, sizeof(s[i].saved), &s[i].saved);
		s[i].steered = false;
	}
}
