/* SPDX-License-Identifier: MIT */
/*
 * jni_monitor.c - MonitorEnter/MonitorExit. Objects move, so a monitor is
 * found by the object's identity hash (kgc_identity_hash: stable for its
 * life): objects with equal hashes share one monitor - mutual exclusion
 * holds, at worst with contention the program did not ask for. Monitors
 * are reentrant; a thread waits for one in native state (collections go
 * on). They are freed with the VM.
 */
#include <errno.h>
#include <stdlib.h>

#include "jni_internal.h"

struct kgcj_monitor {
	struct kgcj_monitor *next;
	uint32_t hash;
	uint32_t count;			/* entries of the owner */
	struct kgcj_env *owner;
	pthread_cond_t cv;
};

/* The monitor of hash (vm->mon_lock held), created if missing; NULL: no memory. */
static struct kgcj_monitor *monitor_of(struct kgcj_vm *vm, uint32_t hash, bool create)
{
	struct kgcj_monitor *m;

	for (m = vm->monitors; m; m = m->next)
		if (m->hash == hash)
			return m;
	if (!create || !(m = calloc(1, sizeof(*m))))
		return NULL;
	m->hash = hash;
	pthread_cond_init(&m->cv, NULL);
	m->next = vm->monitors;
	vm->monitors = m;
	return m;
}

/* The identity hash of obj (managed inside), or 0 with NullPointerException. */
static uint32_t hash_of(struct kgcj_env *e, jobject obj, const char *fn)
{
	bool n = kgcj_in(e);
	kgc_obj o = kgcj_deref(e, obj, fn);
	uint32_t h = 0;

	if (o)
		h = kgc_identity_hash(e->t, o);
	else
		kgcj_throw(e, "java/lang/NullPointerException", "%s: null object", fn);
	kgcj_out(e, n);
	return h;
}

jint kgcj_MonitorEnter(JNIEnv *env, jobject obj)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_vm *vm = e->vm;
	struct kgcj_monitor *m;
	uint32_t h;
	bool managed;

	kgcj_check(e, "MonitorEnter");
	h = hash_of(e, obj, "MonitorEnter");
	if (!h)
		return JNI_ERR;
	/* wait in native state: never hold up a collection */
	managed = __atomic_load_n(&((struct kgc_thread_pub *)e->t)->state,
				  __ATOMIC_RELAXED) == KGC__TS_MANAGED;
	if (managed)
		kgc_enter_native(e->t);
	pthread_mutex_lock(&vm->mon_lock);
	m = monitor_of(vm, h, true);
	while (m && m->owner && m->owner != e)
		pthread_cond_wait(&m->cv, &vm->mon_lock);
	if (m) {
		m->owner = e;
		m->count++;
	}
	pthread_mutex_unlock(&vm->mon_lock);
	if (managed)
		kgc_leave_native(e->t);
	if (!m) {
		bool n = kgcj_in(e);

		kgcj_throw(e, "java/lang/OutOfMemoryError", "MonitorEnter");
		kgcj_out(e, n);
		return JNI_ENOMEM;
	}
	return JNI_OK;
}

jint kgcj_MonitorExit(JNIEnv *env, jobject obj)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_vm *vm = e->vm;
	struct kgcj_monitor *m;
	uint32_t h;
	bool owned;

	if (vm->checked)
		kgcj_check_crit(e, "MonitorExit");
	h = hash_of(e, obj, "MonitorExit");
	if (!h)
		return JNI_ERR;
	pthread_mutex_lock(&vm->mon_lock);
	m = monitor_of(vm, h, false);
	owned = m && m->owner == e;
	if (owned && !--m->count) {
		m->owner = NULL;
		pthread_cond_signal(&m->cv);
	}
	pthread_mutex_unlock(&vm->mon_lock);
	if (!owned) {
		bool n = kgcj_in(e);

		kgcj_throw(e, "java/lang/IllegalMonitorStateException",
			   "MonitorExit: the thread does not own the monitor");
		kgcj_out(e, n);
		return JNI_ERR;
	}
	return JNI_OK;
}

void kgcj_monitors_free(struct kgcj_vm *vm)
{
	while (vm->monitors) {
		struct kgcj_monitor *m = vm->monitors;

		vm->monitors = m->next;
		pthread_cond_destroy(&m->cv);
		free(m);
	}
}
