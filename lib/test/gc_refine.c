/* SPDX-License-Identifier: MIT */
/*
 * Concurrent refinement (refine.c), KGC_REFINE=always, verifier on (it
 * takes a refined card only with the slot in the log: a slot the refiner
 * failed to log stops the test at the next pause).
 * (1) Old objects - nodes and a humongous reference array, made old by a
 *     full GC - get references to young objects; kgc-refine turns their
 *     dirty cards into logged slots (cards CARD_REFINED); a store into a
 *     refined card dirties it again; a young GC keeps the young objects,
 *     reachable only through those slots, and updates the slots.
 * (2) A full GC with slots logged drops the log (their cards dirty again):
 *     the objects survive, and the next young GC finds new young ones.
 * (3) KGC_REFINE=off: nothing is refined.
 * SKIP without membarrier (no refinement without it).
 */
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include "tgc.h"
#include "../gc_internal.h"

enum { NOLD = 2000, BIG = 300000, BIG_STEP = 64, NBIG = BIG / BIG_STEP };
enum { S_OLDS, S_BIG, S_TMP, NSLOTS };

static kgc_heap *h;
static kgc_thread *t;
static kgc_type_id node;
static kgc_obj slots[NSLOTS];
static struct kgc_frame frame;

static kgc_obj old_node(int i)
{
	return kgc_array_get_ref(slots[S_OLDS], (size_t)i);
}

static kgc_obj *big_slot(int k)
{
	return (kgc_obj *)kgc_array_data(slots[S_BIG]) + (size_t)k * BIG_STEP;
}

/* Every old node's right and every BIG_STEP-th slot of the big array get
 * a new young node holding tag + its index. */
static void store_young(int64_t tag)
{
	for (int i = 0; i < NOLD; i++) {
		kgc_obj y = kgc_alloc(t, node);

		T_ASSERT(y);
		KGC_FIELD(y, N_VALUE, int64_t) = tag + i;
		kgc_set_ref(t, old_node(i), N_RIGHT, y);
	}
	for (int k = 0; k < NBIG; k++) {
		kgc_obj y = kgc_alloc(t, node);

		T_ASSERT(y);
		KGC_FIELD(y, N_VALUE, int64_t) = tag + NOLD + k;
		kgc_array_set_ref(t, slots[S_BIG], (size_t)k * BIG_STEP, y);
	}
}

/* Each of those young objects is there with its value (moved or not). */
static void check_young(int64_t tag, bool young)
{
	for (int i = 0; i < NOLD; i++) {
		kgc_obj y = kgc_get_ref(old_node(i), N_RIGHT);

		T_ASSERT(y);
		T_ASSERT_EQ(KGC_FIELD(y, N_VALUE, int64_t), tag + i);
		T_ASSERT_EQ(region_is_young(region_of(h, y)), young);
	}
	for (int k = 0; k < NBIG; k++) {
		kgc_obj y = *big_slot(k);

		T_ASSERT(y);
		T_ASSERT_EQ(KGC_FIELD(y, N_VALUE, int64_t), tag + NOLD + k);
	}
}

/* Slots of those whose card is in state want. */
static size_t cards_in(uint8_t want)
{
	size_t n = 0;

	for (int i = 0; i < NOLD; i++)
		n += __atomic_load_n(card_for(h, (char *)old_node(i) + N_RIGHT), __ATOMIC_RELAXED) == want;
	for (int k = 0; k < NBIG; k++)
		n += __atomic_load_n(card_for(h, big_slot(k)), __ATOMIC_RELAXED) == want;
	return n;
}

/* Waits (up to 10 s) until kgc-refine has refined every slot's card. */
static void wait_refined(void)
{
	uint64_t c, s, p;

	/* cards are marked refined before their batch's slots are logged */
	for (int i = 0; i < 10000; i++) {
		kgci_refine_test_counts(h, &c, &s, &p);
		if (cards_in(CARD_REFINED) == NOLD + NBIG && s >= NOLD + NBIG)
			break;
		usleep(1000);
	}
	printf("refined: %llu cards, %llu slots logged, %llu passes; %zu of %d cards refined\n",
	       (unsigned long long)c, (unsigned long long)s, (unsigned long long)p, cards_in(CARD_REFINED),
	       NOLD + NBIG);
	T_ASSERT_EQ(cards_in(CARD_REFINED), (size_t)(NOLD + NBIG));
	T_ASSERT(s >= NOLD + NBIG);
}

static void setup(const char *mode)
{
	setenv("KGC_REFINE", mode, 1);
	setenv("KGC_VERIFY", "1", 1);
	h = t_heap(128, 8, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	memset(slots, 0, sizeof(slots));
	kgc_frame_push(t, &frame, slots, NSLOTS, NULL);
	slots[S_OLDS] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NOLD);
	T_ASSERT(slots[S_OLDS]);
	for (int i = 0; i < NOLD; i++) {
		slots[S_TMP] = kgc_alloc(t, node);
		T_ASSERT(slots[S_TMP]);
		kgc_array_set_ref(t, slots[S_OLDS], (size_t)i, slots[S_TMP]);
	}
	slots[S_TMP] = NULL;
	slots[S_BIG] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, BIG);
	T_ASSERT(slots[S_BIG]);
	T_ASSERT_EQ(region_of(h, slots[S_BIG])->type, RT_HUM_START);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* old now; its end snapshots them */
	T_ASSERT_EQ(region_of(h, old_node(0))->type, RT_OLD);
}

static void teardown(void)
{
	T_ASSERT_EQ(kgc_frame_pop(t, &frame), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

static void test_young(void)
{
	struct kgc_stats st;
	kgc_obj y;

	setup("always");
	store_young(1000000);
	wait_refined();
	check_young(1000000, true);
	/* a store into a refined card: dirty again (kgc.h's barrier) */
	y = kgc_alloc(t, node);
	T_ASSERT(y);
	kgc_set_ref(t, old_node(0), N_LEFT, y);
	T_ASSERT_EQ(*card_for(h, (char *)old_node(0) + N_LEFT), CARD_DIRTY);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	check_young(1000000, true);	/* survivors now, found through the log */
	kgc_stats_get(h, &st, sizeof(st));
	T_ASSERT(st.refined_cards >= NBIG && st.refined_slots >= NOLD + NBIG);	/* this pause's */
	/* still old->young: dirty again, or refined again since (racing) */
	T_ASSERT_EQ(cards_in(CARD_CLEAN), (size_t)0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	check_young(1000000, false);
	teardown();
}

static void test_full(void)
{
	setup("always");
	store_young(2000000);
	wait_refined();
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	check_young(2000000, false);
	store_young(3000000);	/* refined or not, the next young GC finds them */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	check_young(3000000, true);
	teardown();
}

static void test_off(void)
{
	struct kgc_stats st;
	uint64_t c, s, p;

	setup("off");
	store_young(4000000);
	usleep(50000);
	kgci_refine_test_counts(h, &c, &s, &p);
	T_ASSERT_EQ(c, 0);
	T_ASSERT_EQ(cards_in(CARD_DIRTY), (size_t)(NOLD + NBIG));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	check_young(4000000, true);
	kgc_stats_get(h, &st, sizeof(st));
	T_ASSERT_EQ(st.refined_cards, 0);
	T_ASSERT_EQ(st.refined_slots, 0);
	teardown();
}

int main(void)
{
	long q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	T_SKIP_IF(q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED), "needs membarrier(PRIVATE_EXPEDITED)");
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_young();
	test_full();
	test_off();
	printf("gc_refine: ok\n");
	return 0;
}
