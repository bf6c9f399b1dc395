/* SPDX-License-Identifier: MIT */
/*
 * Checked mode (KGC_CHECK=1, like -Xcheck:jni) stops each misuse with a
 * message naming it, before it corrupts anything:
 *  - kgc_array_set_ref past the end of the array;
 *  - kgc_set_ref at an offset that is not a reference field;
 *  - kgc_frame_push inside a critical section;
 *  - kgc_critical_get on an address outside the heap that looks like an array;
 *  - kgc_frame_pop(t, NULL).
 * Without checked mode kgc_frame_pop(t, NULL) is still a clean -EINVAL, and a
 * negative number in a KGC_* variable is refused by kgc_heap_create.
 */
#include <errno.h>
#include "tgc.h"

static kgc_type_id node;
static kgc_heap *h;
static kgc_thread *t;
static kgc_obj slots[2];
static struct kgc_frame f;

static void setup(void)
{
	h = t_heap(32, 4, &node);	/* KGC_CHECK=1 set by t_expect_death */
	T_ASSERT_EQ(kgc_thread_attach(h, "mutator", &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc(t, node);
	slots[1] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 4);
	T_ASSERT(slots[0] && slots[1]);
}

static void array_set_past_end(void)
{
	setup();
	kgc_array_set_ref(t, slots[1], 4, slots[0]);
}

static void set_ref_prim_offset(void)
{
	setup();
	kgc_set_ref(t, slots[0], N_VALUE, slots[0]);
}

static void frame_push_in_critical(void)
{
	kgc_obj a[1] = { NULL }, more[1] = { NULL };
	struct kgc_frame f2;
	size_t len;

	setup();
	a[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 8);
	slots[0] = a[0];
	T_ASSERT(kgc_critical_get(t, &slots[0], &len));
	kgc_frame_push(t, &f2, more, 1, NULL);
}

static void critical_get_outside(void)
{
	static uint64_t fake[4] = { 0x40, 2, 0, 0 };	/* a header with the prim-array bits */
	kgc_obj o = (kgc_obj)fake;
	size_t len;

	setup();
	kgc_critical_get(t, &o, &len);
}

static void frame_pop_null(void)
{
	setup();
	kgc_frame_pop(t, NULL);
}

int main(void)
{
	kgc_heap *hp;

	t_expect_death(array_set_past_end, "index 4 out of bounds");
	t_expect_death(set_ref_prim_offset, "not a reference field");
	t_expect_death(frame_push_in_critical, "kgc_frame_push inside a critical section");
	t_expect_death(critical_get_outside, "not a heap object");
	t_expect_death(frame_pop_null, "kgc_frame_pop: thread 'mutator': frame (nil)");

	/* plain mode: a clean error, no crash */
	unsetenv("KGC_CHECK");
	h = t_heap(32, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "mutator", &t), 0);
	T_ASSERT_EQ(kgc_frame_pop(t, NULL), -EINVAL);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);

	/* negative numbers are not huge numbers */
	const char *vars[] = { "KGC_GC_THREADS", "KGC_TENURE", "KGC_IHOP", "KGC_HEAP_MAX" };

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		setenv(vars[i], "-3", 1);
		hp = NULL;
		T_ASSERT_EQ(kgc_heap_create(NULL, &hp), -EINVAL);
		T_ASSERT(hp == NULL);
		printf("%s=-3 refused: %s\n", vars[i], kgc_last_error());
		T_ASSERT(strstr(kgc_last_error(), vars[i]));
		unsetenv(vars[i]);
	}
	return 0;
}
