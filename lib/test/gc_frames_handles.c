/* Frames with a refmap: only reference slots are visited and updated;
 * nested frames and handles are updated after moves; popping a frame that
 * is not on top fails. */
#include "tgc.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h = t_heap(32, 4, &node);
	kgc_thread *t;
	kgc_obj a[3] = { 0 }, b[70] = { 0 };
	uint64_t refmap_a[1] = { 0x5 };			/* slots 0 and 2 */
	uint64_t refmap_b[2] = { 0, 1ull << (65 - 64) };	/* slot 65 only */
	struct kgc_frame fa, fb;
	kgc_handle hd;
	kgc_obj old0, old2, oldh, old65;

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &fa, a, 3, refmap_a);
	a[0] = kgc_alloc(t, node);
	KGC_FIELD(a[0], N_VALUE, int64_t) = 10;
	a[1] = (kgc_obj)(uintptr_t)0x1234;	/* not a reference: must be left alone */
	a[2] = kgc_alloc(t, node);
	KGC_FIELD(a[2], N_VALUE, int64_t) = 12;
	kgc_frame_push(t, &fb, b, 70, refmap_b);
	for (int i = 0; i < 70; i++)
		b[i] = (kgc_obj)(uintptr_t)(0x1000 + i);
	b[65] = kgc_alloc(t, node);
	KGC_FIELD(b[65], N_VALUE, int64_t) = 65;
	hd = kgc_handle_new(t, kgc_alloc(t, node));
	KGC_FIELD(kgc_handle_get(hd), N_VALUE, int64_t) = 77;
	old0 = a[0], old2 = a[2], oldh = kgc_handle_get(hd), old65 = b[65];
	T_ASSERT_EQ(kgc_frame_pop(t, &fa), -EINVAL);	/* not the top frame */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(a[0] != old0 && a[2] != old2 && b[65] != old65 && kgc_handle_get(hd) != oldh);
	T_ASSERT_EQ(KGC_FIELD(a[0], N_VALUE, int64_t), 10);
	T_ASSERT_EQ(KGC_FIELD(a[2], N_VALUE, int64_t), 12);
	T_ASSERT_EQ(KGC_FIELD(b[65], N_VALUE, int64_t), 65);
	T_ASSERT_EQ(KGC_FIELD(kgc_handle_get(hd), N_VALUE, int64_t), 77);
	T_ASSERT(a[1] == (kgc_obj)(uintptr_t)0x1234);
	for (int i = 0; i < 70; i++)
		if (i != 65)
			T_ASSERT(b[i] == (kgc_obj)(uintptr_t)(0x1000 + i));
	T_ASSERT_EQ(kgc_frame_pop(t, &fb), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), -EBUSY);	/* fa still pushed */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(KGC_FIELD(a[2], N_VALUE, int64_t), 12);
	T_ASSERT_EQ(KGC_FIELD(kgc_handle_get(hd), N_VALUE, int64_t), 77);
	kgc_handle_set(hd, NULL);
	kgc_handle_free(t, hd);
	T_ASSERT_EQ(kgc_frame_pop(t, &fa), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
