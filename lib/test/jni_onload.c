/* SPDX-License-Identifier: MIT */
/*
 * jni_onload: kgc_jni_load_library honours JNI_OnLoad and JNI_OnUnload
 * (a small JNI library built beside the tests, test/so/jni_onload_lib.c).
 * JNI_OnLoad runs once, with a JNIEnv from GetEnv, and what it keeps (a
 * global reference) serves a native called later; loading the library
 * again does not run it again; JNI_OnUnload runs at kgc_jni_vm_destroy.
 * JNI_OnLoad returning a version the VM does not know fails the load with
 * -EPROTO; a path that does not exist is -ENOENT.
 */
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include "jni_test.h"

static char so[PATH_MAX];

int main(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int (*count)(int);
	void *dl;

	T_ASSERT(n > 0);
	exe[n] = 0;
	snprintf(so, sizeof(so), "%s/../test-so/libjni_onload.so", dirname(exe));
	/* the test's own reference keeps the library mapped after the VM closes it */
	dl = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!dl)
		T_FAIL("%s: %s", so, dlerror());
	count = (int (*)(int))dlsym(dl, "jni_onload_count");
	T_ASSERT(count);

	/* a version no JNI has: the load fails */
	setenv("JNI_ONLOAD_VERSION", "0x7f000001", 1);
	jt_setup(64u << 20, 0);
	T_ASSERT_EQ(kgc_jni_load_library(jt_vm, jt_t, so), -EPROTO);
	T_ASSERT(strstr(kgc_last_error(), "not supported"));
	T_ASSERT_EQ(count(0), 1);
	T_ASSERT_EQ(kgc_jni_load_library(jt_vm, jt_t, "/nonexistent/libnothing.so"), -ENOENT);
	jt_teardown();
	T_ASSERT_EQ(count(1), 0);	/* not loaded: no JNI_OnUnload */

	unsetenv("JNI_ONLOAD_VERSION");
	jt_setup(64u << 20, 0);
	T_ASSERT_EQ(kgc_jni_load_library(jt_vm, jt_t, so), 0);
	T_ASSERT_EQ(count(0), 2);
	T_ASSERT_EQ(kgc_jni_load_library(jt_vm, jt_t, so), 0);	/* loaded already */
	T_ASSERT_EQ(count(0), 2);
	T_ASSERT_EQ(kgc_collect(jt_t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(jt_call_i(jt_method("kgc/OnLoad", "keptLength", "()I", KGC_JNI_STATIC), NULL), 18);
	T_ASSERT_EQ(count(1), 0);
	jt_teardown();
	T_ASSERT_EQ(count(1), 1);
	dlclose(dl);
	printf("jni_onload: ok\n");
	return 0;
}
