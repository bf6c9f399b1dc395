/* Pin mode: a collection requested while another thread holds a critical
 * section completes without waiting (no GCLocker stall). GCLocker mode: the
 * same request stalls until the section ends. Asserted on event counts. */
#include <stdatomic.h>
#include "tgc.h"
#include "../gc_internal.h"

struct ctx {
	kgc_heap *h;
	atomic_int done;
};

static void *collector(void *arg)
{
	struct ctx *c = arg;
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(c->h, "collector", &t), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	atomic_store(&c->done, 1);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static void run(int mode)
{
	struct kgc_options o;
	struct ctx c = { 0 };
	kgc_thread *t;
	kgc_obj slot = NULL;
	struct kgc_frame f;
	pthread_t th;
	void *p;
	struct kgc_stats s;

	kgc_options_init(&o);
	o.max_heap = 32 << 20;
	o.region_size = 1 << 20;
	o.pin_mode = mode;
	T_ASSERT_EQ(kgc_heap_create(&o, &c.h), 0);
	T_ASSERT_EQ(kgc_thread_attach(c.h, "holder", &t), 0);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	slot = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 1 << 16);
	p = kgc_critical_get(t, &slot, NULL);
	T_ASSERT(p);
	T_ASSERT_EQ(pthread_create(&th, NULL, collector, &c), 0);
	if (mode == KGC_PIN_MODE_PIN) {
		/* completes while we still hold the array */
		while (!atomic_load(&c.done))
			usleep(1000);
		s = t_stats(c.h);
		T_ASSERT_EQ(s.young_gcs, 1);
		T_ASSERT_EQ(s.gclocker_stalls, 0);
		T_ASSERT_EQ(s.evac_fail_pinned, 1);
	} else {
		/* cannot complete while we hold it: once the collector waits on
		 * the GCLocker (on a loaded host that may take a while), give it
		 * 100 ms more to (wrongly) finish */
		for (int i = 0; i < 10000 && !atomic_load(&((struct kgc_heap *)c.h)->sp.locker_needs_gc); i++)
			usleep(1000);
		T_ASSERT(atomic_load(&((struct kgc_heap *)c.h)->sp.locker_needs_gc));
		usleep(100 * 1000);
		T_ASSERT_EQ(atomic_load(&c.done), 0);
		s = t_stats(c.h);
		T_ASSERT_EQ(s.young_gcs, 0);
	}
	((char *)p)[0] = 1;
	T_ASSERT_EQ(kgc_critical_release(t, &slot, p, 0), 0);
	kgc_enter_native(t);	/* a managed thread must not block outside the heap's knowledge */
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	kgc_leave_native(t);
	s = t_stats(c.h);
	T_ASSERT_EQ(s.young_gcs, 1);
	T_ASSERT_EQ(s.gclocker_stalls, mode == KGC_PIN_MODE_GCLOCKER ? 1 : 0);
	T_ASSERT_EQ(s.evac_fail_pinned, mode == KGC_PIN_MODE_PIN ? 1 : 0);
	if (mode == KGC_PIN_MODE_GCLOCKER)
		T_ASSERT(s.gclocker_stall_ns > 0);
	T_ASSERT_EQ(((char *)kgc_array_data(slot))[0], 1);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(c.h), 0);
}

int main(void)
{
	run(KGC_PIN_MODE_PIN);
	run(KGC_PIN_MODE_GCLOCKER);
	return 0;
}
