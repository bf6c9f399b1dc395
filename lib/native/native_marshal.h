/* SPDX-License-Identifier: MIT */
/*
 * native_marshal.h - how a native call's arguments reach the callee, shared
 * by the invokers (native_call.c regular, native_crit.c critical) and the
 * plans that choose them (native_plan.c): the direct call through a pointer
 * of type R(*)(6 x uint64_t[, 8 x double]), the libffi call, the C argument
 * vector and the conversion of the raw return. Inline, so every invoker
 * keeps its whole call sequence in one frame.
 */
#ifndef KGC_NATIVE_MARSHAL_H
#define KGC_NATIVE_MARSHAL_H
#include <string.h>

#include "native_internal.h"

#if defined(__x86_64__) || defined(__aarch64__)
#define NATIVE_DIRECT 1
#else
#define NATIVE_DIRECT 0
#endif
#define NINT 6
#define NFP 8

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

typedef uint64_t u64;
union fpreg {
	double d;
	float f;
	u64 u;
};

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

/*
 * Every register slot zero (those a call does not use are passed too), with
 * plain stores: a zeroing initializer of the struct compiles to rep stos,
 * a third of a trivial regular native's call (issue 29's compressBound).
 */
static inline __attribute__((always_inline)) void cargs_init(struct cargs *c, u64 *cv, void **av)
{
	for (unsigned i = 0; i < NINT; i++)
		c->ia[i] = 0;
	for (unsigned i = 0; i < NFP; i++)
		c->fa[i].u = 0;
	c->cv = cv;
	c->av = av;
}

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

static inline void call_any(struct kgc_method *m, void *fn, struct cargs *c, union rawret *r)
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

/* The invokers prepare chooses from (m->invoke): regular (native_call.c),
 * critical and the specialised critical shapes (native_crit.c). */
int kgcn_invoke_regular(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			const union kgc_value *args, union kgc_value *res, void *fn);
/* The regular invoker when the heap has env ops (kgc_native_set_env_ops). */
int kgcn_invoke_env(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
		    const union kgc_value *args, union kgc_value *res, void *fn);
int kgcn_invoke_critical(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			 const union kgc_value *args, union kgc_value *res, void *fn);
int kgcn_invoke_crit_a1_i32(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			    const union kgc_value *args, union kgc_value *res, void *fn);
int kgcn_invoke_crit_v_v(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			 const union kgc_value *args, union kgc_value *res, void *fn);
/* the ([X)I entry stub's failure once it pinned an over-long array */
int kgcn_crit_a1_i32_too_long(kgc_thread *t, struct kgc_method *m);

#endif
