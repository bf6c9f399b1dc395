/* SPDX-License-Identifier: MIT */
/*
 * A native exception left pending when its thread detaches dies with the
 * thread: a thread attached afterwards (on the same OS thread, possibly at
 * the same address) sees none, and the exception object is no longer kept
 * alive by the pending-exception handle.
 */
#include "native_test.h"

#define EXC_PAYLOAD (256u << 10)	/* big enough to see in heap_used */

static kgc_type_id exc_type;

static void n_throw(kgc_env *env, kgc_jclass c)
{
	(*env)->ThrowNew(env, exc_type, "left pending at detach");
}

int main(void)
{
	struct kgc_type_desc d = { .name = "BigException", .payload_size = EXC_PAYLOAD };
	struct kgc_stats st;
	kgc_thread *t2;
	kgc_method *m;

	nt_setup();
	T_ASSERT_EQ(kgc_type_register(nt_heap, &d, &exc_type), 0);
	m = nt_reg("kgc/test/Detach", "thrower", "()V", n_throw, KGC_NATIVE_STATIC);
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, NULL, NULL), -EPROTO);
	T_ASSERT(kgc_native_exception(nt_thread) != NULL);

	/* detach without kgc_native_exception_clear */
	T_ASSERT_EQ(kgc_thread_detach(nt_thread), 0);
	T_ASSERT_EQ(kgc_thread_attach(nt_heap, "second", &t2), 0);
	printf("first thread %p, second %p\n", (void *)nt_thread, (void *)t2);
	T_ASSERT(kgc_native_exception(t2) == NULL);
	T_ASSERT(kgc_native_exception_message(t2) == NULL);

	/* nothing roots the old exception any more */
	T_ASSERT_EQ(kgc_collect(t2, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_stats_get(nt_heap, &st, sizeof(st)), 0);
	printf("heap used after full GC: %llu bytes\n", (unsigned long long)st.heap_used);
	T_ASSERT(st.heap_used < EXC_PAYLOAD);

	/* the new thread raises and clears its own exceptions as usual */
	T_ASSERT_EQ(kgc_native_call(t2, m, NULL, NULL, NULL), -EPROTO);
	T_ASSERT_STR_HAS(kgc_native_exception_message(t2), "left pending");
	kgc_native_exception_clear(t2);
	T_ASSERT(kgc_native_exception(t2) == NULL);

	nt_thread = t2;
	nt_teardown();
	puts("ok");
	return 0;
}
