/* SPDX-License-Identifier: MIT */
/*
 * kgc_jni.h - public API of libkgc-jni: a binary-compatible JNIEnv and
 * JavaVM on the kgc heap, so that unmodified JNI libraries (the Java_*
 * exports of a .so built against the JDK's <jni.h>) run against kgc
 * objects. Layered on libkgc-native (kgc_native.h): link with -lkgc-jni
 * -lkgc-native -lkgc (pkg-config libkgc-jni). <jni.h> is the JDK's own
 * (openjdk-17-jdk-headless: pkg-config adds its include directories).
 *
 * Classes, fields, methods and monitors belong to the runtime. This library
 * holds a small default host: a registry in which a C program defines
 * classes (kgc_jni_class_define) with fields and C-implemented methods;
 * java/lang/Object, Class, String, Throwable and the usual exceptions, and
 * java/nio/ByteBuffer (direct buffers) are predefined.
 *
 * Threads: a kgc thread attached to the heap gets its JNIEnv from
 * kgc_jni_env (or from a native call); an OS thread not attached gets one
 * from (*vm)->AttachCurrentThread. JNI functions are called in native state
 * (as natives are run) or managed state; references they return are local:
 * they live until the native call that made them returns, or until the
 * PopLocalFrame that matches a PushLocalFrame.
 *
 * Checked mode (the heap's KGC_CHECK, like -Xcheck:jni): misuse - a local
 * reference used after its frame, an env call inside a critical region, a
 * wrong array type, a release that matches no get, an env call with an
 * exception pending that may not be made then - aborts with a message that
 * names the JNI function.
 */
#ifndef KGC_JNI_H
#define KGC_JNI_H

#include <jni.h>
#include <kgc_native.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KGC_JNI_VERSION_MAJOR 0
#define KGC_JNI_VERSION_MINOR 1

/*
 * Create the JavaVM of heap (one per heap): predefines the core classes and
 * makes every regular native of the heap receive a JNIEnv
 * (kgc_native_set_env_ops: call it before any native method of the heap is
 * created, else -EBUSY). t: an attached thread of heap, managed state.
 * 0, -EINVAL, -EBUSY, -ENOMEM (kgc_last_error says why).
 */
int kgc_jni_vm_create(kgc_heap *heap, kgc_thread *t, JavaVM **out);
/*
 * Runs JNI_OnUnload of the loaded libraries, frees classes and globals.
 * t: an attached thread of the heap (managed); no native may be running
 * and no thread attached by AttachCurrentThread may remain. 0 or -EBUSY.
 * The heap's natives cannot be called afterwards (destroy the heap next).
 */
int kgc_jni_vm_destroy(JavaVM *vm, kgc_thread *t);

/* The JNIEnv of t (an attached thread of vm's heap), created on first use. */
int kgc_jni_env(JavaVM *vm, kgc_thread *t, JNIEnv **out);

/* ------------------------------------------------------- the default host */

#define KGC_JNI_STATIC	(1u << 0)	/* static field or method */
#define KGC_JNI_NATIVE	(1u << 1)	/* method: declared native (bound by the loader) */

/*
 * A C-implemented method: self is the receiver (instance) or the class
 * (static), args the arguments in descriptor order; store the result in
 * *result. Runs in the caller's state like any JNI code; throws with
 * (*env)->Throw/ThrowNew.
 */
typedef void (*kgc_jni_method_fn)(JNIEnv *env, jobject self, const jvalue *args,
				  jvalue *result, void *data);

struct kgc_jni_field_def {
	const char *name;
	const char *sig;	/* field descriptor: "I", "J", "Ljava/lang/String;", "[B" */
	uint32_t flags;		/* KGC_JNI_STATIC */
	uint32_t reserved;
};

struct kgc_jni_method_def {
	const char *name;	/* "<init>" for a constructor */
	const char *sig;	/* method descriptor */
	uint32_t flags;		/* KGC_JNI_STATIC, KGC_JNI_NATIVE */
	uint32_t reserved;
	kgc_jni_method_fn fn;	/* NULL for KGC_JNI_NATIVE, and for a constructor that only allocates */
	void *data;
};

struct kgc_jni_class_def {
	uint32_t size;		/* sizeof(struct kgc_jni_class_def) */
	uint32_t flags;		/* 0 */
	const char *name;	/* internal form: "org/xerial/snappy/SnappyNative" */
	const char *super;	/* NULL: java/lang/Object */
	const struct kgc_jni_field_def *fields;
	uint32_t nfields;
	uint32_t nmethods;
	const struct kgc_jni_method_def *methods;
	uint64_t reserved[2];
};

/* Define a class (fields after its superclass's); t attached, managed. 0, -EINVAL (bad
 * descriptor, unknown superclass, bad size/flags/reserved), -EEXIST, -ENOMEM. */
int kgc_jni_class_define(JavaVM *vm, kgc_thread *t, const struct kgc_jni_class_def *def);

/*
 * The runtime's side of the host: callbacks the default host consults.
 * load_class(ctx, vm, t, name): a class is named (FindClass, a superclass,
 *   a native's owner) that is not defined: define it with
 *   kgc_jni_class_define(vm, t, ...) and return 0, or return -ENOENT
 *   (NoClassDefFoundError). t is managed; called at most once per name
 *   that succeeds. NULL: classes are only what the program defined.
 * invoke(ctx, env, cls, name, sig, self, args, result): a method defined
 *   without a function and not KGC_JNI_NATIVE is called (Call<T>Method...):
 *   the runtime runs it (its interpreter, its compiled code) like a host
 *   method. NULL: such a call throws AbstractMethodError.
 * define_class(ctx, vm, t, name, buf, len): DefineClass with a class file:
 *   define name from it (kgc_jni_class_define) and return 0, or return
 *   -errno (ClassFormatError, unless the callback left an exception
 *   pending). t is managed. NULL: DefineClass throws
 *   UnsupportedOperationException.
 * size: sizeof(struct kgc_jni_host); reserved zero.
 */
struct kgc_jni_host {
	uint32_t size;
	uint32_t reserved0;
	int (*load_class)(void *ctx, JavaVM *vm, kgc_thread *t, const char *name);
	void (*invoke)(void *ctx, JNIEnv *env, const char *cls, const char *name, const char *sig,
		       jobject self, const jvalue *args, jvalue *result);
	int (*define_class)(void *ctx, JavaVM *vm, kgc_thread *t, const char *name,
			    const jbyte *buf, jsize len);
	uint64_t reserved[1];
};

/* Registers host (copied) before any native runs. 0 or -EINVAL. */
int kgc_jni_set_host(JavaVM *vm, const struct kgc_jni_host *host, void *ctx);

/* ------------------------------------------------------------------ loading */

/*
 * Load a JNI library by path (kgc_native_load_library: its Java_* exports
 * bind lazily) and call its JNI_OnLoad, if any, on t (managed): 0, -ENOENT
 * (dlopen failed), -EPROTO (JNI_OnLoad returned a version not supported or
 * left an exception pending).
 */
int kgc_jni_load_library(JavaVM *vm, kgc_thread *t, const char *path);

/*
 * The native method cls.name (descriptor sig): kgc_native_method_find with
 * the flags the class declares for it (KGC_JNI_STATIC -> KGC_NATIVE_STATIC),
 * or flags if the class is not defined or does not declare it. Call it with
 * kgc_native_call: references are kgc_obj, as for any native.
 */
int kgc_jni_method(JavaVM *vm, const char *cls, const char *name, const char *sig,
		   uint32_t flags, kgc_method **out);

/* ------------------------------------------------- objects for the runtime */

/* A java/lang/String from modified UTF-8 (t managed): the object or NULL. */
kgc_obj kgc_jni_string_new(JavaVM *vm, kgc_thread *t, const char *utf8);
/* The class name of o ("java/lang/IllegalArgumentException"), or NULL. */
const char *kgc_jni_class_name(JavaVM *vm, kgc_obj o);
/* A Throwable's message as modified UTF-8 into buf (t managed). Returns
 * the length it needs (like snprintf), or -EINVAL if o is no Throwable or
 * has no message. */
int kgc_jni_exception_message(JavaVM *vm, kgc_thread *t, kgc_obj o, char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* KGC_JNI_H */
