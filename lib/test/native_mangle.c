/* SPDX-License-Identifier: MIT */
/* JNI name mangling: short and overloaded forms, escapes, Unicode. */
#include "native_test.h"

static void eq(const char *prefix, const char *owner, const char *name, const char *desc,
	       const char *want)
{
	char buf[256];
	int n = kgcn_mangle(buf, sizeof(buf), prefix, owner, name, desc);

	if (n < 0 || strcmp(buf, want))
		T_FAIL("mangle(%s, %s, %s) = \"%s\" (%d), want \"%s\"", owner, name,
		       desc ? desc : "-", buf, n, want);
	T_ASSERT_EQ(n, strlen(want));
}

int main(void)
{
	char small[8];

	eq("Java_", "com/example/Foo", "bar", NULL, "Java_com_example_Foo_bar");
	eq("Java_", "my_pkg/Cls", "do_it", NULL, "Java_my_1pkg_Cls_do_1it");
	eq("Java_", "com/example/Foo", "bar", "(I[BLjava/lang/String;)V",
	   "Java_com_example_Foo_bar__I_3BLjava_lang_String_2");
	eq("Java_", "A", "f", "()V", "Java_A_f__");
	eq("Java_", "A", "f", "([[J)V", "Java_A_f___3_3J");
	eq("Java_", "p/Outer$Inner", "m", NULL, "Java_p_Outer_00024Inner_m");
	eq("Java_", "p/Caf\xc3\xa9", "m", NULL, "Java_p_Caf_000e9_m");
	eq("Java_", "p/C", "\xe2\x82\xac", NULL, "Java_p_C__020ac");
	/* supplementary: UTF-16 surrogate pair, each escaped */
	eq("Java_", "p/C", "x\xf0\x9f\x98\x80", NULL, "Java_p_C_x_0d83d_0de00");
	eq("JavaCritical_", "kgc/Bench", "sum", NULL, "JavaCritical_kgc_Bench_sum");

	/* snprintf-like: truncates, returns the full length */
	T_ASSERT_EQ(kgcn_mangle(small, sizeof(small), "Java_", "a/B", "c", NULL),
		    strlen("Java_a_B_c"));
	T_ASSERT_EQ(strlen(small), sizeof(small) - 1);
	T_ASSERT_EQ(kgcn_mangle(NULL, 0, "Java_", "a/B", "c", NULL), 10);

	/* malformed UTF-8 is refused */
	T_ASSERT_EQ(kgcn_mangle(small, sizeof(small), "Java_", "a/\xff", "c", NULL), -EINVAL);
	puts("ok");
	return 0;
}
