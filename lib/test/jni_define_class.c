/* SPDX-License-Identifier: MIT */
/*
 * jni_define_class: DefineClass goes through the host's define_class. With
 * no such callback it throws UnsupportedOperationException and returns
 * NULL (a library may probe it: no abort). With one, a "class file" (here
 * a list of int field names, a random count per seed) defines the class:
 * DefineClass returns it, FindClass finds the same class, its fields work.
 * A callback that fails gives ClassFormatError naming the errno; one that
 * returns 0 without defining the class NoClassDefFoundError; a NULL name
 * NoClassDefFoundError; a negative length ClassFormatError.
 * kgc_jni_set_host refuses a nonzero reserved field (-EINVAL).
 */
#include "jni_test.h"

static int calls;

/* buf: "f0 f1 f2": int fields; "fail": -EINVAL; "nothing": 0, no class */
static int define_class(void *ctx, JavaVM *vm, kgc_thread *t, const char *name,
			const jbyte *buf, jsize len)
{
	struct kgc_jni_field_def f[16];
	static char fname[16][32];	/* kgc_jni_class_define copies them */
	char text[256], *save = NULL;
	struct kgc_jni_class_def d = { .size = sizeof(d), .name = name, .fields = f };

	calls++;
	T_ASSERT(ctx == &calls && vm == jt_vm && t == jt_t);
	if (len >= (jsize)sizeof(text))
		return -E2BIG;
	memcpy(text, buf, (size_t)len);
	text[len] = 0;
	if (!strcmp(text, "fail"))
		return -EINVAL;
	if (!strcmp(text, "nothing"))
		return 0;
	for (char *w = strtok_r(text, " ", &save); w && d.nfields < 16; w = strtok_r(NULL, " ", &save))
	{
		snprintf(fname[d.nfields], sizeof(fname[0]), "%s", w);
		f[d.nfields] = (struct kgc_jni_field_def){ .name = fname[d.nfields], .sig = "I" };
		d.nfields++;
	}
	return kgc_jni_class_define(vm, t, &d);
}

int main(void)
{
	unsigned long long seed = t_seed();
	struct kgc_jni_host host = { .size = sizeof(host), .define_class = define_class };
	int nf = 1 + (int)(t_rand(&seed) % 12);
	char file[256] = "";
	jclass c;
	jobject o;
	JNIEnv *env;

	jt_setup(64u << 20, 0);
	T_ASSERT_EQ(kgc_jni_env(jt_vm, jt_t, &env), 0);

	/* no callback: the JNI failure, not an abort */
	jt_expect_exc(env, (*env)->DefineClass(env, "kgc/D", NULL, (const jbyte *)"f0", 2),
	       "java/lang/UnsupportedOperationException");

	host.reserved[0] = 1;
	T_ASSERT_EQ(kgc_jni_set_host(jt_vm, &host, &calls), -EINVAL);
	host.reserved[0] = 0;
	T_ASSERT_EQ(kgc_jni_set_host(jt_vm, &host, &calls), 0);

	for (int i = 0; i < nf; i++)
		snprintf(file + strlen(file), sizeof(file) - strlen(file), "%sf%d", i ? " " : "", i);
	c = (*env)->DefineClass(env, "kgc/D", NULL, (const jbyte *)file, (jsize)strlen(file));
	T_ASSERT(c && !(*env)->ExceptionCheck(env));
	T_ASSERT_EQ(calls, 1);
	T_ASSERT((*env)->IsSameObject(env, c, (*env)->FindClass(env, "kgc/D")));
	o = (*env)->AllocObject(env, c);
	T_ASSERT(o);
	for (int i = 0; i < nf; i++) {
		char n[8];
		jfieldID f;

		snprintf(n, sizeof(n), "f%d", i);
		f = (*env)->GetFieldID(env, c, n, "I");
		T_ASSERT(f);
		(*env)->SetIntField(env, o, f, i * 3);
		T_ASSERT_EQ((*env)->GetIntField(env, o, f), i * 3);
	}
	jt_expect_exc(env, (*env)->GetFieldID(env, c, "f99", "I") ? (jclass)1 : NULL,
	       "java/lang/NoSuchFieldError");

	/* failures */
	jt_expect_exc(env, (*env)->DefineClass(env, "kgc/E", NULL, (const jbyte *)"fail", 4),
	       "java/lang/ClassFormatError");
	T_ASSERT_EQ(calls, 2);
	jt_expect_exc(env, (*env)->DefineClass(env, "kgc/F", NULL, (const jbyte *)"nothing", 7),
	       "java/lang/NoClassDefFoundError");
	jt_expect_exc(env, (*env)->DefineClass(env, NULL, NULL, (const jbyte *)"f0", 2),
	       "java/lang/NoClassDefFoundError");
	jt_expect_exc(env, (*env)->DefineClass(env, "kgc/G", NULL, (const jbyte *)"f0", -1),
	       "java/lang/ClassFormatError");
	jt_expect_exc(env, (*env)->DefineClass(env, "kgc/D", NULL, (const jbyte *)"f0", 2),
	       "java/lang/ClassFormatError");	/* defined already: -EEXIST */
	T_ASSERT_EQ(calls, 4);

	jt_teardown();
	printf("jni_define_class: ok (%d fields)\n", nf);
	return 0;
}
