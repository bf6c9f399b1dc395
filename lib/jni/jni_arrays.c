/* SPDX-License-Identifier: MIT */
/*
 * jni_arrays.c - arrays: kgc primitive arrays (KGC_TYPE_PRIM_ARRAY) and
 * reference arrays. Get<T>ArrayElements hands out a copy (JNI_COMMIT and 0
 * write it back, JNI_ABORT and 0 free it); GetPrimitiveArrayCritical pins
 * the array's region with kgc_critical_get - no copy, and collections keep
 * running while the native holds it (JEP 423).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jni_impl.h"
#include "jni_internal.h"

static const char prim_char[KGC_PRIM_COUNT] = "ZBCSIFJD";
static const uint8_t prim_size[KGC_PRIM_COUNT] = { 1, 1, 2, 2, 4, 4, 8, 8 };

static const char *type_name(struct kgcj_env *e, kgc_obj o)
{
	const char *n = kgc_jni_class_name((JavaVM *)e->vm, o);

	return n ? n : "an object of no class";
}

/* o is an array of prim (-1: any array, KGC_PRIM_COUNT: of references);
 * else throws (checked mode: aborts) naming fn. Managed state. */
static bool array_ok(struct kgcj_env *e, kgc_obj o, int prim, const char *fn)
{
	kgc_type_id ty;
	bool ok;

	if (!o) {
		kgcj_throw(e, "java/lang/NullPointerException", "%s: null array", fn);
		return false;
	}
	ty = kgc_obj_type(o);
	if (prim < 0)
		ok = ty >= KGC_TYPE_PRIM_ARRAY(0) && ty <= KGC_TYPE_REF_ARRAY;
	else
		ok = ty == (prim == KGC_PRIM_COUNT ? KGC_TYPE_REF_ARRAY : KGC_TYPE_PRIM_ARRAY(prim));
	if (ok)
		return true;
	if (e->vm->checked)
		kgcj_fatal(fn, "wrong array type: %s where %s%c is expected", type_name(e, o),
			   prim < 0 ? "an array" : prim == KGC_PRIM_COUNT ? "an Object[]" : "[",
			   prim < 0 || prim == KGC_PRIM_COUNT ? ' ' : prim_char[prim]);
	kgcj_throw(e, "java/lang/IllegalArgumentException", "%s: %s is not the array expected",
		   fn, type_name(e, o));
	return false;
}

static bool bounds_ok(struct kgcj_env *e, kgc_obj a, jsize start, jsize len, const char *fn)
{
	size_t n = kgc_array_length(a);

	if (start >= 0 && len >= 0 && (size_t)start <= n && (size_t)len <= n - (size_t)start)
		return true;
	kgcj_throw(e, "java/lang/ArrayIndexOutOfBoundsException",
		   "%s: region [%d, %d+%d) outside an array of %zu", fn, (int)start, (int)start,
		   (int)len, n);
	return false;
}

jsize kgcj_GetArrayLength(JNIEnv *env, jarray arr)
{
	struct kgcj_env *e = ENV(env);
	jsize len = 0;
	kgc_obj a;
	bool n;

	kgcj_check(e, "GetArrayLength");
	n = kgcj_in(e);
	a = kgcj_deref(e, arr, "GetArrayLength");
	if (array_ok(e, a, -1, "GetArrayLength"))
		len = (jsize)kgc_array_length(a);
	kgcj_out(e, n);
	return len;
}

static jobject array_new(struct kgcj_env *e, kgc_type_id ty, jsize len, const char *fn)
{
	kgc_obj a;

	if (len < 0) {
		kgcj_throw(e, "java/lang/NegativeArraySizeException", "%s: %d", fn, (int)len);
		return NULL;
	}
	a = kgc_alloc_array(e->t, ty, (size_t)len);
	if (!a) {
		kgcj_throw(e, "java/lang/OutOfMemoryError", "%s: %d elements", fn, (int)len);
		return NULL;
	}
	return kgcj_local(e, a);
}

jobjectArray kgcj_NewObjectArray(JNIEnv *env, jsize len, jclass cls, jobject init)
{
	struct kgcj_env *e = ENV(env);
	jobject r;
	kgc_obj a, v;
	bool n;

	kgcj_check(e, "NewObjectArray");
	n = kgcj_in(e);
	r = array_new(e, KGC_TYPE_REF_ARRAY, len, "NewObjectArray");
	if (r && init) {
		a = *(kgc_obj *)r;
		v = kgcj_deref(e, init, "NewObjectArray");
		for (jsize i = 0; i < len; i++)
			kgc_array_set_ref(e->t, a, (size_t)i, v);
	}
	kgcj_out(e, n);
	return r;
}

static bool index_ok(struct kgcj_env *e, kgc_obj a, jsize i, const char *fn)
{
	return array_ok(e, a, KGC_PRIM_COUNT, fn) && bounds_ok(e, a, i, 1, fn);
}

jobject kgcj_GetObjectArrayElement(JNIEnv *env, jobjectArray arr, jsize i)
{
	struct kgcj_env *e = ENV(env);
	jobject r = NULL;
	kgc_obj a;
	bool n;

	kgcj_check(e, "GetObjectArrayElement");
	n = kgcj_in(e);
	a = kgcj_deref(e, arr, "GetObjectArrayElement");
	if (index_ok(e, a, i, "GetObjectArrayElement"))
		r = kgcj_local(e, kgc_array_get_ref(a, (size_t)i));
	kgcj_out(e, n);
	return r;
}

void kgcj_SetObjectArrayElement(JNIEnv *env, jobjectArray arr, jsize i, jobject val)
{
	struct kgcj_env *e = ENV(env);
	kgc_obj a;
	bool n;

	kgcj_check(e, "SetObjectArrayElement");
	n = kgcj_in(e);
	a = kgcj_deref(e, arr, "SetObjectArrayElement");
	if (index_ok(e, a, i, "SetObjectArrayElement"))
		kgc_array_set_ref(e->t, a, (size_t)i, kgcj_deref(e, val, "SetObjectArrayElement"));
	kgcj_out(e, n);
}

/* ------------------------------------------------------ primitive arrays */

static jobject prim_new(JNIEnv *env, int p, jsize len, const char *fn)
{
	struct kgcj_env *e = ENV(env);
	jobject r;
	bool n;

	kgcj_check(e, fn);
	n = kgcj_in(e);
	r = array_new(e, KGC_TYPE_PRIM_ARRAY(p), len, fn);
	kgcj_out(e, n);
	return r;
}

static void *prim_elements(JNIEnv *env, jarray arr, int p, jboolean *isCopy, const char *fn)
{
	struct kgcj_env *e = ENV(env);
	void *copy = NULL;
	size_t bytes;
	kgc_obj a;
	bool n;

	kgcj_check(e, fn);
	n = kgcj_in(e);
	a = kgcj_deref(e, arr, fn);
	if (array_ok(e, a, p, fn)) {
		bytes = kgc_array_length(a) * prim_size[p];
		copy = malloc(bytes ? bytes : 1);
		if (copy)
			memcpy(copy, kgc_array_data(a), bytes);
		else
			kgcj_throw(e, "java/lang/OutOfMemoryError", "%s: %zu bytes", fn, bytes);
	}
	kgcj_out(e, n);
	kgcj_copy_track(e, copy, fn);
	if (copy && isCopy)
		*isCopy = JNI_TRUE;
	return copy;
}

static void prim_release(JNIEnv *env, jarray arr, int p, void *elems, jint mode,
			 const char *fn, const char *getfn)
{
	struct kgcj_env *e = ENV(env);
	kgc_obj a;
	bool n;

	if (e->vm->checked) {
		kgcj_check_crit(e, fn);
		if (mode != 0 && mode != JNI_COMMIT && mode != JNI_ABORT)
			kgcj_fatal(fn, "bad mode %d", (int)mode);
	}
	kgcj_copy_untrack(e, elems, fn, getfn, mode == JNI_COMMIT);
	if (!elems)
		return;
	if (mode != JNI_ABORT) {
		n = kgcj_in(e);
		a = kgcj_deref(e, arr, fn);
		if (array_ok(e, a, p, fn))
			memcpy(kgc_array_data(a), elems, kgc_array_length(a) * prim_size[p]);
		kgcj_out(e, n);
	}
	if (mode != JNI_COMMIT)
		free(elems);
}

static void prim_region(JNIEnv *env, jarray arr, int p, jsize start, jsize len, void *buf,
			bool set, const char *fn)
{
	struct kgcj_env *e = ENV(env);
	char *d;
	kgc_obj a;
	bool n;

	kgcj_check(e, fn);
	n = kgcj_in(e);
	a = kgcj_deref(e, arr, fn);
	if (array_ok(e, a, p, fn) && bounds_ok(e, a, start, len, fn) && len) {
		d = (char *)kgc_array_data(a) + (size_t)start * prim_size[p];
		if (set)
			memcpy(d, buf, (size_t)len * prim_size[p]);
		else
			memcpy(buf, d, (size_t)len * prim_size[p]);
	}
	kgcj_out(e, n);
}

#define PRIM_FNS(N, T, M, P, C) \
T##Array kgcj_New##N##Array(JNIEnv *env, jsize len) \
{ \
	return prim_new(env, P, len, "New" #N "Array"); \
} \
T *kgcj_Get##N##ArrayElements(JNIEnv *env, T##Array arr, jboolean *isCopy) \
{ \
	return prim_elements(env, arr, P, isCopy, "Get" #N "ArrayElements"); \
} \
void kgcj_Release##N##ArrayElements(JNIEnv *env, T##Array arr, T *elems, jint mode) \
{ \
	prim_release(env, arr, P, elems, mode, "Release" #N "ArrayElements", \
		     "Get" #N "ArrayElements"); \
} \
void kgcj_Get##N##ArrayRegion(JNIEnv *env, T##Array arr, jsize start, jsize len, T *buf) \
{ \
	prim_region(env, arr, P, start, len, buf, false, "Get" #N "ArrayRegion"); \
} \
void kgcj_Set##N##ArrayRegion(JNIEnv *env, T##Array arr, jsize start, jsize len, \
			      const T *buf) \
{ \
	prim_region(env, arr, P, start, len, (void *)buf, true, "Set" #N "ArrayRegion"); \
}
KGCJ_PRIMS(PRIM_FNS)

/* -------------------------------------------------------------- critical */

void *kgcj_GetPrimitiveArrayCritical(JNIEnv *env, jarray arr, jboolean *isCopy)
{
	struct kgcj_env *e = ENV(env);
	size_t len;
	void *p;
	bool n;

	if (e->vm->checked)
		kgcj_check_exc(e, "GetPrimitiveArrayCritical");
	if (!arr)
		return NULL;
	if (!e->crit) {		/* checks (and weak refs made local) need managed state */
		kgc_obj a;

		n = kgcj_in(e);
		a = kgcj_deref(e, arr, "GetPrimitiveArrayCritical");
		if (!a || kgc_obj_type(a) < KGC_TYPE_PRIM_ARRAY(0) ||
		    kgc_obj_type(a) >= KGC_TYPE_REF_ARRAY) {
			if (a && e->vm->checked)
				kgcj_fatal("GetPrimitiveArrayCritical", "wrong array type: %s where "
					   "a primitive array is expected", type_name(e, a));
			kgcj_error("GetPrimitiveArrayCritical: %s", a ? "not a primitive array"
				   : "null array");
			a = NULL;
		} else if ((uintptr_t)arr & 1) {
			arr = kgcj_local(e, a);
		}
		kgcj_out(e, n);
		if (!a)
			return NULL;
	}
	p = kgc_critical_get(e->t, (kgc_obj *)arr, &len);
	if (!p) {
		if (e->vm->checked)
			kgcj_fatal("GetPrimitiveArrayCritical", "%s", kgc_last_error());
		return NULL;
	}
	e->crit++;
	if (isCopy)
		*isCopy = JNI_FALSE;
	return p;
}

void kgcj_ReleasePrimitiveArrayCritical(JNIEnv *env, jarray arr, void *elems, jint mode)
{
	struct kgcj_env *e = ENV(env);
	kgc_obj a;

	if (!elems)
		return;
	if (!e->crit) {
		if (e->vm->checked)
			kgcj_fatal("ReleasePrimitiveArrayCritical", "no critical region is open "
				   "(released twice, or never got)");
		return;
	}
	a = (kgc_obj)((char *)elems - KGC_ARRAY_DATA_OFFSET);	/* pinned: stable */
	if (kgc_critical_release(e->t, &a, elems, KGC_CRITICAL_COMMIT)) {
		if (e->vm->checked)
			kgcj_fatal("ReleasePrimitiveArrayCritical", "%p was not returned by "
				   "GetPrimitiveArrayCritical: %s", elems, kgc_last_error());
		return;
	}
	e->crit--;
}
