/* SPDX-License-Identifier: MIT */
/*
 * Registration errors: bad syntax, unknown type, duplicates, critical misuse,
 * flag mismatches; a failing table binds nothing.
 */
#include "native_test.h"

static int32_t f_ii(kgc_env *env, kgc_jclass c, int32_t a) { return a + 1; }
static int32_t g_ii(kgc_env *env, kgc_jclass c, int32_t a) { return a + 2; }
static int32_t crit(int32_t len, int32_t *p) { return len; }

#define O "kgc/test/Reg"

static void reg_fails(const struct kgc_native_method *tab, size_t n, int want_rc,
		      const char *msg1, const char *msg2)
{
	int rc = kgc_native_register(nt_heap, O, tab, n);

	if (rc != want_rc)
		T_FAIL("register %s%s: rc %d, want %d", tab[n - 1].name,
		       tab[n - 1].signature, rc, want_rc);
	T_ASSERT_STR_HAS(kgc_last_error(), msg1);
	if (msg2)
		T_ASSERT_STR_HAS(kgc_last_error(), msg2);
	printf("%s\n", kgc_last_error());
}

int main(void)
{
	const uint32_t S = KGC_NATIVE_STATIC, C = KGC_NATIVE_CRITICAL | KGC_NATIVE_STATIC;
	kgc_method *m, *m2;
	union kgc_value a[1], r;

	nt_setup();

	/* bad syntax / unknown type: the method and the column are named */
	reg_fails((struct kgc_native_method[]){ { "m1", "(I", f_ii, S } }, 1, -EINVAL,
		  O ".m1(I", "missing ')' at column 3");
	reg_fails((struct kgc_native_method[]){ { "m2", "(IQ)I", f_ii, S } }, 1, -EINVAL,
		  O ".m2(IQ)I", "unknown type 'Q' at column 3");
	reg_fails((struct kgc_native_method[]){ { "m3", "(Ljava/lang/String)I", f_ii, S } }, 1,
		  -EINVAL, "m3", "not terminated by ';' at column 2");
	reg_fails((struct kgc_native_method[]){ { "m4", "(I)I", NULL, S } }, 1, -EINVAL,
		  "m4", "NULL function pointer");
	reg_fails((struct kgc_native_method[]){ { NULL, "(I)I", f_ii, S } }, 1, -EINVAL,
		  O, "without a name");

	/* duplicates: within one table, and against an earlier registration */
	reg_fails((struct kgc_native_method[]){ { "d", "(I)I", f_ii, S },
						{ "d", "(I)I", g_ii, S } }, 2, -EEXIST,
		  O ".d(I)I", "duplicate registration (entries 0 and 1");
	T_ASSERT_EQ(kgc_native_register(nt_heap, O,
		(struct kgc_native_method[]){ { "d", "(I)I", f_ii, S } }, 1), 0);
	reg_fails((struct kgc_native_method[]){ { "d", "(I)I", g_ii, S } }, 1, -EEXIST,
		  O ".d(I)I", "already registered");
	/* an overload is a different method */
	T_ASSERT_EQ(kgc_native_register(nt_heap, O,
		(struct kgc_native_method[]){ { "d", "(J)I", g_ii, S } }, 1), 0);

	/* critical misuse */
	reg_fails((struct kgc_native_method[]){ { "c1", "([I)I", crit, KGC_NATIVE_CRITICAL } },
		  1, -EINVAL, "c1([I)I", "must be static");
	reg_fails((struct kgc_native_method[]){ { "c2", "(Ljava/lang/String;)I", crit, C } }, 1,
		  -EINVAL, "c2", "parameter 1 is a reference");
	reg_fails((struct kgc_native_method[]){ { "c3", "(I[[I)I", crit, C } }, 1, -EINVAL,
		  "c3", "parameter 2 is a reference array");
	reg_fails((struct kgc_native_method[]){ { "c4", "()[I", crit, C } }, 1, -EINVAL,
		  "c4", "cannot return an array");
	reg_fails((struct kgc_native_method[]){ { "c5", "()Lp/Q;", crit, C } }, 1, -EINVAL,
		  "c5", "cannot return a reference");
	reg_fails((struct kgc_native_method[]){ { "c6", "(I)I", crit, C | 0x100 } }, 1,
		  -EINVAL, "c6", "unknown flags");

	/* a failing table binds none of its good entries */
	reg_fails((struct kgc_native_method[]){ { "good", "(I)I", f_ii, S },
						{ "bad", "(I)X", f_ii, S } }, 2, -EINVAL,
		  O ".bad(I)X", "unknown type 'X' at column 4");
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, O, "good", "(I)I", S, &m), 0);
	T_ASSERT_EQ(kgc_native_method_link(m), -ENOENT);	/* unbound: lazy lookup misses */

	/* flags must agree with the known method */
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, O, "d", "(I)I", 0, &m2), -EINVAL);
	T_ASSERT(m2 == NULL);
	T_ASSERT_STR_HAS(kgc_last_error(), "looked up as instance but known as static");
	reg_fails((struct kgc_native_method[]){ { "good", "(I)I", f_ii, 0 } }, 1, -EINVAL,
		  "good", "registered as instance but known as static");
	/* registering a method created unbound by find binds it */
	T_ASSERT_EQ(kgc_native_register(nt_heap, O,
		(struct kgc_native_method[]){ { "good", "(I)I", g_ii, S } }, 1), 0);
	a[0].i = 40;
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), 0);
	T_ASSERT_EQ(r.i, 42);

	/* unregister: falls back to lazy lookup (which misses here) */
	T_ASSERT_EQ(kgc_native_unregister(nt_heap, O), 0);
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), -ENOENT);
	/* and may be registered again */
	T_ASSERT_EQ(kgc_native_register(nt_heap, O,
		(struct kgc_native_method[]){ { "good", "(I)I", f_ii, S } }, 1), 0);
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), 0);
	T_ASSERT_EQ(r.i, 41);

	/* argument checks */
	T_ASSERT_EQ(kgc_native_register(NULL, O, NULL, 0), -EINVAL);
	T_ASSERT_EQ(kgc_native_register(nt_heap, "", NULL, 0), -EINVAL);
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, O, "x", "(", S, &m), -EINVAL);
	T_ASSERT_STR_HAS(kgc_last_error(), "missing ')' at column 2");
	nt_teardown();
	puts("ok");
	return 0;
}
