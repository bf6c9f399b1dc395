/* SPDX-License-Identifier: MIT */
/*
 * kgc_native.h - public API of libkgc-native, the JNI-like native-call
 * bridge of kgc. A separate library layered on libkgc (kgc.h, included
 * here): link with -lkgc-native -lkgc (pkg-config libkgc-native). libkgc
 * itself needs neither libffi nor libdl.
 *
 * The bridge's state for a heap (classes, methods, loaded libraries) lives
 * with the heap: kgc_heap_destroy frees it (kgc_native_heap_release frees it
 * earlier); a thread's pending exception dies with kgc_thread_detach.
 */
#ifndef KGC_NATIVE_H
#define KGC_NATIVE_H

#include <kgc.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KGC_NATIVE_VERSION_MAJOR 0
#define KGC_NATIVE_VERSION_MINOR 1

/* ------------------------------------------------------------ native calls */
/*
 * The native-call bridge (JNI-like). A runtime registers native methods per
 * owner class (kgc_native_register, like RegisterNatives) or lets them be
 * found lazily by their JNI-mangled name (dlsym over the process and the
 * libraries loaded with kgc_native_load_library), then calls them with
 * kgc_native_call. Signatures use JNI descriptor syntax ("(I[BJ)D",
 * "(Ljava/lang/String;)V"); they are parsed once, when the method is created,
 * into a 64-bit fingerprint, a call plan and (for shapes without a direct
 * trampoline) a prepared libffi call descriptor.
 *
 * C signature of a native for the Java descriptor (P1..Pn)R:
 *  - regular static:    R fn(kgc_env *env, kgc_jclass cls, P1..Pn)
 *  - regular instance:  R fn(kgc_env *env, kgc_jobject self, P1..Pn)
 *  - critical (static only, primitives and primitive arrays, no object
 *    return): R fn(P1..Pn) where each array parameter becomes two C
 *    parameters (int32_t length, T *elements) - HotSpot's JavaCritical_
 *    convention; a null array is passed as (0, NULL).
 * Java -> C types: Z uint8_t, B int8_t, C uint16_t, S int16_t, I int32_t,
 * J int64_t, F float, D double, L.../[... kgc_jobject (regular natives).
 *
 * Regular natives run in native state: their object arguments (and receiver)
 * are local handles - pointers to root slots that the collector updates, so
 * they stay valid when a collection moves the objects while the native runs.
 * Natives touch objects only through the env (each env function leaves
 * native state for its duration). Critical natives run in native state too,
 * with their arrays pinned: other threads keep allocating and collecting
 * while they run. (One-array critical natives pin by a per-thread slot the
 * collector treats as a pinning root; others through kgc_critical_get.
 * Both count in kgc_stats.critical_gets.)
 */

/* One argument or result, in Java order. */
union kgc_value {
	uint8_t z;
	int8_t b;
	uint16_t c;
	int16_t s;
	int32_t i;
	int64_t j;
	float f;
	double d;
	kgc_obj l;
};

/*
 * A reference handed to native code: a pointer to a root slot holding the
 * object (local handles: slots of the call's frame; global refs: kgc_handle
 * cells). NULL stands for the null reference. Like jobject: opaque to the
 * native, resolved only by the env.
 */
typedef kgc_obj *kgc_jobject;
/* The owner class passed to static regular natives (like jclass). */
typedef const struct kgc_native_class *kgc_jclass;
/* A bound native method (stable until kgc_native_heap_release or kgc_heap_destroy). */
typedef struct kgc_method kgc_method;

struct kgc_env_fns;
/* Natives receive kgc_env *env and call (*env)->Fn(env, ...), like JNIEnv. */
typedef const struct kgc_env_fns *kgc_env;

/* Mark native functions that lazy lookup must find (like JNIEXPORT). */
#define KGC_NATIVE_EXPORT __attribute__((visibility("default")))

#define KGC_ENV_VERSION 0x00010000

/*
 * Env callbacks. Functions returning kgc_jobject return a new local ref
 * (valid until the native returns; at least 16 per call without allocation)
 * or NULL on failure/null. Functions returning int return 0 or -errno with
 * kgc_last_error set. Field offsets are from the object start; type is a
 * descriptor char (Z B C S I J F D) checked against nothing but size.
 */
struct kgc_env_fns {
	uint32_t version;
	uint32_t reserved0;
	kgc_thread *(*GetThread)(kgc_env *env);
	const char *(*GetClassName)(kgc_env *env, kgc_jclass cls);

	kgc_jobject (*AllocObject)(kgc_env *env, kgc_type_id type);
	kgc_jobject (*NewArray)(kgc_env *env, kgc_type_id array_type, size_t length);
	kgc_type_id (*GetObjectType)(kgc_env *env, kgc_jobject obj);
	size_t (*GetArrayLength)(kgc_env *env, kgc_jobject array);

	int (*GetField)(kgc_env *env, kgc_jobject obj, size_t offset, char type,
			union kgc_value *out);
	int (*SetField)(kgc_env *env, kgc_jobject obj, size_t offset, char type,
			union kgc_value val);
	kgc_jobject (*GetObjectField)(kgc_env *env, kgc_jobject obj, size_t offset);
	int (*SetObjectField)(kgc_env *env, kgc_jobject obj, size_t offset,
			      kgc_jobject val);

	/* type: the array's element descriptor char (checked), like Get<T>ArrayRegion */
	int (*GetArrayRegion)(kgc_env *env, kgc_jobject array, char type,
			      size_t start, size_t len, void *buf);
	int (*SetArrayRegion)(kgc_env *env, kgc_jobject array, char type,
			      size_t start, size_t len, const void *buf);
	kgc_jobject (*GetObjectArrayElement)(kgc_env *env, kgc_jobject array, size_t index);
	int (*SetObjectArrayElement)(kgc_env *env, kgc_jobject array, size_t index,
				     kgc_jobject val);
	/* Pins the array (kgc_critical_get); no env call until the release. */
	void *(*GetPrimitiveArrayCritical)(kgc_env *env, kgc_jobject array, size_t *length);
	void (*ReleasePrimitiveArrayCritical)(kgc_env *env, kgc_jobject array,
					      void *elems, int mode);

	/* Exceptions: a pending exception makes kgc_native_call return -EPROTO. */
	int (*Throw)(kgc_env *env, kgc_jobject exc);
	/* Allocates an object of type and throws it; message kept beside it. */
	int (*ThrowNew)(kgc_env *env, kgc_type_id type, const char *message);
	int (*ExceptionCheck)(kgc_env *env);
	kgc_jobject (*ExceptionOccurred)(kgc_env *env);
	void (*ExceptionClear)(kgc_env *env);

	kgc_jobject (*NewGlobalRef)(kgc_env *env, kgc_jobject obj);
	void (*DeleteGlobalRef)(kgc_env *env, kgc_jobject ref);
	kgc_jobject (*NewLocalRef)(kgc_env *env, kgc_jobject obj);
	void (*DeleteLocalRef)(kgc_env *env, kgc_jobject ref);
	int (*IsSameObject)(kgc_env *env, kgc_jobject a, kgc_jobject b);
};

#define KGC_NATIVE_STATIC	(1u << 0)	/* no receiver */
#define KGC_NATIVE_CRITICAL	(1u << 1)	/* critical native (implies static) */

/* One entry of a registration table (like JNINativeMethod). */
struct kgc_native_method {
	const char *name;
	const char *signature;
	void *fnptr;
	uint32_t flags;
};

/*
 * Bind n methods of owner ("pkg/Cls"). The whole table is validated first;
 * nothing is bound if any entry fails: -EINVAL (bad descriptor: "bad syntax at
 * column N", "unknown type 'Q' at column N"; critical non-static or with a
 * reference parameter/return; NULL name/fnptr), -EEXIST (already registered,
 * or twice in the table). kgc_last_error names the method and the fault.
 */
int kgc_native_register(kgc_heap *heap, const char *owner,
			const struct kgc_native_method *table, size_t n);
/* Unbinds owner's registered methods (they fall back to lazy lookup). */
int kgc_native_unregister(kgc_heap *heap, const char *owner);

/*
 * The method owner.name with descriptor sig, created unbound if it was not
 * registered (flags must match an existing method's, else -EINVAL). An
 * unbound method is linked on its first call (or kgc_native_method_link) by
 * looking up Java_<mangled owner>_<mangled name> and then the overloaded
 * form ...__<mangled params> (JavaCritical_ prefix for critical methods).
 */
int kgc_native_method_find(kgc_heap *heap, const char *owner, const char *name,
			   const char *sig, uint32_t flags, kgc_method **out);
/* Link now: 0, or -ENOENT with the symbol names tried in kgc_last_error. */
int kgc_native_method_link(kgc_method *m);
/* The signature's 64-bit fingerprint (0: more than 13 parameters). */
uint64_t kgc_native_method_fingerprint(const kgc_method *m);
const char *kgc_native_class_name(kgc_jclass cls);

/* dlopen a library searched (after the process) by lazy lookup. */
int kgc_native_load_library(kgc_heap *heap, const char *path);

/*
 * Call m on thread t (managed state). args: sig's parameters in Java order
 * (references as kgc_obj, arrays for critical natives too); receiver for
 * instance methods (NULL -> -EINVAL), ignored for static ones; result may be
 * NULL for void. Returns 0, -ENOENT (lazy lookup failed), -EINVAL, or -EPROTO:
 * the native left an exception pending (fetch it with kgc_native_exception).
 * Arguments are trusted (the runtime's verifier vouches for them); in checked
 * mode (KGC_CHECK) array arguments are checked against the descriptor first.
 * An array passed to a critical native is kept alive and pinned for the
 * call even if no root holds it.
 */
int kgc_native_call(kgc_thread *t, kgc_method *m, kgc_obj receiver,
		    const union kgc_value *args, union kgc_value *result);

/*
 * Prepared entries: the per-method stub a runtime calls directly, the way a
 * JIT calls the stub it bound for a native. kgc_native_entry(m, shape, &e)
 * links m (like kgc_native_method_link) and returns in e a function typed
 * for shape, selected once for m's kind (regular or critical) and plan, so
 * that a call skips kgc_native_call's generic dispatch and argument vector:
 * arguments and result travel in registers.
 *
 *  KGC_NATIVE_SHAPE_V    static ()V, regular or critical:
 *                          rc = e.v(t, m);
 *  KGC_NATIVE_SHAPE_L_I  static, one reference parameter, int result:
 *                          rc = e.l_i(t, m, arg, &result);
 *                        regular: any reference/array parameter - (L...;)I,
 *                        ([I)I, ([[B)I; critical: one primitive array
 *                        ([I)I, ([B)I, ... passed as (len, elements).
 *  KGC_NATIVE_SHAPE_I_I  static (I)I, regular or critical, also a regular
 *                        native of a heap with env ops (libkgc-jni's JNIEnv):
 *                          rc = e.i_i(t, m, arg, &result);
 *
 * kgc_native_entry returns 0; -EINVAL for a NULL argument, an unknown shape
 * or a method of another shape (kgc_last_error says which shape the method
 * has and which the caller asked for); -ENOENT if lazy lookup fails.
 *
 * An entry is called exactly like kgc_native_call: t managed, the method
 * passed in m (any method of the entry's shape; NULL or a method of another
 * shape is refused with -EINVAL before anything runs), same results (0,
 * -EINVAL, -ENOENT if m was unregistered and lookup fails, -EPROTO for a
 * pending exception), same GC guarantees: a
 * critical native's array is pinned for the call even if no root holds it,
 * the thread is in native state while the native runs, and it blocks on
 * return while a collection is in progress. result may be NULL. On a
 * checked heap (KGC_CHECK) the entries check arguments as kgc_native_call
 * does. An entry stays valid until kgc_native_heap_release (or the heap is
 * destroyed); it follows re-registration of m.
 */
enum kgc_native_shape {
	KGC_NATIVE_SHAPE_V = 1,		/* static ()V */
	KGC_NATIVE_SHAPE_L_I = 2,	/* static (reference)I */
	KGC_NATIVE_SHAPE_I_I = 3,	/* static (I)I */
};

union kgc_native_entry {
	int (*v)(kgc_thread *t, kgc_method *m);
	int (*l_i)(kgc_thread *t, kgc_method *m, kgc_obj arg, int32_t *result);
	int (*i_i)(kgc_thread *t, kgc_method *m, int32_t arg, int32_t *result);
};

int kgc_native_entry(kgc_method *m, enum kgc_native_shape shape, union kgc_native_entry *out);

/*
 * Env providers: a library layered on the bridge that gives regular natives
 * another env (libkgc-jni: a binary-compatible JNIEnv) registers these
 * callbacks on a heap before any method of it is created (else -EBUSY).
 * Every regular native of the heap then runs as
 *   ret = fn(enter(...), cls_or_receiver, args...)
 * enter(ctx, t, owner, is_static, &cls): t managed, the call's argument
 *   frame pushed; returns the env pointer the native receives (NULL: the
 *   call fails with -ENOMEM, kgc_last_error set by enter) and, for a static
 *   native, in *cls the reference passed as its class argument.
 * leave(ctx, t, env, exc, &msg): t managed, after the native returned and
 *   its result was read; pops what enter pushed. If the native left an
 *   exception pending, stores it in *exc (a root slot), may set *msg
 *   (malloc'd, the bridge frees it) and returns 1: kgc_native_call then
 *   returns -EPROTO with it as kgc_native_exception. Else returns 0.
 * Critical natives are not affected. size: sizeof(struct
 * kgc_native_env_ops); reserved must be zero (-EINVAL otherwise).
 */
struct kgc_native_env_ops {
	uint32_t size;
	uint32_t reserved0;
	void *(*enter)(void *ctx, kgc_thread *t, kgc_jclass owner, int is_static, void **cls);
	int (*leave)(void *ctx, kgc_thread *t, void *env, kgc_obj *exc, char **msg);
	uint64_t reserved[2];
};

/* 0, -EINVAL (NULL heap/ops/callback, bad size, reserved nonzero),
 * -EBUSY (methods exist or ops already set), -ENOMEM. */
int kgc_native_set_env_ops(kgc_heap *heap, const struct kgc_native_env_ops *ops, void *ctx);

/* The exception pending on t after -EPROTO (a raw kgc_obj), or NULL. */
kgc_obj kgc_native_exception(kgc_thread *t);
/* Its ThrowNew message, or NULL. Valid until cleared. */
const char *kgc_native_exception_message(kgc_thread *t);
/*
 * Clears it. The pending exception belongs to the kgc_thread, not to the OS
 * thread running it: kgc_thread_detach clears it (from whichever OS thread
 * detaches t), so a thread attached later never sees it and the object is
 * no longer kept alive.
 */
void kgc_native_exception_clear(kgc_thread *t);

/* Frees the heap's classes, methods and libraries now (kgc_heap_destroy
 * does it otherwise); no call into the heap's natives may be running. */
void kgc_native_heap_release(kgc_heap *heap);

#ifdef __cplusplus
}
#endif

#endif /* KGC_NATIVE_H */
