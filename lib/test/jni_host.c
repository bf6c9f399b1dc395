/* SPDX-License-Identifier: MIT */
/*
 * jni_host: classes of the default host seen through JNI. A C program
 * defines kgc/Point (fields of every type, a static field, a constructor,
 * an instance and a static method in C) and kgc/Point3 extending it (one
 * more field, an override). A native then: finds them, builds objects with
 * NewObject[V/A], reads and writes every field type, calls methods through
 * Call<T>Method/V/A (virtual dispatch reaches the override, the nonvirtual
 * call does not), CallStatic, IsInstanceOf, IsAssignableFrom, GetSuperclass,
 * GetObjectClass; direct buffers; an unknown class, field or method throws
 * NoClassDefFoundError, NoSuchFieldError, NoSuchMethodError; RegisterNatives
 * binds a declared native; a host method's exception (ThrowNew, Throw of a
 * NewObject'ed exception) reaches kgc_native_call as -EPROTO with its class
 * and message.
 */
#include <stdarg.h>
#include "jni_test.h"

#define EXPORT __attribute__((visibility("default")))

#define F(n, s) { .name = (n), .sig = (s) }
static const struct kgc_jni_field_def point_f[] = {
	F("z", "Z"), F("b", "B"), F("c", "C"), F("s", "S"), F("i", "I"), F("j", "J"),
	F("f", "F"), F("d", "D"), F("name", "Ljava/lang/String;"),
	{ .name = "count", .sig = "I", .flags = KGC_JNI_STATIC },
};
static const struct kgc_jni_field_def point3_f[] = { F("k", "I") };

static jfieldID fid(JNIEnv *env, jobject o, const char *n, const char *s)
{
	return (*env)->GetFieldID(env, (*env)->GetObjectClass(env, o), n, s);
}

/* <init>(IJ): i, j; count++ */
static void point_init(JNIEnv *env, jobject self, const jvalue *a, jvalue *r, void *d)
{
	jclass c = (*env)->FindClass(env, "kgc/Point");
	jfieldID cnt = (*env)->GetStaticFieldID(env, c, "count", "I");

	(*env)->SetIntField(env, self, fid(env, self, "i", "I"), a[0].i);
	(*env)->SetLongField(env, self, fid(env, self, "j", "J"), a[1].j);
	(*env)->SetStaticIntField(env, c, cnt, (*env)->GetStaticIntField(env, c, cnt) + 1);
}

/* sum()J = i + j */
static void point_sum(JNIEnv *env, jobject self, const jvalue *a, jvalue *r, void *d)
{
	r->j = (*env)->GetIntField(env, self, fid(env, self, "i", "I")) +
	       (*env)->GetLongField(env, self, fid(env, self, "j", "J"));
}

/* Point3.sum()J = i + j + k */
static void point3_sum(JNIEnv *env, jobject self, const jvalue *a, jvalue *r, void *d)
{
	point_sum(env, self, a, r, d);
	r->j += (*env)->GetIntField(env, self, fid(env, self, "k", "I"));
}

/* static scale(DF)D = d * f */
static void point_scale(JNIEnv *env, jobject cls, const jvalue *a, jvalue *r, void *d)
{
	r->d = a[0].d * a[1].f;
}

/* static fail(Ljava/lang/String;)V: throws IllegalStateException(msg) */
static void point_fail(JNIEnv *env, jobject cls, const jvalue *a, jvalue *r, void *d)
{
	const char *m = (*env)->GetStringUTFChars(env, a[0].l, NULL);

	(*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/IllegalStateException"), m);
	(*env)->ReleaseStringUTFChars(env, a[0].l, m);
}

static const struct kgc_jni_method_def point_m[] = {
	{ .name = "<init>", .sig = "(IJ)V", .fn = point_init },
	{ .name = "sum", .sig = "()J", .fn = point_sum },
	{ .name = "scale", .sig = "(DF)D", .flags = KGC_JNI_STATIC, .fn = point_scale },
	{ .name = "fail", .sig = "(Ljava/lang/String;)V", .flags = KGC_JNI_STATIC, .fn = point_fail },
	{ .name = "twice", .sig = "(I)I", .flags = KGC_JNI_STATIC | KGC_JNI_NATIVE },
};
static const struct kgc_jni_method_def point3_m[] = {
	{ .name = "sum", .sig = "()J", .fn = point3_sum },
};

static jint twice(JNIEnv *env, jclass c, jint v)
{
	return 2 * v;
}

static int pending(JNIEnv *env, const char *cls)
{
	jthrowable e = (*env)->ExceptionOccurred(env);

	(*env)->ExceptionClear(env);
	return e && (*env)->IsInstanceOf(env, e, (*env)->FindClass(env, cls));
}

static jlong call_sum_v(JNIEnv *env, jobject o, jmethodID m, ...)
{
	va_list ap;
	jlong r;

	va_start(ap, m);
	r = (*env)->CallLongMethodV(env, o, m, ap);
	va_end(ap);
	return r;
}

EXPORT jint Java_kgc_Host_run(JNIEnv *env, jclass self)
{
	jclass P = (*env)->FindClass(env, "kgc/Point"), P3 = (*env)->FindClass(env, "kgc/Point3");
	jmethodID init = (*env)->GetMethodID(env, P, "<init>", "(IJ)V");
	jmethodID sum = (*env)->GetMethodID(env, P, "sum", "()J");
	jmethodID scale = (*env)->GetStaticMethodID(env, P, "scale", "(DF)D");
	jvalue args[2] = { { .i = 5 }, { .j = 1LL << 40 } };
	jobject p = (*env)->NewObject(env, P, init, 3, (jlong)4);
	jobject q = (*env)->NewObjectA(env, P3, init, args);
	jobject buf;
	static char mem[100];

	if (!P || !P3 || !init || !sum || !scale || !p || !q)
		return __LINE__;
	(*env)->SetIntField(env, q, fid(env, q, "k", "I"), 1000);
	if ((*env)->CallLongMethod(env, p, sum) != 7 ||
	    (*env)->CallLongMethodA(env, q, sum, NULL) != (1LL << 40) + 1005 ||
	    call_sum_v(env, q, sum) != (1LL << 40) + 1005 ||
	    (*env)->CallNonvirtualLongMethod(env, q, P, sum) != (1LL << 40) + 5)
		return __LINE__;
	if ((*env)->CallStaticDoubleMethod(env, P, scale, 1.5, (jfloat)4.0f) != 6.0)
		return __LINE__;
	if ((*env)->GetStaticIntField(env, P, (*env)->GetStaticFieldID(env, P, "count", "I")) != 2)
		return __LINE__;
	/* every field type */
	(*env)->SetBooleanField(env, p, fid(env, p, "z", "Z"), JNI_TRUE);
	(*env)->SetByteField(env, p, fid(env, p, "b", "B"), -5);
	(*env)->SetCharField(env, p, fid(env, p, "c", "C"), 0x20ac);
	(*env)->SetShortField(env, p, fid(env, p, "s", "S"), -30000);
	(*env)->SetFloatField(env, p, fid(env, p, "f", "F"), 2.5f);
	(*env)->SetDoubleField(env, p, fid(env, p, "d", "D"), -1e300);
	(*env)->SetObjectField(env, p, fid(env, p, "name", "Ljava/lang/String;"),
			       (*env)->NewStringUTF(env, "point"));
	(*env)->NewByteArray(env, 1 << 20);	/* may collect: fields move with p */
	if (!(*env)->GetBooleanField(env, p, fid(env, p, "z", "Z")) ||
	    (*env)->GetByteField(env, p, fid(env, p, "b", "B")) != -5 ||
	    (*env)->GetCharField(env, p, fid(env, p, "c", "C")) != 0x20ac ||
	    (*env)->GetShortField(env, p, fid(env, p, "s", "S")) != -30000 ||
	    (*env)->GetIntField(env, p, fid(env, p, "i", "I")) != 3 ||
	    (*env)->GetLongField(env, p, fid(env, p, "j", "J")) != 4 ||
	    (*env)->GetFloatField(env, p, fid(env, p, "f", "F")) != 2.5f ||
	    (*env)->GetDoubleField(env, p, fid(env, p, "d", "D")) != -1e300 ||
	    (*env)->GetStringLength(env, (*env)->GetObjectField(env, p,
				    fid(env, p, "name", "Ljava/lang/String;"))) != 5)
		return __LINE__;
	/* classes */
	if (!(*env)->IsInstanceOf(env, q, P) || (*env)->IsInstanceOf(env, p, P3) ||
	    !(*env)->IsInstanceOf(env, NULL, P3) ||
	    !(*env)->IsAssignableFrom(env, P3, P) || (*env)->IsAssignableFrom(env, P, P3) ||
	    !(*env)->IsSameObject(env, (*env)->GetSuperclass(env, P3), P) ||
	    !(*env)->IsSameObject(env, (*env)->GetObjectClass(env, q), P3) ||
	    !(*env)->IsInstanceOf(env, p, (*env)->FindClass(env, "java/lang/Object")))
		return __LINE__;
	/* direct buffers */
	buf = (*env)->NewDirectByteBuffer(env, mem, sizeof(mem));
	if ((*env)->GetDirectBufferAddress(env, buf) != mem ||
	    (*env)->GetDirectBufferCapacity(env, buf) != sizeof(mem) ||
	    (*env)->GetDirectBufferCapacity(env, p) != -1 || (*env)->GetDirectBufferAddress(env, p))
		return __LINE__;
	/* what is not there */
	if ((*env)->FindClass(env, "kgc/Nope") || !pending(env, "java/lang/NoClassDefFoundError") ||
	    (*env)->GetFieldID(env, P, "nope", "I") || !pending(env, "java/lang/NoSuchFieldError") ||
	    (*env)->GetFieldID(env, P, "i", "J") || !pending(env, "java/lang/NoSuchFieldError") ||
	    (*env)->GetMethodID(env, P, "scale", "(DF)D") ||	/* static, asked as instance */
	    !pending(env, "java/lang/NoSuchMethodError"))
		return __LINE__;
	/* RegisterNatives: the class declares twice(I)I native static */
	{
		JNINativeMethod nm = { "twice", "(I)I", (void *)twice };
		JNINativeMethod bad = { "thrice", "(I)I", (void *)twice };

		if ((*env)->RegisterNatives(env, P, &nm, 1) != JNI_OK)
			return __LINE__;
		if ((*env)->RegisterNatives(env, P, &bad, 1) != JNI_ERR ||
		    !pending(env, "java/lang/NoSuchMethodError"))
			return __LINE__;
	}
	return 0;
}

/* a host method's exception left pending for the caller */
EXPORT void Java_kgc_Host_fail(JNIEnv *env, jclass self, jstring msg)
{
	jclass P = (*env)->FindClass(env, "kgc/Point");

	(*env)->CallStaticVoidMethod(env, P, (*env)->GetStaticMethodID(env, P, "fail",
				     "(Ljava/lang/String;)V"), msg);
}

/* Throw of an exception built with its (String) constructor */
EXPORT void Java_kgc_Host_throwNew(JNIEnv *env, jclass self)
{
	jclass c = (*env)->FindClass(env, "java/lang/UnsupportedOperationException");
	jmethodID init = (*env)->GetMethodID(env, c, "<init>", "(Ljava/lang/String;)V");
	jthrowable e = (*env)->NewObject(env, c, init, (*env)->NewStringUTF(env, "built"));
	jstring m = (*env)->CallObjectMethod(env, e, (*env)->GetMethodID(env, c, "getMessage",
					     "()Ljava/lang/String;"));

	if ((*env)->GetStringUTFLength(env, m) != 5)
		return;
	(*env)->Throw(env, e);
}

int main(void)
{
	struct kgc_jni_class_def p = {
		.size = sizeof(p), .name = "kgc/Point", .fields = point_f, .nfields = 10,
		.methods = point_m, .nmethods = 5,
	}, p3 = {
		.size = sizeof(p3), .name = "kgc/Point3", .super = "kgc/Point", .fields = point3_f,
		.nfields = 1, .methods = point3_m, .nmethods = 1,
	}, bad = p3;
	struct kgc_frame f;
	kgc_obj s[1];
	union kgc_value a, r;

	jt_setup(64u << 20, 1u << 20);
	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, jt_t, &p), 0);
	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, jt_t, &p3), 0);
	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, jt_t, &p3), -EEXIST);
	bad.name = "kgc/Bad";
	bad.super = "kgc/Missing";
	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, jt_t, &bad), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "unknown superclass kgc/Missing"));
	bad.super = NULL;
	bad.reserved[0] = 1;
	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, jt_t, &bad), -EINVAL);

	T_ASSERT_EQ(jt_call_i(jt_method("kgc/Host", "run", "()I", KGC_JNI_STATIC), NULL), 0);
	/* the registered native, called by the runtime */
	T_ASSERT_EQ(jt_call_i(jt_method("kgc/Point", "twice", "(I)I", 0),
			      (union kgc_value[]){ { .i = 21 } }), 42);

	kgc_frame_push(jt_t, &f, s, 1, NULL);
	s[0] = kgc_jni_string_new(jt_vm, jt_t, "no good state");
	a.l = s[0];
	T_ASSERT_EQ(kgc_native_call(jt_t, jt_method("kgc/Host", "fail", "(Ljava/lang/String;)V",
						    KGC_JNI_STATIC), NULL, &a, &r), -EPROTO);
	T_ASSERT(!strcmp(jt_exc_class(), "java/lang/IllegalStateException"));
	T_ASSERT(!strcmp(kgc_native_exception_message(jt_t), "no good state"));
	kgc_native_exception_clear(jt_t);
	T_ASSERT_EQ(kgc_native_call(jt_t, jt_method("kgc/Host", "throwNew", "()V", KGC_JNI_STATIC),
				    NULL, NULL, &r), -EPROTO);
	T_ASSERT(!strcmp(jt_exc_class(), "java/lang/UnsupportedOperationException"));
	T_ASSERT(!strcmp(kgc_native_exception_message(jt_t), "built"));
	kgc_native_exception_clear(jt_t);
	kgc_frame_pop(jt_t, &f);
	jt_teardown();
	printf("jni_host: ok\n");
	return 0;
}
