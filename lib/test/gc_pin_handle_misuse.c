/* SPDX-License-Identifier: MIT */
/*
 * Pinned handles misused: NULL, a tagged immediate or an address outside
 * the heap gets NULL and a message naming the call; kgc_pin_handle_new in
 * native state NULL with the message of -EPERM; a double free -EINVAL in plain mode and
 * an abort naming the call in checked mode, as does pinning an interior
 * pointer; handles still live at kgc_heap_destroy are freed with it (ASan:
 * no leak); a free from native state works (it waits for no pause here).
 */
#include "tgc.h"

static kgc_type_id NODE;

static void double_free_checked(void)
{
	kgc_heap *h = t_heap(16, 4, &NODE);
	kgc_thread *t;
	kgc_pin_handle p;

	T_ASSERT_EQ(kgc_thread_attach(h, "checked", &t), 0);
	p = kgc_pin_handle_new(t, kgc_alloc(t, NODE));
	T_ASSERT_EQ(kgc_pin_handle_free(t, p), 0);
	kgc_pin_handle_free(t, p);
}

static void interior_checked(void)
{
	kgc_heap *h = t_heap(16, 4, &NODE);
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(h, "checked", &t), 0);
	kgc_pin_handle_new(t, (kgc_obj)((char *)kgc_alloc(t, NODE) + 8));
}

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_pin_handle p, keep[300];
	kgc_obj o1;
	int x;

	setvbuf(stdout, NULL, _IOLBF, 0);
	t_opts_small(&o, 16, 4);
	o.tag_mask = 1;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	T_ASSERT(kgc_pin_handle_new(t, NULL) == NULL);
	T_ASSERT(strstr(kgc_last_error(), "kgc_pin_handle_new") && strstr(kgc_last_error(), "NULL"));
	T_ASSERT(kgc_pin_handle_new(t, (kgc_obj)(uintptr_t)0x2b) == NULL);
	T_ASSERT(strstr(kgc_last_error(), "tagged immediate"));
	T_ASSERT(kgc_pin_handle_new(t, (kgc_obj)&x) == NULL);
	T_ASSERT(strstr(kgc_last_error(), "not a heap object"));
	o1 = kgc_alloc(t, NODE);	/* no other thread: it holds still in native state */
	kgc_enter_native(t);
	T_ASSERT(kgc_pin_handle_new(t, o1) == NULL);
	kgc_leave_native(t);
	T_ASSERT(strstr(kgc_last_error(), "kgc_pin_handle_new in native state"));
	T_ASSERT_EQ(kgc_pin_handle_free(t, NULL), -EINVAL);
	p = kgc_pin_handle_new(t, o1);
	T_ASSERT(p);
	kgc_enter_native(t);
	T_ASSERT_EQ(kgc_pin_handle_free(t, p), 0);
	kgc_leave_native(t);
	T_ASSERT_EQ(kgc_pin_handle_free(t, p), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "freed twice"));
	for (int i = 0; i < 300; i++)	/* three blocks, left to heap destroy */
		T_ASSERT((keep[i] = kgc_pin_handle_new(t, kgc_alloc(t, NODE))));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("bad arguments refused; double free -EINVAL; live handles freed by heap destroy\n");
	t_expect_death(double_free_checked, "kgc_pin_handle_free: thread 'checked'");
	t_expect_death(interior_checked, "kgc_pin_handle_new: thread 'checked'");
	return 0;
}
