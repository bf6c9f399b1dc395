/* SPDX-License-Identifier: MIT */
/*
 * jni_reflect: the reflection bridges of the default host. kgc/R has 12
 * int fields and 12 methods (and a static of each, and a constructor);
 * kgc/R2 extends it. For members picked at random (seed): ToReflectedMethod
 * gives a java/lang/reflect/Method (a Constructor for <init>), ToReflectedField
 * a java/lang/reflect/Field, and FromReflected* gives back the same ID,
 * which still calls the method or reads the field; an inherited member
 * reflects through the subclass. Misuse fails the JNI way - an exception
 * pending and NULL, no abort: the wrong static flag and an ID of no member
 * (IllegalArgumentException), an object that is no Method/Field
 * (IllegalArgumentException), null (NullPointerException). GetModule gives
 * every class the one unnamed java/lang/Module; GetModule(null) throws.
 */
#include <stdbool.h>
#include "jni_test.h"

#define N 12

static void getter(JNIEnv *env, jobject self, const jvalue *a, jvalue *r, void *d)
{
	r->i = (jint)(intptr_t)d;
}

static struct kgc_jni_field_def fields[2 * N];
static struct kgc_jni_method_def methods[2 * N + 1];
static char names[4 * N][16];

static void define(void)
{
	struct kgc_jni_class_def d = { .size = sizeof(d), .name = "kgc/R", .fields = fields,
				       .nfields = 2 * N, .methods = methods, .nmethods = 2 * N + 1 };
	struct kgc_jni_class_def d2 = { .size = sizeof(d2), .name = "kgc/R2", .super = "kgc/R" };

	for (int i = 0; i < 2 * N; i++) {
		snprintf(names[i], sizeof(names[i]), "%s%d", i < N ? "f" : "sf", i);
		fields[i] = (struct kgc_jni_field_def){ .name = names[i], .sig = "I",
							.flags = i < N ? 0 : KGC_JNI_STATIC };
		snprintf(names[2 * N + i], sizeof(names[0]), "%s%d", i < N ? "m" : "sm", i);
		methods[i] = (struct kgc_jni_method_def){ .name = names[2 * N + i], .sig = "()I",
							  .flags = i < N ? 0 : KGC_JNI_STATIC,
							  .fn = getter, .data = (void *)(intptr_t)i };
	}
	methods[2 * N] = (struct kgc_jni_method_def){ .name = "<init>", .sig = "()V" };
	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, jt_t, &d), 0);
	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, jt_t, &d2), 0);
}

static const char *class_of(JNIEnv *env, jobject o)
{
	return kgc_jni_class_name(jt_vm, *(kgc_obj *)o);
}

int main(void)
{
	unsigned long long seed = t_seed();
	jclass r, r2, str;
	jobject obj, refl;
	JNIEnv *env;
	int fake;

	jt_setup(64u << 20, 0);
	T_ASSERT_EQ(kgc_jni_env(jt_vm, jt_t, &env), 0);
	define();
	r = (*env)->FindClass(env, "kgc/R");
	r2 = (*env)->FindClass(env, "kgc/R2");
	str = (*env)->FindClass(env, "java/lang/String");
	T_ASSERT(r && r2 && str);
	obj = (*env)->NewObject(env, r2, (*env)->GetMethodID(env, r, "<init>", "()V"));
	T_ASSERT(obj);
	for (int k = 0; k < 200; k++) {
		int i = (int)(t_rand(&seed) % (2 * N));
		bool st = i >= N;
		jclass via = t_rand(&seed) & 1 ? r2 : r;	/* inherited through R2 */
		jmethodID m = st ? (*env)->GetStaticMethodID(env, r, names[2 * N + i], "()I")
				 : (*env)->GetMethodID(env, r, names[2 * N + i], "()I");
		jfieldID f = st ? (*env)->GetStaticFieldID(env, r, names[i], "I")
				: (*env)->GetFieldID(env, r, names[i], "I");
		jmethodID m2;
		jfieldID f2;

		T_ASSERT(m && f);
		refl = (*env)->ToReflectedMethod(env, via, m, st);
		T_ASSERT(refl && !strcmp(class_of(env, refl), "java/lang/reflect/Method"));
		m2 = (*env)->FromReflectedMethod(env, refl);
		T_ASSERT(m2 == m);
		T_ASSERT_EQ(st ? (*env)->CallStaticIntMethod(env, r, m2)
			       : (*env)->CallIntMethod(env, obj, m2), i);
		refl = (*env)->ToReflectedField(env, via, f, st);
		T_ASSERT(refl && !strcmp(class_of(env, refl), "java/lang/reflect/Field"));
		f2 = (*env)->FromReflectedField(env, refl);
		T_ASSERT(f2 == f);
		if (st)
			(*env)->SetStaticIntField(env, r, f2, 7 * i);
		else
			(*env)->SetIntField(env, obj, f2, 7 * i);
		T_ASSERT_EQ(st ? (*env)->GetStaticIntField(env, r, f) : (*env)->GetIntField(env, obj, f),
			    7 * i);
		T_ASSERT(!(*env)->ExceptionCheck(env));
		(*env)->DeleteLocalRef(env, refl);
	}
	refl = (*env)->ToReflectedMethod(env, r, (*env)->GetMethodID(env, r, "<init>", "()V"), 0);
	T_ASSERT(refl && !strcmp(class_of(env, refl), "java/lang/reflect/Constructor"));
	T_ASSERT((*env)->FromReflectedMethod(env, refl) == (*env)->GetMethodID(env, r, "<init>", "()V"));

	/* misuse: an exception and NULL */
	jt_expect_exc(env, (*env)->ToReflectedMethod(env, r, (*env)->GetMethodID(env, r, "m0", "()I"), 1),
	       "java/lang/IllegalArgumentException");
	jt_expect_exc(env, (*env)->ToReflectedField(env, r, (jfieldID)&fake, 0),
	       "java/lang/IllegalArgumentException");
	jt_expect_exc(env, (*env)->ToReflectedMethod(env, str, (*env)->GetMethodID(env, r, "m0", "()I"), 0),
	       "java/lang/IllegalArgumentException");	/* a member of another class */
	jt_expect_exc(env, (*env)->ToReflectedMethod(env, NULL, (jmethodID)&fake, 0),
	       "java/lang/NullPointerException");
	jt_expect_exc(env, (*env)->FromReflectedMethod(env, (*env)->NewStringUTF(env, "no method")),
	       "java/lang/IllegalArgumentException");
	refl = (*env)->ToReflectedField(env, r, (*env)->GetFieldID(env, r, "f0", "I"), 0);
	T_ASSERT(refl);
	jt_expect_exc(env, (*env)->FromReflectedMethod(env, refl), "java/lang/IllegalArgumentException");
	jt_expect_exc(env, (*env)->FromReflectedField(env, NULL), "java/lang/NullPointerException");

	/* modules */
	refl = (*env)->GetModule(env, r);
	T_ASSERT(refl && !strcmp(class_of(env, refl), "java/lang/Module"));
	T_ASSERT((*env)->IsSameObject(env, refl, (*env)->GetModule(env, str)));
	jt_expect_exc(env, (*env)->GetModule(env, NULL), "java/lang/NullPointerException");

	jt_teardown();
	printf("jni_reflect: ok\n");
	return 0;
}
