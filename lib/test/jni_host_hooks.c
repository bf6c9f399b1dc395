/* SPDX-License-Identifier: MIT */
/*
 * jni_host_hooks: the runtime's side of the host (kgc_jni_set_host). A
 * class no one defined is asked of the runtime's load_class when FindClass
 * (or a superclass, or a native's owner) names it: it defines kgc/Lazy
 * (extending kgc/LazyBase, loaded the same way) on first use, once; an
 * unknown name stays NoClassDefFoundError. kgc/Lazy's methods have no C
 * function: Call<T>Method reaches the runtime's invoke hook with class,
 * name, descriptor, receiver and arguments, and returns its result. A bad
 * host struct is -EINVAL.
 */
#include "jni_test.h"

#define EXPORT __attribute__((visibility("default")))

static int loads[3];	/* kgc/Lazy, kgc/LazyBase, misses */

static int load_class(void *ctx, JavaVM *vm, kgc_thread *t, const char *name)
{
	static const struct kgc_jni_method_def lazy_m[] = {
		{ .name = "add", .sig = "(IJ)J", .flags = KGC_JNI_STATIC },
		{ .name = "name", .sig = "()Ljava/lang/String;" },
	};
	struct kgc_jni_class_def d = { .size = sizeof(d), .name = name };

	if (!strcmp(name, "kgc/Lazy")) {
		loads[0]++;
		d.super = "kgc/LazyBase";	/* loaded through this hook too */
		d.methods = lazy_m;
		d.nmethods = 2;
	} else if (!strcmp(name, "kgc/LazyBase")) {
		loads[1]++;
	} else {
		loads[2]++;
		return -ENOENT;
	}
	return kgc_jni_class_define(vm, t, &d);
}

static void invoke(void *ctx, JNIEnv *env, const char *cls, const char *name, const char *sig,
		   jobject self, const jvalue *args, jvalue *result)
{
	if (!strcmp(name, "add") && !strcmp(sig, "(IJ)J"))
		result->j = args[0].i + args[1].j;
	else if (!strcmp(name, "name"))
		result->l = (*env)->NewStringUTF(env, cls);
}

EXPORT jint Java_kgc_Hooks_run(JNIEnv *env, jclass self)
{
	jclass c = (*env)->FindClass(env, "kgc/Lazy");
	jmethodID add, name;
	jobject o;
	jstring s;

	if (!c || !(*env)->FindClass(env, "kgc/Lazy") ||
	    !(*env)->IsAssignableFrom(env, c, (*env)->FindClass(env, "kgc/LazyBase")))
		return __LINE__;
	add = (*env)->GetStaticMethodID(env, c, "add", "(IJ)J");
	name = (*env)->GetMethodID(env, c, "name", "()Ljava/lang/String;");
	if (!add || !name)
		return __LINE__;
	if ((*env)->CallStaticLongMethod(env, c, add, 2, (jlong)40) != 42)
		return __LINE__;
	o = (*env)->AllocObject(env, c);
	s = (*env)->CallObjectMethod(env, o, name);
	if (!s || (*env)->GetStringUTFLength(env, s) != 8)
		return __LINE__;
	if ((*env)->FindClass(env, "kgc/Nowhere") || !(*env)->ExceptionCheck(env))
		return __LINE__;
	(*env)->ExceptionClear(env);
	return 0;
}

int main(void)
{
	struct kgc_jni_host h = { .size = sizeof(h), .load_class = load_class, .invoke = invoke };
	struct kgc_jni_host bad = h;

	jt_setup(64u << 20, 0);
	bad.size = 8;
	T_ASSERT_EQ(kgc_jni_set_host(jt_vm, &bad, NULL), -EINVAL);
	bad = h;
	bad.reserved[0] = 1;
	T_ASSERT_EQ(kgc_jni_set_host(jt_vm, &bad, NULL), -EINVAL);
	T_ASSERT_EQ(kgc_jni_set_host(jt_vm, &h, NULL), 0);
	T_ASSERT_EQ(jt_call_i(jt_method("kgc/Hooks", "run", "()I", KGC_JNI_STATIC), NULL), 0);
	T_ASSERT_EQ(loads[0], 1);
	T_ASSERT_EQ(loads[1], 1);
	/* kgc/Hooks (the native's owner) and kgc/Nowhere were asked for and not found */
	T_ASSERT_EQ(loads[2], 2);
	jt_teardown();
	printf("jni_host_hooks: ok\n");
	return 0;
}
