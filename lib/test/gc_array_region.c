/* SPDX-License-Identifier: MIT */
/*
 * kgc_array_get_region / kgc_array_set_region, one thread: round trips for
 * every primitive element type (element index + count, not bytes: the
 * elements around the range stay untouched), the edges (count 0, the last
 * element, start == length), a copy from native state, and every bad
 * argument with its exact -errno and a message naming the fault, nothing
 * copied: NULL root or array, a pointer outside the heap, an instance, a
 * reference array, another element type, a type out of range, start or
 * count beyond the length (and start + count overflowing), a NULL buffer,
 * a buffer in the heap, a call inside a critical section.
 */
#include "tgc.h"

#define LEN 1000u
static const size_t esz[KGC_PRIM_COUNT] = { 1, 1, 2, 2, 4, 4, 8, 8 };

static kgc_obj arr(kgc_thread *t, enum kgc_prim p, size_t n)
{
	kgc_obj a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(p), n);

	T_ASSERT(a);
	return a;
}

/* Every type: set [100, 100+n) from a pattern, get it back, and the
 * elements around the range still zero. */
static void round_trips(kgc_thread *t, kgc_obj *slot)
{
	uint8_t in[LEN * 8], out[LEN * 8];

	for (int p = 0; p < KGC_PRIM_COUNT; p++) {
		size_t n = 333, s = esz[p];

		*slot = arr(t, (enum kgc_prim)p, LEN);
		for (size_t i = 0; i < n * s; i++)
			in[i] = (uint8_t)(i * 7 + p + 1);
		T_ASSERT_EQ(kgc_array_set_region(t, slot, (enum kgc_prim)p, 100, n, in), 0);
		T_ASSERT_EQ(memcmp((char *)kgc_array_data(*slot) + 100 * s, in, n * s), 0);
		for (size_t i = 0; i < LEN * s; i++)
			if ((i < 100 * s || i >= (100 + n) * s) && ((uint8_t *)kgc_array_data(*slot))[i])
				T_FAIL("type %d: byte %zu outside the range written", p, i);
		memset(out, 0xaa, sizeof(out));
		T_ASSERT_EQ(kgc_array_get_region(t, slot, (enum kgc_prim)p, 100, n, out), 0);
		T_ASSERT_EQ(memcmp(out, in, n * s), 0);
		T_ASSERT_EQ(out[n * s], 0xaa);	/* nothing past count elements */
		/* the edges */
		T_ASSERT_EQ(kgc_array_get_region(t, slot, (enum kgc_prim)p, LEN - 1, 1, out), 0);
		T_ASSERT_EQ(kgc_array_get_region(t, slot, (enum kgc_prim)p, LEN, 0, out), 0);
		T_ASSERT_EQ(kgc_array_set_region(t, slot, (enum kgc_prim)p, 0, 0, NULL), 0);
		T_ASSERT_EQ(kgc_array_get_region(t, slot, (enum kgc_prim)p, 0, LEN, out), 0);
	}
}

/* err with a message holding want; dst unchanged (nothing copied). */
static void expect(int got, int err, const char *want, const uint8_t *dst, uint8_t fill, size_t n)
{
	T_ASSERT_EQ(got, err);
	if (!strstr(kgc_last_error(), want))
		T_FAIL("kgc_last_error '%s' does not say '%s'", kgc_last_error(), want);
	for (size_t i = 0; i < n; i++)
		if (dst[i] != fill)
			T_FAIL("byte %zu copied (%#x) by a failing call", i, dst[i]);
}

static void bad_args(kgc_thread *t, kgc_obj *s, kgc_type_id node)
{
	uint8_t buf[64], *elems;
	static uint8_t not_heap[64];
	kgc_obj none = NULL, p;
	size_t len;

	s[0] = arr(t, KGC_PRIM_INT, 16);
	s[1] = kgc_alloc(t, node);
	s[2] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 4);
	s[3] = arr(t, KGC_PRIM_BYTE, 64);
	T_ASSERT(s[1] && s[2]);
	memset(buf, 0x5c, sizeof(buf));
	memset(kgc_array_data(s[0]), 0x11, 64);

	expect(kgc_array_get_region(t, NULL, KGC_PRIM_INT, 0, 1, buf), -EINVAL, "NULL array root", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &none, KGC_PRIM_INT, 0, 1, buf), -EINVAL, "NULL array", buf, 0x5c, 64);
	p = (kgc_obj)not_heap;
	expect(kgc_array_get_region(t, &p, KGC_PRIM_BYTE, 0, 1, buf), -EINVAL, "not an object of", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &s[1], KGC_PRIM_INT, 0, 1, buf), -EINVAL, "not a primitive array", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &s[2], KGC_PRIM_LONG, 0, 1, buf), -EINVAL, "not a primitive array", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &s[0], KGC_PRIM_LONG, 0, 1, buf), -EINVAL, "another type", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &s[0], KGC_PRIM_FLOAT, 0, 1, buf), -EINVAL, "another type", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &s[0], KGC_PRIM_COUNT, 0, 1, buf), -EINVAL, "element type 8", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &s[0], (enum kgc_prim)-1, 0, 1, buf), -EINVAL, "element type -1", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &s[0], KGC_PRIM_INT, 17, 0, buf), -ERANGE, "length 16", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &s[0], KGC_PRIM_INT, 10, 7, buf), -ERANGE, "[10, 10 + 7)", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &s[0], KGC_PRIM_INT, 1, SIZE_MAX, buf), -ERANGE, "beyond", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &s[0], KGC_PRIM_INT, SIZE_MAX, 2, buf), -ERANGE, "beyond", buf, 0x5c, 64);
	expect(kgc_array_get_region(t, &s[0], KGC_PRIM_INT, 0, 1, NULL), -EINVAL, "NULL buffer", buf, 0x5c, 64);
	/* a buffer in the heap (another array's elements) */
	expect(kgc_array_get_region(t, &s[0], KGC_PRIM_INT, 0, 16, kgc_array_data(s[3])), -EINVAL,
	       "lies in the heap", kgc_array_data(s[3]), 0, 64);
	/* set: the array stays as it was */
	expect(kgc_array_set_region(t, &s[0], KGC_PRIM_INT, 8, 9, buf), -ERANGE, "beyond",
	       kgc_array_data(s[0]), 0x11, 64);
	expect(kgc_array_set_region(t, &s[0], KGC_PRIM_SHORT, 0, 1, buf), -EINVAL, "another type",
	       kgc_array_data(s[0]), 0x11, 64);

	/* inside a critical section: -EPERM */
	elems = kgc_critical_get(t, &s[3], &len);
	T_ASSERT(elems);
	expect(kgc_array_get_region(t, &s[0], KGC_PRIM_INT, 0, 1, buf), -EPERM, "inside a critical section",
	       buf, 0x5c, 64);
	T_ASSERT_EQ(kgc_critical_release(t, &s[3], elems, 0), 0);

	/* from native state (s[0] is a frame slot): works, the thread stays native */
	kgc_enter_native(t);
	T_ASSERT_EQ(kgc_array_get_region(t, &s[0], KGC_PRIM_INT, 2, 3, buf), 0);
	T_ASSERT_EQ(kgc_array_set_region(t, &s[0], KGC_PRIM_INT, 0, 1, buf + 60), 0);
	kgc_leave_native(t);
	T_ASSERT_EQ(memcmp(buf, (char *)kgc_array_data(s[0]) + 8, 12), 0);
	T_ASSERT_EQ(((uint32_t *)kgc_array_data(s[0]))[0], 0x5c5c5c5c);
}

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(64, 4, &node);
	kgc_thread *t;
	kgc_obj roots[4] = { 0 };
	struct kgc_frame f;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, roots, 4, NULL);
	round_trips(t, &roots[0]);
	bad_args(t, roots, node);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
