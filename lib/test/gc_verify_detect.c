/* The verifier catches a planted corruption: an old->young reference stored
 * without the write barrier (no dirty card, or a dirty card under a clean
 * summary byte) is reported at the next GC, and
 * so is a reference to a filler (an object freed while referenced). In
 * checked mode a store of a non-object is caught by the barrier itself. */
#include "tgc.h"
#include "../gc_internal.h"

/* An old->young reference stored by hand: no card at all, or (card) the
 * card dirtied but not its summary byte (kgc.h, ABI 6), which the young
 * pause would not read. */
static void store_unrecorded(bool card)
{
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slot = NULL;
	struct kgc_frame f;

	unsetenv("KGC_CHECK");
	setenv("KGC_VERIFY", "1", 1);
	h = t_heap(32, 4, &node);
	kgc_thread_attach(h, "mutator", &t);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	slot = kgc_alloc(t, node);
	kgc_collect(t, KGC_GC_FULL);			/* slot is old now */
	*(kgc_obj *)((char *)slot + N_LEFT) = kgc_alloc(t, node);	/* no barrier! */
	if (card)
		*card_for(h, (char *)slot + N_LEFT) = CARD_DIRTY;
	kgc_collect(t, KGC_GC_YOUNG);
}

static void missing_barrier(void)
{
	store_unrecorded(false);
}

static void missing_summary(void)
{
	store_unrecorded(true);
}

static void bad_store(void)
{
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slot = NULL;
	struct kgc_frame f;
	char junk[64] = { 0 };

	h = t_heap(32, 4, &node);	/* KGC_CHECK=1 set by t_expect_death */
	kgc_thread_attach(h, "mutator", &t);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	slot = kgc_alloc(t, node);
	kgc_set_ref(t, slot, N_LEFT, (kgc_obj)junk);
}

static void stale_pointer(void)
{
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slot = NULL, stale;
	struct kgc_frame f;

	setenv("KGC_POISON", "1", 1);
	h = t_heap(32, 4, &node);
	kgc_thread_attach(h, "mutator", &t);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	slot = kgc_alloc(t, node);
	stale = kgc_alloc(t, node);
	kgc_collect(t, KGC_GC_YOUNG);			/* 'stale' was garbage: its space is poisoned */
	kgc_set_ref(t, slot, N_LEFT, stale);
}

/* A reference to space freed while still referenced (what a sweep of a
 * live object leaves): the referent is a filler. Without KGC_CHECK: the
 * barrier does not look at values there. */
static void ref_to_filler(void)
{
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slot = NULL;
	struct kgc_frame f;

	unsetenv("KGC_CHECK");
	setenv("KGC_VERIFY", "1", 1);
	h = t_heap(32, 4, &node);
	kgc_thread_attach(h, "mutator", &t);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	slot = kgc_alloc(t, node);
	kgc_set_ref(t, slot, N_LEFT, kgc_alloc(t, node));
	kgc_collect(t, KGC_GC_FULL);			/* both old */
	kgci_obj_fill((char *)kgc_get_ref(slot, N_LEFT), 32);	/* "swept" */
	kgc_collect(t, KGC_GC_YOUNG);
}

int main(void)
{
	t_expect_death(missing_barrier, "old->young reference without a dirty card");
	t_expect_death(missing_summary, "old->young reference without a dirty card (with a dirty summary byte)");
	t_expect_death(bad_store, "is not a heap object");
	t_expect_death(stale_pointer, "reference store: thread 'mutator'");
	t_expect_death(ref_to_filler, "not an object start (a filler");
	return 0;
}
