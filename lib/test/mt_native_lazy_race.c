/* SPDX-License-Identifier: MIT */
/*
 * Threads racing on the first call of a lazily linked method (the cached
 * binding is published once), while others create and register methods of
 * the same registry (hash growth) and call them.
 */
#include <pthread.h>
#include <stdatomic.h>
#include "native_test.h"

#define NTHREADS 4
#define CALLS 2000

KGC_NATIVE_EXPORT int64_t Java_kgc_test_Race_inc(kgc_env *env, kgc_jclass c, int64_t v)
{
	return v + 1;
}

static int32_t twice(int32_t v) { return 2 * v; }

static kgc_method *lazy;
static atomic_int go;

static void *worker(void *arg)
{
	long id = (long)arg;
	kgc_thread *t;
	char name[32];

	if (kgc_thread_attach(nt_heap, "w", &t))
		abort();
	while (!atomic_load(&go))
		;
	for (int i = 0; i < CALLS; i++) {
		union kgc_value a[1], r;
		kgc_method *m;

		a[0].j = i;
		if (kgc_native_call(t, lazy, NULL, a, &r) || r.j != i + 1)
			abort();
		if (i % 20 == 0) {
			struct kgc_native_method e = { NULL, "(I)I", twice,
						       KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL };

			snprintf(name, sizeof(name), "m%ld_%d", id, i);
			e.name = name;
			if (kgc_native_register(nt_heap, "kgc/test/Race", &e, 1) ||
			    kgc_native_method_find(nt_heap, "kgc/test/Race", name, "(I)I",
						   e.flags, &m))
				abort();
			a[0].i = i;
			if (kgc_native_call(t, m, NULL, a, &r) || r.i != 2 * i)
				abort();
		}
	}
	kgc_thread_detach(t);
	return NULL;
}

int main(void)
{
	pthread_t th[NTHREADS];

	nt_setup();
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/Race", "inc", "(J)J",
					   KGC_NATIVE_STATIC, &lazy), 0);
	T_ASSERT(lazy->fn == NULL);
	for (long i = 0; i < NTHREADS; i++)
		T_ASSERT_EQ(pthread_create(&th[i], NULL, worker, (void *)i), 0);
	kgc_enter_native(nt_thread);	/* don't hold up collections while waiting */
	atomic_store(&go, 1);
	for (int i = 0; i < NTHREADS; i++)
		T_ASSERT_EQ(pthread_join(th[i], NULL), 0);
	kgc_leave_native(nt_thread);
	T_ASSERT(lazy->fn == (void *)Java_kgc_test_Race_inc);
	nt_teardown();
	puts("ok");
	return 0;
}
