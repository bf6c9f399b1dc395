/* SPDX-License-Identifier: MIT */
/*
 * jni_checked: checked mode (a KGC_CHECK=1 heap, like -Xcheck:jni) stops
 * JNI misuse with a message naming the JNI function: a local reference used
 * after its frame ended (PopLocalFrame, and a native call that returned), a
 * JNI call inside a critical region, an array of the wrong type, a release
 * that matches no get (array elements, critical), a call made with an
 * exception pending, a method called as another return type. Each misuse
 * runs in a child that must abort with that message; the same natives used
 * correctly run to the end in checked mode.
 */
#include "jni_test.h"

#define EXPORT __attribute__((visibility("default")))

static jobject saved;

EXPORT void Java_kgc_Checked_pop(JNIEnv *env, jclass c)
{
	jstring s;

	(*env)->PushLocalFrame(env, 4);
	s = (*env)->NewStringUTF(env, "x");
	(*env)->PopLocalFrame(env, NULL);
	(*env)->GetStringLength(env, s);
}

EXPORT void Java_kgc_Checked_keep(JNIEnv *env, jclass c)
{
	saved = (*env)->NewStringUTF(env, "kept past its call");
}

EXPORT void Java_kgc_Checked_useKept(JNIEnv *env, jclass c)
{
	(*env)->NewStringUTF(env, "y");
	(*env)->GetStringUTFLength(env, saved);
}

EXPORT void Java_kgc_Checked_critical(JNIEnv *env, jclass c, jbyteArray a)
{
	void *p = (*env)->GetPrimitiveArrayCritical(env, a, NULL);

	(*env)->NewStringUTF(env, "inside");
	(*env)->ReleasePrimitiveArrayCritical(env, a, p, 0);
}

EXPORT void Java_kgc_Checked_wrongType(JNIEnv *env, jclass c, jbyteArray a)
{
	jint buf[4];

	(*env)->GetIntArrayRegion(env, (jintArray)a, 0, 1, buf);
}

EXPORT void Java_kgc_Checked_release(JNIEnv *env, jclass c, jbyteArray a)
{
	jbyte buf[4];

	(*env)->ReleaseByteArrayElements(env, a, buf, 0);
}

EXPORT void Java_kgc_Checked_releaseCrit(JNIEnv *env, jclass c, jbyteArray a)
{
	jbyte buf[4];

	(*env)->ReleasePrimitiveArrayCritical(env, a, buf, 0);
}

EXPORT void Java_kgc_Checked_pending(JNIEnv *env, jclass c)
{
	(*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/IllegalStateException"), "boom");
	(*env)->FindClass(env, "java/lang/String");
}

EXPORT void Java_kgc_Checked_retType(JNIEnv *env, jclass c)
{
	jclass t = (*env)->FindClass(env, "java/lang/Throwable");
	jmethodID m = (*env)->GetMethodID(env, t, "getMessage", "()Ljava/lang/String;");
	jobject e = (*env)->AllocObject(env, t);

	(*env)->CallIntMethod(env, e, m);
}

/* Everything above, used correctly. */
EXPORT jint Java_kgc_Checked_good(JNIEnv *env, jclass c, jbyteArray a)
{
	jbyte *el, *p;
	jstring s;
	jint n;

	(*env)->PushLocalFrame(env, 4);
	s = (*env)->NewStringUTF(env, "fine");
	s = (*env)->PopLocalFrame(env, s);
	n = (*env)->GetStringLength(env, s);
	p = (*env)->GetPrimitiveArrayCritical(env, a, NULL);
	p[0] = 42;
	(*env)->ReleasePrimitiveArrayCritical(env, a, p, 0);
	el = (*env)->GetByteArrayElements(env, a, NULL);
	el[1] = 43;
	(*env)->ReleaseByteArrayElements(env, a, el, JNI_COMMIT);
	(*env)->ReleaseByteArrayElements(env, a, el, JNI_ABORT);
	(*env)->ThrowNew(env, (*env)->FindClass(env, "java/lang/IllegalStateException"), "x");
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionClear(env);
	return n;
}

static kgc_obj arr[1];

static void run(const char *name, const char *sig, int with_array)
{
	union kgc_value a = { .l = with_array ? arr[0] : NULL }, r;
	int rc = kgc_native_call(jt_t, jt_method("kgc/Checked", name, sig, KGC_JNI_STATIC), NULL,
				 &a, &r);

	if (rc)
		T_FAIL("%s: %d", name, rc);
}

struct misuse_call {
	const char *name, *sig;
	int with_array;
};

static void misuse_child(void *arg)
{
	const struct misuse_call *c = arg;

	if (!strcmp(c->name, "useKept"))
		run("keep", "()V", 0);
	run(c->name, c->sig, c->with_array);
}

/* name runs in a child of a checked heap; it must abort with both strings in its message. */
static void misuse(const char *name, const char *sig, int with_array, const char *fn,
		   const char *what)
{
	struct misuse_call c = { name, sig, with_array };
	const char *buf = jt_dies(misuse_child, &c, name);

	if (!strstr(buf, fn) || !strstr(buf, what))
		T_FAIL("%s: the message names neither '%s' nor '%s': %s", name, fn, what, buf);
	printf("%-12s %s", name, buf);
}

int main(void)
{
	struct kgc_frame f;
	union kgc_value a, r;

	setenv("KGC_CHECK", "1", 1);
	jt_setup(64u << 20, 0);
	kgc_frame_push(jt_t, &f, arr, 1, NULL);
	arr[0] = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 16);
	T_ASSERT(arr[0]);

	misuse("pop", "()V", 0, "JNI GetStringLength:", "used after its local frame ended");
	misuse("useKept", "()V", 0, "JNI GetStringUTFLength:", "used after its local frame ended");
	misuse("critical", "([B)V", 1, "JNI NewStringUTF:", "inside a critical region");
	misuse("wrongType", "([B)V", 1, "JNI GetIntArrayRegion:", "wrong array type: [B where [I");
	misuse("release", "([B)V", 1, "JNI ReleaseByteArrayElements:",
	       "was not returned by GetByteArrayElements");
	misuse("releaseCrit", "([B)V", 1, "JNI ReleasePrimitiveArrayCritical:",
	       "no critical region is open");
	misuse("pending", "()V", 0, "JNI FindClass:", "with an exception pending");
	misuse("retType", "()V", 0, "JNI CallIntMethod:", "returns 'L', called as returning 'I'");

	a.l = arr[0];
	T_ASSERT_EQ(kgc_native_call(jt_t, jt_method("kgc/Checked", "good", "([B)I", KGC_JNI_STATIC),
				    NULL, &a, &r), 0);
	T_ASSERT_EQ(r.i, 4);
	T_ASSERT_EQ(((signed char *)kgc_array_data(arr[0]))[0], 42);
	T_ASSERT_EQ(((signed char *)kgc_array_data(arr[0]))[1], 43);	/* committed */
	kgc_frame_pop(jt_t, &f);
	jt_teardown();
	printf("jni_checked: ok\n");
	return 0;
}
