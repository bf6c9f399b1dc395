/* SPDX-License-Identifier: MIT */
/*
 * Pause hooks: for a seeded random sequence of young and full collections
 * (and a concurrent cycle), KGC_HOOK_PAUSE_START and _END come in pairs,
 * one per pause, with the pause's kind, name and gc_id, END with a
 * duration; the cycle's steps taken in young pauses come as KGC_HOOK_PHASE
 * ("Concurrent Start" first). Inside a pause hook kgc_stats_get is refused
 * (-EPERM, a message naming the call and the hook) and so is an
 * allocation; in checked mode the allocation aborts with that message.
 * A hook removed (fn NULL) is not called any more.
 */
#include <stdbool.h>
#include "tcycle.h"

static kgc_type_id NODE;
static kgc_thread *t;
static int starts, ends, phases, open_kind = -1, probe;
static uint64_t open_id, last_id;
static char first_phase[64];
static int stats_rc, alloc_null;

static int on_pause(kgc_heap *h, const struct kgc_hook_info *in, void *arg)
{
	struct kgc_stats s;

	T_ASSERT_EQ(in->size, sizeof(*in));
	if (getenv("HOOK_DEBUG"))
		fprintf(stderr, "ev %u kind %d id %llu %s\n", in->event, in->kind, (unsigned long long)in->gc_id, in->name);
	if (in->event == KGC_HOOK_PAUSE_START) {
		T_ASSERT_EQ(open_kind, -1);
		T_ASSERT(in->gc_id > last_id);
		T_ASSERT(!strcmp(in->name, in->kind == KGC_GC_YOUNG ? "Pause Young" : "Pause Full"));
		open_kind = in->kind;
		open_id = in->gc_id;
		starts++;
		if (probe == 1)
			stats_rc = kgc_stats_get(h, &s, sizeof(s));
		if (probe) {
			alloc_null = kgc_alloc(t, NODE) == NULL;
		}
	} else if (in->event == KGC_HOOK_PAUSE_END) {
		T_ASSERT_EQ(in->kind, open_kind);
		T_ASSERT_EQ(in->gc_id, open_id);
		T_ASSERT(in->duration_ns > 0);
		last_id = in->gc_id;
		open_kind = -1;
		ends++;
	} else {
		T_ASSERT_EQ(in->event, KGC_HOOK_PHASE);
		T_ASSERT_EQ(open_kind, KGC_GC_YOUNG);
		if (!phases++)
			snprintf(first_phase, sizeof(first_phase), "%s", in->name);
	}
	return 0;
}

static void alloc_in_hook_checked(void)
{
	kgc_heap *h = t_heap(16, 4, &NODE);

	T_ASSERT_EQ(kgc_thread_attach(h, "checked", &t), 0);
	last_id = 0;
	probe = 2;	/* an allocation only */
	T_ASSERT_EQ(kgc_hook_set(h, KGC_HOOK_PAUSE_START, on_pause, NULL), 0);
	kgc_collect(t, KGC_GC_YOUNG);
}

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	unsigned long long seed;
	int young = 0, full = 0, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = t_seed();
	t_opts_small(&o, 64, 4);
	o.ihop_percent = 100;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	for (unsigned ev = KGC_HOOK_PAUSE_START; ev <= KGC_HOOK_PHASE; ev++)
		T_ASSERT_EQ(kgc_hook_set(h, ev, on_pause, NULL), 0);
	T_ASSERT_EQ(kgc_hook_set(h, 99, on_pause, NULL), -EINVAL);
	n = 4 + (int)(t_rand(&seed) % 8);
	for (int i = 0; i < n; i++) {
		int kind = t_rand(&seed) % 3 ? KGC_GC_YOUNG : KGC_GC_FULL;

		T_ASSERT_EQ(kgc_collect(t, kind), 0);
		kind == KGC_GC_YOUNG ? young++ : full++;
	}
	T_ASSERT_EQ(starts, young + full);
	T_ASSERT_EQ(ends, starts);
	T_ASSERT_EQ(phases, 0);
	/* a cycle: its steps in young pauses (live old data over the 1%) */
	t_ballast(t, NODE);
	h->opt.ihop_percent = 1;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	h->opt.ihop_percent = 100;
	t_cycle_finish(t, h);
	if (phases < 2)
		T_FAIL("%d cycle steps (first %s)", phases, first_phase);
	T_ASSERT(!strcmp(first_phase, "Concurrent Start"));
	T_ASSERT_EQ(ends, starts);
	/* calls from a pause hook */
	probe = 1;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(stats_rc, -EPERM);
	T_ASSERT(alloc_null);
	probe = 0;
	/* removed */
	n = starts;
	for (unsigned ev = KGC_HOOK_PAUSE_START; ev <= KGC_HOOK_PHASE; ev++)
		T_ASSERT_EQ(kgc_hook_set(h, ev, NULL, NULL), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(starts, n);
	printf("%d young + %d full pauses, %d starts/%d ends, %d cycle steps (first '%s'); calls refused in hooks\n",
	       young, full, starts, ends, phases, first_phase);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	t_expect_death(alloc_in_hook_checked, "kgc_alloc called from a pause hook (KGC_HOOK_PAUSE_START)");
	return 0;
}
