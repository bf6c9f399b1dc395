/* SPDX-License-Identifier: MIT */
/*
 * jni_calls.c - Call<T>Method[V/A] (virtual, nonvirtual, static),
 * NewObject[V/A] and the field accessors Get/Set[Static]<T>Field, over the
 * host's C-implemented methods and its field layout (jni_host.c).
 *
 * A host method runs in the caller's state (a native's: native state) in a
 * local frame of its own; an object it returns becomes a local of the
 * caller's frame.
 */
#include <stdarg.h>
#include <string.h>

#include "jni_impl.h"
#include "jni_internal.h"

enum call_kind { CALL_VIRTUAL, CALL_NONVIRTUAL, CALL_STATIC };

static bool same_kind(char want, char have)
{
	return want == have || (want == 'L' && have == '[');
}

/* Checked mode: the method's return type is the one of the Call function. */
static void check_method(struct kgcj_env *e, struct kgcj_method *m, enum call_kind k, char ret,
			 const char *fn)
{
	if (!m)
		kgcj_fatal(fn, "NULL jmethodID");
	if (!!(m->flags & KGC_JNI_STATIC) != (k == CALL_STATIC))
		kgcj_fatal(fn, "%s.%s%s is %sa static method", m->cls->name, m->name, m->sig,
			   k == CALL_STATIC ? "not " : "");
	if (!same_kind(ret, m->ret))
		kgcj_fatal(fn, "%s.%s%s returns '%c', called as returning '%c'", m->cls->name,
			   m->name, m->sig, m->ret, ret);
}

/* The method to run for self (virtual: the override in self's class). Managed. */
static struct kgcj_method *resolve(struct kgcj_env *e, struct kgcj_method *m, jobject self,
				   enum call_kind k, const char *fn)
{
	struct kgcj_class *c;
	kgc_obj o;

	if (k == CALL_STATIC)
		return m;
	o = kgcj_deref(e, self, fn);
	if (!o) {
		kgcj_throw(e, "java/lang/NullPointerException", "%s: null receiver for %s.%s", fn,
			   m->cls->name, m->name);
		return NULL;
	}
	c = kgcj_class_of_obj(e->vm, o);
	if (!c || !kgcj_subclass(c, m->cls)) {
		if (e->vm->checked)
			kgcj_fatal(fn, "the receiver (%s) is no %s", c ? c->name : "?", m->cls->name);
		kgcj_throw(e, "java/lang/ClassCastException", "%s: receiver is no %s", fn,
			   m->cls->name);
		return NULL;
	}
	if (k == CALL_VIRTUAL && c != m->cls)
		return kgcj_method_find(c, m->name, m->sig, false);
	return m;
}

static jvalue call_a(JNIEnv *env, jobject self, jmethodID mid, enum call_kind k,
		     const jvalue *args, char ret, const char *fn)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_method *m = (struct kgcj_method *)mid;
	jvalue r = { 0 };
	kgc_obj o;
	bool n, hosted;

	if (e->vm->checked) {
		kgcj_check(e, fn);
		check_method(e, m, k, ret, fn);
	}
	n = kgcj_in(e);
	m = resolve(e, m, self, k, fn);
	/* no C function: the runtime's invoke hook runs it (not natives, not a bare <init>) */
	hosted = m && !m->fn && e->vm->host.invoke && !(m->flags & KGC_JNI_NATIVE);
	if (m && !m->fn && !hosted && strcmp(m->name, "<init>"))
		kgcj_throw(e, "java/lang/AbstractMethodError", "%s.%s%s has no implementation%s",
			   m->cls->name, m->name, m->sig,
			   m->flags & KGC_JNI_NATIVE ? " callable from native code" : "");
	if (!m || (!m->fn && !hosted) || kgcj_mark_push(e, 16, false)) {
		kgcj_out(e, n);
		return r;
	}
	kgcj_out(e, n);
	if (hosted)
		e->vm->host.invoke(e->vm->host_ctx, env, m->cls->name, m->name, m->sig, self, args,
				   &r);
	else
		m->fn(env, self, args, &r, m->data);
	n = kgcj_in(e);
	o = ret == 'L' ? kgcj_deref(e, r.l, fn) : NULL;
	kgcj_mark_pop(e);
	if (ret == 'L')
		r.l = kgcj_local(e, o);
	kgcj_out(e, n);
	return r;
}

/* The arguments of m from a va_list, promoted as C passes them. */
static void args_from_va(struct kgcj_method *m, va_list ap, jvalue *a)
{
	for (uint16_t i = 0; i < m->nargs; i++)
		switch (m->args[i]) {
		case 'Z': a[i].z = (jboolean)va_arg(ap, int); break;
		case 'B': a[i].b = (jbyte)va_arg(ap, int); break;
		case 'C': a[i].c = (jchar)va_arg(ap, int); break;
		case 'S': a[i].s = (jshort)va_arg(ap, int); break;
		case 'I': a[i].i = va_arg(ap, jint); break;
		case 'J': a[i].j = va_arg(ap, jlong); break;
		case 'F': a[i].f = (jfloat)va_arg(ap, double); break;
		case 'D': a[i].d = va_arg(ap, double); break;
		default: a[i].l = va_arg(ap, jobject); break;
		}
}

static jvalue call_v(JNIEnv *env, jobject self, jmethodID mid, enum call_kind k, va_list ap,
		     char ret, const char *fn)
{
	struct kgcj_method *m = (struct kgcj_method *)mid;
	jvalue a[m ? m->nargs + 1 : 1];

	if (!m) {
		if (ENV(env)->vm->checked)
			kgcj_fatal(fn, "NULL jmethodID");
		return (jvalue){ 0 };
	}
	args_from_va(m, ap, a);
	return call_a(env, self, mid, k, a, ret, fn);
}

#define CALLS(N, T, M, P, C) \
T kgcj_Call##N##Method(JNIEnv *env, jobject obj, jmethodID mid, ...) \
{ \
	va_list ap; \
	jvalue r; \
	va_start(ap, mid); \
	r = call_v(env, obj, mid, CALL_VIRTUAL, ap, C, "Call" #N "Method"); \
	va_end(ap); \
	return r.M; \
} \
T kgcj_Call##N##MethodV(JNIEnv *env, jobject obj, jmethodID mid, va_list ap) \
{ \
	return call_v(env, obj, mid, CALL_VIRTUAL, ap, C, "Call" #N "MethodV").M; \
} \
T kgcj_Call##N##MethodA(JNIEnv *env, jobject obj, jmethodID mid, const jvalue *a) \
{ \
	return call_a(env, obj, mid, CALL_VIRTUAL, a, C, "Call" #N "MethodA").M; \
} \
T kgcj_CallNonvirtual##N##Method(JNIEnv *env, jobject obj, jclass cls, jmethodID mid, ...) \
{ \
	va_list ap; \
	jvalue r; \
	va_start(ap, mid); \
	r = call_v(env, obj, mid, CALL_NONVIRTUAL, ap, C, "CallNonvirtual" #N "Method"); \
	va_end(ap); \
	return r.M; \
} \
T kgcj_CallNonvirtual##N##MethodV(JNIEnv *env, jobject obj, jclass cls, jmethodID mid, \
				  va_list ap) \
{ \
	return call_v(env, obj, mid, CALL_NONVIRTUAL, ap, C, "CallNonvirtual" #N "MethodV").M; \
} \
T kgcj_CallNonvirtual##N##MethodA(JNIEnv *env, jobject obj, jclass cls, jmethodID mid, \
				  const jvalue *a) \
{ \
	return call_a(env, obj, mid, CALL_NONVIRTUAL, a, C, "CallNonvirtual" #N "MethodA").M; \
} \
T kgcj_CallStatic##N##Method(JNIEnv *env, jclass cls, jmethodID mid, ...) \
{ \
	va_list ap; \
	jvalue r; \
	va_start(ap, mid); \
	r = call_v(env, cls, mid, CALL_STATIC, ap, C, "CallStatic" #N "Method"); \
	va_end(ap); \
	return r.M; \
} \
T kgcj_CallStatic##N##MethodV(JNIEnv *env, jclass cls, jmethodID mid, va_list ap) \
{ \
	return call_v(env, cls, mid, CALL_STATIC, ap, C, "CallStatic" #N "MethodV").M; \
} \
T kgcj_CallStatic##N##MethodA(JNIEnv *env, jclass cls, jmethodID mid, const jvalue *a) \
{ \
	return call_a(env, cls, mid, CALL_STATIC, a, C, "CallStatic" #N "MethodA").M; \
}
KGCJ_VALUE_TYPES(CALLS)

/* Void: the same with no result (the member 'l' is unused) */
void kgcj_CallVoidMethod(JNIEnv *env, jobject obj, jmethodID mid, ...)
{
	va_list ap;

	va_start(ap, mid);
	call_v(env, obj, mid, CALL_VIRTUAL, ap, 'V', "CallVoidMethod");
	va_end(ap);
}

void kgcj_CallVoidMethodV(JNIEnv *env, jobject obj, jmethodID mid, va_list ap)
{
	call_v(env, obj, mid, CALL_VIRTUAL, ap, 'V', "CallVoidMethodV");
}

void kgcj_CallVoidMethodA(JNIEnv *env, jobject obj, jmethodID mid, const jvalue *a)
{
	call_a(env, obj, mid, CALL_VIRTUAL, a, 'V', "CallVoidMethodA");
}

void kgcj_CallNonvirtualVoidMethod(JNIEnv *env, jobject obj, jclass cls, jmethodID mid, ...)
{
	va_list ap;

	va_start(ap, mid);
	call_v(env, obj, mid, CALL_NONVIRTUAL, ap, 'V', "CallNonvirtualVoidMethod");
	va_end(ap);
}

void kgcj_CallNonvirtualVoidMethodV(JNIEnv *env, jobject obj, jclass cls, jmethodID mid,
				    va_list ap)
{
	call_v(env, obj, mid, CALL_NONVIRTUAL, ap, 'V', "CallNonvirtualVoidMethodV");
}

void kgcj_CallNonvirtualVoidMethodA(JNIEnv *env, jobject obj, jclass cls, jmethodID mid,
				    const jvalue *a)
{
	call_a(env, obj, mid, CALL_NONVIRTUAL, a, 'V', "CallNonvirtualVoidMethodA");
}

void kgcj_CallStaticVoidMethod(JNIEnv *env, jclass cls, jmethodID mid, ...)
{
	va_list ap;

	va_start(ap, mid);
	call_v(env, cls, mid, CALL_STATIC, ap, 'V', "CallStaticVoidMethod");
	va_end(ap);
}

void kgcj_CallStaticVoidMethodV(JNIEnv *env, jclass cls, jmethodID mid, va_list ap)
{
	call_v(env, cls, mid, CALL_STATIC, ap, 'V', "CallStaticVoidMethodV");
}

void kgcj_CallStaticVoidMethodA(JNIEnv *env, jclass cls, jmethodID mid, const jvalue *a)
{
	call_a(env, cls, mid, CALL_STATIC, a, 'V', "CallStaticVoidMethodA");
}

/* ------------------------------------------------------------- NewObject */

static jobject new_object(JNIEnv *env, jclass cls, jmethodID mid, const jvalue *args,
			  const char *fn)
{
	struct kgcj_method *m = (struct kgcj_method *)mid;
	jobject o;

	if (ENV(env)->vm->checked && (!m || strcmp(m->name, "<init>")))
		kgcj_fatal(fn, "the jmethodID is not a constructor (<init>)");
	o = kgcj_AllocObject(env, cls);
	if (o && m)
		call_a(env, o, mid, CALL_NONVIRTUAL, args, 'V', fn);
	return ENV(env)->exc_pending ? NULL : o;
}

jobject kgcj_NewObjectA(JNIEnv *env, jclass cls, jmethodID mid, const jvalue *args)
{
	return new_object(env, cls, mid, args, "NewObjectA");
}

jobject kgcj_NewObjectV(JNIEnv *env, jclass cls, jmethodID mid, va_list ap)
{
	struct kgcj_method *m = (struct kgcj_method *)mid;
	jvalue a[m ? m->nargs + 1 : 1];

	if (m)
		args_from_va(m, ap, a);
	return new_object(env, cls, mid, a, "NewObjectV");
}

jobject kgcj_NewObject(JNIEnv *env, jclass cls, jmethodID mid, ...)
{
	va_list ap;
	jobject o;

	va_start(ap, mid);
	o = kgcj_NewObjectV(env, cls, mid, ap);
	va_end(ap);
	return o;
}

/* ---------------------------------------------------------------- fields */

/* The object holding instance field f (managed), or NULL (thrown). */
static kgc_obj field_obj(struct kgcj_env *e, jobject obj, struct kgcj_field *f, char type,
			 bool is_static, const char *fn)
{
	struct kgcj_class *c;
	kgc_obj o;

	if (e->vm->checked) {
		kgcj_check(e, fn);
		if (!f)
			kgcj_fatal(fn, "NULL jfieldID");
		if (f->is_static != is_static || !same_kind(type, f->sig[0]))
			kgcj_fatal(fn, "%s.%s is a %sfield of type %s", f->cls->name, f->name,
				   f->is_static ? "static " : "", f->sig);
	}
	if (is_static)
		return NULL;
	o = kgcj_deref(e, obj, fn);
	if (!o) {
		kgcj_throw(e, "java/lang/NullPointerException", "%s: null object", fn);
		return NULL;
	}
	if (e->vm->checked) {
		c = kgcj_class_of_obj(e->vm, o);
		if (!c || !kgcj_subclass(c, f->cls))
			kgcj_fatal(fn, "the object (%s) has no field %s.%s", c ? c->name : "?",
				   f->cls->name, f->name);
	}
	return o;
}

jobject kgcj_GetObjectField(JNIEnv *env, jobject obj, jfieldID fid)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_field *f = (struct kgcj_field *)fid;
	jobject r = NULL;
	bool n = kgcj_in(e);
	kgc_obj o = field_obj(e, obj, f, 'L', false, "GetObjectField");

	if (o)
		r = kgcj_local(e, kgc_get_ref(o, f->offset));
	kgcj_out(e, n);
	return r;
}

void kgcj_SetObjectField(JNIEnv *env, jobject obj, jfieldID fid, jobject val)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_field *f = (struct kgcj_field *)fid;
	bool n = kgcj_in(e);
	kgc_obj o = field_obj(e, obj, f, 'L', false, "SetObjectField");

	if (o)
		kgc_set_ref(e->t, o, f->offset, kgcj_deref(e, val, "SetObjectField"));
	kgcj_out(e, n);
}

jobject kgcj_GetStaticObjectField(JNIEnv *env, jclass cls, jfieldID fid)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_field *f = (struct kgcj_field *)fid;
	jobject r;
	bool n = kgcj_in(e);

	field_obj(e, NULL, f, 'L', true, "GetStaticObjectField");
	r = kgcj_local(e, kgc_handle_get(f->sref));
	kgcj_out(e, n);
	return r;
}

void kgcj_SetStaticObjectField(JNIEnv *env, jclass cls, jfieldID fid, jobject val)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_field *f = (struct kgcj_field *)fid;
	bool n = kgcj_in(e);

	field_obj(e, NULL, f, 'L', true, "SetStaticObjectField");
	kgc_handle_set(f->sref, kgcj_deref(e, val, "SetStaticObjectField"));
	kgcj_out(e, n);
}

#define FIELDS(N, T, M, P, C) \
T kgcj_Get##N##Field(JNIEnv *env, jobject obj, jfieldID fid) \
{ \
	struct kgcj_env *e = ENV(env); \
	struct kgcj_field *f = (struct kgcj_field *)fid; \
	T v = 0; \
	bool n = kgcj_in(e); \
	kgc_obj o = field_obj(e, obj, f, C, false, "Get" #N "Field"); \
	if (o) \
		v = KGC_FIELD(o, f->offset, T); \
	kgcj_out(e, n); \
	return v; \
} \
void kgcj_Set##N##Field(JNIEnv *env, jobject obj, jfieldID fid, T val) \
{ \
	struct kgcj_env *e = ENV(env); \
	struct kgcj_field *f = (struct kgcj_field *)fid; \
	bool n = kgcj_in(e); \
	kgc_obj o = field_obj(e, obj, f, C, false, "Set" #N "Field"); \
	if (o) \
		KGC_FIELD(o, f->offset, T) = val; \
	kgcj_out(e, n); \
} \
T kgcj_GetStatic##N##Field(JNIEnv *env, jclass cls, jfieldID fid) \
{ \
	struct kgcj_env *e = ENV(env); \
	struct kgcj_field *f = (struct kgcj_field *)fid; \
	if (e->vm->checked) \
		field_obj(e, NULL, f, C, true, "GetStatic" #N "Field"); \
	return f->sval.M; \
} \
void kgcj_SetStatic##N##Field(JNIEnv *env, jclass cls, jfieldID fid, T val) \
{ \
	struct kgcj_env *e = ENV(env); \
	struct kgcj_field *f = (struct kgcj_field *)fid; \
	if (e->vm->checked) \
		field_obj(e, NULL, f, C, true, "SetStatic" #N "Field"); \
	f->sval.M = val; \
}
KGCJ_PRIMS(FIELDS)
