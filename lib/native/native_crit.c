/* SPDX-License-Identifier: MIT */
/*
 * native_crit.c - the critical-native invokers (JNI critical natives, the
 * JEP 423 way): every array argument is pinned with kgc_critical_get and
 * passed as (length, elements) with no env; the call runs in native state,
 * the arrays are released after it. The specialised ([X)I and ()V shapes
 * pin inline (kgc_ext_cn_enter) and keep arguments in registers.
 */
#include <errno.h>
#include <stdint.h>

#include "native_marshal.h"

static int crit_fail(kgc_thread *t, struct kgc_method *m, unsigned k, const char *why)
{
	kgcn_error("critical native %s.%s%s: array argument %u: %s", m->owner->name,
		     m->name, m->desc, k + 1, why);
	return -EINVAL;
}

/*
 * The array object behind a pointer kgc_critical_get returned. Pinned, so
 * stable - and recomputing it avoids reading the root slot in native state
 * (where the collector may be rewriting it).
 */
static inline kgc_obj pinned_obj(void *elems)
{
	return (kgc_obj)((char *)elems - KGC_ARRAY_DATA_OFFSET);
}

/* 81 lines on purpose: the whole call sequence in one frame (the bench's (b)-(c) path). */
int kgcn_invoke_critical(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			   const union kgc_value *args, union kgc_value *res, void *fn)
{
	const unsigned np = m->sig.nparams, narr = m->narr;
	kgc_obj arr[narr + 1];
	void *elems[narr + 1];
	size_t lens[narr + 1];
	u64 cv[m->call_kind == NC_FFI ? m->ncargs + 1 : 1];
	void *av[m->call_kind == NC_FFI ? m->ncargs + 1 : 1];
	struct cargs c = { .cv = cv, .av = av };
	struct kgc_frame frame;
	union rawret r = { 0 };
	unsigned k = 0, pinned = 0;
	int rc = 0;

	for (unsigned i = 0; i < np; i++)
		if (m->ops[i].op == OP_CRIT_ARR)
			arr[k++] = args[i].l;
	/*
	 * With more than one array, the later ones must be in a root: once the
	 * first is pinned the thread is in native state and a collection may
	 * move the others before they are pinned (a nested kgc_critical_get
	 * becomes managed, then reads the slot).
	 */
	if (narr > 1)
		kgc_frame_push(t, &frame, arr, narr, NULL);
	for (k = 0; k < narr; k++) {
		elems[k] = NULL;
		lens[k] = 0;
	}
	for (k = 0; k < narr; k++) {
		if (!arr[k])
			continue;
		elems[k] = kgc_critical_get(t, &arr[k], &lens[k]);
		if (unlikely(!elems[k])) {
			rc = crit_fail(t, m, k, "not a primitive array");
			goto release;
		}
		pinned++;
		if (unlikely(lens[k] > INT32_MAX)) {
			rc = crit_fail(t, m, k, "longer than 2^31-1 elements");
			goto release;
		}
	}
	k = 0;
	for (unsigned i = 0; i < np; i++) {
		const struct native_plan_op *op = &m->ops[i];

		switch (op->op) {
		case OP_INT_S:
			put_int(m, &c, op->reg, op->carg, widen(op->type, &args[i]));
			break;
		case OP_CRIT_ARR:
			put_int(m, &c, op->reg, op->carg, (u64)lens[k]);
			put_int(m, &c, op->reg + 1, op->carg + 1, (u64)(uintptr_t)elems[k]);
			k++;
			break;
		case OP_F32:
		case OP_F64:
			put_fp(m, &c, op, &args[i]);
			break;
		}
	}
	/* pinned arrays put the thread in native state; else do it here */
	if (!pinned)
		kgc_enter_native(t);
	call_any(m, fn, &c, &r);
	if (!pinned)
		kgc_leave_native(t);
	if (res)
		store_prim(m->sig.ret, &r, res);
release:
	for (unsigned j = narr; j-- > 0;)
		if (elems[j]) {
			kgc_obj o = pinned_obj(elems[j]);

			kgc_critical_release(t, &o, elems[j], KGC_CRITICAL_COMMIT);
		}
	if (narr > 1)
		kgc_frame_pop(t, &frame);
	return rc;
}

/* ([X)I when the fast pin does not apply: a null array or kgc_critical_get. */
static __attribute__((noinline)) int crit_a1_i32_slow(kgc_thread *t, struct kgc_method *m,
						      void *fn, kgc_obj a, union kgc_value *res)
{
	size_t len = 0;
	void *p;
	int32_t v;

	if (likely(a != NULL)) {
		p = kgc_critical_get(t, &a, &len);
		if (unlikely(!p))
			return crit_fail(t, m, 0, "not a primitive array");
		if (unlikely(len > INT32_MAX)) {
			kgc_critical_release(t, &a, p, KGC_CRITICAL_COMMIT);
			return crit_fail(t, m, 0, "longer than 2^31-1 elements");
		}
		v = ((int32_t (*)(int32_t, void *))fn)((int32_t)len, p);
		a = pinned_obj(p);
		kgc_critical_release(t, &a, p, KGC_CRITICAL_COMMIT);
	} else {
		kgc_enter_native(t);
		v = ((int32_t (*)(int32_t, void *))fn)(0, NULL);
		kgc_leave_native(t);
	}
	if (res)
		res->i = v;
	return 0;
}

__attribute__((noinline)) int kgcn_crit_a1_i32_too_long(kgc_thread *t, struct kgc_method *m)
{
	kgc_ext_cn_exit(t);
	return crit_fail(t, m, 0, "longer than 2^31-1 elements");
}

/*
 * ([X)I shape: one primitive array, int result - the bench's sum. Slow
 * cases are tail calls, so the common path saves few registers.
 */
int kgcn_invoke_crit_a1_i32(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			      const union kgc_value *args, union kgc_value *res, void *fn)
{
	kgc_obj a = args[0].l;
	size_t len;
	void *p;
	int32_t v;

	if (unlikely(!a || !(p = kgc_ext_cn_enter(t, a, &len))))
		return crit_a1_i32_slow(t, m, fn, a, res);
	if (unlikely(len > INT32_MAX))
		return kgcn_crit_a1_i32_too_long(t, m);
	v = ((int32_t (*)(int32_t, void *))fn)((int32_t)len, p);
	if (res)
		res->i = v;
	kgc_ext_cn_exit(t);
	return 0;
}

/* ()V: the empty critical call. */
int kgcn_invoke_crit_v_v(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			   const union kgc_value *args, union kgc_value *res, void *fn)
{
	kgc_enter_native(t);
	((void (*)(void))fn)();
	kgc_leave_native(t);
	return 0;
}
