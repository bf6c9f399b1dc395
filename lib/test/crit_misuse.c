/* Critical-section misuse is caught: checked mode dies with one message naming
 * thread and array; unchecked mode returns an error. */
#include "tgc.h"

static kgc_heap *h;
static kgc_thread *t;
static kgc_obj slot;
static struct kgc_frame f;

static void setup(void)
{
	T_ASSERT_EQ(kgc_heap_create(NULL, &h), 0);
	T_ASSERT_EQ(kgc_thread_attach(h, "worker-1", &t), 0);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	slot = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 16);
}

static void release_without_get(void)
{
	setup();
	kgc_critical_release(t, &slot, kgc_array_data(slot), 0);
}

static void release_other_pointer(void)
{
	void *p;

	setup();
	p = kgc_critical_get(t, &slot, NULL);
	kgc_critical_release(t, &slot, (char *)p + 4, 0);
}

static void detach_with_open(void)
{
	setup();
	kgc_critical_get(t, &slot, NULL);
	kgc_thread_detach(t);
}

static void destroy_with_open(void)
{
	setup();
	kgc_critical_get(t, &slot, NULL);
	kgc_heap_destroy(h);
}

static void alloc_inside(void)
{
	setup();
	kgc_critical_get(t, &slot, NULL);
	kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 1);
}

static void get_ref_array(void)
{
	setup();
	slot = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 4);
	kgc_critical_get(t, &slot, NULL);
}

static void pop_out_of_order(void)
{
	struct kgc_frame g;
	kgc_obj s2 = NULL;

	setup();
	kgc_frame_push(t, &g, &s2, 1, NULL);
	kgc_frame_pop(t, &f);
}

static void use_after_detach(void)
{
	setup();
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 1);
}

int main(void)
{
	t_expect_death(release_without_get, "kgc_critical_release: thread 'worker-1', array 0x");
	t_expect_death(release_without_get, "release without a matching critical_get");
	t_expect_death(release_other_pointer, "released pointer is not the one critical_get returned");
	t_expect_death(detach_with_open, "kgc_thread_detach: thread 'worker-1' has 1 critical section(s) open (array 0x");
	t_expect_death(destroy_with_open, "kgc_heap_destroy: thread 'worker-1' still has 1 critical section(s) open");
	t_expect_death(alloc_inside, "kgc_alloc_array inside a critical section: thread 'worker-1', array 0x");
	t_expect_death(get_ref_array, "not a primitive array");
	t_expect_death(pop_out_of_order, "popped out of order");
	t_expect_death(use_after_detach, "used after kgc_thread_detach");

	/* unchecked: errors, no abort */
	unsetenv("KGC_CHECK");
	setup();
	T_ASSERT_EQ(kgc_critical_release(t, &slot, kgc_array_data(slot), 0), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "worker-1"));
	{
		void *p = kgc_critical_get(t, &slot, NULL);

		T_ASSERT(p);
		T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 1) == NULL);
		T_ASSERT(strstr(kgc_last_error(), "inside a critical section"));
		T_ASSERT_EQ(kgc_thread_detach(t), -EBUSY);
		T_ASSERT_EQ(kgc_heap_destroy(h), -EBUSY);
		T_ASSERT_EQ(kgc_critical_release(t, &slot, (char *)p + 4, 0), -EINVAL);
		T_ASSERT_EQ(kgc_critical_release(t, &slot, p, 0), 0);
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
