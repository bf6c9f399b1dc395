/* SPDX-License-Identifier: MIT */
/*
 * jni_nio.c - direct byte buffers: instances of java/nio/ByteBuffer whose
 * java/nio/Buffer fields address (J) and capacity (I) describe memory
 * outside the heap.
 */
#include "jni_internal.h"

jobject kgcj_NewDirectByteBuffer(JNIEnv *env, void *address, jlong capacity)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_class *c = kgcj_class_find(e->vm, "java/nio/ByteBuffer");
	jobject r = NULL;
	kgc_obj o;
	bool n;

	kgcj_check(e, "NewDirectByteBuffer");
	n = kgcj_in(e);
	if (capacity < 0 || capacity > INT32_MAX || (!address && capacity)) {
		kgcj_throw(e, "java/lang/IllegalArgumentException",
			   "NewDirectByteBuffer: address %p, capacity %lld", address,
			   (long long)capacity);
	} else if (!(o = kgc_alloc(e->t, c->type))) {
		kgcj_throw(e, "java/lang/OutOfMemoryError", "NewDirectByteBuffer");
	} else {
		KGC_FIELD(o, e->vm->f_buf_address->offset, jlong) = (jlong)(uintptr_t)address;
		KGC_FIELD(o, e->vm->f_buf_capacity->offset, jint) = (jint)capacity;
		r = kgcj_local(e, o);
	}
	kgcj_out(e, n);
	return r;
}

/* The buffer object behind buf if it is a java/nio/Buffer (managed), else NULL. */
static kgc_obj buffer_of(struct kgcj_env *e, jobject buf, const char *fn)
{
	kgc_obj o = kgcj_deref(e, buf, fn);
	struct kgcj_class *c = o ? kgcj_class_of_obj(e->vm, o) : NULL;

	return c && kgcj_subclass(c, e->vm->c_buffer) ? o : NULL;
}

void *kgcj_GetDirectBufferAddress(JNIEnv *env, jobject buf)
{
	struct kgcj_env *e = ENV(env);
	void *p = NULL;
	kgc_obj o;
	bool n;

	kgcj_check(e, "GetDirectBufferAddress");
	n = kgcj_in(e);
	o = buffer_of(e, buf, "GetDirectBufferAddress");
	if (o)
		p = (void *)(uintptr_t)KGC_FIELD(o, e->vm->f_buf_address->offset, jlong);
	kgcj_out(e, n);
	return p;
}

jlong kgcj_GetDirectBufferCapacity(JNIEnv *env, jobject buf)
{
	struct kgcj_env *e = ENV(env);
	jlong cap = -1;
	kgc_obj o;
	bool n;

	kgcj_check(e, "GetDirectBufferCapacity");
	n = kgcj_in(e);
	o = buffer_of(e, buf, "GetDirectBufferCapacity");
	if (o && KGC_FIELD(o, e->vm->f_buf_address->offset, jlong))
		cap = KGC_FIELD(o, e->vm->f_buf_capacity->offset, jint);
	kgcj_out(e, n);
	return cap;
}
