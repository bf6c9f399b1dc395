/* SPDX-License-Identifier: MIT */
/*
 * jni_invoke.c - GetVersion, GetJavaVM and the invocation interface
 * (GetEnv, AttachCurrentThread[AsDaemon], DetachCurrentThread) on kgc
 * thread attach: an OS thread attached by AttachCurrentThread runs in
 * native state between JNI calls, like any native code.
 */
#include <errno.h>
#include <stdlib.h>

#include "jni_internal.h"

jint kgcj_GetVersion(JNIEnv *env)
{
	return JNI_VERSION_10;
}

jint kgcj_GetJavaVM(JNIEnv *env, JavaVM **out)
{
	if (!out)
		return JNI_EINVAL;
	*out = (JavaVM *)ENV(env)->vm;
	return JNI_OK;
}

/* ------------------------------------------------- invocation interface */

jint kgcj_vm_DestroyJavaVM(JavaVM *jvm)
{
	kgcj_error("DestroyJavaVM: the embedder destroys the VM (kgc_jni_vm_destroy)");
	return JNI_ERR;
}

static bool version_ok(jint v)
{
	return v == JNI_VERSION_1_1 || v == JNI_VERSION_1_2 || v == JNI_VERSION_1_4 ||
	       v == JNI_VERSION_1_6 || v == JNI_VERSION_1_8 || v == JNI_VERSION_9 ||
	       v == JNI_VERSION_10;
}

jint kgcj_vm_GetEnv(JavaVM *jvm, void **penv, jint version)
{
	if (!penv)
		return JNI_EINVAL;
	*penv = NULL;
	if (!kgcj_env_current() || kgcj_env_current()->vm != VM(jvm))
		return JNI_EDETACHED;
	if (!version_ok(version))
		return JNI_EVERSION;
	*penv = kgcj_env_current();
	return JNI_OK;
}

/* Attached threads run in native state between JNI calls, like a thread
 * that runs native code: they never hold up a collection. */
static jint attach(JavaVM *jvm, void **penv, void *args, const char *what)
{
	struct kgcj_vm *vm = VM(jvm);
	JavaVMAttachArgs *a = args;
	kgc_thread *t;
	struct kgcj_env *e;

	if (!penv)
		return JNI_EINVAL;
	if (kgcj_env_current() && kgcj_env_current()->vm == vm) {
		*penv = kgcj_env_current();
		return JNI_OK;
	}
	if (a && !version_ok(a->version))
		return JNI_EVERSION;
	if (kgc_thread_attach(vm->heap, a && a->name ? a->name : what, &t))
		return JNI_ERR;
	e = kgcj_env_get(vm, t);
	if (!e) {
		kgc_thread_detach(t);
		return JNI_ENOMEM;
	}
	e->own_thread = true;
	__atomic_fetch_add(&vm->attached, 1, __ATOMIC_RELEASE);
	kgc_enter_native(t);
	*penv = e;
	return JNI_OK;
}

jint kgcj_vm_AttachCurrentThread(JavaVM *jvm, void **penv, void *args)
{
	return attach(jvm, penv, args, "jni-attached");
}

jint kgcj_vm_AttachCurrentThreadAsDaemon(JavaVM *jvm, void **penv, void *args)
{
	return attach(jvm, penv, args, "jni-daemon");
}

jint kgcj_vm_DetachCurrentThread(JavaVM *jvm)
{
	struct kgcj_env *e = kgcj_env_current();
	kgc_thread *t;

	if (!e || e->vm != VM(jvm))
		return JNI_EDETACHED;
	if (!e->own_thread) {
		/* a thread the runtime attached stays the runtime's */
		kgcj_error("DetachCurrentThread: the thread was attached by the runtime, not by "
			   "AttachCurrentThread");
		return JNI_ERR;
	}
	if (e->crit && e->vm->checked)
		kgcj_fatal("DetachCurrentThread", "%u critical region(s) still open", e->crit);
	t = e->t;
	kgcj_in(e);
	kgcj_locals_free(e);
	if (kgc_thread_detach(t)) {	/* frees e through the detach hook */
		kgc_enter_native(t);
		return JNI_ERR;
	}
	__atomic_fetch_sub(&VM(jvm)->attached, 1, __ATOMIC_RELEASE);
	return JNI_OK;
}
