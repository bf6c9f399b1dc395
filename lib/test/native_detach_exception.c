/* SPDX-License-Identifier: MIT */
/*
 * A native exception left pending when its thread detaches dies with the
 * thread: a thread attached afterwards (on the same OS thread, possibly at
 * the same address) sees none, and the exception object is no longer kept
 * alive by the pending-exception handle.
 *
 * The pending exception belongs to the kgc_thread, not to the OS thread:
 * two kgc_threads run by one OS thread each keep their own, and a thread
 * that raised on one OS thread and is detached by another loses it too.
 */
#include <pthread.h>
#include "native_test.h"

#define EXC_PAYLOAD (256u << 10)	/* big enough to see in heap_used */

static kgc_type_id exc_type;

static void n_throw(kgc_env *env, kgc_jclass c)
{
	(*env)->ThrowNew(env, exc_type, "left pending at detach");
}

static kgc_method *thrower;

/* On its own OS thread: attach, leave an exception pending, go native. */
static void *raise_and_leave(void *arg)
{
	kgc_thread **out = arg;

	if (kgc_thread_attach(nt_heap, "raiser", out))
		return "attach failed";
	if (kgc_native_call(*out, thrower, NULL, NULL, NULL) != -EPROTO)
		return "call did not return -EPROTO";
	if (!kgc_native_exception(*out))
		return "no exception pending";
	kgc_enter_native(*out);		/* collections need not wait for it */
	return NULL;
}

/* On a fresh OS thread: a newly attached thread has no exception pending. */
static void *attach_and_look(void *arg)
{
	kgc_thread *t;
	const char *why = NULL;

	if (kgc_thread_attach(nt_heap, "looker", &t))
		return "attach failed";
	if (kgc_native_exception(t) || kgc_native_exception_message(t))
		why = "a new thread sees a pending exception";
	kgc_thread_detach(t);
	return (void *)why;
}

static uint64_t heap_used_after_full_gc(kgc_thread *t)
{
	struct kgc_stats st;

	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_stats_get(nt_heap, &st, sizeof(st)), 0);
	return st.heap_used;
}

/* Part 2: per kgc_thread, not per OS thread. */
static void per_kgc_thread(kgc_thread *t)
{
	kgc_thread *u, *other = NULL;
	pthread_t th;
	void *why;
	kgc_obj e;

	/* two kgc_threads on this OS thread keep separate exceptions */
	T_ASSERT_EQ(kgc_thread_attach(nt_heap, "same-os-thread", &u), 0);
	T_ASSERT_EQ(kgc_native_call(t, thrower, NULL, NULL, NULL), -EPROTO);
	e = kgc_native_exception(t);
	T_ASSERT(e != NULL);
	T_ASSERT(kgc_native_exception(u) == NULL);
	T_ASSERT(kgc_native_exception_message(u) == NULL);
	T_ASSERT_EQ(kgc_native_call(u, thrower, NULL, NULL, NULL), -EPROTO);
	T_ASSERT(kgc_native_exception(u) != NULL);
	T_ASSERT(kgc_native_exception(u) != e);		/* a new object each ThrowNew */
	T_ASSERT(kgc_native_exception(t) == e);		/* t's is untouched */
	kgc_native_exception_clear(u);
	T_ASSERT(kgc_native_exception(u) == NULL);
	T_ASSERT(kgc_native_exception(t) == e);
	T_ASSERT_STR_HAS(kgc_native_exception_message(t), "left pending");
	kgc_native_exception_clear(t);
	T_ASSERT_EQ(kgc_thread_detach(u), 0);

	/* raised on another OS thread, detached from this one */
	T_ASSERT_EQ(pthread_create(&th, NULL, raise_and_leave, &other), 0);
	T_ASSERT_EQ(pthread_join(th, &why), 0);
	if (why)
		T_FAIL("raiser: %s", (const char *)why);
	T_ASSERT(other != NULL);
	T_ASSERT(kgc_native_exception(other) != NULL);	/* visible from here too */
	T_ASSERT_STR_HAS(kgc_native_exception_message(other), "left pending");
	T_ASSERT(heap_used_after_full_gc(t) >= EXC_PAYLOAD);	/* still rooted */
	T_ASSERT_EQ(kgc_thread_detach(other), 0);
	/* the detach dropped it: nothing roots the exception any more */
	T_ASSERT(heap_used_after_full_gc(t) < EXC_PAYLOAD);

	/* and a thread attached later, on yet another OS thread, sees none */
	T_ASSERT_EQ(pthread_create(&th, NULL, attach_and_look, NULL), 0);
	T_ASSERT_EQ(pthread_join(th, &why), 0);
	if (why)
		T_FAIL("looker: %s", (const char *)why);
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
	thrower = m;
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

	per_kgc_thread(t2);

	nt_thread = t2;
	nt_teardown();
	puts("ok");
	return 0;
}
