/* SPDX-License-Identifier: MIT */
/*
 * Lazy lookup: unregistered methods resolve JNI-mangled symbols exported by
 * this program (tests link with -rdynamic) - short name, overloaded long
 * name, escapes, critical prefix - and cache the result; a miss reports the
 * names tried.
 */
#include "native_test.h"

KGC_NATIVE_EXPORT int32_t Java_kgc_test_Lazy_add(kgc_env *env, kgc_jclass c, int32_t a, int32_t b)
{
	return a + b;
}

/* only the overloaded (long) form exists for "over" */
KGC_NATIVE_EXPORT int64_t Java_kgc_test_Lazy_over__J(kgc_env *env, kgc_jclass c, int64_t v)
{
	return v * 3;
}

KGC_NATIVE_EXPORT int64_t Java_kgc_test_Lazy_over__Ljava_lang_String_2_3I(kgc_env *env, kgc_jclass c,
								     kgc_jobject s, kgc_jobject a)
{
	return (s == NULL) + 10 * (a == NULL);
}

KGC_NATIVE_EXPORT int32_t Java_kgc_test_Lazy_1x_with_1under(kgc_env *env, kgc_jclass c)
{
	return 7;
}

KGC_NATIVE_EXPORT int32_t JavaCritical_kgc_test_Lazy_csum(int32_t len, int32_t *p)
{
	int32_t s = 0;

	for (int32_t i = 0; i < len; i++)
		s += p[i];
	return s;
}

int main(void)
{
	const uint32_t S = KGC_NATIVE_STATIC;
	union kgc_value a[2], r;
	kgc_method *m, *m2;

	nt_setup();

	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/Lazy", "add", "(II)I", S, &m), 0);
	T_ASSERT(m->fn == NULL);	/* not linked before the first call */
	a[0].i = 40;
	a[1].i = 2;
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), 0);
	T_ASSERT_EQ(r.i, 42);
	T_ASSERT(m->fn == (void *)Java_kgc_test_Lazy_add);	/* cached */
	/* find returns the same method, still bound */
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/Lazy", "add", "(II)I", S, &m2), 0);
	T_ASSERT(m2 == m);

	/* overloaded form */
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/Lazy", "over", "(J)J", S, &m), 0);
	a[0].j = 1ll << 40;
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), 0);
	T_ASSERT_EQ(r.j, 3ll << 40);
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/Lazy", "over",
					   "(Ljava/lang/String;[I)J", S, &m), 0);
	a[0].l = a[1].l = NULL;
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), 0);
	T_ASSERT_EQ(r.j, 11);

	/* escapes in owner and name */
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/Lazy_x", "with_under", "()I", S, &m), 0);
	T_ASSERT_EQ(kgc_native_method_link(m), 0);
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, NULL, &r), 0);
	T_ASSERT_EQ(r.i, 7);

	/* critical natives resolve JavaCritical_ names */
	{
		kgc_obj arr = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 5);
		int32_t *p = kgc_array_data(arr);

		T_ASSERT(arr);
		for (int i = 0; i < 5; i++)
			p[i] = i + 1;
		T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/Lazy", "csum", "([I)I",
						   KGC_NATIVE_CRITICAL | S, &m), 0);
		a[0].l = arr;
		T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), 0);
		T_ASSERT_EQ(r.i, 15);
	}

	/* a miss names both symbols it tried, and stays unbound */
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/Lazy", "missing", "(I)V", S, &m), 0);
	a[0].i = 1;
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, NULL), -ENOENT);
	T_ASSERT_STR_HAS(kgc_last_error(), "Java_kgc_test_Lazy_missing ");
	T_ASSERT_STR_HAS(kgc_last_error(), "Java_kgc_test_Lazy_missing__I");
	printf("%s\n", kgc_last_error());
	T_ASSERT(m->fn == NULL);

	/* libraries: a bad path fails, a loaded one is searched (and named) */
	T_ASSERT_EQ(kgc_native_load_library(nt_heap, "/nonexistent/libnope.so"), -ENOENT);
	T_ASSERT_STR_HAS(kgc_last_error(), "libnope.so");
	T_ASSERT_EQ(kgc_native_load_library(nt_heap, "libm.so.6"), 0);
	T_ASSERT_EQ(kgc_native_load_library(nt_heap, "libm.so.6"), 0);	/* once */
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, NULL), -ENOENT);
	T_ASSERT_STR_HAS(kgc_last_error(), "1 loaded library");
	/* registration after a miss binds */
	T_ASSERT_EQ(kgc_native_register(nt_heap, "kgc/test/Lazy",
		(struct kgc_native_method[]){ { "missing", "(I)V", Java_kgc_test_Lazy_add, S } }, 1), 0);
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, NULL), 0);
	nt_teardown();
	puts("ok");
	return 0;
}
