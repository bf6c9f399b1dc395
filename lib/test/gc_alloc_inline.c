/* SPDX-License-Identifier: MIT */
/*
 * kgc.h's inline allocation: after one slow-path allocation (the thread
 * learns the type table), instances and arrays of every array type are
 * bumped out of the TLAB back to back, with the header, length and size the
 * library's own path gives, their payload zero; a type registered later
 * takes the slow path once, then the inline one; bad types and native state
 * still fail with -EINVAL and a message; checked mode and KGC_STALE_CHECK
 * never enable the inline path; libkgc exports kgc_alloc/_array by name too.
 * Survives a young collection (verified).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "tgc.h"
#include "../gc_internal.h"

static void check_zero(kgc_obj o, size_t from)
{
	for (size_t i = from; i < kgc_obj_size(o); i++)
		T_ASSERT_EQ(((unsigned char *)o)[i], 0);
}

/* Allocations back to back in one TLAB: each starts where the last ended. */
static void bump_run(kgc_thread *t, kgc_type_id node)
{
	struct kgc_thread_pub *p = (struct kgc_thread_pub *)t;
	static const size_t lens[] = { 0, 1, 7, 8, 33 };
	kgc_obj prev = kgc_alloc(t, node);	/* may refill the TLAB */
	char *next;

	T_ASSERT(prev);
	T_ASSERT(p->ninst > 0 && p->narr == KGC_TYPE_REF_ARRAY);
	next = (char *)prev + kgc_obj_size(prev);
	for (kgc_type_id ty = 1; ty <= KGC_TYPE_REF_ARRAY; ty++) {
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			kgc_obj a;

			if ((size_t)(p->tlab_end - p->tlab_top) < 4096)
				return;	/* the next one may refill: contiguity would not hold */
			a = kgc_alloc_array(t, ty, lens[i]);
			T_ASSERT((char *)a == next);
			T_ASSERT_EQ(kgc_obj_type(a), ty);
			T_ASSERT_EQ(kgc_array_length(a), lens[i]);
			T_ASSERT_EQ(kgc_obj_size(a),
				    (KGC_ARRAY_DATA_OFFSET + (lens[i] << kgc__array_shift(ty)) + 7) & ~7ul);
			T_ASSERT_EQ(kgc__array_shift(ty), type_get(((struct kgc_thread *)t)->heap, ty)->elem_shift);
			check_zero(a, KGC_ARRAY_DATA_OFFSET);
			next += kgc_obj_size(a);
			a = kgc_alloc(t, node);
			T_ASSERT((char *)a == next);
			T_ASSERT_EQ(kgc_obj_type(a), node);
			T_ASSERT_EQ(kgc_obj_size(a), 32);
			check_zero(a, KGC_HEADER_SIZE);
			next += 32;
		}
	}
}

static void bad_input(kgc_thread *t, kgc_type_id node)
{
	T_ASSERT(!kgc_alloc(t, KGC_TYPE_REF_ARRAY));
	T_ASSERT(strstr(kgc_last_error(), "not an instance type"));
	T_ASSERT(!kgc_alloc(t, 0));
	T_ASSERT(!kgc_alloc(t, node + 100));
	T_ASSERT(!kgc_alloc_array(t, node, 3));
	T_ASSERT(strstr(kgc_last_error(), "not an array type"));
	T_ASSERT(!kgc_alloc_array(t, 0, 3));
	T_ASSERT(!kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), (size_t)1 << 40));
	kgc_enter_native(t);
	T_ASSERT(!kgc_alloc(t, node));
	T_ASSERT(strstr(kgc_last_error(), "kgc_alloc"));
	T_ASSERT(!kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 4));
	kgc_leave_native(t);
}

/* A type registered after the thread learned the table: slow once, then inline. */
static void late_type(kgc_heap *h, kgc_thread *t)
{
	struct kgc_thread_pub *p = (struct kgc_thread_pub *)t;
	struct kgc_type_desc d = { .name = "late", .payload_size = 40 };
	kgc_type_id late;
	uint32_t before = p->ninst;
	kgc_obj o;

	T_ASSERT_EQ(kgc_type_register(h, &d, &late), 0);
	T_ASSERT(late - KGC_TYPE_FIRST_USER >= before);
	o = kgc_alloc(t, late);
	T_ASSERT(o && kgc_obj_type(o) == late && kgc_obj_size(o) == 48);
	T_ASSERT(p->ninst > late - KGC_TYPE_FIRST_USER);
}

/* Checked mode or KGC_STALE_CHECK: the inline path stays off. */
static void never_inline(const char *key, const char *value)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_type_id node;

	t_opts_small(&o, 32, 4);
	T_ASSERT_EQ(kgc_options_set(&o, key, value), 0);
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	for (int i = 0; i < 1000; i++) {
		T_ASSERT(kgc_alloc(t, node));
		T_ASSERT(kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 3));
	}
	T_ASSERT_EQ(((struct kgc_thread_pub *)t)->ninst, 0);
	T_ASSERT_EQ(((struct kgc_thread_pub *)t)->narr, 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(64, 8, &node);
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	{
		KGC_ROOTS(t, r, 1);
		t_list(t, node, &r[0], 1000, 1);
		for (int k = 0; k < 50; k++)
			bump_run(t, node);
		bad_input(t, node);
		late_type(h, t);
		{	/* the exported definitions */
			kgc_obj (*xa)(kgc_thread *, kgc_type_id) =
				(kgc_obj (*)(kgc_thread *, kgc_type_id))dlsym(RTLD_DEFAULT, "kgc_alloc");
			kgc_obj (*xr)(kgc_thread *, kgc_type_id, size_t) =
				(kgc_obj (*)(kgc_thread *, kgc_type_id, size_t))dlsym(RTLD_DEFAULT, "kgc_alloc_array");

			T_ASSERT(xa && xr);
			T_ASSERT(kgc_obj_type(xa(t, node)) == node);
			T_ASSERT(kgc_array_length(xr(t, KGC_TYPE_REF_ARRAY, 5)) == 5);
		}
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
		t_list_check(r[0], 1000);
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	never_inline("KGC_CHECK", "1");
	never_inline("KGC_STALE_CHECK", "1000");
	printf("inline allocation: ok\n");
	return 0;
}
