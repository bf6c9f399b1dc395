/* SPDX-License-Identifier: MIT */
/*
 * jni_reflect.c - the JNI functions a library may probe that reach past
 * plain classes: DefineClass (the host's define_class, if the runtime gave
 * one), the reflection bridges To/FromReflected{Method,Field} over the
 * default host's java/lang/reflect/{Method,Constructor,Field} objects
 * (declaring class, index in its method or field list, name), GetModule
 * (the unnamed module). Where the host cannot answer, the call fails the
 * JNI way - an exception pending and NULL - never a fatal error.
 */
#include <errno.h>
#include <string.h>

#include "jni_internal.h"

enum { R_METHOD, R_CTOR, R_FIELD };
static const char *const rname[] = {
	[R_METHOD] = "java/lang/reflect/Method", [R_CTOR] = "java/lang/reflect/Constructor",
	[R_FIELD] = "java/lang/reflect/Field",
};

jclass kgcj_DefineClass(JNIEnv *env, const char *name, jobject loader, const jbyte *buf,
			jsize len)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_vm *vm = e->vm;
	struct kgcj_class *c = NULL;
	bool n;
	int rc;

	kgcj_check(e, "DefineClass");
	n = kgcj_in(e);
	if (!vm->host.define_class) {
		kgcj_throw(e, "java/lang/UnsupportedOperationException",
			   "DefineClass %s: the host defines no classes from class files "
			   "(kgc_jni_host.define_class is NULL)", name ? name : "(null)");
	} else if (!name || !buf || len < 0) {
		kgcj_throw(e, name ? "java/lang/ClassFormatError" : "java/lang/NoClassDefFoundError",
			   "DefineClass: %s", !name ? "no class name (this host needs one)"
			   : !buf ? "NULL class file" : "negative length");
	} else if ((rc = vm->host.define_class(vm->host_ctx, (JavaVM *)vm, e->t, name, buf, len))) {
		if (!e->exc_pending)
			kgcj_throw(e, "java/lang/ClassFormatError",
				   "DefineClass %s: the host's define_class failed (%s)", name,
				   strerror(-rc));
	} else if (!(c = kgcj_class_find(vm, name))) {
		kgcj_throw(e, "java/lang/NoClassDefFoundError",
			   "DefineClass %s: define_class returned 0 but defined no such class", name);
	}
	kgcj_out(e, n);
	return c ? (jclass)c->mirror : NULL;
}

/* Index of id in c's own method (or field) list, or -1. */
static int slot_of(const struct kgcj_class *c, const void *id, bool method)
{
	int i = 0;

	if (method) {
		for (const struct kgcj_method *m = c->methods; m; m = m->next, i++)
			if (m == id)
				return i;
	} else {
		for (const struct kgcj_field *f = c->fields; f; f = f->next, i++)
			if (f == id)
				return i;
	}
	return -1;
}

/* The id at index slot of c's list, or NULL. */
static void *id_at(const struct kgcj_class *c, int32_t slot, bool method)
{
	if (method) {
		struct kgcj_method *m = c->methods;

		for (int32_t i = 0; m && i < slot; i++)
			m = m->next;
		return slot >= 0 ? m : NULL;
	}
	struct kgcj_field *f = c->fields;

	for (int32_t i = 0; f && i < slot; i++)
		f = f->next;
	return slot >= 0 ? f : NULL;
}

/* A reflection object of class rc for slot of c named name (managed), or NULL. */
static kgc_obj reflect_new(struct kgcj_env *e, struct kgcj_class *rc, struct kgcj_class *c,
			   int slot, const char *name)
{
	struct kgcj_field *fc = kgcj_field_find(rc, "clazz", "Ljava/lang/Class;", false);
	struct kgcj_field *fs = kgcj_field_find(rc, "slot", "I", false);
	struct kgcj_field *fn = kgcj_field_find(rc, "name", "Ljava/lang/String;", false);
	kgc_obj r[2] = { NULL, NULL }, o = NULL;
	struct kgc_frame f;

	kgc_frame_push(e->t, &f, r, 2, NULL);
	r[0] = kgcj_string_new(e, name);
	if (r[0])
		r[1] = kgc_alloc(e->t, rc->type);
	if (r[1]) {
		o = r[1];
		kgc_set_ref(e->t, o, fc->offset, kgc_handle_get(c->mirror));
		KGC_FIELD(o, fs->offset, int32_t) = slot;
		kgc_set_ref(e->t, o, fn->offset, r[0]);
	}
	kgc_frame_pop(e->t, &f);
	return o;
}

static jobject to_reflected(JNIEnv *env, jclass cls, void *id, jboolean is_static, bool method,
			    const char *fn)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *c, *k = NULL;
	const char *name = NULL;
	jobject r = NULL;
	int slot = -1;
	bool n, st = false;
	kgc_obj o;

	kgcj_check(e, fn);
	n = kgcj_in(e);
	c = kgcj_class_of_ref(e, cls, fn);
	for (k = c; k && id && (slot = slot_of(k, id, method)) < 0; k = k->super)
		;
	if (k) {
		name = method ? ((struct kgcj_method *)id)->name : ((struct kgcj_field *)id)->name;
		st = method ? !!(((struct kgcj_method *)id)->flags & KGC_JNI_STATIC)
			    : ((struct kgcj_field *)id)->is_static;
	}
	if (!c)
		kgcj_throw(e, "java/lang/NullPointerException", "%s: null or not a class", fn);
	else if (!k)
		kgcj_throw(e, "java/lang/IllegalArgumentException",
			   "%s: the %s ID is none of %s's or its superclasses'", fn,
			   method ? "method" : "field", c->name);
	else if (st != !!is_static)
		kgcj_throw(e, "java/lang/IllegalArgumentException", "%s: %s.%s is %sstatic", fn,
			   k->name, name, st ? "" : "not ");
	else if (!(o = reflect_new(e, kgcj_class_find(e->vm, rname[!method ? R_FIELD :
					!strcmp(name, "<init>") ? R_CTOR : R_METHOD]), k, slot, name)))
		kgcj_throw(e, "java/lang/OutOfMemoryError", "%s", fn);
	else
		r = kgcj_local(e, o);
	kgcj_out(e, n);
	return r;
}

jobject kgcj_ToReflectedMethod(JNIEnv *env, jclass cls, jmethodID id, jboolean is_static)
{
	return to_reflected(env, cls, id, is_static, true, "ToReflectedMethod");
}

jobject kgcj_ToReflectedField(JNIEnv *env, jclass cls, jfieldID id, jboolean is_static)
{
	return to_reflected(env, cls, id, is_static, false, "ToReflectedField");
}

/* The ID a reflection object of one of the kinds [lo, hi] names, or NULL
 * with the exception thrown. */
static void *from_reflected(JNIEnv *env, jobject obj, int lo, int hi, const char *fn)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_vm *vm = e->vm;
	struct kgcj_class *oc, *k = NULL;
	void *id = NULL;
	int kind = -1;
	kgc_obj o;
	bool n;

	kgcj_check(e, fn);
	n = kgcj_in(e);
	o = kgcj_deref(e, obj, fn);
	oc = o ? kgcj_class_of_obj(vm, o) : NULL;
	for (int i = lo; oc && i <= hi && kind < 0; i++)
		if (kgcj_subclass(oc, kgcj_class_find(vm, rname[i])))
			kind = i;
	if (kind >= 0) {
		struct kgcj_class *rc = kgcj_class_find(vm, rname[kind]);
		struct kgcj_field *fc = kgcj_field_find(rc, "clazz", "Ljava/lang/Class;", false);
		struct kgcj_field *fs = kgcj_field_find(rc, "slot", "I", false);

		k = kgcj_class_of_mirror(vm, kgc_get_ref(o, fc->offset));
		id = k ? id_at(k, KGC_FIELD(o, fs->offset, int32_t), kind != R_FIELD) : NULL;
	}
	if (!o)
		kgcj_throw(e, "java/lang/NullPointerException", "%s: null", fn);
	else if (kind < 0)
		kgcj_throw(e, "java/lang/IllegalArgumentException", "%s: a %s, not a %s%s", fn,
			   oc ? oc->name : "?", rname[lo], lo != hi ? " or Constructor" : "");
	else if (!id)
		kgcj_throw(e, "java/lang/IllegalArgumentException",
			   "%s: the %s names no member of %s (class or slot changed)", fn,
			   rname[kind], k ? k->name : "(no class)");
	kgcj_out(e, n);
	return id;
}

jmethodID kgcj_FromReflectedMethod(JNIEnv *env, jobject method)
{
	return from_reflected(env, method, R_METHOD, R_CTOR, "FromReflectedMethod");
}

jfieldID kgcj_FromReflectedField(JNIEnv *env, jobject field)
{
	return from_reflected(env, field, R_FIELD, R_FIELD, "FromReflectedField");
}

jobject kgcj_GetModule(JNIEnv *env, jclass cls)
{
	struct kgcj_env *e = ENV(env);
	jobject r = NULL;
	bool n;

	kgcj_check(e, "GetModule");
	n = kgcj_in(e);
	if (!kgcj_class_of_ref(e, cls, "GetModule"))
		kgcj_throw(e, "java/lang/NullPointerException", "GetModule: null or not a class");
	else
		r = kgcj_local(e, kgc_handle_get(e->vm->module));
	kgcj_out(e, n);
	return r;
}
