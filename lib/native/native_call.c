/* SPDX-License-Identifier: MIT */
/*
 * native_call.c - calling native methods: kgc_native_call (one load and
 * one indirect call to the invoker the method's plan chose, native_plan.c;
 * the slow cases out of line), the regular invoker (env, handles to frame
 * slots, local refs, a pending exception), kgc_native_entry's prepared
 * stubs that compiled code calls with arguments and result in registers.
 * Critical invokers: native_crit.c; pending exceptions: native_exc.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "native_marshal.h"

/* --------------------------------------------------------- regular natives */

/*
 * 90 lines on purpose: the whole call sequence in one frame (the bench's
 * (b)-(c) path). Instantiated twice: the bridge's own env, and (hooked) the
 * env an env provider returns (kgc_native_set_env_ops: libkgc-jni's JNIEnv).
 */
static inline __attribute__((always_inline)) int
invoke_regular(kgc_thread *t, struct kgc_method *m, kgc_obj recv, const union kgc_value *args,
	       union kgc_value *res, void *fn, const bool hooked)
{
	const unsigned np = m->sig.nparams, ret = m->sig.ret;
	const uint32_t cap = m->nrefs + 1 + NATIVE_LOCAL_CAPACITY;
	kgc_obj slots[cap];
	u64 cv[m->call_kind == NC_FFI ? m->ncargs + 1 : 1];
	void *av[m->call_kind == NC_FFI ? m->ncargs + 1 : 1];
	struct cargs c;
	struct kgc_frame frame;
	struct native_env env;
	union rawret r = { 0 };
	struct native_registry *reg = m->owner->reg;
	void *envp = &env, *cls = (void *)m->owner;
	int rc = 0;

	if (!(m->flags & KGC_NATIVE_STATIC) && unlikely(!recv)) {
		kgcn_error("native %s.%s%s: null receiver", m->owner->name, m->name, m->desc);
		return -EINVAL;
	}
	slots[0] = (m->flags & KGC_NATIVE_STATIC) ? NULL : recv;
	for (unsigned i = 0; i < np; i++)
		if (m->ops[i].op == OP_REF)
			slots[m->ops[i].slot] = args[i].l;
	slots[m->nrefs] = NULL;		/* pending exception */
	cargs_init(&c, cv, av);

	env.fns = &kgcn_env_fns;
	env.t = t;
	env.m = m;
	env.frame = &frame;
	env.slots = slots;
	env.cap = cap;
	env.exc_slot = m->nrefs;
	env.chunks = NULL;
	env.exc_msg = NULL;
	env.exc_pending = false;
	kgc_frame_push(t, &frame, slots, m->nrefs + 1, NULL);
	if (hooked) {
		envp = reg->env_ops.enter(reg->env_ctx, t, m->owner,
					  !!(m->flags & KGC_NATIVE_STATIC), &cls);
		if (unlikely(!envp)) {
			kgc_frame_pop(t, &frame);
			return -ENOMEM;
		}
	}

	put_int(m, &c, 0, 0, (u64)(uintptr_t)envp);
	put_int(m, &c, 1, 1, (m->flags & KGC_NATIVE_STATIC) ? (u64)(uintptr_t)cls
							     : (u64)(uintptr_t)&slots[0]);
	for (unsigned i = 0; i < np; i++) {
		const struct native_plan_op *op = &m->ops[i];

		switch (op->op) {
		case OP_INT_S:
			put_int(m, &c, op->reg, op->carg, widen(op->type, &args[i]));
			break;
		case OP_REF:
			/* handle = pointer to the frame slot; null stays NULL */
			put_int(m, &c, op->reg, op->carg,
				args[i].l ? (u64)(uintptr_t)&slots[op->slot] : 0);
			break;
		case OP_F32:
		case OP_F64:
			put_fp(m, &c, op, &args[i]);
			break;
		}
	}

	kgc_enter_native(t);
	call_any(m, fn, &c, &r);
	kgc_leave_native(t);

	if (res) {
		if (ret == NT_OBJ || ret == NT_PARR || ret == NT_RARR) {
			kgc_jobject h = (kgc_jobject)r.p;

			res->l = h ? *h : NULL;
		} else {
			store_prim(ret, &r, res);
		}
	}
	if (hooked && reg->env_ops.leave(reg->env_ctx, t, envp, &slots[env.exc_slot], &env.exc_msg))
		env.exc_pending = true;
	if (unlikely(env.exc_pending)) {
		/* still rooted by the frame while the handle is made */
		kgcn_exception_set(t, slots[env.exc_slot], env.exc_msg);
		env.exc_msg = NULL;
		rc = -EPROTO;
	}
	if (unlikely(env.exc_msg))
		free(env.exc_msg);
	if (unlikely(env.chunks))
		kgcn_env_pop_locals(&env);
	kgc_frame_pop(t, &frame);
	return rc;
}

int kgcn_invoke_regular(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			const union kgc_value *args, union kgc_value *res, void *fn)
{
	return invoke_regular(t, m, recv, args, res, fn, false);
}

int kgcn_invoke_env(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
		    const union kgc_value *args, union kgc_value *res, void *fn)
{
	return invoke_regular(t, m, recv, args, res, fn, true);
}

/* ------------------------------------------------------------------- entry */

/*
 * Checked mode (KGC_CHECK, like -Xcheck:jni): the runtime above is trusted
 * otherwise. Array arguments must match the descriptor's array type - a
 * byte[] passed as [I would let a critical native read 4x past its end.
 */
static const char *tname(struct kgc_method *m, kgc_type_id ty)
{
	const char *n = kgc_type_name(m->owner->reg->heap, ty);

	return n ? n : "?";
}

static int native_check_args(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			     const union kgc_value *args)
{
	for (unsigned i = 0; i < m->sig.nparams; i++) {
		unsigned ty = m->sig.types[i];
		kgc_type_id want, got;
		kgc_obj o;

		if (ty != NT_PARR && ty != NT_RARR)
			continue;
		o = args[i].l;
		if (!o)
			continue;
		want = ty == NT_PARR ? KGC_TYPE_PRIM_ARRAY(m->sig.elems[i]) : KGC_TYPE_REF_ARRAY;
		got = kgc_obj_type(o);
		if (got != want) {
			kgcn_error("native %s.%s%s: argument %u is a %s, the descriptor wants %s",
				     m->owner->name, m->name, m->desc, i + 1,
				     tname(m, got), tname(m, want));
			return -EINVAL;
		}
	}
	return 0;
}

/* kgc_native_call when the method is not linked yet or in checked mode. */
static __attribute__((noinline)) int native_call_slow(kgc_thread *t, kgc_method *m,
						      kgc_obj receiver, const union kgc_value *args,
						      union kgc_value *result)
{
	void *fn = __atomic_load_n(&m->fn, __ATOMIC_ACQUIRE);

	if (unlikely(!fn)) {
		int rc = m->owner->reg->link(m);

		if (rc)
			return rc;
		fn = __atomic_load_n(&m->fn, __ATOMIC_ACQUIRE);
	}
	if (unlikely(((const struct kgc_thread_pub *)t)->checked)) {
		int rc = native_check_args(t, m, receiver, args);

		if (rc)
			return rc;
	}
	return m->invoke(t, m, receiver, args, result, fn);
}

KGC_API int kgc_native_call(kgc_thread *t, kgc_method *m, kgc_obj receiver,
		    const union kgc_value *args, union kgc_value *result)
{
	void *fn = __atomic_load_n(&m->fn, __ATOMIC_ACQUIRE);

	/* the call path: one indirect call, slow cases out of line */
	if (unlikely(!fn || ((const struct kgc_thread_pub *)t)->checked))
		return native_call_slow(t, m, receiver, args, result);
	return m->invoke(t, m, receiver, args, result, fn);
}

/* ------------------------------------------------------- prepared entries */

/*
 * kgc_native_entry's stubs. Each is the invoker of one shape with the
 * dispatch of kgc_native_call folded away: the bound function is loaded
 * from the method (it follows re-registration), the shape is checked with
 * one compare against what prepare computed, and arguments and result stay
 * in registers. Anything unusual (not linked, another kind of method, a
 * null or unpinnable array, a checked heap) goes through kgc_native_call.
 */

static unsigned shape_of(unsigned ekind)
{
	switch (ekind) {
	case EK_V_GENERIC:
	case EK_REG_V:
	case EK_CRIT_V:
		return KGC_NATIVE_SHAPE_V;
	case EK_L_I_GENERIC:
	case EK_REG_L_I:
	case EK_CRIT_L_I:
		return KGC_NATIVE_SHAPE_L_I;
	case EK_I_I_GENERIC:
	case EK_REG_I_I:
	case EK_CRIT_I_I:
	case EK_ENV_I_I:
		return KGC_NATIVE_SHAPE_I_I;
	default:
		return 0;
	}
}

static const char *shape_name(unsigned shape)
{
	switch (shape) {
	case KGC_NATIVE_SHAPE_V: return "KGC_NATIVE_SHAPE_V (static ()V)";
	case KGC_NATIVE_SHAPE_L_I: return "KGC_NATIVE_SHAPE_L_I (static, one reference, int result)";
	case KGC_NATIVE_SHAPE_I_I: return "KGC_NATIVE_SHAPE_I_I (static (I)I)";
	default: return "no prepared shape";
	}
}

static __attribute__((noinline, cold)) int entry_wrong_method(struct kgc_method *m,
							      unsigned shape)
{
	if (!m) {
		kgcn_error("native entry %s: NULL method", shape_name(shape));
		return -EINVAL;
	}
	kgcn_error("native %s.%s%s: called through a %s entry; the method has %s%s",
		     m->owner->name, m->name, m->desc, shape_name(shape),
		     shape_name(shape_of(m->ekind)),
		     m->flags & KGC_NATIVE_STATIC ? "" : " (instance method)");
	return -EINVAL;
}

/* Back to managed after a native (kgc_leave_native, inline; sections the
 * native left open keep t in native state). */
static inline __attribute__((always_inline)) void native_return(kgc_thread *t)
{
	kgc_ext_leave_native(t);
}

/* Generic (and checked-heap) entries, and every slow case of the fast ones. */
static __attribute__((noinline)) int entry_v_generic(kgc_thread *t, kgc_method *m)
{
	if (unlikely(!m || shape_of(m->ekind) != KGC_NATIVE_SHAPE_V))
		return entry_wrong_method(m, KGC_NATIVE_SHAPE_V);
	return kgc_native_call(t, m, NULL, NULL, NULL);
}

static __attribute__((noinline)) int entry_l_i_generic(kgc_thread *t, kgc_method *m,
							kgc_obj arg, int32_t *res)
{
	union kgc_value a = { .l = arg }, r = { .i = 0 };
	int rc;

	if (unlikely(!m || shape_of(m->ekind) != KGC_NATIVE_SHAPE_L_I))
		return entry_wrong_method(m, KGC_NATIVE_SHAPE_L_I);
	rc = kgc_native_call(t, m, NULL, &a, &r);
	if (!rc && res)
		*res = r.i;
	return rc;
}

static __attribute__((noinline)) int entry_i_i_generic(kgc_thread *t, kgc_method *m,
							int32_t arg, int32_t *res)
{
	union kgc_value a = { .i = arg }, r = { .i = 0 };
	int rc;

	if (unlikely(!m || shape_of(m->ekind) != KGC_NATIVE_SHAPE_I_I))
		return entry_wrong_method(m, KGC_NATIVE_SHAPE_I_I);
	rc = kgc_native_call(t, m, NULL, &a, &r);
	if (!rc && res)
		*res = r.i;
	return rc;
}

enum { RA_NONE, RA_REF, RA_INT };	/* reg_entry_call's argument */

/*
 * A regular static native with no argument, one reference or one int, called with
 * the frame of kgcn_invoke_regular laid out at compile time: slot 0 the (absent)
 * receiver, then the argument, then the pending-exception slot, then room
 * for local refs.
 */
static inline __attribute__((always_inline)) int
reg_entry_call(kgc_thread *t, struct kgc_method *m, void *fn, int kind, kgc_obj arg,
	       int32_t iarg, int32_t *res)
{
	const uint32_t nrefs = kind == RA_REF ? 2 : 1;
	kgc_obj slots[2 + 1 + NATIVE_LOCAL_CAPACITY];
	struct kgc_frame frame;
	struct native_env env;
	int32_t v = 0;
	int rc = 0;

	slots[0] = NULL;
	slots[1] = arg;
	slots[nrefs] = NULL;		/* pending exception (overwrites arg if none) */
	env.fns = &kgcn_env_fns;
	env.t = t;
	env.m = m;
	env.frame = &frame;
	env.slots = slots;
	env.cap = nrefs + 1 + NATIVE_LOCAL_CAPACITY;
	env.exc_slot = nrefs;
	env.chunks = NULL;
	env.exc_msg = NULL;
	env.exc_pending = false;
	kgc_frame_push(t, &frame, slots, nrefs + 1, NULL);
	kgc_ext_enter_native(t);
	if (kind == RA_REF)
		v = ((int32_t (*)(kgc_env *, kgc_jclass, kgc_jobject))fn)(
			(kgc_env *)&env, m->owner, arg ? &slots[1] : NULL);
	else if (kind == RA_INT)
		v = ((int32_t (*)(kgc_env *, kgc_jclass, int32_t))fn)((kgc_env *)&env, m->owner, iarg);
	else
		((void (*)(kgc_env *, kgc_jclass))fn)((kgc_env *)&env, m->owner);
	native_return(t);
	if (res)
		*res = v;
	if (unlikely(env.exc_pending)) {
		kgcn_exception_set(t, slots[env.exc_slot], env.exc_msg);
		env.exc_msg = NULL;
		rc = -EPROTO;
	}
	if (unlikely(env.exc_msg))
		free(env.exc_msg);
	if (unlikely(env.chunks))
		kgcn_env_pop_locals(&env);
	kgc_frame_pop(t, &frame);
	return rc;
}

/* The bound function of m if it is linked and its stub is ek; else NULL
 * (the stub then takes the generic path, which also reports misuse). */
static inline void *entry_fn(kgc_method *m, unsigned ek)
{
	void *fn;

	if (unlikely(!m))
		return NULL;
	fn = __atomic_load_n(&m->fn, __ATOMIC_ACQUIRE);
	return likely(fn && m->ekind == ek) ? fn : NULL;
}

static int entry_reg_v(kgc_thread *t, kgc_method *m)
{
	void *fn = entry_fn(m, EK_REG_V);

	if (unlikely(!fn))
		return entry_v_generic(t, m);
	return reg_entry_call(t, m, fn, RA_NONE, NULL, 0, NULL);
}

static int entry_reg_l_i(kgc_thread *t, kgc_method *m, kgc_obj arg, int32_t *res)
{
	void *fn = entry_fn(m, EK_REG_L_I);

	if (unlikely(!fn))
		return entry_l_i_generic(t, m, arg, res);
	return reg_entry_call(t, m, fn, RA_REF, arg, 0, res);
}

static int entry_reg_i_i(kgc_thread *t, kgc_method *m, int32_t arg, int32_t *res)
{
	void *fn = entry_fn(m, EK_REG_I_I);

	if (unlikely(!fn))
		return entry_i_i_generic(t, m, arg, res);
	return reg_entry_call(t, m, fn, RA_INT, NULL, arg, res);
}

/*
 * The exception a hooked native left pending (env_ops.leave gave it):
 * rooted by a one-slot frame while the bridge makes its handle. Out of
 * line, so that the common call pushes no frame at all.
 */
static __attribute__((noinline, cold)) int env_exception(kgc_thread *t, kgc_obj exc, char *msg)
{
	kgc_obj slot[1] = { exc };
	struct kgc_frame frame;

	kgc_frame_push(t, &frame, slot, 1, NULL);
	kgcn_exception_set(t, slot[0], msg);	/* takes msg */
	kgc_frame_pop(t, &frame);
	return -EPROTO;
}

/*
 * A regular static (I)I of a heap with env ops (libkgc-jni): the hooked
 * invoker's sequence with the int in a register and no frame - the call
 * has no reference to root (no receiver, no reference argument; the env's
 * locals are the env provider's roots), and the pending exception that
 * leave may return is rooted only after it (env_exception; nothing between
 * leave and that push can start a collection: t is managed and allocates
 * nothing). enter gives the env and the class argument (issue 29: the
 * per-call cost of a trivial JNI native).
 */
static int entry_env_i_i(kgc_thread *t, kgc_method *m, int32_t arg, int32_t *res)
{
	void *fn = entry_fn(m, EK_ENV_I_I), *envp, *cls = NULL;
	const struct native_registry *reg;
	kgc_obj exc = NULL;
	char *msg = NULL;
	int32_t v;

	if (unlikely(!fn))
		return entry_i_i_generic(t, m, arg, res);
	reg = m->owner->reg;
	envp = reg->env_ops.enter(reg->env_ctx, t, m->owner, 1, &cls);
	if (unlikely(!envp))
		return -ENOMEM;
	kgc_ext_enter_native(t);
	v = ((int32_t (*)(void *, void *, int32_t))fn)(envp, cls, arg);
	native_return(t);
	if (res)
		*res = v;
	if (unlikely(reg->env_ops.leave(reg->env_ctx, t, envp, &exc, &msg)))
		return env_exception(t, exc, msg);
	return 0;
}

static int entry_crit_i_i(kgc_thread *t, kgc_method *m, int32_t arg, int32_t *res)
{
	void *fn = entry_fn(m, EK_CRIT_I_I);
	int32_t v;

	if (unlikely(!fn))
		return entry_i_i_generic(t, m, arg, res);
	kgc_ext_enter_native(t);
	v = ((int32_t (*)(int32_t))fn)(arg);
	native_return(t);
	if (res)
		*res = v;
	return 0;
}

static int entry_crit_v(kgc_thread *t, kgc_method *m)
{
	void *fn = entry_fn(m, EK_CRIT_V);

	if (unlikely(!fn))
		return entry_v_generic(t, m);
	kgc_ext_enter_native(t);
	((void (*)(void))fn)();
	native_return(t);
	return 0;
}

/*
 * The critical ([X)I stub: pin inline (crit_native_enter: the array becomes
 * the thread's cn_arg), call with (len, elements) in registers, unpin
 * (crit_native_exit). A null array, a thread not managed, GCLocker or
 * checked mode go the generic way; an array longer than 2^31-1 fails.
 */
static int entry_crit_l_i(kgc_thread *t, kgc_method *m, kgc_obj a, int32_t *res)
{
	size_t len;
	void *fn = entry_fn(m, EK_CRIT_L_I), *p;
	int32_t v;

	if (unlikely(!fn || !a || !(p = kgc_ext_cn_enter(t, a, &len))))
		return entry_l_i_generic(t, m, a, res);
	if (unlikely(len > INT32_MAX))
		return kgcn_crit_a1_i32_too_long(t, m);
	v = ((int32_t (*)(int32_t, void *))fn)((int32_t)len, p);
	if (res)	/* before the exit: v need not survive it */
		*res = v;
	kgc_ext_cn_exit(t);
	return 0;
}

KGC_API int kgc_native_entry(kgc_method *m, enum kgc_native_shape shape,
				union kgc_native_entry *out)
{
	bool checked;
	unsigned have;
	int rc;

	if (!m || !out) {
		kgcn_error("kgc_native_entry: NULL %s", m ? "out" : "method");
		return -EINVAL;
	}
	if (shape != KGC_NATIVE_SHAPE_V && shape != KGC_NATIVE_SHAPE_L_I &&
	    shape != KGC_NATIVE_SHAPE_I_I) {
		kgcn_error("native %s.%s%s: kgc_native_entry: unknown shape %d",
			     m->owner->name, m->name, m->desc, (int)shape);
		return -EINVAL;
	}
	have = shape_of(m->ekind);
	if (have != (unsigned)shape) {
		kgcn_error("native %s.%s%s: kgc_native_entry: asked for %s; the method has %s%s",
			     m->owner->name, m->name, m->desc, shape_name(shape), shape_name(have),
			     m->flags & KGC_NATIVE_STATIC ? "" : " (instance method)");
		return -EINVAL;
	}
	if (!__atomic_load_n(&m->fn, __ATOMIC_ACQUIRE)) {
		rc = m->owner->reg->link(m);
		if (rc)
			return rc;
	}
	/* checked heaps: every call goes through kgc_native_call's checks */
	checked = m->owner->reg->checked;
	if (shape == KGC_NATIVE_SHAPE_V) {
		if (checked || m->ekind == EK_V_GENERIC)
			out->v = entry_v_generic;
		else
			out->v = m->ekind == EK_CRIT_V ? entry_crit_v : entry_reg_v;
	} else if (shape == KGC_NATIVE_SHAPE_L_I) {
		if (checked || m->ekind == EK_L_I_GENERIC)
			out->l_i = entry_l_i_generic;
		else
			out->l_i = m->ekind == EK_CRIT_L_I ? entry_crit_l_i : entry_reg_l_i;
	} else {
		if (checked || m->ekind == EK_I_I_GENERIC)
			out->i_i = entry_i_i_generic;
		else
			out->i_i = m->ekind == EK_CRIT_I_I ? entry_crit_i_i
				 : m->ekind == EK_ENV_I_I ? entry_env_i_i : entry_reg_i_i;
	}
	return 0;
}
