/* SPDX-License-Identifier: MIT */
/*
 * nt_gc.h - for native-call tests that need collections from another thread
 * while a native runs: nt_gc_thread allocates (keeping some) and collects,
 * young and full alternately, whenever nt_running is set, counting in nt_gcs
 * until nt_stop.
 */
#ifndef KGC_NT_GC_H
#define KGC_NT_GC_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include "native_test.h"

#define NT_GC_TIMEOUT_MS 60000

static atomic_int nt_running;	/* the native is inside its critical region */
static atomic_int nt_gcs;	/* collections completed by the other thread */
static atomic_int nt_stop;

/*
 * Waits for ngc + 1 collections completed after the native got going (one
 * may have finished just before without being counted yet).
 */
static int nt_wait_gcs(int ngc)
{
	int base = atomic_load(&nt_gcs);

	for (int ms = 0; ms < NT_GC_TIMEOUT_MS; ms++) {
		if (atomic_load(&nt_gcs) >= base + ngc + 1)
			return 0;
		usleep(1000);
	}
	return -1;
}

static void *nt_gc_thread(void *arg)
{
	kgc_thread *t;
	struct kgc_frame f;
	kgc_obj keep[1] = { NULL };

	if (kgc_thread_attach(nt_heap, "gc", &t))
		abort();
	kgc_frame_push(t, &f, keep, 1, NULL);
	while (!atomic_load(&nt_stop)) {
		if (!atomic_load(&nt_running)) {
			kgc_enter_native(t);
			usleep(500);
			kgc_leave_native(t);
			continue;
		}
		/* allocate (some survives) and collect, young and full alternately */
		for (int i = 0; i < 200; i++) {
			kgc_obj o = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), 64);

			if (!o)
				abort();
			if (i % 50 == 0)
				keep[0] = o;
		}
		if (kgc_collect(t, atomic_load(&nt_gcs) % 2 ? KGC_GC_FULL : KGC_GC_YOUNG))
			abort();
		atomic_fetch_add(&nt_gcs, 1);
	}
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	return NULL;
}

#endif
