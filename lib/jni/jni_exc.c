/* SPDX-License-Identifier: MIT */
/*
 * jni_exc.c - exceptions. The pending exception of an env is rooted by its
 * handle (e->exc); when a native returns with one pending, the bridge's
 * leave hook (jni_vm.c) hands it to kgc_native_call, which returns -EPROTO
 * with it as kgc_native_exception. Throwables are instances of
 * java/lang/Throwable (or a subclass) with their detailMessage a String.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jni_internal.h"

void kgcj_throw_obj(struct kgcj_env *e, kgc_obj exc, const char *msg)
{
	kgc_handle_set(e->exc, exc);
	e->exc_pending = true;
	free(e->exc_msg);
	e->exc_msg = msg ? strdup(msg) : NULL;
}

/* A new instance of c with message msg (managed), or NULL (out of memory). */
static kgc_obj throwable_new(struct kgcj_env *e, struct kgcj_class *c, const char *msg)
{
	kgc_obj slot[1] = { NULL }, o;
	struct kgc_frame f;

	if (!c->type || !kgcj_subclass(c, e->vm->c_throwable))
		return NULL;
	kgc_frame_push(e->t, &f, slot, 1, NULL);
	if (msg)
		slot[0] = kgcj_string_new(e, msg);
	o = kgc_alloc(e->t, c->type);
	if (o)
		kgc_set_ref(e->t, o, e->vm->f_exc_message->offset, slot[0]);
	kgc_frame_pop(e->t, &f);
	return o;
}

void kgcj_throw(struct kgcj_env *e, const char *cls, const char *fmt, ...)
{
	struct kgcj_class *c = kgcj_class_find(e->vm, cls);
	char msg[512];
	va_list ap;
	kgc_obj o;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	o = c ? throwable_new(e, c, msg) : NULL;
	if (!o)		/* out of memory: the message still tells */
		o = throwable_new(e, e->vm->c_throwable, msg);
	kgcj_throw_obj(e, o, msg);
}

/* The message of a Throwable (malloc'd modified UTF-8), or NULL. */
static char *message_of(struct kgcj_vm *vm, kgc_obj o)
{
	struct kgcj_class *c = kgcj_class_of_obj(vm, o);
	kgc_obj s;

	if (!c || !kgcj_subclass(c, vm->c_throwable))
		return NULL;
	s = kgc_get_ref(o, vm->f_exc_message->offset);
	return s ? kgcj_string_utf8(vm, s) : NULL;
}

jint kgcj_Throw(JNIEnv *env, jthrowable obj)
{
	struct kgcj_env *e = ENV(env);
	char *msg;
	kgc_obj o;
	bool n;

	if (e->vm->checked)
		kgcj_check_crit(e, "Throw");
	n = kgcj_in(e);
	o = kgcj_deref(e, obj, "Throw");
	if (o) {
		msg = message_of(e->vm, o);
		kgcj_throw_obj(e, o, msg);
		free(msg);
	}
	kgcj_out(e, n);
	return o ? JNI_OK : JNI_ERR;
}

jint kgcj_ThrowNew(JNIEnv *env, jclass cls, const char *msg)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *c;
	kgc_obj o = NULL;
	bool n;

	if (e->vm->checked)
		kgcj_check_crit(e, "ThrowNew");
	n = kgcj_in(e);
	c = kgcj_class_of_ref(e, cls, "ThrowNew");
	if (c) {
		if (!kgcj_subclass(c, e->vm->c_throwable) && e->vm->checked)
			kgcj_fatal("ThrowNew", "%s is not a Throwable", c->name);
		o = throwable_new(e, c, msg);
		if (o)
			kgcj_throw_obj(e, o, msg);
	}
	kgcj_out(e, n);
	return o ? JNI_OK : JNI_ERR;
}

jthrowable kgcj_ExceptionOccurred(JNIEnv *env)
{
	struct kgcj_env *e = ENV(env);
	jobject r;
	bool n;

	if (!e->exc_pending)
		return NULL;
	n = kgcj_in(e);
	r = kgcj_local(e, kgc_handle_get(e->exc));
	kgcj_out(e, n);
	return r;
}

static void clear(struct kgcj_env *e)
{
	kgc_handle_set(e->exc, NULL);
	e->exc_pending = false;
	free(e->exc_msg);
	e->exc_msg = NULL;
}

void kgcj_ExceptionDescribe(JNIEnv *env)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *c;
	char *msg;
	kgc_obj o;
	bool n;

	if (!e->exc_pending)
		return;
	n = kgcj_in(e);
	o = kgc_handle_get(e->exc);
	c = kgcj_class_of_obj(e->vm, o);
	msg = message_of(e->vm, o);
	fprintf(stderr, "Exception in native code: %s%s%s\n", c ? c->name : "?", msg ? ": " : "",
		msg ? msg : "");
	free(msg);
	clear(e);
	kgcj_out(e, n);
}

void kgcj_ExceptionClear(JNIEnv *env)
{
	struct kgcj_env *e = ENV(env);
	bool n;

	if (!e->exc_pending)
		return;
	n = kgcj_in(e);
	clear(e);
	kgcj_out(e, n);
}

void kgcj_FatalError(JNIEnv *env, const char *msg)
{
	fprintf(stderr, "kgc-jni: FATAL ERROR in native method: %s\n", msg ? msg : "(null)");
	fflush(stderr);
	abort();
}

jboolean kgcj_ExceptionCheck(JNIEnv *env)
{
	return ENV(env)->exc_pending;
}

KGC_API int kgc_jni_exception_message(JavaVM *jvm, kgc_thread *t, kgc_obj o, char *buf,
				      size_t size)
{
	char *msg = jvm && o ? message_of(VM(jvm), o) : NULL;
	int n;

	if (!msg) {
		kgcj_error("kgc_jni_exception_message: %s", !o ? "NULL object" :
			   "not a Throwable, or no message");
		return -EINVAL;
	}
	n = snprintf(buf, size, "%s", msg);
	free(msg);
	return n;
}
