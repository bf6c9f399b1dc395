/* SPDX-License-Identifier: MIT */
/*
 * Tiny test helpers shared by lib/test programs. A test program is one
 * behaviour (or a few closely related ones) and exits 0 (pass), 77 (skip,
 * with a reason on the last line) or 1 (fail, with file:line and message).
 */
#ifndef KGC_TEST_H
#define KGC_TEST_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <kgc.h>

#define T_SKIP 77

#define T_FAIL(...) do { \
	fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); \
	fprintf(stderr, " (kgc_last_error: %s)\n", kgc_last_error()); \
	exit(1); \
} while (0)

#define T_ASSERT(cond) do { if (!(cond)) T_FAIL("%s", #cond); } while (0)

#define T_ASSERT_EQ(a, b) do { \
	long long _a = (long long)(a), _b = (long long)(b); \
	if (_a != _b) T_FAIL("%s == %s: %lld != %lld", #a, #b, _a, _b); \
} while (0)

#define T_SKIP_IF(cond, reason) do { \
	if (cond) { printf("SKIP: %s\n", reason); exit(T_SKIP); } \
} while (0)

/* Splitmix64: seeded, reproducible randomness for stress tests. */
static inline unsigned long long t_rand(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Seed from KGC_TEST_SEED (printed so a failure can be replayed). */
static inline unsigned long long t_seed(void)
{
	const char *s = getenv("KGC_TEST_SEED");
	unsigned long long v = s ? strtoull(s, NULL, 0) : 0x6b6763ULL;

	printf("seed: KGC_TEST_SEED=%#llx\n", v);
	return v;
}

#endif
