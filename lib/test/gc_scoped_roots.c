/* SPDX-License-Identifier: MIT */
/*
 * KGC_ROOTS: locals rooted for a scope, popped on every return path. A
 * function with three early returns leaves no frame behind on any of them,
 * its roots are updated by collections inside it, and nested scopes unwind
 * in order.
 */
#include "tgc.h"
#include "../gc_internal.h"

static kgc_type_id NODE;

static unsigned frame_depth(kgc_thread *t)
{
	unsigned n = 0;

	for (const struct kgc_frame *f = t->frames; f; f = f->prev)
		n++;
	return n;
}

static int64_t build(kgc_thread *t, int how)
{
	KGC_ROOTS(t, r, 2);

	r[0] = kgc_alloc(t, NODE);
	KGC_FIELD(r[0], N_VALUE, int64_t) = 41;
	if (how == 0)
		return -1;			/* early return, nothing collected */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* r[0] moves: the root follows */
	if (how == 1)
		return KGC_FIELD(r[0], N_VALUE, int64_t);
	{
		KGC_ROOTS(t, inner, 1);

		inner[0] = kgc_alloc(t, NODE);
		kgc_set_ref(t, r[0], N_LEFT, inner[0]);
		T_ASSERT_EQ(frame_depth(t), 3);
		if (how == 2)
			return KGC_FIELD(r[0], N_VALUE, int64_t) + 1;	/* both scopes end */
	}
	T_ASSERT_EQ(frame_depth(t), 2);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	return KGC_FIELD(r[0], N_VALUE, int64_t) + 2 + (kgc_get_ref(r[0], N_LEFT) != NULL);
}

int main(void)
{
	kgc_heap *h = t_heap(32, 4, &NODE);
	kgc_thread *t;
	struct kgc_frame f;
	kgc_obj base = NULL;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, &base, 1, NULL);
	T_ASSERT_EQ(build(t, 0), -1);
	T_ASSERT_EQ(frame_depth(t), 1);
	T_ASSERT_EQ(build(t, 1), 41);
	T_ASSERT_EQ(frame_depth(t), 1);
	T_ASSERT_EQ(build(t, 2), 42);
	T_ASSERT_EQ(frame_depth(t), 1);
	T_ASSERT_EQ(build(t, 3), 44);
	T_ASSERT(t->frames == &f);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);	/* the frame below was never disturbed */
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("scoped roots popped on every return path\n");
	return 0;
}
