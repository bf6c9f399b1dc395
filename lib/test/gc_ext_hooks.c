/* SPDX-License-Identifier: MIT */
/*
 * The extension hooks (kgc_ext.h) that layered libraries (libkgc-native)
 * build on: per-heap and per-thread slots; kgc_thread_detach runs an
 * extension's thread_detach hook once with its data on the thread (t still
 * attached and managed: it may free a handle), kgc_heap_destroy runs
 * heap_destroy once with its data on the heap; the first install wins; a
 * taken slot runs no hook; slots run out with -ENOSPC / NULL.
 */
#include <errno.h>
#include <string.h>
#include "tgc.h"
#include <kgc_ext.h>

static int heap_calls, thread_calls;
static void *heap_seen, *thread_seen;
static kgc_heap *cur_heap;

static void on_detach(kgc_thread *t, void *data)
{
	kgc_handle *hp = data;

	thread_calls++;
	thread_seen = data;
	/* the thread is usable: free what the extension rooted with it */
	kgc_handle_free(t, *hp);
}

static void on_destroy(kgc_heap *h, void *data)
{
	T_ASSERT(h == cur_heap);
	heap_calls++;
	heap_seen = data;
}

static const struct kgc_ext ext_a = { "test-a", on_detach, on_destroy };
static const struct kgc_ext ext_b = { "test-b", NULL, on_destroy };
static const struct kgc_ext others[KGC_EXT_SLOTS] = {
	{ "o1", NULL, NULL }, { "o2", NULL, NULL }, { "o3", NULL, NULL }, { "o4", NULL, NULL },
};

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_handle hd;
	int d1, d2, d3, rc;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 64u << 20;
	rc = kgc_heap_create(&o, &h);
	T_SKIP_IF(rc == -ENOSYS || rc == -EOPNOTSUPP, "no heap backend");
	T_ASSERT_EQ(rc, 0);
	cur_heap = h;
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);

	/* heap slots: empty, first install wins, take empties, a taken slot runs no hook */
	T_ASSERT(kgc_ext_heap_get(h, &ext_a) == NULL);
	T_ASSERT(kgc_ext_heap_install(h, &ext_a, &d1) == &d1);
	T_ASSERT(kgc_ext_heap_install(h, &ext_a, &d2) == &d1);
	T_ASSERT(kgc_ext_heap_get(h, &ext_a) == &d1);
	T_ASSERT(kgc_ext_heap_get(h, &ext_b) == NULL);
	T_ASSERT(kgc_ext_heap_take(h, &ext_a) == &d1);
	T_ASSERT(kgc_ext_heap_get(h, &ext_a) == NULL);
	T_ASSERT(kgc_ext_heap_install(h, &ext_a, &d2) == &d2);
	T_ASSERT(kgc_ext_heap_install(h, &ext_b, &d3) == &d3);
	T_ASSERT(kgc_ext_heap_take(h, &ext_b) == &d3);
	/* slots run out: ext_a and ext_b hold two of them */
	for (int i = 0; i < KGC_EXT_SLOTS - 2; i++)
		T_ASSERT(kgc_ext_heap_install(h, &others[i], &d3) == &d3);
	T_ASSERT(kgc_ext_heap_install(h, &others[KGC_EXT_SLOTS - 2], &d3) == NULL);
	T_ASSERT(strstr(kgc_last_error(), "o3") != NULL);

	/* thread slots: set, get, clear, refill; detach runs the hook with t usable */
	T_ASSERT(kgc_ext_thread_get(t, &ext_a) == NULL);
	T_ASSERT_EQ(kgc_ext_thread_set(t, &ext_a, &d1), 0);
	T_ASSERT(kgc_ext_thread_get(t, &ext_a) == &d1);
	T_ASSERT_EQ(kgc_ext_thread_set(t, &ext_a, NULL), 0);
	T_ASSERT(kgc_ext_thread_get(t, &ext_a) == NULL);
	for (int i = 0; i < KGC_EXT_SLOTS; i++)
		T_ASSERT_EQ(kgc_ext_thread_set(t, &others[i], &d3), 0);
	T_ASSERT_EQ(kgc_ext_thread_set(t, &ext_a, &d1), -ENOSPC);
	for (int i = 0; i < KGC_EXT_SLOTS; i++)
		T_ASSERT_EQ(kgc_ext_thread_set(t, &others[i], NULL), 0);
	hd = kgc_handle_new(t, kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 4));
	T_ASSERT(hd != NULL);
	T_ASSERT_EQ(kgc_ext_thread_set(t, &ext_a, &hd), 0);
	T_ASSERT_EQ(kgc_ext_heap_checked(h), o.check ? 1 : 0);

	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(thread_calls, 1);
	T_ASSERT(thread_seen == &hd);

	T_ASSERT_EQ(heap_calls, 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	/* ext_a (d2) only: ext_b was taken, the others have no hook */
	T_ASSERT_EQ(heap_calls, 1);
	T_ASSERT(heap_seen == &d2);
	T_ASSERT_EQ(thread_calls, 1);
	puts("ok");
	return 0;
}
