/* SPDX-License-Identifier: MIT */
/*
 * native_internal.h - internals of libkgc-native, the native-call bridge
 * (lib/native/). It is built on the public core API (kgc.h) and the core's
 * extension hooks (kgc_ext.h) only - never gc_internal.h:
 *   - the per-heap registry is the bridge's data in the heap's extension
 *     slot (kgcn_ext, native_registry.c); kgc_heap_destroy runs its
 *     heap_destroy hook;
 *   - a thread's pending exception is its data in the thread's slot of
 *     native_exc.c's own extension; the thread_detach hook frees it;
 *   - critical natives with one array pin it with kgc_ext_cn_enter/_exit.
 *
 * Layers, bottom up: a file calls only files below it (the nm call graph
 * has no cycle; ARCHITECTURE.md's native section has the same table). What
 * a lower layer needs from a higher one is passed down as a callback (the
 * registry's lazy lookup: native_registry.link).
 *
 *   0 native_sig.c       descriptor parser, 64-bit fingerprint, JNI name mangling
 *   0 native_err.c       kgcn_error: this thread's message
 *   1 native_exc.c       a thread's pending exception
 *   1 native_env.c       kgc_env_fns: the callbacks a regular native receives
 *   2 native_crit.c      critical-native invokers
 *   3 native_call.c      kgc_native_call, the regular invoker, prepared entries
 *   4 native_plan.c      call plans: argument placement, call kind, invoker and
 *                        prepared entry chosen; the ffi_cif (native_marshal.h:
 *                        the direct and libffi calls the invokers share)
 *   5 native_registry.c  per-heap registry: owners, methods, registration,
 *                        lazy lookup (dlsym), loaded libraries; the API
 *
 * Binding happens once per method (kgcn_method_prepare): the signature is
 * parsed into a struct native_sig, a per-parameter call plan and, when no
 * direct trampoline fits, a prepared ffi_cif. The call path only reads these.
 */
#ifndef KGC_NATIVE_INTERNAL_H
#define KGC_NATIVE_INTERNAL_H

#include <ffi.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <kgc_native.h>
#include <kgc_ext.h>

#include "kgc_api.h"	/* KGC_API: public entry points (built with -fvisibility=hidden) */

/* ------------------------------------------------------------- signatures */

/*
 * Java-level type codes (4 bits: they are the fingerprint's digits).
 * NT_PARR is a one-dimensional primitive array (element in elem[]), NT_RARR
 * any other array ([L...; or [[...).
 */
enum native_type {
	NT_VOID = 0, NT_Z, NT_B, NT_C, NT_S, NT_I, NT_J, NT_F, NT_D,
	NT_OBJ, NT_PARR, NT_RARR,
	NT_COUNT,
};

#define NATIVE_MAX_SLOTS	255	/* JVMS 4.3.3: parameter slots incl. this */
#define NATIVE_FP_MAX_PARAMS	13	/* params that fit in a fingerprint */

/*
 * Fingerprint (seed 003: a signature compressed into one word so the call
 * path never re-reads the string). Layout:
 *   bits  0..3   return type (enum native_type)
 *   bits  4..7   parameter count (0..13)
 *   bits  8..59  parameter i at bits 8+4i (enum native_type)
 *   bit  63      set: valid. 0 = too many parameters (no fingerprint).
 * Two signatures that differ only in class names or primitive array element
 * types share a fingerprint (they share the calling convention).
 */
#define NATIVE_FP_VALID		(1ull << 63)
#define NATIVE_FP_RET(fp)	((unsigned)((fp) & 0xf))
#define NATIVE_FP_NPARAMS(fp)	((unsigned)(((fp) >> 4) & 0xf))
#define NATIVE_FP_PARAM(fp, i)	((unsigned)(((fp) >> (8 + 4 * (i))) & 0xf))

struct native_sig {
	uint16_t nparams;
	uint16_t slots;		/* JVM parameter slots (J/D count 2) */
	uint8_t ret;		/* enum native_type */
	uint8_t ret_elem;	/* enum kgc_prim if ret == NT_PARR */
	uint8_t *types;		/* nparams enum native_type */
	uint8_t *elems;		/* nparams enum kgc_prim (NT_PARR only) */
	uint64_t fingerprint;
};

/*
 * Parse a JNI method descriptor. On error returns -EINVAL and writes a
 * message ("bad syntax at column 4: expected ';' ...") into err.
 * Free with kgcn_sig_free.
 */
int kgcn_sig_parse(const char *desc, struct native_sig *out, char *err, size_t errsz);
void kgcn_sig_free(struct native_sig *sig);
uint64_t kgcn_sig_fingerprint(const struct native_sig *sig);
/* Type char -> enum kgc_prim, or -1. */
int kgcn_prim_of_char(char c);
size_t kgcn_prim_size(int prim);

/*
 * JNI short / long mangled names ("Java_" prefix included, or prefix
 * "JavaCritical_"). owner in internal form ("pkg/sub/Cls"), names in
 * (modified) UTF-8. Returns the length it needs (like snprintf) or -EINVAL
 * on malformed UTF-8.
 */
int kgcn_mangle(char *buf, size_t size, const char *prefix, const char *owner,
		  const char *name, const char *desc /* NULL = short form */);

/* --------------------------------------------------------------- registry */

struct native_registry;

struct kgc_native_class {
	struct native_registry *reg;
	struct kgc_native_class *next;
	char *name;			/* internal form, "pkg/Cls" */
};

/* How one Java parameter travels to C (built once per method). */
enum native_op {
	OP_INT_S,	/* Z B C S I J: value already widened, to int reg/slot */
	OP_F32,		/* F: fp reg */
	OP_F64,		/* D: fp reg */
	OP_REF,		/* L / arrays (regular): handle to a frame slot */
	OP_CRIT_ARR,	/* primitive array (critical): (jint len, void *ptr) */
};

struct native_plan_op {
	uint8_t op;
	uint8_t type;		/* enum native_type */
	uint8_t elem;		/* enum kgc_prim for arrays */
	uint8_t pad;
	uint16_t reg;		/* int/fp register index (direct) */
	uint16_t slot;		/* frame slot (OP_REF) */
	uint16_t carg;		/* C argument index (ffi; arrays: the length) */
};

struct kgc_method;
/* fn (the bound entry) last: kgc_native_call passes its own arguments on in place */
typedef int (*native_invoker)(kgc_thread *t, struct kgc_method *m, kgc_obj recv,
			      const union kgc_value *args, union kgc_value *res,
			      void *fn);

enum native_call_kind {
	NC_INT6,	/* <= 6 integer-class C args, no fp args: direct */
	NC_REG,		/* <= 6 integer-class + <= 8 fp-class C args: direct */
	NC_FFI,		/* anything else: prepared ffi_cif */
};

/*
 * Which prepared entry (kgc_native_entry) fits a method: its public shape,
 * regular or critical, and whether the direct stub applies (a register
 * trampoline) or the entry goes through the generic invoker (libffi forced).
 */
enum native_entry_kind {
	EK_NONE,	/* no prepared shape: kgc_native_call only */
	EK_V_GENERIC,	/* static ()V through m->invoke */
	EK_REG_V,	/* regular static ()V, direct */
	EK_CRIT_V,	/* critical ()V, direct */
	EK_L_I_GENERIC,	/* static (ref)I through m->invoke */
	EK_REG_L_I,	/* regular static (ref)I, direct */
	EK_CRIT_L_I,	/* critical ([X)I, direct */
	EK_I_I_GENERIC,	/* static (I)I through m->invoke */
	EK_REG_I_I,	/* regular static (I)I, direct */
	EK_CRIT_I_I,	/* critical (I)I, direct */
	EK_ENV_I_I,	/* regular static (I)I, direct, the env ops' env */
};

struct kgc_method {
	struct kgc_native_class *owner;
	struct kgc_method *hnext;	/* registry hash chain */
	char *name;
	char *desc;
	uint32_t flags;			/* KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL */
	bool registered;		/* bound by kgc_native_register */
	void *fn;			/* bound entry, NULL = not linked (atomic) */

	struct native_sig sig;
	uint64_t shape;			/* fingerprint | flags << 60: picks the invoker */
	uint8_t ekind;			/* enum native_entry_kind: kgc_native_entry's stub */

	/* call plan */
	native_invoker invoke;
	uint8_t call_kind;		/* enum native_call_kind */
	uint8_t nint, nfp;		/* direct: registers used */
	uint8_t narr;			/* critical: array params */
	uint16_t nrefs;			/* regular: frame slots for ref args (+recv) */
	uint16_t ncargs;		/* C-level argument count */
	struct native_plan_op *ops;	/* sig.nparams */

	/* libffi: prepared for every method (the reference path), used by NC_FFI */
	ffi_cif cif;
	ffi_type **atypes;
};

struct native_library {
	struct native_library *next;
	void *dl;
	char *path;
};

struct native_registry {
	kgc_heap *heap;
	bool checked;			/* the heap's KGC_CHECK */
	pthread_mutex_t lock;
	struct kgc_native_class *classes;
	struct native_library *libs, **libs_tail;
	struct kgc_method **buckets;
	size_t nbuckets, nmethods;
	/* kgc_native_set_env_ops: set before any method exists, then read-only */
	struct kgc_native_env_ops env_ops;
	void *env_ctx;
	bool has_env_ops;
	/* Lazy lookup (dlsym) and cache in m->fn: 0 / -ENOENT. The registry's
	 * own function, passed down to the call layer (which may not call up). */
	int (*link)(struct kgc_method *m);
};

/* Set kgc_last_error for the native bridge (printf-style). */
void kgcn_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reads back the message kgcn_error set on this thread. */
const char *kgcn_error_msg(void);

/* Tests: registries alive (kgc_native_heap_release / kgc_heap_destroy free them). */
unsigned kgcn_registry_count(void);

/* Tests/bench: methods prepared while set use libffi for every call. */
extern int kgcn_force_ffi;

/* Builds the call plan + cif of m from m->sig and m->flags. -errno. */
int kgcn_method_prepare(struct kgc_method *m, char *err, size_t errsz);
void kgcn_method_unprepare(struct kgc_method *m);

/* ----------------------------------------------------------------- env */

/* The env a regular native receives; lives on the invoker's C stack. */
struct native_env {
	const struct kgc_env_fns *fns;	/* must be first: kgc_env * == this */
	kgc_thread *t;
	struct kgc_method *m;
	struct kgc_frame *frame;	/* argument frame (top until locals spill) */
	kgc_obj *slots;			/* its slots */
	uint32_t cap;			/* slots capacity of the argument frame */
	uint32_t exc_slot;		/* index of the pending-exception slot */
	struct native_lchunk *chunks;	/* spilled local-ref frames (LIFO) */
	char *exc_msg;			/* ThrowNew message (malloc'd) */
	bool exc_pending;
};

#define NATIVE_LOCAL_CAPACITY	16	/* JNI: at least 16 local refs */

extern const struct kgc_env_fns kgcn_env_fns;

/* New local ref for obj in env (managed state). NULL obj -> NULL ref. */
kgc_jobject kgcn_env_new_local(struct native_env *env, kgc_obj obj);
/* Pops spilled local chunks (managed state). */
void kgcn_env_pop_locals(struct native_env *env);

/* Sets the pending exception of t after a native call (-EPROTO); it is t's
 * data in native_exc.c's own extension slot (freed at detach). */
int kgcn_exception_set(kgc_thread *t, kgc_obj exc, char *msg /* owned */);

#endif
