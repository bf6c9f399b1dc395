/* SPDX-License-Identifier: MIT */
/*
 * jni_loader.c - JNI libraries: loaded by path through the bridge
 * (kgc_native_load_library: their Java_* exports bind lazily, by the JNI
 * name mangling), JNI_OnLoad at load and JNI_OnUnload at VM destruction;
 * RegisterNatives onto the bridge's registry; the native methods a runtime
 * calls with kgc_native_call (kgc_jni_method).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jni_internal.h"

/* Runs fn(vm) as a native would (native state, a local frame); -EPROTO if
 * it left an exception pending. */
static int run_hook(struct kgcj_vm *vm, kgc_thread *t, void *fn, jint *ver, const char *what)
{
	struct kgcj_env *e = kgcj_env_get(vm, t);
	int rc = 0;

	if (!e || kgcj_mark_push(e, 16, true))
		return -ENOMEM;
	kgc_enter_native(t);
	if (ver)
		*ver = ((jint (*)(JavaVM *, void *))fn)((JavaVM *)vm, NULL);
	else
		((void (*)(JavaVM *, void *))fn)((JavaVM *)vm, NULL);
	kgc_leave_native(t);
	kgcj_mark_pop(e);
	if (e->exc_pending) {
		kgcj_error("%s left an exception pending: %s", what,
			   e->exc_msg ? e->exc_msg : "(no message)");
		kgc_handle_set(e->exc, NULL);
		e->exc_pending = false;
		rc = -EPROTO;
	}
	return rc;
}

KGC_API int kgc_jni_load_library(JavaVM *jvm, kgc_thread *t, const char *path)
{
	struct kgcj_vm *vm = VM(jvm);
	struct kgcj_lib *l;
	void *dl, *onload;
	jint ver = JNI_VERSION_1_1;
	int rc;

	if (!vm || !t || !path) {
		kgcj_error("kgc_jni_load_library: NULL %s", !vm ? "vm" : !t ? "thread" : "path");
		return -EINVAL;
	}
	rc = kgc_native_load_library(vm->heap, path);
	if (rc)
		return rc;
	dl = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	if (!dl) {
		kgcj_error("kgc_jni_load_library: %s: not loaded", path);
		return -ENOENT;
	}
	pthread_mutex_lock(&vm->lock);
	for (l = vm->libs; l; l = l->next)
		if (l->dl == dl)
			break;
	pthread_mutex_unlock(&vm->lock);
	if (l) {		/* loaded already: JNI_OnLoad ran then */
		dlclose(dl);
		return 0;
	}
	onload = dlsym(dl, "JNI_OnLoad");
	rc = onload ? run_hook(vm, t, onload, &ver, "JNI_OnLoad") : 0;
	if (!rc && ver != JNI_VERSION_1_1 && ver != JNI_VERSION_1_2 && ver != JNI_VERSION_1_4 &&
	    ver != JNI_VERSION_1_6 && ver != JNI_VERSION_1_8 && ver != JNI_VERSION_9 &&
	    ver != JNI_VERSION_10) {
		kgcj_error("kgc_jni_load_library: %s: JNI_OnLoad returned version 0x%x, not "
			   "supported", path, (unsigned)ver);
		rc = -EPROTO;
	}
	l = rc ? NULL : calloc(1, sizeof(*l));
	if (!rc && (!l || !(l->path = strdup(path)))) {
		free(l);
		rc = -ENOMEM;
	}
	if (rc) {
		dlclose(dl);
		return rc;
	}
	l->dl = dl;
	pthread_mutex_lock(&vm->lock);
	l->next = vm->libs;
	vm->libs = l;
	pthread_mutex_unlock(&vm->lock);
	return 0;
}

void kgcj_libs_unload(struct kgcj_vm *vm, kgc_thread *t)
{
	while (vm->libs) {
		struct kgcj_lib *l = vm->libs;
		void *onunload = dlsym(l->dl, "JNI_OnUnload");

		vm->libs = l->next;
		if (onunload)
			run_hook(vm, t, onunload, NULL, "JNI_OnUnload");
		dlclose(l->dl);
		free(l->path);
		free(l);
	}
}

/* Bridge flags of cls.name(sig): as the class declares it, else flags. */
static uint32_t native_flags(struct kgcj_vm *vm, const char *cls, const char *name,
			     const char *sig, uint32_t flags)
{
	struct kgcj_class *c = kgcj_class_find(vm, cls);

	if (c && kgcj_method_find(c, name, sig, true))
		return KGC_NATIVE_STATIC;
	if (c && kgcj_method_find(c, name, sig, false))
		return 0;
	return flags & KGC_JNI_STATIC ? KGC_NATIVE_STATIC : 0;
}

KGC_API int kgc_jni_method(JavaVM *jvm, const char *cls, const char *name, const char *sig,
			   uint32_t flags, kgc_method **out)
{
	struct kgcj_vm *vm = VM(jvm);

	if (!vm || !cls || !name || !sig || !out || (flags & ~(KGC_JNI_STATIC | KGC_JNI_NATIVE))) {
		kgcj_error("kgc_jni_method: NULL argument or unknown flags 0x%x", flags);
		return -EINVAL;
	}
	return kgc_native_method_find(vm->heap, cls, name, sig,
				      native_flags(vm, cls, name, sig, flags), out);
}

jint kgcj_RegisterNatives(JNIEnv *env, jclass cls, const JNINativeMethod *methods, jint n)
{
	struct kgcj_env *e = ENV(env);
	struct kgc_native_method tab[n > 0 ? n : 1];
	struct kgcj_class *c;
	bool nat;
	int rc = -EINVAL;

	kgcj_check(e, "RegisterNatives");
	nat = kgcj_in(e);
	c = kgcj_class_of_ref(e, cls, "RegisterNatives");
	for (jint i = 0; c && i < n; i++) {
		if (!methods[i].name || !methods[i].signature || !methods[i].fnPtr) {
			c = NULL;
			break;
		}
		if (!kgcj_method_find(c, methods[i].name, methods[i].signature, true) &&
		    !kgcj_method_find(c, methods[i].name, methods[i].signature, false)) {
			kgcj_throw(e, "java/lang/NoSuchMethodError", "RegisterNatives: %s.%s%s is "
				   "not a method of the class", c->name, methods[i].name,
				   methods[i].signature);
			kgcj_out(e, nat);
			return JNI_ERR;
		}
		tab[i] = (struct kgc_native_method){
			.name = methods[i].name, .signature = methods[i].signature,
			.fnptr = methods[i].fnPtr,
			.flags = native_flags(e->vm, c->name, methods[i].name, methods[i].signature, 0),
		};
	}
	if (c && n >= 0)
		rc = kgc_native_register(e->vm->heap, c->name, tab, (size_t)n);
	if (rc)
		kgcj_throw(e, "java/lang/NoSuchMethodError", "RegisterNatives: %s",
			   c ? kgc_last_error() : "bad class or method table");
	kgcj_out(e, nat);
	return rc ? JNI_ERR : JNI_OK;
}

jint kgcj_UnregisterNatives(JNIEnv *env, jclass cls)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *c;
	bool n;

	kgcj_check(e, "UnregisterNatives");
	n = kgcj_in(e);
	c = kgcj_class_of_ref(e, cls, "UnregisterNatives");
	if (c)
		kgc_native_unregister(e->vm->heap, c->name);
	kgcj_out(e, n);
	return c ? JNI_OK : JNI_ERR;
}
