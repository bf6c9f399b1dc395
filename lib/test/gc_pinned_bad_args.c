/* SPDX-License-Identifier: MIT */
/*
 * kgc_alloc_array_pinned refuses what cannot be pinned for good, with the
 * reason kgc_last_error names: a reference array, an instance type, an id
 * that is no type, a length beyond the heap, a thread in native state.
 * Nothing joins the pinned space then.
 */
#include "tgc.h"

static void refused(kgc_thread *t, kgc_type_id type, size_t len, const char *why)
{
	T_ASSERT(kgc_alloc_array_pinned(t, type, len) == NULL);
	if (!strstr(kgc_last_error(), why))
		T_FAIL("type %u: reason '%s' does not say '%s'", type, kgc_last_error(), why);
}

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(16, 4, &node);
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	refused(t, KGC_TYPE_REF_ARRAY, 10, "reference array");
	refused(t, node, 10, "not a primitive array type");
	refused(t, 0, 10, "not a primitive array type");
	refused(t, 100000, 10, "not a primitive array type");
	refused(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), (size_t)1 << 40, "do not fit");
	refused(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 17u << 20, "do not fit");
	kgc_enter_native(t);
	refused(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 10, "native");
	kgc_leave_native(t);
	T_ASSERT_EQ(t_stats(h).pinned_space_regions, 0);
	/* and a good one still works */
	T_ASSERT(kgc_alloc_array_pinned(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 10) != NULL);
	T_ASSERT_EQ(t_stats(h).pinned_space_regions, 1);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("ok: bad pinned allocations refused\n");
	return 0;
}
