/* SPDX-License-Identifier: MIT */
/*
 * native_plan.c - a native method's call plan.
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
 * chosen here, so kgc_native_call is one load and one indirect call. Prepare
 * also records which prepared entry (kgc_native_entry) fits the method.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "native_marshal.h"

int kgcn_force_ffi;

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
	{ CRIT_SHAPE(FP1(NT_I, NT_PARR)), kgcn_invoke_crit_a1_i32 },	/* ([X)I */
	{ CRIT_SHAPE(FP0(NT_VOID)), kgcn_invoke_crit_v_v },			/* ()V */
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
	if (s->nparams == 1 && s->ret == NT_I && s->types[0] == NT_I)
		return !direct ? EK_I_I_GENERIC : crit ? EK_CRIT_I_I : EK_REG_I_I;
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
	m->invoke = (m->flags & KGC_NATIVE_CRITICAL) ? kgcn_invoke_critical : kgcn_invoke_regular;
	m->ekind = entry_kind_of(m);
	if (m->owner->reg->has_env_ops && !(m->flags & KGC_NATIVE_CRITICAL)) {
		/* another env: every call through the hooked invoker */
		m->invoke = kgcn_invoke_env;
		if (m->ekind == EK_REG_V)
			m->ekind = EK_V_GENERIC;
		else if (m->ekind == EK_REG_L_I)
			m->ekind = EK_L_I_GENERIC;
		else if (m->ekind == EK_REG_I_I)
			m->ekind = EK_ENV_I_I;	/* the one hooked stub (issue 29) */
		return;
	}
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
