/* SPDX-License-Identifier: MIT */
/*
 * jni_table: the JNIEnv and JavaVM function tables have the JDK's layout
 * and no slot is NULL: every slot of JNINativeInterface_ (all 234, the
 * reserved ones too) and of JNIInvokeInterface_ holds a function;
 * GetPrimitiveArrayCritical sits in slot 222 as <jni.h> says; every
 * function slot is implemented, and a reserved slot called anyway aborts
 * with a message naming it instead of jumping to NULL; GetVersion
 * is JNI 10. kgc_native_set_env_ops refuses a bad size (-EINVAL) and a
 * second set (-EBUSY).
 */
#include <stddef.h>
#include "jni_test.h"

static JNIEnv *child_env;
static void (*child_fn)(JNIEnv *);

static void child(void *arg)
{
	kgc_enter_native(jt_t);
	child_fn(child_env);
}

/* fn(env) in a child, from native state; its stderr */
static const char *dies(void (*fn)(JNIEnv *), JNIEnv *env)
{
	child_env = env;
	child_fn = fn;
	return jt_dies(child, NULL, "unimplemented JNI function");
}

static void reserved(JNIEnv *env)
{
	((void (*)(void))(*env)->reserved3)();
}

int main(void)
{
	const struct JNINativeInterface_ *fns;
	const struct JNIInvokeInterface_ *vfns;
	struct kgc_native_env_ops ops = { .size = 8 };
	size_t n, nv;
	JNIEnv *env;
	const char *msg;

	jt_setup(64u << 20, 0);
	T_ASSERT_EQ(kgc_jni_env(jt_vm, jt_t, &env), 0);
	fns = *env;
	vfns = *jt_vm;
	n = sizeof(*fns) / sizeof(void *);
	nv = sizeof(*vfns) / sizeof(void *);
	T_ASSERT_EQ(n, 234);
	T_ASSERT_EQ(nv, 8);
	for (size_t i = 0; i < n; i++)
		if (!((void *const *)fns)[i])
			T_FAIL("JNIEnv slot %zu is NULL", i);
	for (size_t i = 0; i < nv; i++)
		if (!((void *const *)vfns)[i])
			T_FAIL("JavaVM slot %zu is NULL", i);
	T_ASSERT_EQ(offsetof(struct JNINativeInterface_, GetPrimitiveArrayCritical) / sizeof(void *),
		    222);
	T_ASSERT_EQ(fns->GetVersion(env), JNI_VERSION_10);

	msg = dies(reserved, env);
	T_ASSERT(strstr(msg, "JNI reserved3: not implemented"));
	printf("reserved3: %s", msg);

	/* the bridge's env hooks: a bad struct, then a second provider */
	ops.enter = (void *(*)(void *, kgc_thread *, kgc_jclass, int, void **))1;
	ops.leave = (int (*)(void *, kgc_thread *, void *, kgc_obj *, char **))1;
	T_ASSERT_EQ(kgc_native_set_env_ops(jt_heap, &ops, NULL), -EINVAL);
	ops.size = sizeof(ops);
	ops.reserved[1] = 1;
	T_ASSERT_EQ(kgc_native_set_env_ops(jt_heap, &ops, NULL), -EINVAL);
	ops.reserved[1] = 0;
	T_ASSERT_EQ(kgc_native_set_env_ops(jt_heap, &ops, NULL), -EBUSY);	/* the VM's are set */
	T_ASSERT(strstr(kgc_last_error(), "already"));
	jt_teardown();
	printf("jni_table: ok\n");
	return 0;
}
