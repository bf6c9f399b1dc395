/* SPDX-License-Identifier: MIT */
/*
 * markbits.h - a mark bitmap: one bit per heap word, set at an object's
 * start. The concurrent cycle (cm.h), the full collection and the verifier
 * each keep one (markbits.c allocates and clears them).
 */
#ifndef KGC_MARKBITS_H
#define KGC_MARKBITS_H
#include "gc_internal.h"

static inline size_t mb_bit(const struct markbits *m, const void *p)
{
	return (size_t)((const char *)p - m->base) / WORD;
}
static inline bool mb_test(const struct markbits *m, const void *p)
{
	size_t b = mb_bit(m, p);

	return m->w[b / 64] >> (b % 64) & 1;
}
/* Set p's bit; true if it was clear (one marking thread). */
static inline bool mb_set(struct markbits *m, const void *p)
{
	size_t b = mb_bit(m, p);
	uint64_t bit = 1ull << (b % 64);

	if (m->w[b / 64] & bit)
		return false;
	m->w[b / 64] |= bit;
	return true;
}
/* Set p's bit, other threads marking too; true if this call set it (it
 * won the object). A plain load first: most objects met are marked already. */
static inline bool mb_set_par(struct markbits *m, const void *p)
{
	size_t b = mb_bit(m, p);
	uint64_t bit = 1ull << (b % 64);

	if (__atomic_load_n(&m->w[b / 64], __ATOMIC_RELAXED) & bit)
		return false;
	return !(__atomic_fetch_or(&m->w[b / 64], bit, __ATOMIC_RELAXED) & bit);
}
/* Set p's bit, other threads setting bits of the same word. */
static inline void mb_set_atomic(struct markbits *m, const void *p)
{
	size_t b = mb_bit(m, p);

	__atomic_fetch_or(&m->w[b / 64], 1ull << (b % 64), __ATOMIC_RELAXED);
}
/* The bitmap word of p's 64-word (512-byte) block. */
static inline uint64_t mb_word(const struct markbits *m, const void *p)
{
	return m->w[mb_bit(m, p) / 64];
}

/* Iterate marked object starts p in [lo, hi). */
#define MB_FOR_EACH(m, lo, hi, p)                                                   \
	for (size_t _w = mb_bit(m, lo) / 64, _we = (mb_bit(m, hi) + 63) / 64; _w < _we; _w++) \
		for (uint64_t _bits = (m)->w[_w]; _bits; _bits &= _bits - 1)             \
			if (((p) = (char *)(m)->base + ((_w * 64 + (size_t)__builtin_ctzll(_bits)) * WORD)), \
			    (p) >= (lo) && (p) < (hi))

int kgci_markbits_init(struct markbits *m, const char *base, size_t bytes);
void kgci_markbits_destroy(struct markbits *m);
void kgci_markbits_clear(struct markbits *m, const void *lo, const void *hi);	/* 512-byte aligned */
void kgci_markbits_clear_all(struct markbits *m);
size_t kgci_markbits_count(const struct markbits *m, const void *lo, const void *hi);
const char *kgci_markbits_first(const struct markbits *m, const void *lo, const void *hi);

#endif
