/* SPDX-License-Identifier: MIT */
/*
 * Checked mode (KGC_CHECK=1): array arguments that do not match the
 * descriptor are refused before the native runs (a byte[] passed as [I would
 * let a critical native read past the array); matching ones pass.
 */
#include "native_test.h"

static int calls;

static int32_t c_sum(int32_t n, const int32_t *p)
{
	int32_t s = 0;

	calls++;
	for (int32_t i = 0; i < n; i++)
		s += p[i];
	return s;
}

static int32_t r_len(kgc_env *env, kgc_jclass c, kgc_jobject a)
{
	calls++;
	return (int32_t)(*env)->GetArrayLength(env, a);
}

int main(void)
{
	union kgc_value a[1], r;
	kgc_method *cm, *rm;
	kgc_obj ok, bytes, refs;

	setenv("KGC_CHECK", "1", 1);
	nt_setup();
	cm = nt_reg("kgc/test/Chk", "sum", "([I)I", c_sum, KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL);
	rm = nt_reg("kgc/test/Chk", "len", "([Ljava/lang/Object;)I", r_len, KGC_NATIVE_STATIC);

	ok = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 4);
	a[0].l = ok;
	T_ASSERT_EQ(kgc_native_call(nt_thread, cm, NULL, a, &r), 0);
	T_ASSERT_EQ(calls, 1);

	bytes = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 16);
	a[0].l = bytes;
	T_ASSERT_EQ(kgc_native_call(nt_thread, cm, NULL, a, &r), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "kgc/test/Chk.sum([I)I: argument 1");
	printf("%s\n", kgc_last_error());

	refs = kgc_alloc_array(nt_thread, KGC_TYPE_REF_ARRAY, 2);
	a[0].l = refs;
	T_ASSERT_EQ(kgc_native_call(nt_thread, cm, NULL, a, &r), -EINVAL);
	T_ASSERT_EQ(kgc_native_call(nt_thread, rm, NULL, a, &r), 0);
	T_ASSERT_EQ(r.i, 2);
	a[0].l = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 4);
	T_ASSERT_EQ(kgc_native_call(nt_thread, rm, NULL, a, &r), -EINVAL);
	T_ASSERT_EQ(calls, 2);
	nt_teardown();
	puts("ok");
	return 0;
}
