/* SPDX-License-Identifier: MIT */
/*
 * jni_classes.c - the JNI functions over the host's classes (jni_host.c):
 * FindClass, GetSuperclass, IsAssignableFrom, GetObjectClass, IsInstanceOf,
 * AllocObject and the method and field IDs (a jmethodID is a struct
 * kgcj_method *, a jfieldID a struct kgcj_field *).
 */
#include <string.h>

#include "jni_internal.h"

jclass kgcj_FindClass(JNIEnv *env, const char *name)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *c;
	bool n;

	kgcj_check(e, "FindClass");
	c = name ? kgcj_class_find(e->vm, name) : NULL;
	if (c)
		return (jclass)c->mirror;
	n = kgcj_in(e);
	c = name ? kgcj_class_load(e->vm, e->t, name) : NULL;	/* the runtime's loader */
	if (!c)
		kgcj_throw(e, "java/lang/NoClassDefFoundError", "%s", name ? name : "(null)");
	kgcj_out(e, n);
	return c ? (jclass)c->mirror : NULL;
}

/* The class behind cls (managed), or NULL with NullPointerException thrown. */
static struct kgcj_class *class_arg(struct kgcj_env *e, jclass cls, const char *fn)
{
	struct kgcj_class *c = kgcj_class_of_ref(e, cls, fn);

	if (!c)
		kgcj_throw(e, "java/lang/NullPointerException", "%s: null or not a class", fn);
	return c;
}

jclass kgcj_GetSuperclass(JNIEnv *env, jclass cls)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *c;
	bool n;

	kgcj_check(e, "GetSuperclass");
	n = kgcj_in(e);
	c = class_arg(e, cls, "GetSuperclass");
	kgcj_out(e, n);
	return c && c->super ? (jclass)c->super->mirror : NULL;
}

jboolean kgcj_IsAssignableFrom(JNIEnv *env, jclass sub, jclass sup)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *a, *b;
	bool n;

	kgcj_check(e, "IsAssignableFrom");
	n = kgcj_in(e);
	a = class_arg(e, sub, "IsAssignableFrom");
	b = a ? class_arg(e, sup, "IsAssignableFrom") : NULL;
	kgcj_out(e, n);
	return a && b && kgcj_subclass(a, b);
}

jclass kgcj_GetObjectClass(JNIEnv *env, jobject obj)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *c = NULL;
	kgc_obj o;
	bool n;

	kgcj_check(e, "GetObjectClass");
	n = kgcj_in(e);
	o = kgcj_deref(e, obj, "GetObjectClass");
	if (!o)
		kgcj_throw(e, "java/lang/NullPointerException", "GetObjectClass: null");
	else if (!(c = kgcj_class_of_obj(e->vm, o)))
		kgcj_throw(e, "java/lang/InternalError", "GetObjectClass: an object of no class");
	kgcj_out(e, n);
	return c ? (jclass)c->mirror : NULL;
}

jboolean kgcj_IsInstanceOf(JNIEnv *env, jobject obj, jclass cls)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *c, *of;
	jboolean r = JNI_FALSE;
	kgc_obj o;
	bool n;

	kgcj_check(e, "IsInstanceOf");
	n = kgcj_in(e);
	o = kgcj_deref(e, obj, "IsInstanceOf");
	of = class_arg(e, cls, "IsInstanceOf");
	if (of) {
		c = o ? kgcj_class_of_obj(e->vm, o) : NULL;
		r = !o || (c && kgcj_subclass(c, of));
	}
	kgcj_out(e, n);
	return r;
}

jobject kgcj_AllocObject(JNIEnv *env, jclass cls)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *c;
	jobject r = NULL;
	kgc_obj o;
	bool n;

	kgcj_check(e, "AllocObject");
	n = kgcj_in(e);
	c = class_arg(e, cls, "AllocObject");
	if (c && (!c->type || c->type < KGC_TYPE_FIRST_USER || c == e->vm->c_class)) {
		kgcj_throw(e, "java/lang/InstantiationException", "%s", c->name);
	} else if (c) {
		o = kgc_alloc(e->t, c->type);
		if (o)
			r = kgcj_local(e, o);
		else
			kgcj_throw(e, "java/lang/OutOfMemoryError", "AllocObject: %s", c->name);
	}
	kgcj_out(e, n);
	return r;
}

/* ------------------------------------------------------------------- IDs */

static void *id_get(JNIEnv *env, jclass cls, const char *name, const char *sig,
		    bool is_static, bool method, const char *fn)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *c;
	void *id = NULL;
	bool n;

	kgcj_check(e, fn);
	n = kgcj_in(e);
	c = class_arg(e, cls, fn);
	if (c && name && sig)
		id = method ? (void *)kgcj_method_find(c, name, sig, is_static)
			    : (void *)kgcj_field_find(c, name, sig, is_static);
	if (c && !id)
		kgcj_throw(e, method ? "java/lang/NoSuchMethodError" : "java/lang/NoSuchFieldError",
			   "%s%s.%s%s%s", is_static ? "static " : "", c->name, name ? name : "?",
			   method ? "" : ":", sig ? sig : "?");
	kgcj_out(e, n);
	return id;
}

jmethodID kgcj_GetMethodID(JNIEnv *env, jclass cls, const char *name, const char *sig)
{
	return id_get(env, cls, name, sig, false, true, "GetMethodID");
}

jmethodID kgcj_GetStaticMethodID(JNIEnv *env, jclass cls, const char *name, const char *sig)
{
	return id_get(env, cls, name, sig, true, true, "GetStaticMethodID");
}

jfieldID kgcj_GetFieldID(JNIEnv *env, jclass cls, const char *name, const char *sig)
{
	return id_get(env, cls, name, sig, false, false, "GetFieldID");
}

jfieldID kgcj_GetStaticFieldID(JNIEnv *env, jclass cls, const char *name, const char *sig)
{
	return id_get(env, cls, name, sig, true, false, "GetStaticFieldID");
}
