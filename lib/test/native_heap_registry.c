/* SPDX-License-Identifier: MIT */
/*
 * The bridge's registry lives with its heap (libkgc-native keeps it in the
 * heap's extension slot): two live heaps bind the same method to different
 * functions and each call reaches its own heap's; lazy lookup state, lookups
 * and unregistration of one heap do not touch the other; destroying one heap
 * frees its registry only, and the other keeps working.
 */
#include "native_test.h"

static int32_t n_one(kgc_env *env, kgc_jclass c, int32_t a)
{
	return a + 1;
}

static int32_t n_two(kgc_env *env, kgc_jclass c, int32_t a)
{
	return a + 2;
}

static kgc_heap *mk_heap(void)
{
	struct kgc_options o;
	kgc_heap *h;
	int rc;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 64u << 20;
	rc = kgc_heap_create(&o, &h);
	T_SKIP_IF(rc == -ENOSYS || rc == -EOPNOTSUPP, "no heap backend");
	T_ASSERT_EQ(rc, 0);
	return h;
}

static int32_t call1(kgc_thread *t, kgc_method *m, int32_t a)
{
	union kgc_value v = { .i = a }, r = { .i = -1 };

	T_ASSERT_EQ(kgc_native_call(t, m, NULL, &v, &r), 0);
	return r.i;
}

int main(void)
{
	unsigned before = kgcn_registry_count();
	struct kgc_native_method e1 = { "f", "(I)I", n_one, KGC_NATIVE_STATIC };
	struct kgc_native_method e2 = { "f", "(I)I", n_two, KGC_NATIVE_STATIC };
	kgc_heap *h1 = mk_heap(), *h2 = mk_heap();
	kgc_thread *t1, *t2;
	kgc_method *m1, *m2, *x;

	T_ASSERT_EQ(kgc_thread_attach(h1, "t1", &t1), 0);
	T_ASSERT_EQ(kgc_thread_attach(h2, "t2", &t2), 0);
	T_ASSERT_EQ(kgc_native_register(h1, "kgc/test/Per", &e1, 1), 0);
	T_ASSERT_EQ(kgcn_registry_count(), before + 1);
	/* the same owner/name/signature again, on the other heap: no -EEXIST */
	T_ASSERT_EQ(kgc_native_register(h2, "kgc/test/Per", &e2, 1), 0);
	T_ASSERT_EQ(kgcn_registry_count(), before + 2);
	T_ASSERT_EQ(kgc_native_method_find(h1, "kgc/test/Per", "f", "(I)I", KGC_NATIVE_STATIC, &m1), 0);
	T_ASSERT_EQ(kgc_native_method_find(h2, "kgc/test/Per", "f", "(I)I", KGC_NATIVE_STATIC, &m2), 0);
	T_ASSERT(m1 != m2);
	T_ASSERT_EQ(call1(t1, m1, 40), 41);
	T_ASSERT_EQ(call1(t2, m2, 40), 42);

	/* a method only h2 knows */
	T_ASSERT_EQ(kgc_native_method_find(h2, "kgc/test/Per", "g", "()V", KGC_NATIVE_STATIC, &x), 0);
	T_ASSERT_EQ(kgc_native_method_link(x), -ENOENT);

	/* unregistering on h1 leaves h2's binding */
	T_ASSERT_EQ(kgc_native_unregister(h1, "kgc/test/Per"), 0);
	T_ASSERT(!m1->registered && m2->registered);
	T_ASSERT_EQ(call1(t2, m2, 1), 3);
	T_ASSERT_EQ(kgc_native_register(h1, "kgc/test/Per", &e1, 1), 0);

	/* destroying h1 frees its registry only */
	T_ASSERT_EQ(kgc_thread_detach(t1), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h1), 0);
	T_ASSERT_EQ(kgcn_registry_count(), before + 1);
	T_ASSERT_EQ(call1(t2, m2, 5), 7);
	T_ASSERT_EQ(kgc_native_method_find(h2, "kgc/test/Per", "f", "(I)I", KGC_NATIVE_STATIC, &x), 0);
	T_ASSERT(x == m2);

	T_ASSERT_EQ(kgc_thread_detach(t2), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h2), 0);
	T_ASSERT_EQ(kgcn_registry_count(), before);
	puts("ok");
	return 0;
}
