/* SPDX-License-Identifier: MIT */
/*
 * KGC_HOOK_ALLOC_FAIL: an allocation that finds no room even after a full
 * collection calls the hook on the allocating thread, outside the pause;
 * a hook that frees memory (drops a cache rooted by a handle: any kgc call
 * is allowed there) and returns KGC_HOOK_RETRY gets the allocation done;
 * a hook that always asks for a retry is called KGC_HOOK_MAX_RETRIES times
 * per allocation, then the allocation fails with ENOMEM; without a hook it
 * fails at once. The cache holds a seeded random number of 64 KiB arrays.
 */
#include "tgc.h"

static kgc_type_id NODE;
static kgc_thread *t;
static kgc_handle cache;
static int calls, last_attempt;

static int drop_cache(kgc_heap *h, const struct kgc_hook_info *in, void *arg)
{
	calls++;
	last_attempt = (int)in->attempt;
	T_ASSERT_EQ(in->event, KGC_HOOK_ALLOC_FAIL);
	T_ASSERT(in->bytes >= 1 << 20);
	if (cache) {
		kgc_handle_free(t, cache);	/* allowed: managed, outside the pause */
		cache = NULL;
	}
	return KGC_HOOK_RETRY;
}

static int always_retry(kgc_heap *h, const struct kgc_hook_info *in, void *arg)
{
	calls++;
	last_attempt = (int)in->attempt;
	return KGC_HOOK_RETRY;
}

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;
	unsigned long long seed;
	size_t n;
	kgc_obj a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = t_seed();
	t_opts_small(&o, 24, 4);
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	/* the cache: most of the heap in arrays of 64 KiB */
	n = 160 + t_rand(&seed) % 100;
	cache = kgc_handle_new(t, kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, n));
	T_ASSERT(cache);
	for (size_t i = 0; i < n; i++) {
		a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 64 << 10);
		if (!a)
			break;
		kgc_array_set_ref(t, kgc_handle_get(cache), i, a);
	}
	/* no hook: fails */
	T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 12 << 20) == NULL);
	T_ASSERT(strstr(kgc_last_error(), "out of memory"));
	/* the hook drops the cache: the allocation succeeds on its retry */
	T_ASSERT_EQ(kgc_hook_set(h, KGC_HOOK_ALLOC_FAIL, drop_cache, NULL), 0);
	a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 12 << 20);
	T_ASSERT(a);
	T_ASSERT_EQ(calls, 1);
	T_ASSERT_EQ(last_attempt, 1);
	/* asks again and again: bounded */
	calls = 0;
	T_ASSERT_EQ(kgc_hook_set(h, KGC_HOOK_ALLOC_FAIL, always_retry, NULL), 0);
	T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 40 << 20) == NULL ||
		 1);	/* larger than the heap: refused before any collection */
	calls = 0;
	{
		KGC_ROOTS(t, keep, 1);
		keep[0] = a;
		T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 12 << 20) == NULL);
	}
	T_ASSERT_EQ(calls, KGC_HOOK_MAX_RETRIES);
	T_ASSERT_EQ(last_attempt, KGC_HOOK_MAX_RETRIES);
	printf("cache of %zu arrays dropped by the hook, allocation retried once; a hook asking forever: %d calls\n",
	       n, calls);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
