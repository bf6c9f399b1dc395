/* SPDX-License-Identifier: MIT */
/*
 * native_env.c - the env a regular native receives (the JNIEnv of kgc).
 *
 * A regular native runs in native state; every env function that touches
 * the heap or a root slot leaves native state for its duration (blocking
 * while a collection runs) and re-enters it before returning. References are
 * kgc_jobject handles: pointers to root slots. Local refs live in the call's
 * argument frame (spare capacity reserved on the invoker's stack, then
 * malloc'd chunk frames pushed above it), global refs are kgc_handle cells.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "native_internal.h"

#define ENV(e) ((struct native_env *)(e))
#define CHUNK_SLOTS 32

struct native_lchunk {
	struct native_lchunk *prev;
	struct kgc_frame frame;
	kgc_obj slots[CHUNK_SLOTS];
};

static inline kgc_thread *in(kgc_env *e)
{
	kgc_thread *t = ENV(e)->t;

	kgc_leave_native(t);
	return t;
}

static inline void out(kgc_env *e)
{
	kgc_enter_native(ENV(e)->t);
}

static inline kgc_obj deref(kgc_jobject h)
{
	return h ? *h : NULL;
}

static const char *mname(struct native_env *n)
{
	return n->m ? n->m->name : "?";
}

/* ------------------------------------------------------------- local refs */

kgc_jobject kgcn_env_new_local(struct native_env *env, kgc_obj obj)
{
	struct native_lchunk *c;
	uint32_t i;

	if (!obj)
		return NULL;
	if (!env->chunks && env->frame->nslots < env->cap) {
		i = env->frame->nslots;
		env->slots[i] = obj;
		env->frame->nslots = i + 1;
		return &env->slots[i];
	}
	c = env->chunks;
	if (!c || c->frame.nslots == CHUNK_SLOTS) {
		c = malloc(sizeof(*c));
		if (!c) {
			kgcn_error("native %s: out of memory for a local reference", mname(env));
			return NULL;
		}
		c->slots[0] = obj;
		c->prev = env->chunks;
		env->chunks = c;
		kgc_frame_push(env->t, &c->frame, c->slots, 1, NULL);
		return &c->slots[0];
	}
	i = c->frame.nslots;
	c->slots[i] = obj;
	c->frame.nslots = i + 1;
	return &c->slots[i];
}

void kgcn_env_pop_locals(struct native_env *env)
{
	while (env->chunks) {
		struct native_lchunk *c = env->chunks;

		env->chunks = c->prev;
		kgc_frame_pop(env->t, &c->frame);
		free(c);
	}
}

/* ------------------------------------------------------------------ basics */

static kgc_thread *GetThread(kgc_env *e)
{
	return ENV(e)->t;
}

static const char *GetClassName(kgc_env *e, kgc_jclass cls)
{
	return cls ? cls->name : NULL;
}

static kgc_jobject AllocObject(kgc_env *e, kgc_type_id type)
{
	kgc_thread *t = in(e);
	kgc_obj o = kgc_alloc(t, type);
	kgc_jobject r = o ? kgcn_env_new_local(ENV(e), o) : NULL;

	out(e);
	return r;
}

static kgc_jobject NewArray(kgc_env *e, kgc_type_id type, size_t length)
{
	kgc_thread *t = in(e);
	kgc_obj o = kgc_alloc_array(t, type, length);
	kgc_jobject r = o ? kgcn_env_new_local(ENV(e), o) : NULL;

	out(e);
	return r;
}

static kgc_type_id GetObjectType(kgc_env *e, kgc_jobject h)
{
	kgc_type_id ty = 0;

	in(e);
	if (deref(h))
		ty = kgc_obj_type(*h);
	else
		kgcn_error("GetObjectType: null reference");
	out(e);
	return ty;
}

static int is_array_type(kgc_type_id ty)
{
	return ty >= KGC_TYPE_PRIM_ARRAY(0) && ty <= KGC_TYPE_REF_ARRAY;
}

static size_t GetArrayLength(kgc_env *e, kgc_jobject h)
{
	size_t n = 0;
	kgc_obj a;

	in(e);
	a = deref(h);
	if (!a)
		kgcn_error("GetArrayLength: null reference");
	else if (!is_array_type(kgc_obj_type(a)))
		kgcn_error("GetArrayLength: not an array");
	else
		n = kgc_array_length(a);
	out(e);
	return n;
}

/* ------------------------------------------------------------------ fields */

/* Checks [off, off+size) lies in o's payload. Managed state. */
static int field_check(const char *fn, kgc_obj o, size_t off, size_t size)
{
	size_t osz;

	if (!o) {
		kgcn_error("%s: null reference", fn);
		return -EINVAL;
	}
	if (!size) {
		kgcn_error("%s: bad field type", fn);
		return -EINVAL;
	}
	osz = kgc_obj_size(o);
	if (off < KGC_HEADER_SIZE || off > osz || size > osz - off || (off & (size - 1))) {
		kgcn_error("%s: field offset %zu (size %zu) outside object of %zu bytes "
			     "or misaligned", fn, off, size, osz);
		return -EINVAL;
	}
	return 0;
}

static int GetField(kgc_env *e, kgc_jobject h, size_t off, char type, union kgc_value *v)
{
	size_t sz = kgcn_prim_size(kgcn_prim_of_char(type));
	kgc_obj o;
	int rc;

	in(e);
	o = deref(h);
	rc = field_check("GetField", o, off, sz);
	if (!rc) {
		memset(v, 0, sizeof(*v));
		memcpy(v, (char *)o + off, sz);	/* union members share offset 0 */
	}
	out(e);
	return rc;
}

static int SetField(kgc_env *e, kgc_jobject h, size_t off, char type, union kgc_value v)
{
	size_t sz = kgcn_prim_size(kgcn_prim_of_char(type));
	kgc_obj o;
	int rc;

	in(e);
	o = deref(h);
	rc = field_check("SetField", o, off, sz);
	if (!rc)
		memcpy((char *)o + off, &v, sz);
	out(e);
	return rc;
}

static kgc_jobject GetObjectField(kgc_env *e, kgc_jobject h, size_t off)
{
	kgc_jobject r = NULL;
	kgc_obj o;

	in(e);
	o = deref(h);
	if (!field_check("GetObjectField", o, off, sizeof(kgc_obj)))
		r = kgcn_env_new_local(ENV(e), kgc_get_ref(o, off));
	out(e);
	return r;
}

static int SetObjectField(kgc_env *e, kgc_jobject h, size_t off, kgc_jobject val)
{
	kgc_thread *t = in(e);
	kgc_obj o = deref(h);
	int rc = field_check("SetObjectField", o, off, sizeof(kgc_obj));

	if (!rc)
		kgc_set_ref(t, o, off, deref(val));
	out(e);
	return rc;
}

/* ------------------------------------------------------------------ arrays */

static int region_check(const char *fn, kgc_obj a, char type, size_t start, size_t len,
			size_t *esz)
{
	int prim = kgcn_prim_of_char(type);
	size_t n;

	if (!a) {
		kgcn_error("%s: null array", fn);
		return -EINVAL;
	}
	if (prim < 0 || kgc_obj_type(a) != KGC_TYPE_PRIM_ARRAY(prim)) {
		kgcn_error("%s: not a %c[] array", fn, type);
		return -EINVAL;
	}
	n = kgc_array_length(a);
	if (start > n || len > n - start) {
		kgcn_error("%s: region [%zu, %zu+%zu) outside array of %zu", fn, start,
			     start, len, n);
		return -ERANGE;
	}
	*esz = kgcn_prim_size(prim);
	return 0;
}

static int GetArrayRegion(kgc_env *e, kgc_jobject h, char type, size_t start, size_t len,
			  void *buf)
{
	size_t esz;
	kgc_obj a;
	int rc;

	in(e);
	a = deref(h);
	rc = region_check("GetArrayRegion", a, type, start, len, &esz);
	if (!rc && len)
		memcpy(buf, (char *)kgc_array_data(a) + start * esz, len * esz);
	out(e);
	return rc;
}

static int SetArrayRegion(kgc_env *e, kgc_jobject h, char type, size_t start, size_t len,
			  const void *buf)
{
	size_t esz;
	kgc_obj a;
	int rc;

	in(e);
	a = deref(h);
	rc = region_check("SetArrayRegion", a, type, start, len, &esz);
	if (!rc && len)
		memcpy((char *)kgc_array_data(a) + start * esz, buf, len * esz);
	out(e);
	return rc;
}

static int ref_elem_check(const char *fn, kgc_obj a, size_t i)
{
	if (!a) {
		kgcn_error("%s: null array", fn);
		return -EINVAL;
	}
	if (kgc_obj_type(a) != KGC_TYPE_REF_ARRAY) {
		kgcn_error("%s: not a reference array", fn);
		return -EINVAL;
	}
	if (i >= kgc_array_length(a)) {
		kgcn_error("%s: index %zu outside array of %zu", fn, i, kgc_array_length(a));
		return -ERANGE;
	}
	return 0;
}

static kgc_jobject GetObjectArrayElement(kgc_env *e, kgc_jobject h, size_t i)
{
	kgc_jobject r = NULL;
	kgc_obj a;

	in(e);
	a = deref(h);
	if (!ref_elem_check("GetObjectArrayElement", a, i))
		r = kgcn_env_new_local(ENV(e), kgc_array_get_ref(a, i));
	out(e);
	return r;
}

static int SetObjectArrayElement(kgc_env *e, kgc_jobject h, size_t i, kgc_jobject val)
{
	kgc_thread *t = in(e);
	kgc_obj a = deref(h);
	int rc = ref_elem_check("SetObjectArrayElement", a, i);

	if (!rc)
		kgc_array_set_ref(t, a, i, deref(val));
	out(e);
	return rc;
}

/*
 * Critical from a regular native (already in native state): kgc_critical_get
 * becomes managed itself while it pins, returns in native state, and the
 * matching release leaves the thread in native state (the state it had
 * before its first critical get). No env call may happen in between.
 */
static void *GetPrimitiveArrayCritical(kgc_env *e, kgc_jobject h, size_t *length)
{
	if (!h || !*h) {
		kgcn_error("GetPrimitiveArrayCritical: null array");
		return NULL;
	}
	return kgc_critical_get(ENV(e)->t, h, length);
}

static void ReleasePrimitiveArrayCritical(kgc_env *e, kgc_jobject h, void *elems, int mode)
{
	if (!h || !elems)
		return;
	kgc_critical_release(ENV(e)->t, h, elems, mode);
}

/* -------------------------------------------------------------- exceptions */

static int Throw(kgc_env *e, kgc_jobject h)
{
	struct native_env *n = ENV(e);
	int rc = 0;

	in(e);
	if (!deref(h)) {
		kgcn_error("Throw: null exception");
		rc = -EINVAL;
	} else {
		n->slots[n->exc_slot] = *h;
		n->exc_pending = true;
		free(n->exc_msg);
		n->exc_msg = NULL;
	}
	out(e);
	return rc;
}

static int ThrowNew(kgc_env *e, kgc_type_id type, const char *message)
{
	struct native_env *n = ENV(e);
	kgc_thread *t = in(e);
	char *msg = message ? strdup(message) : NULL;
	kgc_obj o = kgc_alloc(t, type);
	int rc = 0;

	if (!o || (message && !msg)) {
		free(msg);
		rc = -ENOMEM;
	} else {
		n->slots[n->exc_slot] = o;
		n->exc_pending = true;
		free(n->exc_msg);
		n->exc_msg = msg;
	}
	out(e);
	return rc;
}

static int ExceptionCheck(kgc_env *e)
{
	return ENV(e)->exc_pending;
}

static kgc_jobject ExceptionOccurred(kgc_env *e)
{
	struct native_env *n = ENV(e);
	kgc_jobject r = NULL;

	if (!n->exc_pending)
		return NULL;
	in(e);
	r = kgcn_env_new_local(n, n->slots[n->exc_slot]);
	out(e);
	return r;
}

static void ExceptionClear(kgc_env *e)
{
	struct native_env *n = ENV(e);

	if (!n->exc_pending)
		return;
	in(e);
	n->slots[n->exc_slot] = NULL;
	n->exc_pending = false;
	free(n->exc_msg);
	n->exc_msg = NULL;
	out(e);
}

/* -------------------------------------------------------------------- refs */

static kgc_jobject NewGlobalRef(kgc_env *e, kgc_jobject h)
{
	kgc_thread *t = in(e);
	kgc_jobject r = NULL;

	if (deref(h))
		r = (kgc_jobject)kgc_handle_new(t, *h);
	out(e);
	return r;
}

static void DeleteGlobalRef(kgc_env *e, kgc_jobject h)
{
	kgc_thread *t;

	if (!h)
		return;
	t = in(e);
	kgc_handle_free(t, (kgc_handle)h);
	out(e);
}

static kgc_jobject NewLocalRef(kgc_env *e, kgc_jobject h)
{
	kgc_jobject r;

	in(e);
	r = kgcn_env_new_local(ENV(e), deref(h));
	out(e);
	return r;
}

static void DeleteLocalRef(kgc_env *e, kgc_jobject h)
{
	if (!h)
		return;
	in(e);
	*h = NULL;	/* the slot stays allocated until the native returns */
	out(e);
}

static int IsSameObject(kgc_env *e, kgc_jobject a, kgc_jobject b)
{
	int same;

	in(e);
	same = deref(a) == deref(b);
	out(e);
	return same;
}

const struct kgc_env_fns kgcn_env_fns = {
	.version = KGC_ENV_VERSION,
	.GetThread = GetThread,
	.GetClassName = GetClassName,
	.AllocObject = AllocObject,
	.NewArray = NewArray,
	.GetObjectType = GetObjectType,
	.GetArrayLength = GetArrayLength,
	.GetField = GetField,
	.SetField = SetField,
	.GetObjectField = GetObjectField,
	.SetObjectField = SetObjectField,
	.GetArrayRegion = GetArrayRegion,
	.SetArrayRegion = SetArrayRegion,
	.GetObjectArrayElement = GetObjectArrayElement,
	.SetObjectArrayElement = SetObjectArrayElement,
	.GetPrimitiveArrayCritical = GetPrimitiveArrayCritical,
	.ReleasePrimitiveArrayCritical = ReleasePrimitiveArrayCritical,
	.Throw = Throw,
	.ThrowNew = ThrowNew,
	.ExceptionCheck = ExceptionCheck,
	.ExceptionOccurred = ExceptionOccurred,
	.ExceptionClear = ExceptionClear,
	.NewGlobalRef = NewGlobalRef,
	.DeleteGlobalRef = DeleteGlobalRef,
	.NewLocalRef = NewLocalRef,
	.DeleteLocalRef = DeleteLocalRef,
	.IsSameObject = IsSameObject,
};
