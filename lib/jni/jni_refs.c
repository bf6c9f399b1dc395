/* SPDX-License-Identifier: MIT */
/*
 * jni_refs.c - references. A local reference is a slot of a chunk frame
 * (struct kgcj_chunk: KGCJ_CHUNK slots, kgc_frame_push'ed when first used,
 * kept on a spare list when its frame ends); a local frame (a native call,
 * PushLocalFrame) is a mark: the top chunk and its slots in use when it
 * began. Global references are kgc handles; weak global references are kgc
 * weak cells, tagged with bit 0 so every function can tell them apart.
 */
#include <errno.h>
#include <stdlib.h>

#include "jni_internal.h"

#define WEAK_TAG ((uintptr_t)1)

static bool is_weak(jobject r)
{
	return (uintptr_t)r & WEAK_TAG;
}

/* The chunk (live, on the stack of chunks) holding slot r, or NULL. */
static struct kgcj_chunk *chunk_of(struct kgcj_chunk *c, jobject r)
{
	for (; c; c = c->prev)
		if ((kgc_obj *)r >= c->slots && (kgc_obj *)r < c->slots + KGCJ_CHUNK)
			return c;
	return NULL;
}

/* Checked mode: r is a local slot that is no longer in use. */
static void check_local(struct kgcj_env *e, jobject r, const char *fn)
{
	struct kgcj_chunk *c = chunk_of(e->top, r);

	if (c && (kgc_obj *)r - c->slots >= c->f.nslots)
		kgcj_fatal(fn, "local reference %p used after its local frame ended", (void *)r);
	if (!c && (chunk_of(e->grave, r) || chunk_of(e->spare, r)))
		kgcj_fatal(fn, "local reference %p used after its local frame ended "
			   "(the native call or PushLocalFrame that made it returned)", (void *)r);
}

kgc_obj kgcj_deref(struct kgcj_env *e, jobject r, const char *fn)
{
	if (!r)
		return NULL;
	if (is_weak(r))
		return kgc_weak_get(e->t, (kgc_weak)((uintptr_t)r & ~WEAK_TAG));
	if (unlikely(e->vm->checked))
		check_local(e, r, fn);
	return *(kgc_obj *)r;
}

static struct kgcj_chunk *chunk_new(struct kgcj_env *e)
{
	struct kgcj_chunk *c = e->spare;

	if (c)
		e->spare = c->prev;
	else if (!(c = malloc(sizeof(*c))))
		return NULL;
	c->pushed = false;
	return c;
}

jobject kgcj_local(struct kgcj_env *e, kgc_obj o)
{
	struct kgcj_chunk *c = e->top;
	uint32_t i;

	if (!o)
		return NULL;
	if (c && c->f.nslots < KGCJ_CHUNK) {
		i = c->f.nslots;
		c->slots[i] = o;
		c->f.nslots = i + 1;
		return (jobject)&c->slots[i];
	}
	c = chunk_new(e);
	if (!c) {
		kgcj_error("JNI: out of memory for a local reference");
		return NULL;
	}
	c->slots[0] = o;
	c->prev = e->top;
	e->top = c;
	kgc_frame_push(e->t, &c->f, c->slots, 1, NULL);
	c->pushed = true;
	return (jobject)&c->slots[0];
}

/* kgcj_mark_push's slow path: room for more marks. */
int kgcj_marks_grow(struct kgcj_env *e)
{
	uint32_t n = e->capmarks ? e->capmarks * 2 : 16;
	struct kgcj_mark *m = realloc(e->marks, n * sizeof(*m));

	if (!m) {
		kgcj_error("JNI: out of memory for a local frame");
		return -ENOMEM;
	}
	e->marks = m;
	e->capmarks = n;
	return 0;
}

/*
 * Checked mode keeps ended chunks out of use for the next GRAVE_CHUNKS
 * ends, so that a local used after its frame points into one of them
 * (not into a slot reused by a newer local) and is caught.
 */
#define GRAVE_CHUNKS 1024

static void chunk_retire(struct kgcj_env *e, struct kgcj_chunk *c)
{
	if (!e->vm->checked) {
		c->prev = e->spare;
		e->spare = c;
		return;
	}
	if (e->ngrave == GRAVE_CHUNKS) {	/* the oldest ones go back to use */
		while (e->grave) {
			struct kgcj_chunk *g = e->grave;

			e->grave = g->prev;
			g->prev = e->spare;
			e->spare = g;
		}
		e->ngrave = 0;
	}
	c->prev = e->grave;
	e->grave = c;
	e->ngrave++;
}

/* Ends the top local frame: chunks above its start are popped and kept. */
/* kgcj_mark_pop's slow path: chunks pushed since the mark m end. */
void kgcj_mark_pop_chunks(struct kgcj_env *e, struct kgcj_mark m)
{
	while (e->top && e->top != m.chunk) {
		struct kgcj_chunk *c = e->top;

		e->top = c->prev;
		if (c->pushed)
			kgc_frame_pop(e->t, &c->f);
		chunk_retire(e, c);
	}
	if (e->top)
		e->top->f.nslots = m.n;
}

/* Every local frame ended, chunks freed (managed; detach). Idempotent. */
void kgcj_locals_free(struct kgcj_env *e)
{
	while (e->nmarks)
		kgcj_mark_pop(e);
	while (e->top) {	/* locals made outside any frame */
		struct kgcj_chunk *c = e->top;

		e->top = c->prev;
		kgc_frame_pop(e->t, &c->f);
		free(c);
	}
	while (e->spare) {
		struct kgcj_chunk *c = e->spare;

		e->spare = c->prev;
		free(c);
	}
	while (e->grave) {
		struct kgcj_chunk *c = e->grave;

		e->grave = c->prev;
		free(c);
	}
	e->ngrave = 0;
}

/* ---------------------------------------------------------- local frames */

jint kgcj_PushLocalFrame(JNIEnv *env, jint capacity)
{
	struct kgcj_env *e = ENV(env);
	int rc;

	if (e->vm->checked)
		kgcj_check_crit(e, "PushLocalFrame");
	if (capacity < 0)
		return JNI_ERR;
	/* (out of memory: JNI_ENOMEM, and no OutOfMemoryError: refs are below exceptions) */
	rc = kgcj_mark_push(e, (uint32_t)capacity, false);
	return rc ? JNI_ENOMEM : JNI_OK;
}

jobject kgcj_PopLocalFrame(JNIEnv *env, jobject result)
{
	struct kgcj_env *e = ENV(env);
	jobject r = NULL;
	kgc_obj o;
	bool n;

	if (e->vm->checked)
		kgcj_check_crit(e, "PopLocalFrame");
	if (!e->nmarks || e->marks[e->nmarks - 1].call) {
		if (e->vm->checked)
			kgcj_fatal("PopLocalFrame", "no PushLocalFrame to match");
		return NULL;
	}
	n = kgcj_in(e);
	o = kgcj_deref(e, result, "PopLocalFrame");
	kgcj_mark_pop(e);
	r = kgcj_local(e, o);
	kgcj_out(e, n);
	return r;
}

jint kgcj_EnsureLocalCapacity(JNIEnv *env, jint capacity)
{
	struct kgcj_env *e = ENV(env);

	kgcj_check(e, "EnsureLocalCapacity");
	if (capacity < 0)
		return JNI_ERR;
	/* chunks grow on demand: any capacity is there while memory lasts */
	if (e->nmarks && e->marks[e->nmarks - 1].capacity < (uint32_t)capacity)
		e->marks[e->nmarks - 1].capacity = (uint32_t)capacity;
	return JNI_OK;
}

jobject kgcj_NewLocalRef(JNIEnv *env, jobject ref)
{
	struct kgcj_env *e = ENV(env);
	bool n;
	jobject r;

	kgcj_check(e, "NewLocalRef");
	n = kgcj_in(e);
	r = kgcj_local(e, kgcj_deref(e, ref, "NewLocalRef"));
	kgcj_out(e, n);
	return r;
}

/*
 * Deleted slots at the top of the top chunk are given back (not below the
 * current local frame's start): a native that deletes its locals in the
 * order it made them - a loop over array elements - runs in constant space.
 */
static void trim_top(struct kgcj_env *e)
{
	const struct kgcj_mark *m = &e->marks[e->nmarks - 1];
	struct kgcj_chunk *c = e->top;
	uint32_t floor = m->chunk == c ? m->n : 0;

	while (c->f.nslots > floor && !c->slots[c->f.nslots - 1])
		c->f.nslots--;
}

/* A local's slot is cleared (the object may die); other references are
 * left alone (classes from FindClass are deleted this way too). */
void kgcj_DeleteLocalRef(JNIEnv *env, jobject ref)
{
	struct kgcj_env *e = ENV(env);
	struct kgcj_chunk *c;
	bool n;

	if (!ref || is_weak(ref))
		return;
	if (e->vm->checked)
		kgcj_check_crit(e, "DeleteLocalRef");
	n = kgcj_in(e);
	c = chunk_of(e->top, ref);
	if (c) {
		if (e->vm->checked)
			check_local(e, ref, "DeleteLocalRef");
		*(kgc_obj *)ref = NULL;
		if (c == e->top)
			trim_top(e);
	} else if (e->vm->checked) {
		check_local(e, ref, "DeleteLocalRef");
	}
	kgcj_out(e, n);
}

jboolean kgcj_IsSameObject(JNIEnv *env, jobject a, jobject b)
{
	struct kgcj_env *e = ENV(env);
	jboolean same;
	bool n;

	kgcj_check(e, "IsSameObject");
	n = kgcj_in(e);
	same = kgcj_deref(e, a, "IsSameObject") == kgcj_deref(e, b, "IsSameObject");
	kgcj_out(e, n);
	return same;
}

/* --------------------------------------------------------------- globals */

jobject kgcj_NewGlobalRef(JNIEnv *env, jobject ref)
{
	struct kgcj_env *e = ENV(env);
	jobject r = NULL;
	kgc_obj o;
	bool n;

	kgcj_check(e, "NewGlobalRef");
	n = kgcj_in(e);
	o = kgcj_deref(e, ref, "NewGlobalRef");
	if (o)
		r = (jobject)kgc_handle_new(e->t, o);
	kgcj_out(e, n);
	return r;
}

void kgcj_DeleteGlobalRef(JNIEnv *env, jobject ref)
{
	struct kgcj_env *e = ENV(env);
	bool n;

	if (!ref)
		return;
	if (is_weak(ref) || chunk_of(e->top, ref) || chunk_of(e->spare, ref) ||
	    chunk_of(e->grave, ref)) {
		if (e->vm->checked)
			kgcj_fatal("DeleteGlobalRef", "%p is not a global reference", (void *)ref);
		return;
	}
	n = kgcj_in(e);
	kgc_handle_free(e->t, (kgc_handle)ref);
	kgcj_out(e, n);
}

jweak kgcj_NewWeakGlobalRef(JNIEnv *env, jobject ref)
{
	struct kgcj_env *e = ENV(env);
	kgc_weak w = NULL;
	kgc_obj o;
	bool n;

	kgcj_check(e, "NewWeakGlobalRef");
	n = kgcj_in(e);
	o = kgcj_deref(e, ref, "NewWeakGlobalRef");
	if (o)
		w = kgc_weak_new(e->t, o);
	kgcj_out(e, n);
	return w ? (jweak)((uintptr_t)w | WEAK_TAG) : NULL;
}

void kgcj_DeleteWeakGlobalRef(JNIEnv *env, jweak ref)
{
	struct kgcj_env *e = ENV(env);
	bool n;

	if (!ref)
		return;
	if (!is_weak(ref)) {
		if (e->vm->checked)
			kgcj_fatal("DeleteWeakGlobalRef", "%p is not a weak global reference",
				   (void *)ref);
		return;
	}
	n = kgcj_in(e);
	kgc_weak_free(e->t, (kgc_weak)((uintptr_t)ref & ~WEAK_TAG));
	kgcj_out(e, n);
}

jobjectRefType kgcj_GetObjectRefType(JNIEnv *env, jobject ref)
{
	struct kgcj_env *e = ENV(env);

	if (!ref)
		return JNIInvalidRefType;
	if (is_weak(ref))
		return JNIWeakGlobalRefType;
	struct kgcj_chunk *c = chunk_of(e->top, ref);

	if (c)
		return (kgc_obj *)ref - c->slots < c->f.nslots ? JNILocalRefType : JNIInvalidRefType;
	if (chunk_of(e->spare, ref) || chunk_of(e->grave, ref))
		return JNIInvalidRefType;
	/* argument handles are slots of the call's frame, on the stack */
	if ((uintptr_t)ref >= e->stack_lo && (uintptr_t)ref < e->stack_hi)
		return JNILocalRefType;
	return JNIGlobalRefType;
}
