/* SPDX-License-Identifier: MIT */
/*
 * A mixed candidate's remembered set (remset.c), on its own: (1) every card
 * added is found, no other is, and a card added twice counts once, across
 * the set's growth; (2) iteration yields each card exactly once; (3) past
 * its maximum the set overflows with -E2BIG (a card it holds is still
 * accepted until then), stays overflowed, and keeps what it had; (4)
 * clearing empties it. Cards are a seeded pseudo-
 * random sample of a 2^31-card heap (the hash must spread any pattern):
 * strided ones, as one object's slots would be, and scattered ones.
 */
#include <errno.h>
#include <stdlib.h>
#include "tgc.h"
#include "../gc_internal.h"

static uint64_t rng = 0x7265736574ull;

static uint32_t next_card(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 33);	/* [0, 2^31) */
}

static uint8_t *seen;	/* per index into cards[]: times iteration yielded it */
static uint32_t *cards;
static uint32_t ncards;

static int card_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void each_card(uint32_t card, void *ctx)
{
	uint32_t *p = bsearch(&card, cards, ncards, sizeof(*cards), card_cmp);

	(void)ctx;
	if (!p)
		T_FAIL("iteration yielded card %u, never added", card);
	seen[p - cards]++;
}

int main(void)
{
	struct remset rs = { 0 };
	uint32_t n = 0;

	cards = malloc(REMSET_MAX_CARDS * sizeof(*cards));
	seen = calloc(REMSET_MAX_CARDS, 1);
	T_ASSERT(cards && seen);
	/* 1: strided runs (one object's slots) and scattered cards, each added twice */
	while (n < REMSET_MAX_CARDS / 2) {
		uint32_t c = next_card(), run = 1 + (c & 15);

		for (uint32_t k = 0; k < run && n < REMSET_MAX_CARDS / 2; k++)
			cards[n++] = c + k;
	}
	qsort(cards, n, sizeof(*cards), card_cmp);
	ncards = 0;
	for (uint32_t i = 0; i < n; i++)	/* unique */
		if (!ncards || cards[ncards - 1] != cards[i])
			cards[ncards++] = cards[i];
	for (uint32_t i = 0; i < ncards; i++) {
		T_ASSERT_EQ(kgci_remset_add(&rs, cards[i], REMSET_MAX_CARDS), 0);
		T_ASSERT_EQ(kgci_remset_add(&rs, cards[ncards - 1 - i], REMSET_MAX_CARDS), 0);
	}
	T_ASSERT_EQ(rs.n, ncards);
	T_ASSERT(!rs.overflow);
	for (uint32_t i = 0; i < ncards; i++)
		if (!kgci_remset_has(&rs, cards[i]))
			T_FAIL("card %u added but not found (%u cards in the set)", cards[i], rs.n);
	for (int i = 0; i < 100000; i++) {
		uint32_t c = next_card() | 0x80000000u;	/* never added */

		if (kgci_remset_has(&rs, c))
			T_FAIL("card %u found but never added", c);
	}
	/* 2: iteration */
	kgci_remset_each(&rs, each_card, NULL);
	for (uint32_t i = 0; i < ncards; i++)
		if (seen[i] != 1)
			T_FAIL("card %u yielded %u times by iteration", cards[i], seen[i]);
	/* 3: overflow at REMSET_MAX_CARDS, keeping what it had */
	{
		uint32_t c = 0x80000000u, added = rs.n;
		int err = 0;

		while (!err)
			if (!(err = kgci_remset_add(&rs, c++, REMSET_MAX_CARDS)))
				added++;
		T_ASSERT_EQ(err, -E2BIG);
		T_ASSERT(rs.overflow);
		T_ASSERT_EQ(added, REMSET_MAX_CARDS);
		T_ASSERT_EQ(kgci_remset_add(&rs, cards[0], REMSET_MAX_CARDS), -E2BIG);	/* stays overflowed */
		T_ASSERT(kgci_remset_has(&rs, cards[0]));
		T_ASSERT(kgci_remset_has(&rs, cards[ncards - 1]));
		printf("remset: %u cards, overflow after %u (max %u), table %u slots\n", ncards, added,
		       REMSET_MAX_CARDS, rs.cap);
	}
	/* 4: clear */
	kgci_remset_clear(&rs);
	T_ASSERT_EQ(rs.n, 0u);
	T_ASSERT(!rs.overflow);
	T_ASSERT(!kgci_remset_has(&rs, cards[0]));
	T_ASSERT_EQ(kgci_remset_add(&rs, cards[0], REMSET_MAX_CARDS), 0);
	T_ASSERT(kgci_remset_has(&rs, cards[0]));
	kgci_remset_clear(&rs);
	free(cards);
	free(seen);
	printf("PASS\n");
	return 0;
}
