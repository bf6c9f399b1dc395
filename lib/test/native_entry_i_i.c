/* SPDX-License-Identifier: MIT */
/*
 * native_entry_i_i: kgc_native_entry's KGC_NATIVE_SHAPE_I_I (static (I)I)
 * on a heap without env ops: a regular native (the bridge's env, its class
 * argument, an exception thrown with ThrowNew comes back as -EPROTO with
 * its message, a NULL result pointer) and a critical native (the int in a
 * register) return what kgc_native_call returns for the same argument; an
 * (I)I method asked for as another shape, and a method of another shape
 * asked for as I_I, are -EINVAL naming both shapes; a call of an I_I entry
 * with a method of another shape is -EINVAL before anything runs.
 */
#include "native_test.h"

static kgc_type_id exc_type;
static int crit_calls;

static int32_t r_scale(kgc_env *env, kgc_jclass cls, int32_t x)
{
	if (!cls || strcmp(kgc_native_class_name(cls), "kgc/test/EntryII"))
		return INT32_MIN;	/* the class argument is the owner */
	if (x < 0) {
		(*env)->ThrowNew(env, exc_type, "negative");
		return 0;
	}
	return 3 * x + 1;
}

static int32_t c_inc(int32_t x)
{
	crit_calls++;
	return x + 1;
}

static void c_empty(void)
{
}

int main(void)
{
	const uint32_t S = KGC_NATIVE_STATIC, C = KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL;
	struct kgc_type_desc d = { .name = "EntryIIException", .payload_size = 16 };
	struct kgc_native_method tab[] = {
		{ "scale", "(I)I", r_scale, S },
		{ "inc", "(I)I", c_inc, C },
		{ "empty", "()V", c_empty, C },
	};
	kgc_method *scale, *inc, *empty;
	union kgc_native_entry e_scale, e_inc, e;
	unsigned long long seed = t_seed();

	nt_setup();
	T_ASSERT_EQ(kgc_type_register(nt_heap, &d, &exc_type), 0);
	T_ASSERT_EQ(kgc_native_register(nt_heap, "kgc/test/EntryII", tab, 3), 0);
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/EntryII", "scale", "(I)I", S, &scale), 0);
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/EntryII", "inc", "(I)I", C, &inc), 0);
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/EntryII", "empty", "()V", C, &empty), 0);

	T_ASSERT_EQ(kgc_native_entry(scale, KGC_NATIVE_SHAPE_I_I, &e_scale), 0);
	T_ASSERT_EQ(kgc_native_entry(inc, KGC_NATIVE_SHAPE_I_I, &e_inc), 0);
	T_ASSERT_EQ(kgc_native_entry(scale, KGC_NATIVE_SHAPE_L_I, &e), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "the method has KGC_NATIVE_SHAPE_I_I");
	T_ASSERT_EQ(kgc_native_entry(empty, KGC_NATIVE_SHAPE_I_I, &e), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "asked for KGC_NATIVE_SHAPE_I_I");

	for (int i = 0; i < 10000; i++) {
		int32_t x = (int32_t)(t_rand(&seed) % 1000000), got = -1, via = -2;
		union kgc_value a = { .i = x }, r;

		T_ASSERT_EQ(e_scale.i_i(nt_thread, scale, x, &got), 0);
		T_ASSERT_EQ(kgc_native_call(nt_thread, scale, NULL, &a, &r), 0);
		via = r.i;
		T_ASSERT_EQ(got, via);
		T_ASSERT_EQ(got, 3 * x + 1);
		T_ASSERT_EQ(e_inc.i_i(nt_thread, inc, x, &got), 0);
		T_ASSERT_EQ(got, x + 1);
	}
	T_ASSERT_EQ(crit_calls, 10000);
	T_ASSERT_EQ(e_inc.i_i(nt_thread, inc, 5, NULL), 0);	/* result may be NULL */

	/* an exception: -EPROTO, its message; the next call is clean */
	T_ASSERT_EQ(e_scale.i_i(nt_thread, scale, -1, NULL), -EPROTO);
	T_ASSERT(kgc_native_exception(nt_thread));
	T_ASSERT_EQ(kgc_obj_type(kgc_native_exception(nt_thread)), exc_type);
	T_ASSERT(!strcmp(kgc_native_exception_message(nt_thread), "negative"));
	kgc_native_exception_clear(nt_thread);
	{
		int32_t got = 0;

		T_ASSERT_EQ(e_scale.i_i(nt_thread, scale, 2, &got), 0);
		T_ASSERT_EQ(got, 7);
		T_ASSERT(!kgc_native_exception(nt_thread));
	}

	/* the entry refuses a method of another shape before calling anything */
	crit_calls = 0;
	T_ASSERT_EQ(e_inc.i_i(nt_thread, empty, 1, NULL), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "called through a KGC_NATIVE_SHAPE_I_I");
	T_ASSERT_EQ(e_inc.i_i(nt_thread, NULL, 1, NULL), -EINVAL);
	T_ASSERT_EQ(crit_calls, 0);

	nt_teardown();
	printf("native_entry_i_i: ok\n");
	return 0;
}
