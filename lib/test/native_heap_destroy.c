/* SPDX-License-Identifier: MIT */
/*
 * kgc_heap_destroy frees the native bridge's state for the heap (methods,
 * classes, loaded libraries) without a kgc_native_heap_release; a heap
 * created afterwards (possibly at the same address) starts with no natives.
 * The ASan build checks that nothing leaks.
 */
#include "native_test.h"

static int32_t n_add(kgc_env *env, kgc_jclass c, int32_t a, int32_t b)
{
	return a + b;
}

static int32_t n_sum(int32_t len, const int32_t *p)
{
	int32_t s = 0;

	for (int32_t i = 0; i < len; i++)
		s += p[i];
	return s;
}

int main(void)
{
	unsigned before = kgcn_registry_count();
	union kgc_value a[2], r;
	kgc_method *add, *m = NULL;
	struct kgc_options o;
	kgc_heap *h2;
	kgc_thread *t2;

	nt_setup();
	add = nt_reg("kgc/test/Destroy", "add", "(II)I", n_add, KGC_NATIVE_STATIC);
	nt_reg("kgc/test/Destroy", "sum", "([I)I", n_sum, KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL);
	nt_reg("kgc/test/Other", "add", "(II)I", n_add, KGC_NATIVE_STATIC);
	a[0].i = 2;
	a[1].i = 40;
	T_ASSERT_EQ(kgc_native_call(nt_thread, add, NULL, a, &r), 0);
	T_ASSERT_EQ(r.i, 42);
	T_ASSERT_EQ(kgcn_registry_count(), before + 1);

	/* no kgc_native_heap_release: destroy must free the registry */
	T_ASSERT_EQ(kgc_thread_detach(nt_thread), 0);
	T_ASSERT_EQ(kgc_heap_destroy(nt_heap), 0);
	T_ASSERT_EQ(kgcn_registry_count(), before);

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 64u << 20;
	T_ASSERT_EQ(kgc_heap_create(&o, &h2), 0);
	T_ASSERT_EQ(kgc_thread_attach(h2, "main", &t2), 0);
	printf("first heap %p, second %p\n", (void *)nt_heap, (void *)h2);
	T_ASSERT(kgc_native_method_find(h2, "kgc/test/Destroy", "add", "(II)I",
					KGC_NATIVE_STATIC, &m) != 0 || !m->registered);
	T_ASSERT_EQ(kgc_thread_detach(t2), 0);
	/* release before destroy (the documented order) still works */
	kgc_native_heap_release(h2);
	T_ASSERT_EQ(kgc_heap_destroy(h2), 0);
	T_ASSERT_EQ(kgcn_registry_count(), before);
	puts("ok");
	return 0;
}
