/* SPDX-License-Identifier: MIT */
/*
 * markbits.c - mark bitmaps (markbits.h): allocation from the OS (backend.c)
 * and the whole-word operations on ranges of them.
 */
#include <errno.h>
#include <string.h>
#include "heap/markbits.h"

/* A bitmap for the bytes from base. */
int kgci_markbits_init(struct markbits *m, const char *base, size_t bytes)
{
	m->base = base;
	m->nwords = (bytes / WORD + 63) / 64;
	m->w = kgci_os_alloc(m->nwords * sizeof(uint64_t));
	return m->w ? 0 : -ENOMEM;
}

void kgci_markbits_destroy(struct markbits *m)
{
	if (m->w)
		kgci_os_free(m->w, m->nwords * sizeof(uint64_t));
	m->w = NULL;
}

/* Clear [lo, hi): regions are aligned to far more than 64 words, so whole
 * bitmap words (hi rounded up to one). */
void kgci_markbits_clear(struct markbits *m, const void *lo, const void *hi)
{
	size_t b = mb_bit(m, lo), e = mb_bit(m, hi);

	memset(&m->w[b / 64], 0, ((e - b + 63) / 64) * sizeof(uint64_t));
}

void kgci_markbits_clear_all(struct markbits *m)
{
	memset(m->w, 0, m->nwords * sizeof(uint64_t));
}

/* Bits set in the 64-word blocks of [lo, hi). */
size_t kgci_markbits_count(const struct markbits *m, const void *lo, const void *hi)
{
	size_t b = mb_bit(m, lo) / 64, e = mb_bit(m, hi) / 64, n = 0;

	for (; b < e; b++)
		n += (size_t)__builtin_popcountll(m->w[b]);
	return n;
}

/* The first marked address in [lo, hi), or NULL. */
const char *kgci_markbits_first(const struct markbits *m, const void *lo, const void *hi)
{
	size_t e = mb_bit(m, hi);

	for (size_t b = mb_bit(m, lo); b < e; b++) {
		if (b % 64 == 0 && b + 64 <= e && !m->w[b / 64]) {
			b += 63;
			continue;
		}
		if (m->w[b / 64] >> (b % 64) & 1)
			return m->base + b * WORD;
	}
	return NULL;
}
