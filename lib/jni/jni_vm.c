/* SPDX-License-Identifier: MIT */
/*
 * jni_vm.c - the JavaVM of a heap: creation (the host's core classes, the
 * bridge's env hooks of jni_env.c), destruction (JNI_OnUnload, classes),
 * kgc_jni_env.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "jni_internal.h"

/* --------------------------------------------------------------- the VM */

KGC_API int kgc_jni_vm_create(kgc_heap *heap, kgc_thread *t, JavaVM **out)
{
	struct kgcj_vm *vm;
	int rc;

	if (!heap || !t || !out) {
		kgcj_error("kgc_jni_vm_create: NULL %s", !heap ? "heap" : !t ? "thread" : "out");
		return -EINVAL;
	}
	vm = calloc(1, sizeof(*vm));
	if (!vm) {
		kgcj_error("kgc_jni_vm_create: out of memory");
		return -ENOMEM;
	}
	vm->fns = &kgcj_vm_fns;
	vm->env_fns = &kgcj_env_fns;
	vm->heap = heap;
	vm->checked = kgc_ext_heap_checked(heap);
	pthread_mutex_init(&vm->lock, NULL);
	pthread_mutex_init(&vm->mon_lock, NULL);
	rc = kgcj_host_init(vm, t);
	if (!rc)	/* last: nothing to undo in the bridge */
		rc = kgc_native_set_env_ops(heap, &kgcj_env_ops, vm);
	if (rc) {
		kgcj_host_free(vm, t);
		pthread_mutex_destroy(&vm->mon_lock);
		pthread_mutex_destroy(&vm->lock);
		free(vm);
		return rc;
	}
	*out = (JavaVM *)vm;
	return 0;
}

KGC_API int kgc_jni_vm_destroy(JavaVM *jvm, kgc_thread *t)
{
	struct kgcj_vm *vm = VM(jvm);
	struct kgcj_env *e;

	if (!vm || !t) {
		kgcj_error("kgc_jni_vm_destroy: NULL %s", vm ? "thread" : "vm");
		return -EINVAL;
	}
	if (__atomic_load_n(&vm->attached, __ATOMIC_ACQUIRE)) {
		kgcj_error("kgc_jni_vm_destroy: %u thread(s) attached by AttachCurrentThread",
			   vm->attached);
		return -EBUSY;
	}
	kgcj_libs_unload(vm, t);
	e = kgc_ext_thread_get(t, &kgcj_ext);
	if (e) {
		kgc_ext_thread_set(t, &kgcj_ext, NULL);
		kgcj_env_free(e);
	}
	kgcj_host_free(vm, t);
	kgcj_monitors_free(vm);
	pthread_mutex_destroy(&vm->mon_lock);
	pthread_mutex_destroy(&vm->lock);
	free(vm);
	return 0;
}

KGC_API int kgc_jni_env(JavaVM *jvm, kgc_thread *t, JNIEnv **out)
{
	struct kgcj_env *e;

	if (!jvm || !t || !out) {
		kgcj_error("kgc_jni_env: NULL argument");
		return -EINVAL;
	}
	e = kgcj_env_get(VM(jvm), t);
	if (!e)
		return -ENOMEM;
	*out = (JNIEnv *)e;
	return 0;
}
