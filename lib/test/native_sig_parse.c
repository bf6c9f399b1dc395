/* SPDX-License-Identifier: MIT */
/* Descriptor parsing: accepted forms, the fingerprint, and error columns. */
#include "native_test.h"

static void ok(const char *d, unsigned np, unsigned ret, const uint8_t *types)
{
	struct native_sig s;
	char err[256];

	if (kgcn_sig_parse(d, &s, err, sizeof(err)))
		T_FAIL("%s rejected: %s", d, err);
	T_ASSERT_EQ(s.nparams, np);
	T_ASSERT_EQ(s.ret, ret);
	for (unsigned i = 0; i < np; i++)
		if (s.types[i] != types[i])
			T_FAIL("%s param %u: %u != %u", d, i, s.types[i], types[i]);
	/* fingerprint: digits in place */
	T_ASSERT(s.fingerprint & NATIVE_FP_VALID);
	T_ASSERT_EQ(NATIVE_FP_RET(s.fingerprint), ret);
	T_ASSERT_EQ(NATIVE_FP_NPARAMS(s.fingerprint), np);
	for (unsigned i = 0; i < np; i++)
		T_ASSERT_EQ(NATIVE_FP_PARAM(s.fingerprint, i), types[i]);
	kgcn_sig_free(&s);
}

static void bad(const char *d, const char *want)
{
	struct native_sig s;
	char err[256];
	int rc = kgcn_sig_parse(d, &s, err, sizeof(err));

	if (rc != -EINVAL)
		T_FAIL("%s: accepted (rc %d)", d, rc);
	if (!strstr(err, want))
		T_FAIL("%s: message \"%s\" lacks \"%s\"", d, err, want);
	printf("%-28s -> %s\n", d, err);
}

int main(void)
{
	struct native_sig s, s2;
	char d[600], err[256];

	ok("()V", 0, NT_VOID, NULL);
	ok("(I[BJ)D", 3, NT_D, (const uint8_t[]){ NT_I, NT_PARR, NT_J });
	ok("(Ljava/lang/String;)V", 1, NT_VOID, (const uint8_t[]){ NT_OBJ });
	ok("(ZBCSIJFD)Z", 8, NT_Z,
	   (const uint8_t[]){ NT_Z, NT_B, NT_C, NT_S, NT_I, NT_J, NT_F, NT_D });
	ok("([[I[Ljava/lang/Object;LA;)[J", 3, NT_PARR,
	   (const uint8_t[]){ NT_RARR, NT_RARR, NT_OBJ });
	ok("()Lp/Q;", 0, NT_OBJ, NULL);

	/* element types kept beside the fingerprint */
	T_ASSERT_EQ(kgcn_sig_parse("([C[D)[S", &s, err, sizeof(err)), 0);
	T_ASSERT_EQ(s.elems[0], KGC_PRIM_CHAR);
	T_ASSERT_EQ(s.elems[1], KGC_PRIM_DOUBLE);
	T_ASSERT_EQ(s.ret_elem, KGC_PRIM_SHORT);
	T_ASSERT_EQ(s.slots, 2);
	kgcn_sig_free(&s);

	/* same calling convention -> same fingerprint; different -> different */
	T_ASSERT_EQ(kgcn_sig_parse("(La/B;[I)J", &s, err, sizeof(err)), 0);
	T_ASSERT_EQ(kgcn_sig_parse("(Lc/D;[F)J", &s2, err, sizeof(err)), 0);
	T_ASSERT(s.fingerprint == s2.fingerprint);
	kgcn_sig_free(&s2);
	T_ASSERT_EQ(kgcn_sig_parse("(La/B;[I)I", &s2, err, sizeof(err)), 0);
	T_ASSERT(s.fingerprint != s2.fingerprint);
	kgcn_sig_free(&s2);
	kgcn_sig_free(&s);

	/* 13 parameters fit, 14 do not (fingerprint 0: long signature) */
	T_ASSERT_EQ(kgcn_sig_parse("(IIIIIIIIIIIII)V", &s, err, sizeof(err)), 0);
	T_ASSERT(s.fingerprint != 0);
	kgcn_sig_free(&s);
	T_ASSERT_EQ(kgcn_sig_parse("(IIIIIIIIIIIIII)V", &s, err, sizeof(err)), 0);
	T_ASSERT_EQ(s.fingerprint, 0);
	T_ASSERT_EQ(s.nparams, 14);
	kgcn_sig_free(&s);

	/* 255 slots is the JVM limit: 127 longs + 1 int ok, 128 longs not */
	strcpy(d, "(");
	for (int i = 0; i < 127; i++)
		strcat(d, "J");
	strcat(d, "I)V");
	T_ASSERT_EQ(kgcn_sig_parse(d, &s, err, sizeof(err)), 0);
	T_ASSERT_EQ(s.slots, 255);
	kgcn_sig_free(&s);
	strcpy(d, "(");
	for (int i = 0; i < 128; i++)
		strcat(d, "J");
	strcat(d, ")V");
	bad(d, "exceed 255 slots at column 129");

	bad("I)V", "expected '(', found 'I' at column 1");
	bad("", "expected '(', found end of descriptor at column 1");
	bad("(IQ)V", "unknown type 'Q' at column 3");
	bad("(I)q", "unknown type 'q' at column 4");
	bad("(Ljava/lang/String)V", "class name not terminated by ';' at column 2");
	bad("(L;)V", "empty class name at column 2");
	bad("(Ljava//String;)V", "'/' in class name at column 8");
	bad("(Ljava.lang.String;)V", "'.' in class name at column 7");
	bad("(I", "missing ')' at column 3");
	bad("(V)V", "void parameter at column 2");
	bad("([V)V", "array of void at column 3");
	bad("()", "expected a type, found end of descriptor at column 3");
	bad("()VX", "'X' after the return type at column 4");
	bad("(I)[", "expected a type, found end of descriptor at column 5");
	T_ASSERT_EQ(kgcn_sig_parse(NULL, &s, err, sizeof(err)), -EINVAL);
	puts("ok");
	return 0;
}
