/* SPDX-License-Identifier: MIT */
/*
 * jni_bad_args: libkgc-jni's public API refuses bad input with -errno and
 * a message, never a crash: NULL arguments, a second VM on a heap (-EBUSY),
 * class definitions with a bad field or method descriptor, flags, a NULL
 * table or an unknown superclass (-EINVAL), unknown kgc_jni_method flags,
 * a library path that is NULL or missing, kgc_jni_exception_message of an
 * object that is no Throwable, kgc_jni_string_new of NULL.
 */
#include "jni_test.h"

static int define(const char *name, const struct kgc_jni_field_def *f, uint32_t nf,
		  const struct kgc_jni_method_def *m, uint32_t nm)
{
	struct kgc_jni_class_def d = { .size = sizeof(d), .name = name, .fields = f, .nfields = nf,
				       .methods = m, .nmethods = nm };

	return kgc_jni_class_define(jt_vm, jt_t, &d);
}

int main(void)
{
	static const struct kgc_jni_field_def bad_type[] = { { .name = "x", .sig = "Q" } };
	static const struct kgc_jni_field_def bad_ref[] = { { .name = "x", .sig = "Ljava/lang/String" } };
	static const struct kgc_jni_field_def bad_flags[] = { { .name = "x", .sig = "I", .flags = 8 } };
	static const struct kgc_jni_method_def bad_sig[] = { { .name = "m", .sig = "(I" } };
	static const struct kgc_jni_method_def bad_ret[] = { { .name = "m", .sig = "()" } };
	struct kgc_jni_class_def nulltab = { .size = sizeof(nulltab), .name = "kgc/T", .nfields = 1 };
	JavaVM *vm2 = NULL;
	JNIEnv *env;
	kgc_method *m;
	kgc_obj s[1];
	struct kgc_frame f;
	char buf[16];

	jt_setup(64u << 20, 0);
	T_ASSERT_EQ(kgc_jni_vm_create(NULL, jt_t, &vm2), -EINVAL);
	T_ASSERT_EQ(kgc_jni_vm_create(jt_heap, NULL, &vm2), -EINVAL);
	T_ASSERT_EQ(kgc_jni_vm_create(jt_heap, jt_t, NULL), -EINVAL);
	T_ASSERT_EQ(kgc_jni_vm_create(jt_heap, jt_t, &vm2), -EBUSY);	/* one VM per heap */
	T_ASSERT(strstr(kgc_last_error(), "already"));
	T_ASSERT(!vm2);
	T_ASSERT_EQ(kgc_jni_vm_destroy(NULL, jt_t), -EINVAL);
	T_ASSERT_EQ(kgc_jni_env(jt_vm, NULL, &env), -EINVAL);
	T_ASSERT_EQ(kgc_jni_env(NULL, jt_t, &env), -EINVAL);

	T_ASSERT_EQ(define("kgc/A", bad_type, 1, NULL, 0), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "kgc/A: field 0 (x): bad descriptor"));
	T_ASSERT_EQ(define("kgc/B", bad_ref, 1, NULL, 0), -EINVAL);
	T_ASSERT_EQ(define("kgc/C", bad_flags, 1, NULL, 0), -EINVAL);
	T_ASSERT_EQ(define("kgc/D", NULL, 0, bad_sig, 1), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "kgc/D.m: bad method descriptor '(I'"));
	T_ASSERT_EQ(define("kgc/E", NULL, 0, bad_ret, 1), -EINVAL);
	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, jt_t, &nulltab), -EINVAL);
	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, NULL, &nulltab), -EINVAL);
	T_ASSERT_EQ(kgc_jni_class_define(NULL, jt_t, &nulltab), -EINVAL);
	T_ASSERT_EQ(define("java/lang/String", NULL, 0, NULL, 0), -EEXIST);
	T_ASSERT_EQ(define("kgc/A", NULL, 0, NULL, 0), 0);	/* the failed ones left nothing */

	T_ASSERT_EQ(kgc_jni_method(jt_vm, "kgc/A", "m", "()V", 0x80, &m), -EINVAL);
	T_ASSERT_EQ(kgc_jni_method(jt_vm, NULL, "m", "()V", 0, &m), -EINVAL);
	T_ASSERT_EQ(kgc_jni_method(jt_vm, "kgc/A", "m", "(Q)V", KGC_JNI_STATIC, &m), -EINVAL);
	T_ASSERT_EQ(kgc_jni_load_library(jt_vm, jt_t, NULL), -EINVAL);
	T_ASSERT_EQ(kgc_jni_load_library(jt_vm, jt_t, "/nonexistent/x.so"), -ENOENT);
	T_ASSERT(!kgc_jni_string_new(jt_vm, jt_t, NULL));
	T_ASSERT(!kgc_jni_class_name(jt_vm, NULL));

	kgc_frame_push(jt_t, &f, s, 1, NULL);
	s[0] = kgc_jni_string_new(jt_vm, jt_t, "not a Throwable");
	T_ASSERT(s[0]);
	T_ASSERT_EQ(kgc_jni_exception_message(jt_vm, jt_t, s[0], buf, sizeof(buf)), -EINVAL);
	T_ASSERT_EQ(kgc_jni_exception_message(jt_vm, jt_t, NULL, buf, sizeof(buf)), -EINVAL);
	kgc_frame_pop(jt_t, &f);
	jt_teardown();
	printf("jni_bad_args: ok\n");
	return 0;
}
