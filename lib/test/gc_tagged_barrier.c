/* SPDX-License-Identifier: MIT */
/*
 * The write barriers and tagged immediates (kgc_options.tag_mask = 1), on
 * kgc.h's inline paths:
 *  - post-write: storing an immediate into an old object leaves its card
 *    clean, also when the immediate is a young object's address with bit 0
 *    set (a pointer there would dirty the card) or a small fixnum (a pointer
 *    there would index the region filter far outside the heap); the same
 *    store of the young object itself dirties it (the control);
 *  - pre-write (SATB): while a concurrent cycle marks, overwriting an
 *    immediate logs nothing, overwriting a reference logs it (the control),
 *    and the log never holds an immediate.
 */
#include "tgc.h"
#include "../gc_internal.h"
#include "../cycle/cm.h"

static uint32_t satb_n(kgc_thread *t)
{
	struct satb_buf *b = ((struct kgc_thread *)t)->satb;

	return b ? b->n : 0;
}

int main(void)
{
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj s[4] = { 0 };	/* 0: old holder, 1: young object, 2: old object, 3: old ballast */
	struct kgc_frame f;
	uint8_t *card;
	uint32_t n0;

	t_opts_small(&o, 64, 4);
	o.tag_mask = 1;
	o.verify = 1;
	o.ihop_percent = 1;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, s, 4, NULL);
	/* 2 MB of live old objects: over the 1% that starts a cycle */
	s[3] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 60000);
	for (int i = 0; i < 60000; i++)
		kgc_array_set_ref(t, s[3], i, kgc_alloc(t, node));
	s[0] = kgc_alloc(t, node);
	s[2] = kgc_alloc(t, node);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* both old */
	T_ASSERT_EQ(region_of(h, s[0])->type, RT_OLD);
	s[1] = kgc_alloc(t, node);
	T_ASSERT(region_is_young(region_of(h, s[1])));
	card = card_for(h, (char *)s[0] + N_RIGHT);
	T_ASSERT_EQ(*card, CARD_CLEAN);

	/* post-write barrier */
	kgc_set_ref(t, s[0], N_RIGHT, (kgc_obj)((uintptr_t)s[1] | 1));
	T_ASSERT_EQ(*card, CARD_CLEAN);
	kgc_set_ref(t, s[0], N_RIGHT, (kgc_obj)(uintptr_t)(2 * 12345 + 1));
	T_ASSERT_EQ(*card, CARD_CLEAN);
	T_ASSERT_EQ((uintptr_t)kgc_get_ref(s[0], N_RIGHT), 2 * 12345 + 1);
	kgc_set_ref(t, s[0], N_RIGHT, s[1]);		/* control: a reference cards */
	T_ASSERT_EQ(*card, CARD_DIRTY);
	kgc_set_ref(t, s[0], N_RIGHT, NULL);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(*card, CARD_CLEAN);
	printf("post-write barrier: immediates leave the card clean, a young reference dirties it\n");

	/* pre-write barrier: a cycle held in its marking phase */
	kgci_cm_test_hold(h, true);
	for (int i = 0; i < 10000 && strcmp(kgci_cm_test_state(h), "marking"); i++)
		t_churn(t, h, node, 1);
	T_ASSERT(strcmp(kgci_cm_test_state(h), "marking") == 0);
	T_ASSERT_EQ(t->pub.satb_active, 1);
	kgc_set_ref(t, s[0], N_LEFT, (kgc_obj)(uintptr_t)7);	/* over NULL */
	n0 = satb_n(t);
	kgc_set_ref(t, s[0], N_LEFT, (kgc_obj)((uintptr_t)s[2] | 1));	/* over 7 */
	T_ASSERT_EQ(satb_n(t), n0);
	kgc_set_ref(t, s[0], N_LEFT, s[2]);		/* over an immediate aliasing s[2] */
	T_ASSERT_EQ(satb_n(t), n0);
	kgc_set_ref(t, s[0], N_LEFT, (kgc_obj)(uintptr_t)9);	/* control: over s[2] */
	T_ASSERT_EQ(satb_n(t), n0 + 1);
	T_ASSERT(((struct kgc_thread *)t)->satb->e[n0] == s[2]);
	for (uint32_t i = 0; i < satb_n(t); i++)
		T_ASSERT(!((uintptr_t)((struct kgc_thread *)t)->satb->e[i] & 7));
	kgci_cm_test_hold(h, false);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ((uintptr_t)kgc_get_ref(s[0], N_LEFT), 9);
	printf("pre-write barrier: overwritten immediates are not logged, an overwritten reference is\n");
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
