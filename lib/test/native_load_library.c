/* SPDX-License-Identifier: MIT */
/*
 * Lazy lookup in a library loaded with kgc_native_load_library: the test
 * builds a small shared object with cc (skips without a compiler), loads it
 * (RTLD_LOCAL: invisible to a process-wide dlsym) and calls its natives -
 * a regular one and a critical one - by their mangled names.
 */
#include <dlfcn.h>
#include <unistd.h>
#include "native_test.h"

static const char *src =
	"#include <stdint.h>\n"
	"__attribute__((visibility(\"default\"))) int64_t\n"
	"Java_kgc_test_Lib_mul(void *env, void *cls, int64_t a, int32_t b) { return a * b; }\n"
	"__attribute__((visibility(\"default\"))) int32_t\n"
	"JavaCritical_kgc_test_Lib_first(int32_t n, const int16_t *p) { return n ? p[0] : -1; }\n";

int main(void)
{
	char dir[] = "/tmp/kgc-native-XXXXXX", c[600], so[600], cmd[1400];
	union kgc_value a[2], r;
	kgc_method *m;
	FILE *f;

	nt_setup();
	T_ASSERT(mkdtemp(dir));
	snprintf(c, sizeof(c), "%s/lib.c", dir);
	snprintf(so, sizeof(so), "%s/libnat.so", dir);
	f = fopen(c, "w");
	T_ASSERT(f);
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -O2 -o %s %s 2>/dev/null", so, c);
	if (system(cmd) != 0) {
		unlink(c);
		rmdir(dir);
		T_SKIP_IF(1, "no C compiler to build the test library");
	}

	T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/Lib", "mul", "(JI)J",
					   KGC_NATIVE_STATIC, &m), 0);
	a[0].j = 1ll << 33;
	a[1].i = -3;
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), -ENOENT);	/* not loaded yet */
	T_ASSERT_EQ(kgc_native_load_library(nt_heap, so), 0);
	T_ASSERT(dlsym(RTLD_DEFAULT, "Java_kgc_test_Lib_mul") == NULL);	/* local to the lib */
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), 0);
	T_ASSERT_EQ(r.j, -3 * (1ll << 33));

	{
		kgc_obj arr = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_SHORT), 3);

		T_ASSERT(arr);
		((int16_t *)kgc_array_data(arr))[0] = -1234;
		T_ASSERT_EQ(kgc_native_method_find(nt_heap, "kgc/test/Lib", "first", "([S)I",
						   KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL, &m), 0);
		a[0].l = arr;
		T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), 0);
		T_ASSERT_EQ(r.i, -1234);
	}
	nt_teardown();	/* dlcloses the library */
	unlink(so);
	unlink(c);
	rmdir(dir);
	puts("ok");
	return 0;
}
