/* SPDX-License-Identifier: MIT */
/*
 * jni_internal.h - internals of libkgc-jni (lib/jni/), the JNIEnv of kgc.
 * Built on kgc.h, kgc_ext.h and kgc_native.h only, and the JDK's <jni.h>.
 *
 *   jni_table.c    the JNINativeInterface_ / JNIInvokeInterface_ tables:
 *                  every slot filled (jni_slots.h, generated from <jni.h>)
 *   jni_vm.c       the JavaVM: creation, destruction
 *   jni_env.c      per-thread envs, the bridge's env hooks
 *   jni_invoke.c   the invocation interface, GetVersion, GetJavaVM
 *   jni_refs.c     local frames, global and weak global references
 *   jni_arrays.c   primitive and object arrays, critical regions
 *   jni_utf.c      java/lang/String objects (UTF-16 in a char[]), modified UTF-8
 *   jni_strings.c  the JNI string functions
 *   jni_exc.c      pending exceptions, Throw/ThrowNew, FatalError
 *   jni_host.c     the default host: classes, fields, methods, core classes
 *   jni_classes.c  FindClass, GetObjectClass, IsInstanceOf, the IDs
 *   jni_calls.c    Call*Method, NewObject, field access (the host's IDs)
 *   jni_nio.c      direct byte buffers
 *   jni_loader.c   loading libraries, JNI_OnLoad, RegisterNatives
 *   jni_monitor.c  MonitorEnter/MonitorExit (by identity hash)
 *   jni_reflect.c  DefineClass (the host's), To/FromReflected*, GetModule
 *   jni_check.c    errors, fatal errors, checked mode's bookkeeping
 */
#ifndef KGC_JNI_INTERNAL_H
#define KGC_JNI_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <kgc_jni.h>
#include <kgc_ext.h>

#include "kgc_api.h"
#include "jni_slots.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* ------------------------------------------------------------ the host */

struct kgcj_class;

struct kgcj_field {
	struct kgcj_field *next;
	struct kgcj_class *cls;
	char *name, *sig;
	char type;			/* sig[0] ('[' and 'L' are references) */
	bool is_static;
	uint32_t offset;		/* instance: from the object start */
	jvalue sval;			/* static primitive */
	kgc_handle sref;		/* static reference */
};

struct kgcj_method {
	struct kgcj_method *next;
	struct kgcj_class *cls;
	char *name, *sig;
	uint32_t flags;			/* KGC_JNI_STATIC | KGC_JNI_NATIVE */
	kgc_jni_method_fn fn;
	void *data;
	char ret;			/* return type char */
	uint16_t nargs;
	char *args;			/* nargs type chars ('L' for any reference) */
};

struct kgcj_class {
	struct kgcj_class *next;
	struct kgcj_class *super;
	char *name;
	kgc_type_id type;		/* instances (0: none, e.g. array classes) */
	uint32_t size;			/* instance payload bytes */
	kgc_handle mirror;		/* its java/lang/Class object: jclass == mirror */
	const void *owner;		/* the bridge's kgc_jclass of the same name, once seen */
	struct kgcj_field *fields;
	struct kgcj_method *methods;
};

struct kgcj_lib {
	struct kgcj_lib *next;
	void *dl;
	char *path;
};

struct kgcj_vm {
	const struct JNIInvokeInterface_ *fns;	/* first: JavaVM * == &this->fns */
	const struct JNINativeInterface_ *env_fns;	/* every env's table (jni_table.c, set by jni_vm.c) */
	kgc_heap *heap;
	bool checked;
	pthread_mutex_t lock;		/* classes, libs */
	struct kgcj_class *classes;
	struct kgcj_class **by_type;	/* kgc_type_id -> class */
	size_t ntypes;
	kgc_type_id mirror_type;	/* java/lang/Class */
	struct kgcj_class *c_object, *c_class, *c_string, *c_throwable, *c_buffer;
	struct kgcj_field *f_str_value, *f_exc_message, *f_buf_address, *f_buf_capacity;
	struct kgcj_lib *libs;
	kgc_handle module;		/* the unnamed java/lang/Module (GetModule) */
	struct kgc_jni_host host;	/* the runtime's callbacks (kgc_jni_set_host) */
	void *host_ctx;
	pthread_mutex_t mon_lock;	/* monitors (jni_monitor.c) */
	struct kgcj_monitor *monitors;
	unsigned attached;		/* threads attached by AttachCurrentThread */
};

#define VM(jvm) ((struct kgcj_vm *)(jvm))

/* ----------------------------------------------------------- the env */

#define KGCJ_CHUNK	64

/* Local references: slots of chunk frames (kgc_frame_push'ed when first used). */
struct kgcj_chunk {
	struct kgcj_chunk *prev;	/* below in the stack, or the next spare */
	struct kgc_frame f;		/* f.nslots = slots in use */
	bool pushed;
	kgc_obj slots[KGCJ_CHUNK];
};

/* A local frame's start: the chunk on top and its slots in use then. */
struct kgcj_mark {
	struct kgcj_chunk *chunk;
	uint32_t n;
	uint32_t capacity;		/* EnsureLocalCapacity promised */
	bool call;			/* a native call's frame (PopLocalFrame may not pop it) */
};

/* An array or string copy handed out (Get<T>ArrayElements, GetStringChars...). */
struct kgcj_copy {
	struct kgcj_copy *next;
	void *elems;
	const char *fn;			/* the Get function */
};

struct kgcj_env {
	const struct JNINativeInterface_ *fns;	/* first: JNIEnv * == &this->fns */
	struct kgcj_vm *vm;
	kgc_thread *t;
	bool own_thread;		/* attached by AttachCurrentThread */
	struct kgcj_chunk *top, *spare;
	struct kgcj_chunk *grave;	/* checked mode: ended chunks kept unused a while */
	uint32_t ngrave;
	struct kgcj_mark *marks;
	uint32_t nmarks, capmarks;
	kgc_handle exc;			/* roots the pending exception */
	bool exc_pending;
	char *exc_msg;			/* ThrowNew's message (for kgc_native_exception_message) */
	uint32_t crit;			/* open critical regions */
	struct kgcj_copy *copies;
	uintptr_t stack_lo, stack_hi;	/* this thread's stack (ref kinds) */
	kgc_jclass last_owner;		/* the last static native's owner and its class */
	struct kgcj_class *last_cls;
};

#define ENV(e) ((struct kgcj_env *)(e))

extern const struct JNINativeInterface_ kgcj_env_fns;
extern const struct JNIInvokeInterface_ kgcj_vm_fns;
extern const struct kgc_ext kgcj_ext;

/* Every JNI function implemented, declared with its exact <jni.h> type. */
#define KGCJ_DECL(n) extern __typeof__(*((struct JNINativeInterface_ *)0)->n) kgcj_##n;
#define KGCJ_VDECL(n) extern __typeof__(*((struct JNIInvokeInterface_ *)0)->n) kgcj_vm_##n;
#include "jni_impl.h"
KGCJ_IMPLEMENTED(KGCJ_DECL)
KGCJ_VM_IMPLEMENTED(KGCJ_VDECL)

/* Leave native state if in it (returns whether it was); back with kgcj_out. */
static inline bool kgcj_in(struct kgcj_env *e)
{
	bool native = __atomic_load_n(&((struct kgc_thread_pub *)e->t)->state,
				      __ATOMIC_RELAXED) == KGC__TS_NATIVE;

	if (native)
		kgc_leave_native(e->t);
	return native;
}

static inline void kgcj_out(struct kgcj_env *e, bool native)
{
	if (native)
		kgc_enter_native(e->t);
}

/* --- jni_env.c */
struct kgcj_env *kgcj_env_get(struct kgcj_vm *vm, kgc_thread *t);
void kgcj_env_free(struct kgcj_env *e);
/* The env of this OS thread (the last one it got), or NULL. */
struct kgcj_env *kgcj_env_current(void);
extern const struct kgc_native_env_ops kgcj_env_ops;

/* --- jni_refs.c (managed state) */
jobject kgcj_local(struct kgcj_env *e, kgc_obj o);
/* The object a reference stands for (local, global, weak, class). */
kgc_obj kgcj_deref(struct kgcj_env *e, jobject r, const char *fn);
int kgcj_marks_grow(struct kgcj_env *e);
void kgcj_mark_pop_chunks(struct kgcj_env *e, struct kgcj_mark m);

/* Starts a local frame (a native call's if call) promising capacity locals.
 * Inline: every regular native call pushes and pops one. _room: the caller
 * made sure that e->nmarks < e->capmarks. */
static inline void kgcj_mark_push_room(struct kgcj_env *e, uint32_t capacity, bool call)
{
	e->marks[e->nmarks++] = (struct kgcj_mark){
		.chunk = e->top, .n = e->top ? e->top->f.nslots : 0,
		.capacity = capacity, .call = call,
	};
}

static inline int kgcj_mark_push(struct kgcj_env *e, uint32_t capacity, bool call)
{
	if (unlikely(e->nmarks == e->capmarks) && kgcj_marks_grow(e))
		return -ENOMEM;
	kgcj_mark_push_room(e, capacity, call);
	return 0;
}

/* Ends the innermost local frame: its locals are gone. */
static inline void kgcj_mark_pop(struct kgcj_env *e)
{
	/* field by field: a copy of the struct would load 16 bytes the push
	 * just stored in pieces (a store-forwarding stall on every call) */
	const struct kgcj_mark *m = &e->marks[--e->nmarks];

	if (unlikely(e->top != m->chunk)) {
		kgcj_mark_pop_chunks(e, *m);
		return;
	}
	if (e->top)
		e->top->f.nslots = m->n;
}
void kgcj_locals_free(struct kgcj_env *e);

/* --- jni_exc.c */
/* Allocate an instance of class name with message and make it pending (managed). */
void kgcj_throw(struct kgcj_env *e, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void kgcj_throw_obj(struct kgcj_env *e, kgc_obj exc, const char *msg);

/* --- jni_utf.c (managed) */
/* A String of n units copied from u, or decoded from utf8 (u NULL). */
kgc_obj kgcj_string_make(struct kgcj_env *e, const jchar *u, size_t n, const char *utf8);
kgc_obj kgcj_string_new(struct kgcj_env *e, const char *utf8);
/* Modified UTF-8 of a String (malloc'd), or NULL. */
char *kgcj_string_utf8(struct kgcj_vm *vm, kgc_obj s);
size_t kgcj_utf8_len(const jchar *u, size_t n);
/* Encodes n units into out (room for kgcj_utf8_len + 1), NUL-terminated. */
void kgcj_utf8_encode(const jchar *u, size_t n, char *out);

/* --- jni_host.c */
struct kgcj_class *kgcj_class_find(struct kgcj_vm *vm, const char *name);
/* kgcj_class_find, else the runtime's load_class (t managed), else NULL. */
struct kgcj_class *kgcj_class_load(struct kgcj_vm *vm, kgc_thread *t, const char *name);
struct kgcj_class *kgcj_class_of_ref(struct kgcj_env *e, jclass c, const char *fn);
/* The class a java/lang/Class object holds, or NULL if it is none. */
struct kgcj_class *kgcj_class_of_mirror(struct kgcj_vm *vm, kgc_obj m);
struct kgcj_class *kgcj_class_of_obj(struct kgcj_vm *vm, kgc_obj o);
/* The class for a bridge owner (defined empty if the host has none). */
struct kgcj_class *kgcj_class_of_owner(struct kgcj_vm *vm, kgc_thread *t, kgc_jclass owner);
bool kgcj_subclass(const struct kgcj_class *c, const struct kgcj_class *of);
struct kgcj_field *kgcj_field_find(struct kgcj_class *c, const char *name, const char *sig,
				   bool is_static);
struct kgcj_method *kgcj_method_find(struct kgcj_class *c, const char *name, const char *sig,
				     bool is_static);
int kgcj_host_init(struct kgcj_vm *vm, kgc_thread *t);
void kgcj_host_free(struct kgcj_vm *vm, kgc_thread *t);

/* --- jni_check.c */
void kgcj_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kgcj_fatal(const char *fn, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));
/* Checked mode: fn is not allowed inside a critical region. */
void kgcj_check_crit(struct kgcj_env *e, const char *fn);
/* Checked mode: fn may not be called with an exception pending. */
void kgcj_check_exc(struct kgcj_env *e, const char *fn);
void kgcj_copy_track(struct kgcj_env *e, void *elems, const char *getfn);
/* keep: JNI_COMMIT (the copy stays handed out) */
void kgcj_copy_untrack(struct kgcj_env *e, void *elems, const char *relfn, const char *getfn,
		       bool keep);
/* What every env function starts with in checked mode. */
static inline void kgcj_check(struct kgcj_env *e, const char *fn)
{
	if (unlikely(e->vm->checked)) {
		kgcj_check_crit(e, fn);
		kgcj_check_exc(e, fn);
	}
}

/* --- jni_monitor.c */
void kgcj_monitors_free(struct kgcj_vm *vm);

/* --- jni_loader.c */
void kgcj_libs_unload(struct kgcj_vm *vm, kgc_thread *t);

#endif
