/* SPDX-License-Identifier: MIT */
/*
 * KGC_STALE_CHECK catches a pointer left unrooted across an allocation at
 * once, with a message - also when it is used a dozen collections later: the
 * allocation collects (every N allocations), the
 * object moves, its old region is quarantined (PROT_NONE), and the read
 * through the stale pointer stops the process naming the region. The same
 * program without the mode reads garbage silently (shown, not asserted:
 * what it reads depends on reuse). A correct program runs clean in the mode.
 */
#include "tgc.h"

static kgc_type_id NODE;

static int stale_gcs = 1;	/* collections between the last use and the stale one */

static void planted_stale_pointer(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj stale;
	volatile int64_t v;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 32 << 20;
	o.stale_check = 64;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "mutator", &t), 0);
	stale = kgc_alloc(t, NODE);		/* in no root */
	KGC_FIELD(stale, N_VALUE, int64_t) = 7;
	while (t_stats(h).young_gcs < (uint64_t)stale_gcs)	/* the object moves */
		T_ASSERT(kgc_alloc(t, NODE));
	v = KGC_FIELD(stale, N_VALUE, int64_t);	/* faults */
	printf("read %lld through a stale pointer without a fault\n", (long long)v);
}

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj r[1] = { 0 };
	struct kgc_frame f;

	t_expect_death(planted_stale_pointer, "stale pointer: access to");
	stale_gcs = 12;		/* used again much later: still quarantined */
	t_expect_death(planted_stale_pointer, "stale pointer: access to");

	/* a correct program: rooted across allocations, many collections */
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 32 << 20;
	o.stale_check = 50;
	o.verify = 1;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, r, 1, NULL);
	t_list(t, NODE, &r[0], 2000, 1);
	t_list_check(r[0], 2000);
	T_ASSERT(t_stats(h).young_gcs >= 30);
	printf("a rooted list survived %llu young GCs in stale-check mode\n",
	       (unsigned long long)t_stats(h).young_gcs);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
