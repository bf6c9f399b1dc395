/*
 * The card table's summary (kgc.h, ABI 6): a byte per 64 cards that the
 * inline barrier dirties with the card, so a young pause reads only those
 * parts of the table.
 *  - the barrier dirties the card and its summary byte, no other byte;
 *  - a young pause reads the cards of a dirty summary byte and takes it
 *    (clean after, unless a card stays dirty: then both stay dirty);
 *  - a dirty card under a clean summary byte is not read (the scan no
 *    longer grows with the card table);
 *  - a heap that a thread of ABI 5 joined (its barrier dirties only the
 *    card) reads every card: a young object such a thread stored into an
 *    old one survives.
 */
#include "tgc.h"
#include "../gc_internal.h"

#define SLOTS ((1u << 20) / sizeof(kgc_obj))	/* a 1 MiB reference array: 32 summary bytes */

/* An old reference array of its own region(s), and a node in eden. */
static kgc_obj old_array(kgc_thread *t)
{
	kgc_obj a = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, SLOTS);

	T_ASSERT(a);
	return a;
}

static void barrier_and_scan(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(64, 4, &node);
	kgc_thread *t;
	kgc_obj s[3] = { 0 };
	struct kgc_frame f;
	kgc_obj *slot;
	uint8_t *sum;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, s, 3, NULL);
	s[0] = old_array(t);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(!region_is_young(region_of(h, s[0])));
	for (size_t i = 0; i < SLOTS; i += CARDS_PER_SUM * 64)
		T_ASSERT_EQ(*card_sum_for(h, (kgc_obj *)kgc_array_data(s[0]) + i), CARD_CLEAN);

	/* the barrier: the card and its summary byte, not its neighbours' */
	slot = (kgc_obj *)kgc_array_data(s[0]) + 5000;
	sum = card_sum_for(h, slot);
	s[1] = kgc_alloc(t, node);
	KGC_FIELD(s[1], N_VALUE, int64_t) = 42;
	kgc_array_set_ref(t, s[0], 5000, s[1]);
	s[1] = NULL;
	T_ASSERT_EQ(*card_for(h, slot), CARD_DIRTY);
	T_ASSERT_EQ(*sum, CARD_DIRTY);
	T_ASSERT_EQ(sum[-1], CARD_CLEAN);
	T_ASSERT_EQ(sum[1], CARD_CLEAN);

	/* the pause reads it: the node survives; while it is young the card
	 * stays dirty, and so does its summary byte */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(KGC_FIELD(kgc_array_get_ref(s[0], 5000), N_VALUE, int64_t), 42);
	if (region_is_young(region_of(h, kgc_array_get_ref(s[0], 5000)))) {
		T_ASSERT_EQ(*card_for(h, slot), CARD_DIRTY);
		T_ASSERT_EQ(*sum, CARD_DIRTY);
	}
	/* once it is old, the pause that promoted it cleaned both */
	for (int i = 0; i < 20 && region_is_young(region_of(h, kgc_array_get_ref(s[0], 5000))); i++)
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(!region_is_young(region_of(h, kgc_array_get_ref(s[0], 5000))));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(*card_for(h, slot), CARD_CLEAN);
	T_ASSERT_EQ(*sum, CARD_CLEAN);
	T_ASSERT_EQ(KGC_FIELD(kgc_array_get_ref(s[0], 5000), N_VALUE, int64_t), 42);

	/* a dirty card (no young reference on it) under a clean summary byte
	 * is not read: it is still dirty after the pause; under a dirty one it
	 * is read and cleaned */
	slot = (kgc_obj *)kgc_array_data(s[0]) + 9000;
	*card_for(h, slot) = CARD_DIRTY;
	T_ASSERT_EQ(*card_sum_for(h, slot), CARD_CLEAN);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(*card_for(h, slot), CARD_DIRTY);
	*card_sum_for(h, slot) = CARD_DIRTY;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(*card_for(h, slot), CARD_CLEAN);
	T_ASSERT_EQ(*card_sum_for(h, slot), CARD_CLEAN);

	/* a full collection leaves the summary clean with the cards */
	kgc_array_set_ref(t, s[0], 100, kgc_alloc(t, node));
	T_ASSERT_EQ(*card_sum_for(h, (kgc_obj *)kgc_array_data(s[0]) + 100), CARD_DIRTY);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	for (size_t i = 0; i < h->ncards / CARDS_PER_SUM; i++)
		T_ASSERT_EQ(h->card_sum[i], CARD_CLEAN);
	T_ASSERT(!atomic_load(&h->card_sum_off));
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

/* What an ABI 5 program's inline barrier does: the card only. */
static void abi5_set_ref(kgc_heap *h, kgc_obj a, size_t i, kgc_obj v)
{
	kgc_obj *slot = (kgc_obj *)kgc_array_data(a) + i;

	__atomic_store_n(slot, v, __ATOMIC_RELAXED);
	*card_for(h, slot) = CARD_DIRTY;
}

static void old_abi(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(64, 4, &node);
	kgc_thread *t;
	kgc_obj s[2] = { 0 };
	struct kgc_frame f;

	T_ASSERT_EQ(kgc_thread_attach_abi(h, "abi5", &t, 5), 0);
	T_ASSERT(atomic_load(&h->card_sum_off));
	kgc_frame_push(t, &f, s, 2, NULL);
	s[0] = old_array(t);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	s[1] = kgc_alloc(t, node);
	KGC_FIELD(s[1], N_VALUE, int64_t) = 7;
	abi5_set_ref(h, s[0], 20000, s[1]);
	s[1] = NULL;
	T_ASSERT_EQ(*card_sum_for(h, (kgc_obj *)kgc_array_data(s[0]) + 20000), CARD_CLEAN);
	/* read through the card alone (the verifier is on: a lost card is a
	 * fatal "old->young reference without a dirty card") */
	for (int i = 0; i < 3; i++) {
		t_churn(t, h, node, 1);
		T_ASSERT_EQ(KGC_FIELD(kgc_array_get_ref(s[0], 20000), N_VALUE, int64_t), 7);
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT(atomic_load(&h->card_sum_off));	/* sticky: its stores may still be on cards */
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

int main(void)
{
	barrier_and_scan();
	old_abi();
	return 0;
}
