/* 90% of the regions pinned: an allocating thread gets NULL + ENOMEM, no hang,
 * no corruption; after release the heap recovers. One OS thread drives two
 * kgc threads: "pinner" holds the critical sections (native state) while
 * "allocator" allocates. */
#include "tgc.h"

#define NREG 20
#define NPIN 18
#define ASZ (480 << 10)

int main(void)
{
	kgc_heap *h = t_heap(NREG, 2, NULL);
	kgc_thread *p, *a;
	kgc_handle hs[NPIN];
	void *ptr[NPIN];
	kgc_obj keep[64] = { 0 };
	struct kgc_frame g;
	int nalloc = 0;
	struct kgc_stats s;

	T_ASSERT_EQ(kgc_thread_attach(h, "pinner", &p), 0);
	kgc_enter_native(p);	/* never blocks the allocator's collections */
	T_ASSERT_EQ(kgc_thread_attach(h, "allocator", &a), 0);
	for (int i = 0; i < NPIN; i++) {
		kgc_obj arr = kgc_alloc_array(a, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ASZ);

		T_ASSERT(arr);
		memset(kgc_array_data(arr), i, ASZ);
		hs[i] = kgc_handle_new(a, arr);
		ptr[i] = kgc_critical_get(p, (kgc_obj *)hs[i], NULL);
		T_ASSERT(ptr[i]);
		T_ASSERT(kgc_alloc_array(a, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ASZ));	/* garbage */
	}
	s = t_stats(h);
	printf("pinned regions %u of %u\n", s.regions_pinned, s.regions_total);
	T_ASSERT(s.regions_pinned >= NREG * 9 / 10);
	kgc_frame_push(a, &g, keep, 64, NULL);
	for (;;) {
		kgc_obj o = kgc_alloc_array(a, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), 20000);

		if (!o)
			break;
		keep[nalloc++ % 64] = o;
	}
	s = t_stats(h);
	printf("allocator: NULL after %d arrays: %s; GCs %llu young %llu full; evac failures (pinned) %llu\n",
	       nalloc, kgc_last_error(), (unsigned long long)s.young_gcs, (unsigned long long)s.full_gcs,
	       (unsigned long long)s.evac_fail_pinned);
	T_ASSERT(strstr(kgc_last_error(), "out of memory"));
	T_ASSERT(s.full_gcs >= 1);
	for (int i = 0; i < NPIN; i++)
		T_ASSERT_EQ(((unsigned char *)ptr[i])[ASZ - 1], i);
	for (int i = 0; i < NPIN; i++) {
		T_ASSERT_EQ(kgc_critical_release(p, (kgc_obj *)hs[i], ptr[i], 0), 0);
		kgc_handle_free(a, hs[i]);
	}
	memset(keep, 0, sizeof(keep));
	T_ASSERT(kgc_alloc_array(a, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 8 << 20) != NULL);
	kgc_frame_pop(a, &g);
	T_ASSERT_EQ(kgc_thread_detach(a), 0);
	kgc_leave_native(p);
	T_ASSERT_EQ(kgc_thread_detach(p), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
