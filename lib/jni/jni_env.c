/* SPDX-License-Identifier: MIT */
/*
 * jni_env.c - the JNIEnv of each kgc thread (its data in kgcj_ext's thread
 * slot, freed by kgc_thread_detach) and the bridge's env hooks that give
 * every regular native of the heap its thread's JNIEnv: a local frame per
 * call, the class argument of static natives, the pending exception handed
 * back to kgc_native_call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "jni_internal.h"

/*
 * The env of this OS thread (GetEnv), set when a thread gets its env, and
 * the call path's cache of it: cur.t is the kgc thread it belongs to and
 * cur.epoch the value of env_epoch then. Every free of an env bumps
 * env_epoch, so a cache that may name a freed env (its thread detached
 * from another OS thread, and a new kgc_thread allocated at the same
 * address) misses. The detach that freed it happened before this OS
 * thread got its new thread (kgc_thread_attach takes the heap lock the
 * detach took), so a relaxed load sees the bump.
 */
/* initial-exec: the call path reads it without __tls_get_addr (a call,
 * also in libkgc-jni.so; 24 bytes of the static TLS surplus if dlopen'ed) */
static __thread struct {
	struct kgcj_env *env;
	kgc_thread *t;
	unsigned long epoch;
} cur __attribute__((tls_model("initial-exec")));
static unsigned long env_epoch;

static void cur_set(struct kgcj_env *e, kgc_thread *t)
{
	cur.env = e;
	cur.t = t;
	cur.epoch = __atomic_load_n(&env_epoch, __ATOMIC_RELAXED);
}

struct kgcj_env *kgcj_env_current(void)
{
	return cur.env;
}

static void env_detach_hook(kgc_thread *t, void *data)
{
	kgcj_env_free(data);
}

const struct kgc_ext kgcj_ext = {
	.name = "libkgc-jni",
	.thread_detach = env_detach_hook,
};

static void stack_range(struct kgcj_env *e)
{
	pthread_attr_t a;
	void *lo;
	size_t sz;

	if (pthread_getattr_np(pthread_self(), &a))
		return;
	if (!pthread_attr_getstack(&a, &lo, &sz)) {
		e->stack_lo = (uintptr_t)lo;
		e->stack_hi = (uintptr_t)lo + sz;
	}
	pthread_attr_destroy(&a);
}

/* t's env (managed state), created on first use; NULL + kgc_last_error. */
struct kgcj_env *kgcj_env_get(struct kgcj_vm *vm, kgc_thread *t)
{
	struct kgcj_env *e = kgc_ext_thread_get(t, &kgcj_ext);

	if (likely(e)) {
		cur_set(e, t);
		return e;
	}
	e = calloc(1, sizeof(*e));
	if (!e) {
		kgcj_error("libkgc-jni: out of memory for a JNIEnv");
		return NULL;
	}
	e->fns = vm->env_fns;
	e->vm = vm;
	e->t = t;
	e->exc = kgc_handle_new(t, NULL);
	if (!e->exc || kgcj_mark_push(e, 16, true) || kgc_ext_thread_set(t, &kgcj_ext, e)) {
		if (e->exc)
			kgc_handle_free(t, e->exc);
		free(e->marks);
		free(e);
		kgcj_error("libkgc-jni: cannot create the JNIEnv of a thread");
		return NULL;
	}
	stack_range(e);
	cur_set(e, t);
	return e;
}

/* From kgc_thread_detach (t managed, still attached). */
void kgcj_env_free(struct kgcj_env *e)
{
	while (e->copies) {
		struct kgcj_copy *c = e->copies;

		e->copies = c->next;
		free(c->elems);
		free(c);
	}
	kgcj_locals_free(e);
	kgc_handle_free(e->t, e->exc);
	free(e->exc_msg);
	free(e->marks);
	if (cur.env == e)
		cur_set(NULL, NULL);
	__atomic_fetch_add(&env_epoch, 1, __ATOMIC_RELAXED);
	free(e);
}

/* ------------------------------------------------ the bridge's env hooks */

/* env_enter's general case: t's env found or made, the class looked up. */
static __attribute__((noinline)) void *env_enter_slow(struct kgcj_vm *vm, kgc_thread *t,
						      kgc_jclass owner, int is_static, void **cls)
{
	struct kgcj_env *e = kgcj_env_get(vm, t);
	struct kgcj_class *c;

	if (!e || kgcj_mark_push(e, 16, true))
		return NULL;
	if (is_static) {
		/* classes live as long as the VM: the last one found is kept per thread */
		c = owner == e->last_owner ? e->last_cls : kgcj_class_of_owner(vm, t, owner);
		if (!c) {
			kgcj_mark_pop(e);
			return NULL;
		}
		e->last_owner = owner;
		e->last_cls = c;
		*cls = (void *)c->mirror;
	}
	return e;
}

/*
 * A call's local frame and class argument. The common case - this OS
 * thread's cached env is t's, the marks have room, a static native of the
 * class of the last one - is a leaf with no call (no register to save).
 */
static void *env_enter(void *ctx, kgc_thread *t, kgc_jclass owner, int is_static, void **cls)
{
	struct kgcj_env *e = cur.env;

	if (likely(cur.t == t && e && cur.epoch == __atomic_load_n(&env_epoch, __ATOMIC_RELAXED) &&
		   e->nmarks < e->capmarks && (!is_static || owner == e->last_owner))) {
		kgcj_mark_push_room(e, 16, true);
		if (is_static)
			*cls = (void *)e->last_cls->mirror;
		return e;
	}
	return env_enter_slow(ctx, t, owner, is_static, cls);
}

static int env_leave(void *ctx, kgc_thread *t, void *env, kgc_obj *exc, char **msg)
{
	struct kgcj_env *e = env;

	if (unlikely(e->crit) && e->vm->checked)
		kgcj_fatal("(native return)", "the native returned with %u critical region(s) open",
			   e->crit);
	kgcj_mark_pop(e);
	if (likely(!e->exc_pending))
		return 0;
	*exc = kgc_handle_get(e->exc);
	kgc_handle_set(e->exc, NULL);
	e->exc_pending = false;
	*msg = e->exc_msg;
	e->exc_msg = NULL;
	return 1;
}

const struct kgc_native_env_ops kgcj_env_ops = {
	.size = sizeof(struct kgc_native_env_ops),
	.enter = env_enter,
	.leave = env_leave,
};
