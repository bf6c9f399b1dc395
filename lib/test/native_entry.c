/* SPDX-License-Identifier: MIT */
/*
 * Prepared entries (kgc_native_entry): the stub of each shape returns what
 * kgc_native_call returns for the same method and arguments (critical and
 * regular, null arrays, exceptions, libffi-planned methods); arrays are
 * unpinned after the call; the entry follows unregistration and
 * re-registration; every misuse is refused with -EINVAL (or -ENOENT) and a
 * message naming the method and the shapes.
 */
#include "native_test.h"

#define N 37

static int empty_calls;

static int32_t c_sum(int32_t n, const int32_t *p)
{
	int32_t s = 0;

	if (!p)
		return n == 0 ? -12345 : -1;	/* null array: (0, NULL) */
	for (int32_t i = 0; i < n; i++)
		s += p[i];
	return s;
}

static int32_t c_sum_twice(int32_t n, const int32_t *p)
{
	return 2 * c_sum(n, p);
}

static int32_t c_bytes(int32_t n, const int8_t *p)
{
	int32_t s = 0;

	for (int32_t i = 0; i < n; i++)
		s += p[i];
	return s * 1000 + n;
}

static void c_empty(void)
{
	empty_calls++;
}

static int32_t r_sum(kgc_env *env, kgc_jclass cls, kgc_jobject arr)
{
	size_t n;
	int32_t *p, s;

	if (!arr)
		return -54321;
	p = (*env)->GetPrimitiveArrayCritical(env, arr, &n);
	if (!p)
		return -1;
	s = c_sum((int32_t)n, p);
	(*env)->ReleasePrimitiveArrayCritical(env, arr, p, 0);
	return s;
}

/* (Ljava/lang/Object;)I: the type id of its argument; throws on null */
static kgc_type_id exc_type;

static int32_t r_type(kgc_env *env, kgc_jclass cls, kgc_jobject o)
{
	if (!o) {
		(*env)->ThrowNew(env, exc_type, "null argument");
		return -1;
	}
	return (int32_t)(*env)->GetObjectType(env, o);
}

static void r_empty(kgc_env *env, kgc_jclass cls)
{
	empty_calls++;
}

static int32_t c_add(int32_t a, int32_t b)
{
	return a + b;
}

static void r_inst(kgc_env *env, kgc_jobject self)
{
}

static kgc_method *find(const char *owner, const char *name, const char *sig, uint32_t flags)
{
	kgc_method *m = NULL;

	T_ASSERT_EQ(kgc_native_method_find(nt_heap, owner, name, sig, flags, &m), 0);
	return m;
}

/* kgc_native_call's answer for a (reference)I method, for comparison */
static int call_l_i(kgc_method *m, kgc_obj a, int32_t *res)
{
	union kgc_value v = { .l = a }, r = { .i = 0 };
	int rc = kgc_native_call(nt_thread, m, NULL, &v, &r);

	*res = r.i;
	return rc;
}

int main(void)
{
	const uint32_t S = KGC_NATIVE_STATIC, C = KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL;
	struct kgc_type_desc d = { .name = "EntryException", .payload_size = 16 };
	struct kgc_native_method tab[] = {
		{ "sum", "([I)I", c_sum, C },
		{ "bytes", "([B)I", c_bytes, C },
		{ "empty", "()V", c_empty, C },
		{ "sumRegular", "([I)I", r_sum, S },
		{ "type", "(Ljava/lang/Object;)I", r_type, S },
		{ "emptyRegular", "()V", r_empty, S },
		{ "add", "(II)I", c_add, C },
		{ "inst", "()V", r_inst, 0 },
	};
	struct kgc_native_method ffi_tab[] = {
		{ "sum", "([I)I", c_sum, C },
		{ "sumRegular", "([I)I", r_sum, S },
		{ "empty", "()V", c_empty, C },
	};
	struct kgc_native_method twice = { "sum", "([I)I", c_sum_twice, C };
	kgc_method *sum, *bytes, *empty, *rsum, *rtype, *rempty, *add, *inst, *lazy;
	kgc_method *fsum, *frsum, *fempty;
	union kgc_native_entry e_sum, e_bytes, e_empty, e_rsum, e_rtype, e_rempty, e, e_fsum,
		e_frsum, e_fempty;
	struct kgc_stats st;
	struct kgc_frame f;
	kgc_obj s[2];
	int32_t want = 0, got, ref;

	nt_setup();
	T_ASSERT_EQ(kgc_type_register(nt_heap, &d, &exc_type), 0);
	T_ASSERT_EQ(kgc_native_register(nt_heap, "kgc/test/Entry", tab, 8), 0);
	kgcn_force_ffi = 1;
	T_ASSERT_EQ(kgc_native_register(nt_heap, "kgc/test/EntryFfi", ffi_tab, 3), 0);
	kgcn_force_ffi = 0;
	sum = find("kgc/test/Entry", "sum", "([I)I", C);
	bytes = find("kgc/test/Entry", "bytes", "([B)I", C);
	empty = find("kgc/test/Entry", "empty", "()V", C);
	rsum = find("kgc/test/Entry", "sumRegular", "([I)I", S);
	rtype = find("kgc/test/Entry", "type", "(Ljava/lang/Object;)I", S);
	rempty = find("kgc/test/Entry", "emptyRegular", "()V", S);
	add = find("kgc/test/Entry", "add", "(II)I", C);
	inst = find("kgc/test/Entry", "inst", "()V", 0);
	fsum = find("kgc/test/EntryFfi", "sum", "([I)I", C);
	frsum = find("kgc/test/EntryFfi", "sumRegular", "([I)I", S);
	fempty = find("kgc/test/EntryFfi", "empty", "()V", C);
	/* no registration and no Java_kgc_test_Missing_gone symbol */
	lazy = find("kgc/test/Missing", "gone", "([I)I", C);

	/* -------------------------------------------------- binding */
	T_ASSERT_EQ(kgc_native_entry(sum, KGC_NATIVE_SHAPE_L_I, &e_sum), 0);
	T_ASSERT_EQ(kgc_native_entry(bytes, KGC_NATIVE_SHAPE_L_I, &e_bytes), 0);
	T_ASSERT_EQ(kgc_native_entry(empty, KGC_NATIVE_SHAPE_V, &e_empty), 0);
	T_ASSERT_EQ(kgc_native_entry(rsum, KGC_NATIVE_SHAPE_L_I, &e_rsum), 0);
	T_ASSERT_EQ(kgc_native_entry(rtype, KGC_NATIVE_SHAPE_L_I, &e_rtype), 0);
	T_ASSERT_EQ(kgc_native_entry(rempty, KGC_NATIVE_SHAPE_V, &e_rempty), 0);
	T_ASSERT_EQ(kgc_native_entry(fsum, KGC_NATIVE_SHAPE_L_I, &e_fsum), 0);
	T_ASSERT_EQ(kgc_native_entry(frsum, KGC_NATIVE_SHAPE_L_I, &e_frsum), 0);
	T_ASSERT_EQ(kgc_native_entry(fempty, KGC_NATIVE_SHAPE_V, &e_fempty), 0);

	/* misuse at binding */
	T_ASSERT_EQ(kgc_native_entry(NULL, KGC_NATIVE_SHAPE_V, &e), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "NULL method");
	T_ASSERT_EQ(kgc_native_entry(sum, KGC_NATIVE_SHAPE_L_I, NULL), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "NULL out");
	T_ASSERT_EQ(kgc_native_entry(sum, (enum kgc_native_shape)99, &e), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "unknown shape 99");
	T_ASSERT_EQ(kgc_native_entry(sum, KGC_NATIVE_SHAPE_V, &e), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "kgc/test/Entry.sum([I)I");
	T_ASSERT_STR_HAS(kgc_last_error(), "asked for KGC_NATIVE_SHAPE_V");
	T_ASSERT_STR_HAS(kgc_last_error(), "the method has KGC_NATIVE_SHAPE_L_I");
	T_ASSERT_EQ(kgc_native_entry(empty, KGC_NATIVE_SHAPE_L_I, &e), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "the method has KGC_NATIVE_SHAPE_V");
	T_ASSERT_EQ(kgc_native_entry(add, KGC_NATIVE_SHAPE_L_I, &e), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "the method has no prepared shape");
	T_ASSERT_EQ(kgc_native_entry(inst, KGC_NATIVE_SHAPE_V, &e), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "instance method");
	T_ASSERT_EQ(kgc_native_entry(lazy, KGC_NATIVE_SHAPE_L_I, &e), -ENOENT);
	T_ASSERT_STR_HAS(kgc_last_error(), "Java");

	/* -------------------------------------------------- calls */
	kgc_frame_push(nt_thread, &f, s, 2, NULL);
	s[0] = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), N);
	s[1] = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 5);
	T_ASSERT(s[0] && s[1]);
	for (int i = 0; i < N; i++) {
		((int32_t *)kgc_array_data(s[0]))[i] = i * 7 - 100;
		want += i * 7 - 100;
	}
	for (int i = 0; i < 5; i++)
		((int8_t *)kgc_array_data(s[1]))[i] = (int8_t)(i - 3);

	for (int i = 0; i < 1000; i++) {
		got = 0;
		T_ASSERT_EQ(e_sum.l_i(nt_thread, sum, s[0], &got), 0);
		T_ASSERT_EQ(got, want);
	}
	T_ASSERT_EQ(call_l_i(sum, s[0], &ref), 0);
	T_ASSERT_EQ(ref, want);
	T_ASSERT_EQ(e_bytes.l_i(nt_thread, bytes, s[1], &got), 0);
	T_ASSERT_EQ(got, -5 * 1000 + 5);
	T_ASSERT_EQ(e_rsum.l_i(nt_thread, rsum, s[0], &got), 0);
	T_ASSERT_EQ(got, want);
	T_ASSERT_EQ(e_fsum.l_i(nt_thread, fsum, s[0], &got), 0);
	T_ASSERT_EQ(got, want);
	T_ASSERT_EQ(e_frsum.l_i(nt_thread, frsum, s[0], &got), 0);
	T_ASSERT_EQ(got, want);
	/* result may be NULL */
	T_ASSERT_EQ(e_sum.l_i(nt_thread, sum, s[0], NULL), 0);
	T_ASSERT_EQ(e_rsum.l_i(nt_thread, rsum, s[0], NULL), 0);
	/* null arrays: critical natives get (0, NULL), regular ones a NULL handle */
	T_ASSERT_EQ(e_sum.l_i(nt_thread, sum, NULL, &got), 0);
	T_ASSERT_EQ(got, -12345);
	T_ASSERT_EQ(e_fsum.l_i(nt_thread, fsum, NULL, &got), 0);
	T_ASSERT_EQ(got, -12345);
	T_ASSERT_EQ(e_rsum.l_i(nt_thread, rsum, NULL, &got), 0);
	T_ASSERT_EQ(got, -54321);
	/* a reference argument of the regular stub is a handle the env resolves */
	T_ASSERT_EQ(e_rtype.l_i(nt_thread, rtype, s[1], &got), 0);
	T_ASSERT_EQ(got, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE));
	/* an exception: -EPROTO, pending on the thread, as with kgc_native_call */
	T_ASSERT_EQ(e_rtype.l_i(nt_thread, rtype, NULL, &got), -EPROTO);
	T_ASSERT(kgc_native_exception(nt_thread) != NULL);
	T_ASSERT_STR_HAS(kgc_native_exception_message(nt_thread), "null argument");
	kgc_native_exception_clear(nt_thread);
	T_ASSERT_EQ(e_rtype.l_i(nt_thread, rtype, s[0], &got), 0);
	T_ASSERT(kgc_native_exception(nt_thread) == NULL);

	empty_calls = 0;
	T_ASSERT_EQ(e_empty.v(nt_thread, empty), 0);
	T_ASSERT_EQ(e_rempty.v(nt_thread, rempty), 0);
	T_ASSERT_EQ(e_fempty.v(nt_thread, fempty), 0);
	T_ASSERT_EQ(empty_calls, 3);

	/* an entry of the right shape takes any method of that shape */
	T_ASSERT_EQ(e_sum.l_i(nt_thread, rsum, s[0], &got), 0);
	T_ASSERT_EQ(got, want);
	T_ASSERT_EQ(e_rsum.l_i(nt_thread, sum, s[0], &got), 0);
	T_ASSERT_EQ(got, want);
	T_ASSERT_EQ(e_empty.v(nt_thread, rempty), 0);

	/* ... but not a method of another shape: refused before the native runs */
	empty_calls = 0;
	got = 777;
	T_ASSERT_EQ(e_sum.l_i(nt_thread, add, s[0], &got), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "kgc/test/Entry.add(II)I");
	T_ASSERT_STR_HAS(kgc_last_error(), "called through a KGC_NATIVE_SHAPE_L_I");
	T_ASSERT_EQ(got, 777);
	T_ASSERT_EQ(e_rsum.l_i(nt_thread, empty, s[0], &got), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "the method has KGC_NATIVE_SHAPE_V");
	T_ASSERT_EQ(e_empty.v(nt_thread, sum), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "called through a KGC_NATIVE_SHAPE_V");
	T_ASSERT_EQ(e_rempty.v(nt_thread, inst), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "instance method");
	T_ASSERT_EQ(e_empty.v(nt_thread, NULL), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "NULL method");
	T_ASSERT_EQ(empty_calls, 0);

	/* nothing stays pinned or open after the calls */
	T_ASSERT_EQ(kgc_collect(nt_thread, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_stats_get(nt_heap, &st, sizeof(st)), 0);
	T_ASSERT_EQ(st.regions_pinned, 0);
	T_ASSERT_EQ(e_sum.l_i(nt_thread, sum, s[0], &got), 0);	/* s[0] may have moved */
	T_ASSERT_EQ(got, want);

	/* unregistered: the entry falls back to lazy lookup, which fails */
	T_ASSERT_EQ(kgc_native_unregister(nt_heap, "kgc/test/Entry"), 0);
	T_ASSERT_EQ(e_sum.l_i(nt_thread, sum, s[0], &got), -ENOENT);
	T_ASSERT_STR_HAS(kgc_last_error(), "Java");
	/* re-registered: the same entry calls the new function */
	T_ASSERT_EQ(kgc_native_register(nt_heap, "kgc/test/Entry", &twice, 1), 0);
	T_ASSERT_EQ(e_sum.l_i(nt_thread, sum, s[0], &got), 0);
	T_ASSERT_EQ(got, 2 * want);

	T_ASSERT_EQ(kgc_frame_pop(nt_thread, &f), 0);
	nt_teardown();
	puts("ok");
	return 0;
}
