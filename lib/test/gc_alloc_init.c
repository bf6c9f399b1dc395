/* SPDX-License-Identifier: MIT */
/*
 * kgc_alloc_init (API v2): an instance with its first reference fields set.
 *  - inline (a type whose references lead its payload): the object is
 *    bumped out of the TLAB, its fields are the values (objects, NULL, a
 *    tagged immediate), the rest zero, like the library's path; the
 *    barrier-free stores survive young and full collections that move
 *    both the object and its referents, with the verifier on;
 *  - a type whose references do not lead (offsets 16 and 32): the library's
 *    path stores at the right offsets;
 *  - the values need no root: with KGC_STALE_CHECK=1 (a young collection
 *    in every allocation, evacuated regions PROT_NONE) an object only the
 *    argument array names is kept, and the field gets its new address;
 *  - bad input: an array type, more values than reference fields or than
 *    KGC_ALLOC_INIT_MAX, NULL values, native state: NULL with a message;
 *    checked mode aborts naming the call.
 */
#include "tgc.h"

static kgc_type_id NODE, SPARSE;	/* SPARSE: {int64, ref, int64, ref} */

static kgc_heap *heap(unsigned stale)
{
	static const uint32_t offs[2] = { 16, 32 };
	struct kgc_type_desc d = { .name = "sparse", .payload_size = 32, .nrefs = 2, .ref_offsets = offs };
	struct kgc_options o;
	kgc_heap *h;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 64 << 20;
	o.region_size = 1 << 20;
	o.verify = 1;
	o.tag_mask = 1;
	o.stale_check = stale;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_type_register(h, &d, &SPARSE), 0);
	return h;
}

static kgc_obj node(kgc_thread *t, int64_t v)
{
	kgc_obj o = kgc_alloc(t, NODE);

	T_ASSERT(o);
	KGC_FIELD(o, N_VALUE, int64_t) = v;
	return o;
}

static void inline_path(kgc_heap *h, kgc_thread *t)
{
	struct kgc_thread_pub_v5 *x = (struct kgc_thread_pub_v5 *)t;
	kgc_obj imm = (kgc_obj)(uintptr_t)(21 << 1 | 1), was[3];
	char *top;

	KGC_ROOTS(t, r, 4);
	r[0] = node(t, 1);			/* learns the type table */
	T_ASSERT_EQ(x->type_init_refs[NODE], 2);
	T_ASSERT_EQ(x->type_init_refs[SPARSE], 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* r[0] old */
	r[1] = node(t, 2);			/* young */
	top = x->pub.tlab_top;
	T_ASSERT((size_t)(x->pub.tlab_end - top) >= 64);
	{
		kgc_obj v[2] = { r[0], r[1] };

		r[2] = kgc_alloc_init(t, NODE, v, 2);
	}
	T_ASSERT((char *)r[2] == top && x->pub.tlab_top == top + 32);	/* bumped inline */
	{
		kgc_obj v[1] = { imm };

		r[3] = kgc_alloc_init(t, NODE, v, 1);
	}
	T_ASSERT((char *)r[3] == top + 32);
	T_ASSERT_EQ(kgc_obj_type(r[2]), NODE);
	T_ASSERT_EQ(kgc_obj_size(r[2]), 32);
	T_ASSERT(kgc_get_ref(r[3], N_LEFT) == imm && kgc_get_ref(r[3], N_RIGHT) == NULL);
	T_ASSERT_EQ(KGC_FIELD(r[3], N_VALUE, int64_t), 0);
	was[0] = r[0], was[1] = r[1], was[2] = r[2];
	for (int kind = 0; kind < 2; kind++) {
		T_ASSERT_EQ(kgc_collect(t, kind ? KGC_GC_FULL : KGC_GC_YOUNG), 0);
		T_ASSERT(kgc_get_ref(r[2], N_LEFT) == r[0] && kgc_get_ref(r[2], N_RIGHT) == r[1]);
		T_ASSERT_EQ(KGC_FIELD(kgc_get_ref(r[2], N_LEFT), N_VALUE, int64_t), 1);
		T_ASSERT_EQ(KGC_FIELD(kgc_get_ref(r[2], N_RIGHT), N_VALUE, int64_t), 2);
		T_ASSERT_EQ(KGC_FIELD(r[2], N_VALUE, int64_t), 0);
		T_ASSERT(kgc_get_ref(r[3], N_LEFT) == imm);
	}
	T_ASSERT(r[1] != was[1] && r[2] != was[2]);	/* the young ones moved */
	(void)h;
}

static void sparse_type(kgc_thread *t)
{
	KGC_ROOTS(t, r, 2);
	r[0] = node(t, 5);
	{
		kgc_obj v[2] = { r[0], r[0] };

		r[1] = kgc_alloc_init(t, SPARSE, v, 2);
	}
	T_ASSERT(r[1]);
	T_ASSERT_EQ(KGC_FIELD(r[1], 8, int64_t), 0);
	T_ASSERT(kgc_get_ref(r[1], 16) == r[0] && kgc_get_ref(r[1], 32) == r[0]);
	T_ASSERT_EQ(KGC_FIELD(r[1], 24, int64_t), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(kgc_get_ref(r[1], 16) == r[0] && kgc_get_ref(r[1], 32) == r[0]);
	T_ASSERT_EQ(KGC_FIELD(r[0], N_VALUE, int64_t), 5);
}

static void bad_input(kgc_thread *t)
{
	kgc_obj v[KGC_ALLOC_INIT_MAX + 1] = { 0 };

	T_ASSERT(!kgc_alloc_init(t, KGC_TYPE_REF_ARRAY, v, 1));
	T_ASSERT(strstr(kgc_last_error(), "kgc_alloc_init: type"));
	T_ASSERT(!kgc_alloc_init(t, NODE, v, 3));
	T_ASSERT(strstr(kgc_last_error(), "with 3 reference(s)"));
	T_ASSERT(!kgc_alloc_init(t, NODE, v, KGC_ALLOC_INIT_MAX + 1));
	T_ASSERT(!kgc_alloc_init(t, NODE, NULL, 1));
	T_ASSERT(strstr(kgc_last_error(), "from NULL"));
	T_ASSERT(!kgc_alloc_init(t, 0, v, 0));
	T_ASSERT(kgc_alloc_init(t, NODE, NULL, 0));	/* nothing to store */
	kgc_enter_native(t);
	T_ASSERT(!kgc_alloc_init(t, NODE, v, 1));
	T_ASSERT(strstr(kgc_last_error(), "kgc_alloc_init"));
	kgc_leave_native(t);
}

/* A collection in every allocation: the values must be the library's roots. */
static void unrooted_values(void)
{
	kgc_heap *h = heap(1);
	kgc_thread *t;
	uint64_t gcs;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	{
		KGC_ROOTS(t, r, 2);
		for (int i = 0; i < 50; i++) {
			kgc_obj v[2], was;

			v[0] = node(t, 100 + i);	/* named by v[] only */
			v[1] = r[1];
			was = v[0];
			gcs = t_stats(h).young_gcs;
			r[1] = kgc_alloc_init(t, NODE, v, 2);
			T_ASSERT(r[1]);
			T_ASSERT(t_stats(h).young_gcs > gcs);	/* it collected */
			T_ASSERT(kgc_get_ref(r[1], N_LEFT) != was);	/* moved, stored where */
			T_ASSERT_EQ(KGC_FIELD(kgc_get_ref(r[1], N_LEFT), N_VALUE, int64_t), 100 + i);
		}
		for (int i = 49; i >= 0; i--, r[1] = kgc_get_ref(r[1], N_RIGHT))
			T_ASSERT_EQ(KGC_FIELD(kgc_get_ref(r[1], N_LEFT), N_VALUE, int64_t), 100 + i);
		T_ASSERT(r[1] == NULL);
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

static void checked_too_many(void)	/* KGC_CHECK=1 set by t_expect_death */
{
	kgc_heap *h = heap(0);
	kgc_thread *t;
	kgc_obj v[3] = { 0 };

	T_ASSERT_EQ(kgc_thread_attach(h, "mutator", &t), 0);
	kgc_alloc_init(t, NODE, v, 3);
}

int main(void)
{
	kgc_heap *h = heap(0);
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	inline_path(h, t);
	sparse_type(t);
	bad_input(t);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	unrooted_values();
	printf("kgc_alloc_init: inline and library paths, values kept across collections\n");
	t_expect_death(checked_too_many, "kgc_alloc_init: thread 'mutator': type");
	return 0;
}
