/* SPDX-License-Identifier: MIT */
/*
 * The card table's sweep (card_next_unclean, gc_internal.h), which the
 * young pause's card scan and refinement run over every old region: it
 * skips a line of 64 clean cards at once, then 8, then one. Against a plain
 * byte-by-byte scan, over seeded random tables: (1) every card that is not
 * clean (dirty or refined) is found, in order, none twice, no clean one;
 * (2) that holds for a lone card at every position of a 64-card line, at a
 * table's last card, in tables whose length is not a multiple of 8 or 64,
 * and when the sweep starts anywhere inside a line (the scan restarts at
 * the card after each one it finds).
 */
#include <stdlib.h>
#include <string.h>
#include "tgc.h"
#include "../gc_internal.h"

static uint64_t rng = 0x63617264ull;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 32);
}

/* Sweep c[from, nc) both ways; returns the cards found. */
static size_t sweep_check(const uint8_t *c, size_t from, size_t nc)
{
	size_t want = from, found = 0;

	for (size_t i = card_next_unclean(c, from, nc); i < nc; i = card_next_unclean(c, i + 1, nc)) {
		while (want < nc && c[want] == CARD_CLEAN)
			want++;
		T_ASSERT_EQ(i, want);
		T_ASSERT(c[i] != CARD_CLEAN);
		want++;
		found++;
	}
	while (want < nc && c[want] == CARD_CLEAN)
		want++;
	T_ASSERT_EQ(want, nc);	/* nothing left after the sweep's end */
	return found;
}

int main(void)
{
	size_t lens[] = { 2048, 2047, 2049, 63, 64, 65, 8, 7, 1, 4096 + 24 };
	uint8_t *c = aligned_alloc(64, 8192);
	size_t total = 0;

	T_ASSERT(c != NULL);
	/* (2) one card at each position of the first lines and at the end */
	for (size_t nc = 128; nc <= 136; nc += 8)
		for (size_t pos = 0; pos < nc; pos++) {
			memset(c, CARD_CLEAN, nc);
			c[pos] = pos & 1 ? CARD_DIRTY : CARD_REFINED;
			for (size_t from = 0; from <= pos; from += 1 + (from & 7))
				T_ASSERT_EQ(sweep_check(c, from, nc), 1);
			T_ASSERT_EQ(sweep_check(c, pos + 1, nc), 0);
		}
	/* (1) random tables, sparse to dense, random starts */
	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
		for (int round = 0; round < 200; round++) {
			size_t nc = lens[k], dirty = next() % (round % 4 == 0 ? nc + 1 : 4);

			memset(c, CARD_CLEAN, nc);
			for (size_t d = 0; d < dirty; d++)
				c[next() % nc] = next() & 1 ? CARD_DIRTY : CARD_REFINED;
			total += sweep_check(c, round % 3 ? 0 : next() % nc, nc);
		}
	printf("card sweep: %zu cards found, all in order, none missed\n", total);
	T_ASSERT(total > 1000);
	free(c);
	return 0;
}
