/* SPDX-License-Identifier: MIT */
/*
 * kgc.h's inline kgc_frame_push/_pop and kgc_obj_type (API v2, ABI 5) agree
 * with the library's exported definitions (the v1 calls, bound by name):
 *  - frames pushed and popped alternately inline and by the library, two
 *    with a refmap that leaves a raw word alone (an object's address: a
 *    root would be updated) and one holding a tagged immediate, are roots of young and full collections that move their
 *    objects, with the verifier on; a recursion 300 frames deep does the
 *    same with KGC_ROOTS scopes;
 *  - a pop of a frame not on top, of NULL, or twice: -EINVAL with the same
 *    message from both, the stack unchanged; detach with a frame pushed
 *    -EBUSY naming the count;
 *  - kgc_obj_type of instances and of every array type equals the
 *    library's, also with the runtime's 8 header bits all set, also after
 *    the objects moved;
 *  - checked mode still stops misuse on the inline path (a push in native
 *    state, a pop out of order: both reach the library's checked paths) and
 *    KGC_STALE_CHECK still stops a stale pointer while the inline frames
 *    holding the same objects are updated.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "tgc.h"

typedef void (*push_fn)(kgc_thread *, struct kgc_frame *, kgc_obj *, uint32_t, const uint64_t *);
typedef int (*pop_fn)(kgc_thread *, struct kgc_frame *);
typedef kgc_type_id (*type_fn)(kgc_obj);

static push_fn lib_push;
static pop_fn lib_pop;
static type_fn lib_type;
static kgc_type_id NODE;

static struct kgc_frame *top(kgc_thread *t)
{
	return ((struct kgc_thread_pub_v5 *)t)->frames;
}

static kgc_obj node(kgc_thread *t, int64_t v)
{
	kgc_obj o = kgc_alloc(t, NODE);

	T_ASSERT(o);
	KGC_FIELD(o, N_VALUE, int64_t) = v;
	return o;
}

static void same_type(kgc_obj o, kgc_type_id want)
{
	T_ASSERT_EQ(kgc_obj_type(o), want);
	T_ASSERT_EQ(lib_type(o), want);
}

/* Three frames, inline / library / inline, survive moving collections. */
static void mixed_frames(kgc_heap *h, kgc_thread *t)
{
	static const uint64_t bmap = 0x5;	/* slots 0 and 2: references; 1: a raw word */
	static const uint64_t cmap = 0x1;	/* slot 0: a reference; 1: a raw word */
	kgc_obj a[2] = { 0 }, b[3] = { 0 }, c[2] = { 0 }, old[3];
	kgc_obj raw = (kgc_obj)(uintptr_t)0x123458, imm = (kgc_obj)(uintptr_t)(5 << 1 | 1);
	struct kgc_frame fa, fb, fc;

	kgc_frame_push(t, &fa, a, 2, NULL);
	lib_push(t, &fb, b, 3, &bmap);
	kgc_frame_push(t, &fc, c, 2, &cmap);
	T_ASSERT(top(t) == &fc && fc.prev == &fb && fb.prev == &fa);
	T_ASSERT(fa.magic == KGC__FRAME_MAGIC && fb.magic == KGC__FRAME_MAGIC && fc.magic == KGC__FRAME_MAGIC);
	T_ASSERT(fb.refmap == &bmap && fb.nslots == 3 && fb.slots == b && fa.refmap == NULL);
	T_ASSERT(fc.refmap == &cmap && fc.nslots == 2 && fc.slots == c);
	a[0] = node(t, 1);
	a[1] = imm;
	b[0] = node(t, 2);
	b[1] = raw;
	b[2] = node(t, 3);
	kgc_set_ref(t, b[2], N_LEFT, a[0]);
	c[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 4);
	((int32_t *)kgc_array_data(c[0]))[3] = 44;
	old[0] = a[0], old[1] = b[0], old[2] = c[0];
	c[1] = old[1];		/* an object's address as a raw word: a root would update it */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(a[0] != old[0] && b[0] != old[1] && c[0] != old[2]);	/* moved, slots updated */
	for (int kind = 0; kind < 2; kind++) {
		T_ASSERT_EQ(KGC_FIELD(a[0], N_VALUE, int64_t), 1);
		T_ASSERT_EQ(KGC_FIELD(b[0], N_VALUE, int64_t), 2);
		T_ASSERT_EQ(KGC_FIELD(b[2], N_VALUE, int64_t), 3);
		T_ASSERT(kgc_get_ref(b[2], N_LEFT) == a[0]);
		T_ASSERT_EQ(((int32_t *)kgc_array_data(c[0]))[3], 44);
		T_ASSERT(a[1] == imm && b[1] == raw && c[1] == old[1]);	/* not references: untouched */
		same_type(a[0], NODE);
		same_type(c[0], KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT));
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	}
	T_ASSERT(t_stats(h).young_gcs >= 1 && t_stats(h).full_gcs >= 2);
	T_ASSERT_EQ(lib_pop(t, &fc), 0);
	T_ASSERT_EQ(fc.magic, 0);
	T_ASSERT_EQ(kgc_frame_pop(t, &fb), 0);
	T_ASSERT_EQ(fb.magic, 0);
	T_ASSERT(top(t) == &fa);
	T_ASSERT_EQ(lib_pop(t, &fa), 0);
	T_ASSERT(top(t) == NULL);
}

/* depth frames, even ones KGC_ROOTS (inline), odd ones the library's; each
 * holds a node linked to the one below; collections at the bottom. */
static int64_t deep(kgc_thread *t, kgc_obj below, int depth)
{
	int64_t sum;

	if (depth == 0) {
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
		return 0;
	}
	if (depth & 1) {
		kgc_obj r[2] = { below, NULL };
		struct kgc_frame f;

		lib_push(t, &f, r, 2, NULL);
		r[1] = node(t, depth);
		kgc_set_ref(t, r[1], N_LEFT, r[0]);
		sum = deep(t, r[1], depth - 1);
		T_ASSERT_EQ(KGC_FIELD(r[1], N_VALUE, int64_t), depth);
		T_ASSERT(kgc_get_ref(r[1], N_LEFT) == r[0]);
		T_ASSERT_EQ(lib_pop(t, &f), 0);
	} else {
		KGC_ROOTS(t, r, 2);

		r[0] = below;
		r[1] = node(t, depth);
		kgc_set_ref(t, r[1], N_LEFT, r[0]);
		sum = deep(t, r[1], depth - 1);
		T_ASSERT_EQ(KGC_FIELD(r[1], N_VALUE, int64_t), depth);
		T_ASSERT(kgc_get_ref(r[1], N_LEFT) == r[0]);
	}
	return sum + depth;
}

/* Both paths refuse the same bad pops with the same message. */
static void bad_pops(kgc_thread *t)
{
	kgc_obj a[1] = { 0 }, b[1] = { 0 };
	struct kgc_frame fa, fb, never = { 0 };
	char msg[512];

	kgc_frame_push(t, &fa, a, 1, NULL);
	lib_push(t, &fb, b, 1, NULL);
	T_ASSERT_EQ(kgc_frame_pop(t, &fa), -EINVAL);
	snprintf(msg, sizeof(msg), "%s", kgc_last_error());
	T_ASSERT(strstr(msg, "is not the top frame"));
	T_ASSERT_EQ(lib_pop(t, &fa), -EINVAL);
	T_ASSERT(!strcmp(msg, kgc_last_error()));
	T_ASSERT_EQ(kgc_frame_pop(t, NULL), -EINVAL);
	T_ASSERT_EQ(lib_pop(t, NULL), -EINVAL);
	T_ASSERT_EQ(kgc_frame_pop(t, &never), -EINVAL);
	T_ASSERT(top(t) == &fb && fb.prev == &fa);
	T_ASSERT_EQ(kgc_thread_detach(t), -EBUSY);
	T_ASSERT(strstr(kgc_last_error(), "still has 2 frame(s) pushed"));
	T_ASSERT_EQ(kgc_frame_pop(t, &fb), 0);
	T_ASSERT_EQ(kgc_frame_pop(t, &fb), -EINVAL);	/* twice */
	T_ASSERT_EQ(lib_pop(t, &fb), -EINVAL);
	T_ASSERT_EQ(lib_pop(t, &fa), 0);
	T_ASSERT(top(t) == NULL);
}

/* Every kind of object, its 8 runtime header bits clear and set. */
static void obj_types(kgc_heap *h, kgc_thread *t)
{
	kgc_obj r[KGC_TYPE_REF_ARRAY + 1] = { 0 };
	uint32_t bits;

	KGC_ROOTS(t, keep, 1);
	keep[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, KGC_TYPE_REF_ARRAY + 1);
	kgc_array_set_ref(t, keep[0], 0, node(t, 9));
	for (kgc_type_id ty = 1; ty <= KGC_TYPE_REF_ARRAY; ty++)
		kgc_array_set_ref(t, keep[0], ty, kgc_alloc_array(t, ty, 3));
	for (int pass = 0; pass < 2; pass++) {
		for (kgc_type_id ty = 0; ty <= KGC_TYPE_REF_ARRAY; ty++) {
			r[ty] = kgc_array_get_ref(keep[0], ty);
			same_type(r[ty], ty ? ty : NODE);
			T_ASSERT_EQ(kgc_obj_vm_bits_update(t, r[ty], 0, 0xff, NULL), 0);
			same_type(r[ty], ty ? ty : NODE);
			T_ASSERT_EQ(kgc_obj_vm_bits_get(t, r[ty], &bits), 0);
			T_ASSERT_EQ(bits, 0xff);
		}
		same_type(keep[0], KGC_TYPE_REF_ARRAY);
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* moves them all */
		T_ASSERT(kgc_array_get_ref(keep[0], 0) != r[0]);
	}
	(void)h;
}

static kgc_heap *heap(int tagged)
{
	struct kgc_options o;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 64 << 20;
	o.region_size = 1 << 20;
	o.verify = 1;
	o.tag_mask = tagged;
	return t_heap_opts(&o, &NODE);
}

static kgc_heap *dh;
static kgc_thread *dt;

static void checked_setup(void)	/* KGC_CHECK=1 set by t_expect_death */
{
	dh = heap(0);
	T_ASSERT_EQ(kgc_thread_attach(dh, "mutator", &dt), 0);
	T_ASSERT(((struct kgc_thread_pub *)dt)->checked);
}

static void push_in_native(void)
{
	kgc_obj s[1] = { 0 };
	struct kgc_frame f;

	checked_setup();
	kgc_enter_native(dt);
	kgc_frame_push(dt, &f, s, 1, NULL);
}

static void pop_out_of_order(void)
{
	kgc_obj a[1] = { 0 }, b[1] = { 0 };
	struct kgc_frame fa, fb;

	checked_setup();
	kgc_frame_push(dt, &fa, a, 1, NULL);
	kgc_frame_push(dt, &fb, b, 1, NULL);
	kgc_frame_pop(dt, &fa);
}

/* KGC_STALE_CHECK, plain mode (the inline path): the frame's copy is
 * updated, a raw copy of the same pointer faults. */
static void stale_beside_inline_frame(void)
{
	struct kgc_options o;
	kgc_obj raw;
	volatile int64_t v;

	unsetenv("KGC_CHECK");
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 32 << 20;
	o.stale_check = 64;
	dh = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(dh, "mutator", &dt), 0);
	T_ASSERT(!((struct kgc_thread_pub *)dt)->checked);
	KGC_ROOTS(dt, r, 1);
	r[0] = raw = node(dt, 7);
	while (t_stats(dh).young_gcs < 2)
		node(dt, 0);
	T_ASSERT(r[0] != raw);
	T_ASSERT_EQ(KGC_FIELD(r[0], N_VALUE, int64_t), 7);
	fprintf(stderr, "rooted copy updated\n");
	v = KGC_FIELD(raw, N_VALUE, int64_t);	/* faults */
	fprintf(stderr, "read %lld through a stale pointer without a fault\n", (long long)v);
}

int main(void)
{
	kgc_heap *h;
	kgc_thread *t;

	lib_push = (push_fn)dlsym(RTLD_DEFAULT, "kgc_frame_push");
	lib_pop = (pop_fn)dlsym(RTLD_DEFAULT, "kgc_frame_pop");
	lib_type = (type_fn)dlsym(RTLD_DEFAULT, "kgc_obj_type");
	T_ASSERT(lib_push && lib_pop && lib_type);
	T_ASSERT(lib_push != kgc_frame_push && lib_pop != kgc_frame_pop);	/* the inline copies are ours */

	h = heap(1);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	T_ASSERT(!((struct kgc_thread_pub *)t)->checked);
	mixed_frames(h, t);
	T_ASSERT_EQ(deep(t, NULL, 300), 300 * 301 / 2);
	T_ASSERT(top(t) == NULL);
	bad_pops(t);
	obj_types(h, t);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("inline and library frames and types agree through moving collections\n");

	t_expect_death(push_in_native, "kgc_frame_push in native state: thread 'mutator'");
	t_expect_death(pop_out_of_order, "kgc_frame_pop: thread 'mutator': frame");
	t_expect_death_without(stale_beside_inline_frame, "stale pointer: access to", "without a fault");
	return 0;
}
