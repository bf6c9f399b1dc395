/* SPDX-License-Identifier: MIT */
/* tcycle.h - driving the concurrent cycle from tests (uses collector internals). */
#ifndef KGC_TCYCLE_H
#define KGC_TCYCLE_H

#include <stdbool.h>
#include <string.h>
#include <time.h>
#include "tgc.h"
#include "../gc_internal.h"

/*
 * Wait (1 ms steps in native state, so the marker gets a CPU; at most 5 s)
 * until the cycle's state is want ("idle", "marking", "remark-ready",
 * "sweeping", "swept"); with collect, a young GC each step moves the cycle
 * through its pause steps. Fails the test if the state never comes.
 */
static inline void t_cycle_wait(kgc_thread *t, kgc_heap *h, const char *want, bool collect)
{
	for (int i = 0; strcmp(kgci_cm_test_state(h), want) && i < 5000; i++) {
		struct timespec ts = { 0, 1000000 };

		if (collect)
			T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
		kgc_enter_native(t);
		nanosleep(&ts, NULL);
		kgc_leave_native(t);
	}
	if (strcmp(kgci_cm_test_state(h), want))
		T_FAIL("cycle state %s, waited for %s", kgci_cm_test_state(h), want);
}

/* Young GCs until the running cycle (if any) is over. */
static inline void t_cycle_finish(kgc_thread *t, kgc_heap *h)
{
	t_cycle_wait(t, h, "idle", true);
}

#endif
