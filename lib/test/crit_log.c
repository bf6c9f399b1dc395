/* KGC_LOG=gc: one line per collection, G1 style, with the evacuation failure
 * cause and pinned region count when a pinned region failed evacuation. */
#include "tgc.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slot = NULL;
	struct kgc_frame f;
	char path[] = "/tmp/kgc-log-XXXXXX", buf[8192];
	int fd = mkstemp(path);
	FILE *in;
	size_t n;
	void *p;

	T_ASSERT(fd >= 0);
	setenv("KGC_LOG", "gc", 1);
	T_ASSERT(freopen(path, "w", stderr));
	h = t_heap(32, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	slot = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 100);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	slot = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 100);
	p = kgc_critical_get(t, &slot, NULL);
	t_collect_elsewhere(h, KGC_GC_YOUNG, 1, 0);
	T_ASSERT_EQ(kgc_critical_release(t, &slot, p, 0), 0);
	fflush(stderr);
	in = fopen(path, "r");
	n = fread(buf, 1, sizeof(buf) - 1, in);
	buf[n] = 0;
	fclose(in);
	unlink(path);
	printf("%s", buf);
	T_ASSERT(strstr(buf, "GC(1) Pause Young (Normal) "));
	T_ASSERT(strstr(buf, "GC(2) Pause Full (Explicit) "));
	T_ASSERT(strstr(buf, "GC(3) Pause Young (Normal) (Evacuation Failure: Pinned) "));
	T_ASSERT(strstr(buf, "ms [pinned regions: 1]"));
	T_ASSERT(strstr(buf, "M->"));
	T_ASSERT(strstr(buf, "M(32M) "));
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
