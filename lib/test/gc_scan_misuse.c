/* SPDX-License-Identifier: MIT */
/*
 * What a scan function or a heap walk callback may not do (kgc_scan.3,
 * kgc_heap_walk.3), caught:
 *  - a scan function reporting a slot outside its object: fatal, naming
 *    the type (any mode);
 *  - a scan function that allocates: checked mode aborts naming it;
 *  - a walk callback that allocates: -EPERM-like refusal (NULL and the
 *    error) without checked mode, an abort with it;
 *  - kgc_walk_refs outside a callback, unknown walk flags, bad scanned
 *    type descriptors: -EINVAL.
 */
#include "tscan.h"

static kgc_heap *h;
static kgc_thread *t;
static kgc_type_id NODE;
static kgc_obj s[2];
static struct kgc_frame f;

static void scan_outside(kgc_obj o, struct kgc_slot_visitor *v, void *ctx)
{
	kgc_visit_slot(v, &KGC_FIELD(o, 64, kgc_obj));	/* past its 16-byte payload */
}

static void scan_allocates(kgc_obj o, struct kgc_slot_visitor *v, void *ctx)
{
	kgc_alloc(t, NODE);
}

static void setup_with(kgc_scan_fn fn)
{
	kgc_type_id ty;

	h = t_heap(32, 4, &NODE);
	ty = t_register_scanned(h, "badscan", 16, fn);
	T_ASSERT_EQ(kgc_thread_attach(h, "mutator", &t), 0);
	kgc_frame_push(t, &f, s, 2, NULL);
	s[0] = kgc_alloc(t, ty);
	kgc_collect(t, KGC_GC_YOUNG);
}

static void die_outside(void) { setup_with(scan_outside); }
static void die_allocates(void) { setup_with(scan_allocates); }

static int walk_allocates(const struct kgc_walk_object *o, void *ctx)
{
	*(kgc_obj *)ctx = kgc_alloc(t, NODE);
	return 1;
}

static void die_walk_allocates(void)
{
	kgc_obj got;

	h = t_heap(32, 4, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "mutator", &t), 0);
	kgc_frame_push(t, &f, s, 2, NULL);
	s[0] = kgc_alloc(t, NODE);
	kgc_heap_walk(t, 0, walk_allocates, &got);
}

static void no_ref(kgc_obj r, void *ctx)
{
	T_FAIL("kgc_walk_refs outside a callback reported %p", (void *)r);
}

int main(void)
{
	struct kgc_scan_type_desc d = { .size = sizeof(d), .payload_size = 16, .name = "x",
					.scan = variant_scan };
	struct kgc_walk_object wo = { .size = sizeof(wo) };
	kgc_type_id id;
	kgc_obj got = (kgc_obj)1;

	t_expect_death(die_outside, "scan function of type 'badscan' reported slot");
	t_expect_death(die_allocates, "kgc_alloc called from a scan function");
	t_expect_death(die_walk_allocates, "kgc_alloc called from a heap walk callback");

	unsetenv("KGC_CHECK");
	h = t_heap(32, 4, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "mutator", &t), 0);
	kgc_frame_push(t, &f, s, 2, NULL);
	s[0] = kgc_alloc(t, NODE);
	T_ASSERT_EQ(kgc_heap_walk(t, 0, walk_allocates, &got), 1);
	T_ASSERT(got == NULL);
	T_ASSERT(strstr(kgc_last_error(), "kgc_alloc called from a heap walk callback"));
	T_ASSERT_EQ(kgc_walk_refs(&wo, no_ref, NULL), -EINVAL);	/* outside a callback */
	T_ASSERT_EQ(kgc_heap_walk(t, 8, walk_allocates, &got), -EINVAL);
	T_ASSERT_EQ(kgc_heap_walk(t, 0, NULL, NULL), -EINVAL);
	d.size = 8;
	T_ASSERT_EQ(kgc_type_register_scanned(h, &d, &id), -EINVAL);
	d.size = sizeof(d);
	d.reserved[2] = 1;
	T_ASSERT_EQ(kgc_type_register_scanned(h, &d, &id), -EINVAL);
	d.reserved[2] = 0;
	d.scan = NULL;
	T_ASSERT_EQ(kgc_type_register_scanned(h, &d, &id), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "no scan function"));
	d.scan = variant_scan;
	d.payload_size = 64u << 20;
	T_ASSERT_EQ(kgc_type_register_scanned(h, &d, &id), -EINVAL);
	T_ASSERT_EQ(kgc_type_register_scanned(h, NULL, &id), -EINVAL);
	printf("bad arguments refused: -EINVAL\n");
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
