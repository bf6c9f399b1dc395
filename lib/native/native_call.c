/* SPDX-License-Identifier: MIT */
/*
 * native_call.c - calling native methods.
 *
 * kgcn_method_prepare (once per method) turns the parsed signature into a
 * call plan: one op per Java parameter saying where its value goes (integer
 * register i, fp register i, a handle to frame slot k, or - critical - a
 * (length, pointer) pair), the number of frame slots a regular call needs,
 * and the call kind:
 *
 *  NC_INT6  every C argument is integer-class (ints, pointers, handles) and
 *           there are at most 6: the native is called directly through a
 *           pointer of type R(*)(6 x uint64_t).
 *  NC_REG   at most 6 integer-class and 8 fp-class C arguments: called
 *           directly through R(*)(6 x uint64_t, 8 x double), floats carried
 *           in the low half of their double register.
 *  NC_FFI   anything else (stack arguments): a prepared ffi_cif.
 *
 * The direct kinds rely on the System V AMD64 (and AAPCS64) rule that
 * integer-class and fp-class arguments are assigned to their register files
 * independently, in order, and that surplus argument registers are ignored by
 * the callee - the same reasoning a JIT's signature handler uses. Elsewhere
 * every method uses libffi. Setting kgcn_force_ffi (tests) makes every
 * method prepared afterwards use libffi, to check both paths agree.
 *
 * The invoker (regular / critical, and specialised ones for hot shapes) is
 * chosen at prepare time; kgc_native_call is one load and one indirect call.
 * Prepare also records which prepared entry (kgc_native_entry) fits the
 * method: compiled code calls that stub directly, with arguments and result
 * in registers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native_internal.h"

#if defined(__x86_64__) || defined(__aarch64__)
#define NATIVE_DIRECT 1
#else
#define NATIVE_DIRECT 0
#endif
#define NINT 6
#define NFP 8

int kgcn_force_ffi;

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

typedef uint64_t u64;
union fpreg {
	double d;
	float f;
	u64 u;
};

/* ------------------------------------------------------------ preparation */

static ffi_type *ffi_of(unsigned t)
{
	switch (t) {
	case NT_VOID: return &ffi_type_void;
	case NT_Z: return &ffi_type_uint8;
	case NT_B: return &ffi_type_sint8;
	case NT_C: return &ffi_type_uint16;
	case NT_S: return &ffi_type_sint16;
	case NT_I: return &ffi_type_sint32;
	case NT_J: return &ffi_type_sint64;
	case NT_F: return &ffi_type_float;
	case NT_D: return &ffi_type_double;
	default: return &ffi_type_pointer;
	}
}

static const char *type_word(unsigned t)
{
	static const char *const w[NT_COUNT] = {
		"void", "boolean", "byte", "char", "short", "int", "long", "float",
		"double", "a reference", "an array", "a reference array",
	};
	return t < NT_COUNT ? w[t] : "?";
}

/* 81 lines on purpose: the whole call sequence in one frame (the bench's (b)-(c) path). */
static int invoke_regular(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			  const union kgc_value *args, union kgc_value *res, void *fn);
/* 81 lines on purpose: the whole call sequence in one frame (the bench's (b)-(c) path). */
static int invoke_critical(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			   const union kgc_value *args, union kgc_value *res, void *fn);
static int invoke_crit_a1_i32(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			      const union kgc_value *args, union kgc_value *res, void *fn);
static int invoke_crit_v_v(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			   const union kgc_value *args, union kgc_value *res, void *fn);

/*
 * Specialised invokers, keyed by shape (fingerprint | flags << 60). The
 * fingerprint ignores array element types: ([B)I and ([I)I share one.
 */
#define FP0(ret) (NATIVE_FP_VALID | (uint64_t)(ret))
#define FP1(ret, p0) (NATIVE_FP_VALID | (uint64_t)(ret) | (1ull << 4) | ((uint64_t)(p0) << 8))
#define CRIT_SHAPE(fp) ((fp) | ((uint64_t)(KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL) << 60))

static const struct {
	uint64_t shape;
	native_invoker invoke;
} special[] = {
	{ CRIT_SHAPE(FP1(NT_I, NT_PARR)), invoke_crit_a1_i32 },	/* ([X)I */
	{ CRIT_SHAPE(FP0(NT_VOID)), invoke_crit_v_v },			/* ()V */
};

/* The prepared entry (kgc_native_entry) that fits m, from its plan. */
static uint8_t entry_kind_of(const struct kgc_method *m)
{
	const struct native_sig *s = &m->sig;
	bool crit = m->flags & KGC_NATIVE_CRITICAL, direct = m->call_kind != NC_FFI;

	if (!(m->flags & KGC_NATIVE_STATIC))
		return EK_NONE;
	if (s->nparams == 0 && s->ret == NT_VOID)
		return !direct ? EK_V_GENERIC : crit ? EK_CRIT_V : EK_REG_V;
	if (s->nparams == 1 && s->ret == NT_I &&
	    (s->types[0] == NT_OBJ || s->types[0] == NT_PARR || s->types[0] == NT_RARR))
		return !direct ? EK_L_I_GENERIC : crit ? EK_CRIT_L_I : EK_REG_L_I;
	return EK_NONE;
}

/* A critical native: static, a primitive result, only primitives and
 * primitive arrays as parameters. true (with the reason in err) if not. */
static bool critical_shape_bad(const struct kgc_method *m, char *err, size_t errsz)
{
	const struct native_sig *s = &m->sig;

	if (!(m->flags & KGC_NATIVE_STATIC)) {
		snprintf(err, errsz, "a critical native must be static");
		return true;
	}
	if (s->ret > NT_D) {
		snprintf(err, errsz, "a critical native cannot return %s", type_word(s->ret));
		return true;
	}
	for (unsigned i = 0; i < s->nparams; i++)
		if (s->types[i] == NT_OBJ || s->types[i] == NT_RARR) {
			snprintf(err, errsz, "a critical native takes only primitives "
				 "and primitive arrays; parameter %u is %s", i + 1,
				 type_word(s->types[i]));
			return true;
		}
	return false;
}

/* shape = fingerprint + flags: selects a specialised invoker, if any. */
static void choose_invoker(struct kgc_method *m)
{
	m->shape = m->sig.fingerprint ? m->sig.fingerprint | ((uint64_t)m->flags << 60) : 0;
	m->invoke = (m->flags & KGC_NATIVE_CRITICAL) ? invoke_critical : invoke_regular;
	m->ekind = entry_kind_of(m);
	if (m->call_kind != NC_FFI)
		for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
			if (m->shape == special[i].shape) {
				m->invoke = special[i].invoke;
				break;
			}
}

int kgcn_method_prepare(struct kgc_method *m, char *err, size_t errsz)
{
	const struct native_sig *s = &m->sig;
	bool crit = m->flags & KGC_NATIVE_CRITICAL;
	unsigned ni = 0, nf = 0, nc = 0, nrefs = 1, narr = 0;
	ffi_status st;

	if (crit && critical_shape_bad(m, err, errsz))
		return -EINVAL;
	m->ops = calloc(s->nparams + 1, sizeof(*m->ops));
	m->atypes = calloc(2 * s->nparams + 3, sizeof(*m->atypes));
	if (!m->ops || !m->atypes) {
		snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	if (!crit) {		/* env, class or receiver handle */
		m->atypes[nc++] = &ffi_type_pointer;
		m->atypes[nc++] = &ffi_type_pointer;
		ni = 2;
	}
	for (unsigned i = 0; i < s->nparams; i++) {
		struct native_plan_op *op = &m->ops[i];
		unsigned ty = s->types[i];

		op->type = (uint8_t)ty;
		op->elem = s->elems[i];
		op->carg = (uint16_t)nc;
		switch (ty) {
		case NT_F:
		case NT_D:
			op->op = ty == NT_F ? OP_F32 : OP_F64;
			op->reg = (uint16_t)nf++;
			m->atypes[nc++] = ffi_of(ty);
			break;
		case NT_OBJ:
		case NT_RARR:
		case NT_PARR:
			if (crit) {
				op->op = OP_CRIT_ARR;
				op->reg = (uint16_t)ni;
				ni += 2;
				m->atypes[nc++] = &ffi_type_sint32;
				m->atypes[nc++] = &ffi_type_pointer;
				narr++;
			} else {
				op->op = OP_REF;
				op->reg = (uint16_t)ni++;
				op->slot = (uint16_t)nrefs++;
				m->atypes[nc++] = &ffi_type_pointer;
			}
			break;
		default:
			op->op = OP_INT_S;
			op->reg = (uint16_t)ni++;
			m->atypes[nc++] = ffi_of(ty);
			break;
		}
	}
	m->nint = (uint8_t)(ni > 255 ? 255 : ni);
	m->nfp = (uint8_t)(nf > 255 ? 255 : nf);
	m->narr = (uint8_t)narr;
	m->nrefs = (uint16_t)nrefs;
	m->ncargs = (uint16_t)nc;
	if (NATIVE_DIRECT && !kgcn_force_ffi && ni <= NINT && nf == 0)
		m->call_kind = NC_INT6;
	else if (NATIVE_DIRECT && !kgcn_force_ffi && ni <= NINT && nf <= NFP)
		m->call_kind = NC_REG;
	else
		m->call_kind = NC_FFI;

	/* The cif is prepared for every method: it is the reference path. */
	st = ffi_prep_cif(&m->cif, FFI_DEFAULT_ABI, nc, ffi_of(s->ret), m->atypes);
	if (st != FFI_OK) {
		snprintf(err, errsz, "libffi cannot describe this call (status %d)", (int)st);
		return -EINVAL;
	}
	choose_invoker(m);
	return 0;
}

void kgcn_method_unprepare(struct kgc_method *m)
{
	free(m->ops);
	free(m->atypes);
	m->ops = NULL;
	m->atypes = NULL;
}

/* ------------------------------------------------------------- marshalling */

static inline u64 widen(unsigned ty, const union kgc_value *v)
{
	switch (ty) {
	case NT_Z: return v->z;
	case NT_B: return (u64)(int64_t)v->b;
	case NT_C: return v->c;
	case NT_S: return (u64)(int64_t)v->s;
	case NT_I: return (u64)(int64_t)v->i;
	default: return (u64)v->j;
	}
}

/* Raw return of a direct or ffi call, before conversion to a kgc_value. */
union rawret {
	u64 u;
	ffi_arg a;
	float f;
	double d;
	void *p;
};

#define I6 u64, u64, u64, u64, u64, u64
#define A6 ia[0], ia[1], ia[2], ia[3], ia[4], ia[5]
#define D8 double, double, double, double, double, double, double, double
#define F8 fa[0].d, fa[1].d, fa[2].d, fa[3].d, fa[4].d, fa[5].d, fa[6].d, fa[7].d

/* Calls fn with integer registers ia and (NC_REG) fp registers fa. */
static inline void call_direct(void *fn, unsigned kind, unsigned ret, const u64 *ia,
			       const union fpreg *fa, union rawret *r)
{
	if (kind == NC_INT6) {
		switch (ret) {
		case NT_VOID: ((void (*)(I6))fn)(A6); break;
		case NT_Z: r->u = ((uint8_t (*)(I6))fn)(A6); break;
		case NT_B: r->u = (u64)((int8_t (*)(I6))fn)(A6); break;
		case NT_C: r->u = ((uint16_t (*)(I6))fn)(A6); break;
		case NT_S: r->u = (u64)((int16_t (*)(I6))fn)(A6); break;
		case NT_I: r->u = (u64)((int32_t (*)(I6))fn)(A6); break;
		case NT_J: r->u = (u64)((int64_t (*)(I6))fn)(A6); break;
		case NT_F: r->f = ((float (*)(I6))fn)(A6); break;
		case NT_D: r->d = ((double (*)(I6))fn)(A6); break;
		default: r->p = ((void *(*)(I6))fn)(A6); break;
		}
	} else {
		switch (ret) {
		case NT_VOID: ((void (*)(I6, D8))fn)(A6, F8); break;
		case NT_Z: r->u = ((uint8_t (*)(I6, D8))fn)(A6, F8); break;
		case NT_B: r->u = (u64)((int8_t (*)(I6, D8))fn)(A6, F8); break;
		case NT_C: r->u = ((uint16_t (*)(I6, D8))fn)(A6, F8); break;
		case NT_S: r->u = (u64)((int16_t (*)(I6, D8))fn)(A6, F8); break;
		case NT_I: r->u = (u64)((int32_t (*)(I6, D8))fn)(A6, F8); break;
		case NT_J: r->u = (u64)((int64_t (*)(I6, D8))fn)(A6, F8); break;
		case NT_F: r->f = ((float (*)(I6, D8))fn)(A6, F8); break;
		case NT_D: r->d = ((double (*)(I6, D8))fn)(A6, F8); break;
		default: r->p = ((void *(*)(I6, D8))fn)(A6, F8); break;
		}
	}
}

/* Stores a primitive raw return into res (by Java type). */
static inline void store_prim(unsigned ret, const union rawret *r, union kgc_value *res)
{
	switch (ret) {
	case NT_VOID: break;
	case NT_Z: res->z = (uint8_t)r->u; break;
	case NT_B: res->b = (int8_t)r->u; break;
	case NT_C: res->c = (uint16_t)r->u; break;
	case NT_S: res->s = (int16_t)r->u; break;
	case NT_I: res->i = (int32_t)r->u; break;
	case NT_J: res->j = (int64_t)r->u; break;
	case NT_F: res->f = r->f; break;
	case NT_D: res->d = r->d; break;
	}
}

/*
 * The C argument vector of one call. Direct kinds fill ia/fa; NC_FFI fills
 * cv (one 8-byte cell per C argument, value in its low bytes) and av.
 */
struct cargs {
	u64 ia[NINT];
	union fpreg fa[NFP];
	u64 *cv;
	void **av;
};

static inline void put_int(struct kgc_method *m, struct cargs *c, unsigned reg,
			   unsigned cslot, u64 v)
{
	if (m->call_kind == NC_FFI)
		c->cv[cslot] = v;
	else
		c->ia[reg] = v;
}

/* Places a float/double argument: its C cell (libffi) or its FP register. */
static inline void put_fp(struct kgc_method *m, struct cargs *c,
			  const struct native_plan_op *op, const union kgc_value *v)
{
	if (op->op == OP_F32) {
		if (m->call_kind == NC_FFI) {
			c->cv[op->carg] = 0;
			memcpy(&c->cv[op->carg], &v->f, sizeof(float));
		} else {
			c->fa[op->reg].u = 0;
			c->fa[op->reg].f = v->f;
		}
	} else if (m->call_kind == NC_FFI) {
		memcpy(&c->cv[op->carg], &v->d, sizeof(double));
	} else {
		c->fa[op->reg].d = v->d;
	}
}

static void call_any(struct kgc_method *m, void *fn, struct cargs *c, union rawret *r)
{
	if (m->call_kind != NC_FFI) {
		call_direct(fn, m->call_kind, m->sig.ret, c->ia, c->fa, r);
		return;
	}
	for (unsigned i = 0; i < m->ncargs; i++)
		c->av[i] = &c->cv[i];
	r->u = 0;
	ffi_call(&m->cif, FFI_FN(fn), r, c->av);
	/* libffi widens integral returns to ffi_arg: the low bytes are the value */
}

/* --------------------------------------------------------- regular natives */

static int invoke_regular(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			  const union kgc_value *args, union kgc_value *res, void *fn)
{
	const unsigned np = m->sig.nparams, ret = m->sig.ret;
	const uint32_t cap = m->nrefs + 1 + NATIVE_LOCAL_CAPACITY;
	kgc_obj slots[cap];
	u64 cv[m->call_kind == NC_FFI ? m->ncargs + 1 : 1];
	void *av[m->call_kind == NC_FFI ? m->ncargs + 1 : 1];
	struct cargs c = { .cv = cv, .av = av };
	struct kgc_frame frame;
	struct native_env env;
	union rawret r = { 0 };
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

	put_int(m, &c, 0, 0, (u64)(uintptr_t)&env);
	put_int(m, &c, 1, 1, (m->flags & KGC_NATIVE_STATIC) ? (u64)(uintptr_t)m->owner
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
	if (unlikely(env.exc_pending)) {
		/* still rooted by the frame while the handle is made */
		kgcn_exception_set(t, slots[env.exc_slot], env.exc_msg);
		env.exc_msg = NULL;
		rc = -EPROTO;
	}
	free(env.exc_msg);
	kgcn_env_pop_locals(&env);
	kgc_frame_pop(t, &frame);
	return rc;
}

/* -------------------------------------------------------- critical natives */

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

static int invoke_critical(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
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

static __attribute__((noinline)) int crit_a1_i32_too_long(kgc_thread *t, struct kgc_method *m)
{
	kgc_ext_cn_exit(t);
	return crit_fail(t, m, 0, "longer than 2^31-1 elements");
}

/*
 * ([X)I shape: one primitive array, int result - the bench's sum. Slow
 * cases are tail calls, so the common path saves few registers.
 */
static int invoke_crit_a1_i32(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			      const union kgc_value *args, union kgc_value *res, void *fn)
{
	kgc_obj a = args[0].l;
	size_t len;
	void *p;
	int32_t v;

	if (unlikely(!a || !(p = kgc_ext_cn_enter(t, a, &len))))
		return crit_a1_i32_slow(t, m, fn, a, res);
	if (unlikely(len > INT32_MAX))
		return crit_a1_i32_too_long(t, m);
	v = ((int32_t (*)(int32_t, void *))fn)((int32_t)len, p);
	if (res)
		res->i = v;
	kgc_ext_cn_exit(t);
	return 0;
}

/* ()V: the empty critical call. */
static int invoke_crit_v_v(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			   const union kgc_value *args, union kgc_value *res, void *fn)
{
	kgc_enter_native(t);
	((void (*)(void))fn)();
	kgc_leave_native(t);
	return 0;
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
		int rc = kgcn_method_link(m);

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

NATIVE_API int kgc_native_call(kgc_thread *t, kgc_method *m, kgc_obj receiver,
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
	default:
		return 0;
	}
}

static const char *shape_name(unsigned shape)
{
	switch (shape) {
	case KGC_NATIVE_SHAPE_V: return "KGC_NATIVE_SHAPE_V (static ()V)";
	case KGC_NATIVE_SHAPE_L_I: return "KGC_NATIVE_SHAPE_L_I (static, one reference, int result)";
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

/*
 * A regular static native with no or one reference argument, called with
 * the frame of invoke_regular laid out at compile time: slot 0 the (absent)
 * receiver, then the argument, then the pending-exception slot, then room
 * for local refs.
 */
static inline __attribute__((always_inline)) int
reg_entry_call(kgc_thread *t, struct kgc_method *m, void *fn, bool one_ref, kgc_obj arg,
	       int32_t *res)
{
	const uint32_t nrefs = one_ref ? 2 : 1;
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
	if (one_ref)
		v = ((int32_t (*)(kgc_env *, kgc_jclass, kgc_jobject))fn)(
			(kgc_env *)&env, m->owner, arg ? &slots[1] : NULL);
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
	return reg_entry_call(t, m, fn, false, NULL, NULL);
}

static int entry_reg_l_i(kgc_thread *t, kgc_method *m, kgc_obj arg, int32_t *res)
{
	void *fn = entry_fn(m, EK_REG_L_I);

	if (unlikely(!fn))
		return entry_l_i_generic(t, m, arg, res);
	return reg_entry_call(t, m, fn, true, arg, res);
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
		return crit_a1_i32_too_long(t, m);
	v = ((int32_t (*)(int32_t, void *))fn)((int32_t)len, p);
	if (res)	/* before the exit: v need not survive it */
		*res = v;
	kgc_ext_cn_exit(t);
	return 0;
}

NATIVE_API int kgc_native_entry(kgc_method *m, enum kgc_native_shape shape,
				union kgc_native_entry *out)
{
	bool checked;
	unsigned have;
	int rc;

	if (!m || !out) {
		kgcn_error("kgc_native_entry: NULL %s", m ? "out" : "method");
		return -EINVAL;
	}
	if (shape != KGC_NATIVE_SHAPE_V && shape != KGC_NATIVE_SHAPE_L_I) {
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
		rc = kgcn_method_link(m);
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
	} else {
		if (checked || m->ekind == EK_L_I_GENERIC)
			out->l_i = entry_l_i_generic;
		else
			out->l_i = m->ekind == EK_CRIT_L_I ? entry_crit_l_i : entry_reg_l_i;
	}
	return 0;
}

/* ------------------------------------------------------ pending exceptions */

/*
 * The pending exception of a kgc_thread: allocated on its first exception,
 * kept as the thread's data in kgcn_ext's slot (kgc_ext.h), freed by
 * kgc_native_exception_clear or by kgcn_ext's thread_detach hook, which
 * kgc_thread_detach runs from whichever OS thread detaches t.
 */
struct native_exc {
	kgc_handle h;		/* roots the exception object */
	char *msg;		/* ThrowNew message, or NULL */
	bool pending;
};

int kgcn_exception_set(kgc_thread *t, kgc_obj exc, char *msg)
{
	struct native_exc *e = kgc_ext_thread_get(t, &kgcn_ext);

	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || kgc_ext_thread_set(t, &kgcn_ext, e)) {
			free(e);
			free(msg);
			return -ENOMEM;
		}
	}
	if (!e->h) {
		e->h = kgc_handle_new(t, exc);
		if (!e->h) {
			free(msg);
			return -ENOMEM;
		}
	} else {
		kgc_handle_set(e->h, exc);
	}
	free(e->msg);
	e->msg = msg;
	e->pending = true;
	return 0;
}

NATIVE_API kgc_obj kgc_native_exception(kgc_thread *t)
{
	const struct native_exc *e = t ? kgc_ext_thread_get(t, &kgcn_ext) : NULL;

	if (!e || !e->pending)
		return NULL;
	return kgc_handle_get(e->h);
}

NATIVE_API const char *kgc_native_exception_message(kgc_thread *t)
{
	const struct native_exc *e = t ? kgc_ext_thread_get(t, &kgcn_ext) : NULL;

	if (!e || !e->pending)
		return NULL;
	return e->msg;
}

void kgcn_exception_free(kgc_thread *t, void *data)
{
	struct native_exc *e = data;

	if (e->h)
		kgc_handle_free(t, e->h);
	free(e->msg);
	free(e);
}

NATIVE_API void kgc_native_exception_clear(kgc_thread *t)
{
	struct native_exc *e = t ? kgc_ext_thread_get(t, &kgcn_ext) : NULL;

	if (!e)
		return;
	kgc_ext_thread_set(t, &kgcn_ext, NULL);
	kgcn_exception_free(t, e);
}
