/* SPDX-License-Identifier: MIT */
/*
 * jni_test.h - helpers of the libkgc-jni tests (lib/test/jni_*.c): a heap
 * with its JavaVM, a thread that allocates and collects while natives run,
 * and calls of Debian's JNI libraries through kgc_native_call.
 */
#ifndef KGC_JNI_TEST_H
#define KGC_JNI_TEST_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <unistd.h>
#include <kgc_jni.h>
#include "test.h"

static kgc_heap *jt_heap;
static kgc_thread *jt_t;
static JavaVM *jt_vm;

static inline void jt_setup(size_t max_heap, size_t young)
{
	struct kgc_options o;
	int rc;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	if (!getenv("KGC_HEAP_MAX"))
		o.max_heap = max_heap;
	if (young)
		o.young_size = young;
	rc = kgc_heap_create(&o, &jt_heap);
	T_SKIP_IF(rc == -ENOSYS || rc == -EOPNOTSUPP, "no heap backend");
	T_ASSERT_EQ(rc, 0);
	T_ASSERT_EQ(kgc_thread_attach(jt_heap, "main", &jt_t), 0);
	rc = kgc_jni_vm_create(jt_heap, jt_t, &jt_vm);
	if (rc)
		T_FAIL("kgc_jni_vm_create: %d", rc);
}

static inline void jt_teardown(void)
{
	T_ASSERT_EQ(kgc_jni_vm_destroy(jt_vm, jt_t), 0);
	T_ASSERT_EQ(kgc_thread_detach(jt_t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(jt_heap), 0);
}

/* Skips unless the Debian package's library is installed. */
static inline void jt_need(const char *path, const char *pkg)
{
	char why[256];

	snprintf(why, sizeof(why), "%s not installed (apt-get install %s)", path, pkg);
	T_SKIP_IF(access(path, R_OK) != 0, why);
}

static inline kgc_method *jt_method(const char *cls, const char *name, const char *sig,
				    uint32_t flags)
{
	kgc_method *m = NULL;
	int rc = kgc_jni_method(jt_vm, cls, name, sig, flags, &m);

	if (rc)
		T_FAIL("kgc_jni_method %s.%s%s: %d", cls, name, sig, rc);
	return m;
}

/* The class name and message of the exception pending after -EPROTO. */
static inline const char *jt_exc_class(void)
{
	return kgc_jni_class_name(jt_vm, kgc_native_exception(jt_t));
}

/* The class of the exception pending on env (then cleared), or NULL if none. */
static __attribute__((unused)) const char *jt_thrown(JNIEnv *env)
{
	jthrowable x = (*env)->ExceptionOccurred(env);
	const char *c;

	if (!x)
		return NULL;
	c = kgc_jni_class_name(jt_vm, *(kgc_obj *)x);
	(*env)->ExceptionClear(env);
	return c;
}

/* A JNI call failed the JNI way: it returned NULL (got) with exc pending. */
static __attribute__((unused)) void jt_expect_exc(JNIEnv *env, const void *got, const char *exc)
{
	const char *c = jt_thrown(env);

	T_ASSERT(got == NULL);
	if (!c || strcmp(c, exc))
		T_FAIL("want %s pending, got %s", exc, c ? c : "none");
}

/*
 * Runs fn(arg) in a child whose stderr is captured; fails unless the child
 * dies of SIGABRT. Returns what it wrote (static, NUL-terminated).
 */
static inline const char *jt_dies(void (*fn)(void *), void *arg, const char *what)
{
	static char buf[2048];
	ssize_t n, got = 0;
	int p[2], st;
	pid_t pid;

	T_ASSERT_EQ(pipe(p), 0);
	fflush(stdout);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (!pid) {
		dup2(p[1], 2);
		fn(arg);
		_exit(0);
	}
	close(p[1]);
	while ((n = read(p[0], buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
		got += n;
	buf[got] = 0;
	close(p[0]);
	T_ASSERT_EQ(waitpid(pid, &st, 0), pid);
	if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGABRT)
		T_FAIL("%s: the child did not abort (status %#x): %s", what, st, buf);
	return buf;
}

/* ------------------------------------------- a thread allocating and collecting */

static atomic_int jt_stop;
static atomic_int jt_gcs;	/* collections the thread completed */

static __attribute__((unused)) void *jt_gc_thread(void *arg)
{
	unsigned long long seed = (unsigned long long)(uintptr_t)arg;
	kgc_obj keep[8] = { NULL };
	struct kgc_frame f;
	kgc_thread *t;

	if (kgc_thread_attach(jt_heap, "gc", &t))
		abort();
	kgc_frame_push(t, &f, keep, 8, NULL);
	while (!atomic_load(&jt_stop)) {
		for (int i = 0; i < 2000; i++) {
			size_t n = 8 + t_rand(&seed) % 512;
			kgc_obj o = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), n);

			if (!o)
				abort();
			keep[t_rand(&seed) % 8] = o;	/* some survive a while */
		}
		if (kgc_collect(t, (t_rand(&seed) % 8) ? KGC_GC_YOUNG : KGC_GC_FULL))
			abort();
		atomic_fetch_add(&jt_gcs, 1);
	}
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	return NULL;
}

/* Waits (native state) until the GC thread completed n more collections. */
static inline void jt_wait_gcs(int n)
{
	int base = atomic_load(&jt_gcs);

	kgc_enter_native(jt_t);
	for (int ms = 0; ms < 60000 && atomic_load(&jt_gcs) < base + n; ms++)
		usleep(1000);
	kgc_leave_native(jt_t);
	if (atomic_load(&jt_gcs) < base + n)
		T_FAIL("the GC thread did not collect %d times in 60 s", n);
}

/* A byte[] of n bytes of compressible data from seed into *slot, a root
 * (managed; polls for safepoints between 64 KiB pieces). */
static inline kgc_obj jt_bytes(kgc_obj *slot, size_t n, unsigned long long *seed)
{
	*slot = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), n);
	if (!*slot)
		T_FAIL("byte[%zu]", n);
	for (size_t i = 0; i < n; i++) {
		unsigned long long r = t_rand(seed);

		if (!(i & 0xffff))
			kgc_safepoint_poll(jt_t);	/* *slot may move here */
		/* runs of a few symbols: it compresses, but not to nothing */
		((unsigned char *)kgc_array_data(*slot))[i] =
			(r & 3) ? (unsigned char)('a' + (r >> 8) % 4) : (unsigned char)(r >> 16);
	}
	return *slot;
}

static inline int32_t jt_call_i(kgc_method *m, const union kgc_value *args)
{
	union kgc_value r = { 0 };
	int rc = kgc_native_call(jt_t, m, NULL, args, &r);

	if (rc)
		T_FAIL("native call: %d (%s: %s)", rc, jt_exc_class() ? jt_exc_class() : "-",
		       kgc_native_exception_message(jt_t) ? kgc_native_exception_message(jt_t) : "-");
	return r.i;
}

#endif
