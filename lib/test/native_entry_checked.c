/* SPDX-License-Identifier: MIT */
/*
 * Prepared entries on a checked heap (KGC_CHECK=1) check arguments like
 * kgc_native_call: a byte[] passed to a ([I)I entry is refused before the
 * native runs; a matching array passes; a method of another shape is
 * refused.
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

static void c_empty(void)
{
	calls++;
}

int main(void)
{
	const uint32_t C = KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL;
	union kgc_native_entry ce, re, ve;
	kgc_method *cm, *rm, *vm;
	kgc_obj ok, bytes;
	int32_t got;

	setenv("KGC_CHECK", "1", 1);
	nt_setup();
	cm = nt_reg("kgc/test/EntryChk", "sum", "([I)I", c_sum, C);
	rm = nt_reg("kgc/test/EntryChk", "len", "([I)I", r_len, KGC_NATIVE_STATIC);
	vm = nt_reg("kgc/test/EntryChk", "empty", "()V", c_empty, C);
	T_ASSERT_EQ(kgc_native_entry(cm, KGC_NATIVE_SHAPE_L_I, &ce), 0);
	T_ASSERT_EQ(kgc_native_entry(rm, KGC_NATIVE_SHAPE_L_I, &re), 0);
	T_ASSERT_EQ(kgc_native_entry(vm, KGC_NATIVE_SHAPE_V, &ve), 0);

	ok = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 4);
	bytes = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 4);
	T_ASSERT(ok && bytes);
	for (int i = 0; i < 4; i++)
		((int32_t *)kgc_array_data(ok))[i] = i + 1;

	T_ASSERT_EQ(ce.l_i(nt_thread, cm, ok, &got), 0);
	T_ASSERT_EQ(got, 10);
	T_ASSERT_EQ(re.l_i(nt_thread, rm, ok, &got), 0);
	T_ASSERT_EQ(got, 4);
	T_ASSERT_EQ(ve.v(nt_thread, vm), 0);
	T_ASSERT_EQ(calls, 3);

	T_ASSERT_EQ(ce.l_i(nt_thread, cm, bytes, &got), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "argument 1");
	T_ASSERT_EQ(re.l_i(nt_thread, rm, bytes, &got), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "argument 1");
	T_ASSERT_EQ(ve.v(nt_thread, cm), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "called through a KGC_NATIVE_SHAPE_V");
	T_ASSERT_EQ(calls, 3);

	nt_teardown();
	puts("ok");
	return 0;
}
