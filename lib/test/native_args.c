/* SPDX-License-Identifier: MIT */
/*
 * Every argument and return kind through the regular and the critical path:
 * booleans/bytes/chars/shorts (sign and zero extension), ints, longs, floats,
 * doubles, mixes beyond the 6 integer / 8 fp registers (stack arguments),
 * primitive arrays (handles for regular natives, (len, ptr) for critical
 * ones, null arrays). Each table runs with the direct trampolines and again
 * with libffi forced, and the call kinds actually used are checked.
 */
#include "native_test.h"

/* ---- the C functions (regular: env + class first) */
#define R kgc_env *env, kgc_jclass cls

static int64_t r_ints(R, uint8_t z, int8_t b, uint16_t c, int16_t s, int32_t i, int64_t j)
{
	return (int64_t)z + 10 * (int64_t)b + 100 * (int64_t)c + 1000000 * (int64_t)s +
	       (int64_t)i * 3 + j;
}
static int64_t c_ints(uint8_t z, int8_t b, uint16_t c, int16_t s, int32_t i, int64_t j)
{
	return r_ints(NULL, NULL, z, b, c, s, i, j);
}
static uint8_t r_z(R, uint8_t z) { return !z; }
static int8_t r_b(R, int8_t b) { return (int8_t)(b - 1); }
static uint16_t r_c(R, uint16_t c) { return (uint16_t)(c + 1); }
static int16_t r_s(R, int16_t s) { return (int16_t)(s - 1); }
static uint8_t c_z(uint8_t z) { return !z; }
static int8_t c_b(int8_t b) { return (int8_t)(b - 1); }
static uint16_t c_c(uint16_t c) { return (uint16_t)(c + 1); }
static int16_t c_s(int16_t s) { return (int16_t)(s - 1); }
static float r_f(R, float a, float b) { return a * b; }
static float c_f(float a, float b) { return a * b; }
static double r_d(R, double a, int32_t k, double b) { return a * k + b; }
static double c_d(double a, int32_t k, double b) { return a * k + b; }
static void r_v(R) { }
static void c_v(void) { }

/* 10 integer-class + 10 fp-class Java params: stack arguments on both files */
#define MIXP int32_t i0, double d0, int64_t j0, float f0, int32_t i1, double d1, int64_t j1, float f1, \
	int32_t i2, double d2, int64_t j2, float f2, int32_t i3, double d3, int64_t j3, float f3, \
	int32_t i4, double d4, int64_t j4, float f4
#define MIXSIG "(IDJFIDJFIDJFIDJFIDJF)D"
#define MIXBODY return i0 + 2 * d0 + 3 * j0 + 4 * f0 + 5 * i1 + 6 * d1 + 7 * j1 + 8 * f1 + \
	9 * i2 + 10 * d2 + 11 * j2 + 12 * f2 + 13 * i3 + 14 * d3 + 15 * j3 + 16 * f3 + \
	17 * i4 + 18 * d4 + 19 * j4 + 20 * f4;
static double r_mix(R, MIXP) { MIXBODY }
static double c_mix(MIXP) { MIXBODY }

/* fits registers with fp: NC_REG */
static double r_reg(R, int32_t i, float f, double d, int64_t j, float g)
{
	return i + f * 2 + d * 3 + (double)j * 4 + g * 5;
}
static double c_reg(int32_t i, float f, double d, int64_t j, float g)
{
	return r_reg(NULL, NULL, i, f, d, j, g);
}

/* arrays */
static int64_t r_arr(R, kgc_jobject ia, kgc_jobject da, int32_t k)
{
	int32_t iv[8];
	double dv[8];
	size_t ni, nd;
	int64_t s = k;

	ni = ia ? (*env)->GetArrayLength(env, ia) : 0;
	nd = da ? (*env)->GetArrayLength(env, da) : 0;
	if (ni > 8 || nd > 8)
		return -1;
	if (ni && (*env)->GetArrayRegion(env, ia, 'I', 0, ni, iv))
		return -2;
	if (nd && (*env)->GetArrayRegion(env, da, 'D', 0, nd, dv))
		return -3;
	for (size_t i = 0; i < ni; i++)
		s += iv[i] * (int64_t)(i + 1);
	for (size_t i = 0; i < nd; i++)
		s += (int64_t)(dv[i] * 100);
	return s * 1000 + (int64_t)ni * 10 + (int64_t)nd;
}
static int64_t c_arr(int32_t ni, int32_t *iv, int32_t nd, double *dv, int32_t k)
{
	int64_t s = k;

	for (int32_t i = 0; i < ni; i++)
		s += iv[i] * (int64_t)(i + 1);
	for (int32_t i = 0; i < nd; i++)
		s += (int64_t)(dv[i] * 100);
	return s * 1000 + (int64_t)ni * 10 + (int64_t)nd;
}

/* many arrays + ints: critical expands to 2 C args per array -> stack */
static int64_t c_arr4(int32_t n0, int8_t *a0, int32_t n1, int16_t *a1, int32_t k,
		      int32_t n2, int64_t *a2, int32_t n3, float *a3)
{
	return (int64_t)n0 + 10 * n1 + 100 * n2 + 1000 * n3 + a0[0] + a1[0] + a2[0] +
	       (int64_t)a3[0] + k * 100000;
}

/* mixed beyond registers in a critical native, with arrays in the middle */
static double c_mixarr(int32_t i0, int64_t j0, int32_t n0, int32_t *a0, double d0, float f0,
		       int32_t i1, int64_t j1, int32_t n1, double *a1, double d1, double d2,
		       double d3, double d4, double d5, double d6, double d7, float f1)
{
	return i0 + 2.0 * j0 + 3.0 * n0 + 4.0 * a0[n0 - 1] + 5 * d0 + 6 * f0 + 7.0 * i1 +
	       8.0 * j1 + 9.0 * n1 + 10 * a1[0] + 11 * d1 + 12 * d2 + 13 * d3 + 14 * d4 +
	       15 * d5 + 16 * d6 + 17 * d7 + 18 * f1;
}
#define MIXARRSIG "(IJ[IDFIJ[DDDDDDDDF)D"

static kgc_obj int_array(const int32_t *v, size_t n)
{
	kgc_obj a = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), n);

	T_ASSERT(a);
	memcpy(kgc_array_data(a), v, n * sizeof(*v));
	return a;
}

static kgc_obj prim_array(int prim, size_t n, const void *v)
{
	kgc_obj a = kgc_alloc_array(nt_thread, KGC_TYPE_PRIM_ARRAY(prim), n);

	T_ASSERT(a);
	memcpy(kgc_array_data(a), v, n * kgcn_prim_size(prim));
	return a;
}

static void run(const char *owner, bool ffi)
{
	const uint32_t S = KGC_NATIVE_STATIC, C = KGC_NATIVE_CRITICAL | KGC_NATIVE_STATIC;
	unsigned kinds[3] = { 0, 0, 0 };
	union kgc_value a[20], r;
	char crit_owner[64];
	kgc_method *m;

#define CALL(m, expect_rc) do { \
	kinds[(m)->call_kind]++; \
	T_ASSERT_EQ(kgc_native_call(nt_thread, (m), NULL, a, &r), (expect_rc)); \
} while (0)

	snprintf(crit_owner, sizeof(crit_owner), "%sCrit", owner);
	kgcn_force_ffi = ffi;

	/* ints with sign / zero extension */
	a[0].z = 1; a[1].b = -5; a[2].c = 0xffff; a[3].s = -3; a[4].i = -7; a[5].j = 1ll << 40;
	{
		int64_t want = c_ints(1, -5, 0xffff, -3, -7, 1ll << 40);

		m = nt_reg(owner, "ints", "(ZBCSIJ)J", r_ints, S);
		CALL(m, 0);
		T_ASSERT_EQ(r.j, want);
		m = nt_reg(crit_owner, "ints", "(ZBCSIJ)J", c_ints, C);
		CALL(m, 0);
		T_ASSERT_EQ(r.j, want);
	}
	/* small returns */
	{
		struct { const char *n, *sig; void *rf, *cf; } t[] = {
			{ "z", "(Z)Z", r_z, c_z }, { "b", "(B)B", r_b, c_b },
			{ "c", "(C)C", r_c, c_c }, { "s", "(S)S", r_s, c_s },
		};
		for (int k = 0; k < 4; k++)
			for (int crit = 0; crit < 2; crit++) {
				m = nt_reg(crit ? crit_owner : owner, t[k].n, t[k].sig,
					   crit ? t[k].cf : t[k].rf, crit ? C : S);
				memset(&r, 0x5a, sizeof(r));
				switch (k) {
				case 0: a[0].z = 0; CALL(m, 0); T_ASSERT_EQ(r.z, 1); break;
				case 1: a[0].b = -128; CALL(m, 0); T_ASSERT_EQ(r.b, 127); break;
				case 2: a[0].c = 0xffff; CALL(m, 0); T_ASSERT_EQ(r.c, 0); break;
				case 3: a[0].s = -32768; CALL(m, 0); T_ASSERT_EQ(r.s, 32767); break;
				}
			}
	}
	/* floats, doubles */
	a[0].f = 1.5f; a[1].f = -2.25f;
	m = nt_reg(owner, "f", "(FF)F", r_f, S);
	CALL(m, 0);
	T_ASSERT(r.f == -3.375f);
	m = nt_reg(crit_owner, "f", "(FF)F", c_f, C);
	CALL(m, 0);
	T_ASSERT(r.f == -3.375f);
	a[0].d = 0.5; a[1].i = 7; a[2].d = 1e300;
	m = nt_reg(owner, "d", "(DID)D", r_d, S);
	CALL(m, 0);
	T_ASSERT(r.d == c_d(0.5, 7, 1e300));
	m = nt_reg(crit_owner, "d", "(DID)D", c_d, C);
	CALL(m, 0);
	T_ASSERT(r.d == c_d(0.5, 7, 1e300));
	m = nt_reg(owner, "v", "()V", r_v, S);
	CALL(m, 0);
	m = nt_reg(crit_owner, "v", "()V", c_v, C);
	CALL(m, 0);
	T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, NULL, NULL), 0);

	/* NC_REG shape */
	a[0].i = 3; a[1].f = 0.25f; a[2].d = -1.5; a[3].j = 1ll << 35; a[4].f = 8.0f;
	{
		double want = c_reg(3, 0.25f, -1.5, 1ll << 35, 8.0f);

		m = nt_reg(owner, "reg", "(IFDJF)D", r_reg, S);
		CALL(m, 0);
		T_ASSERT(r.d == want);
		m = nt_reg(crit_owner, "reg", "(IFDJF)D", c_reg, C);
		CALL(m, 0);
		T_ASSERT(r.d == want);
	}

	/* beyond registers: 10 integer + 10 fp Java params */
	for (int k = 0; k < 5; k++) {
		a[4 * k + 0].i = -(k + 1) * 1000;
		a[4 * k + 1].d = 0.5 + k;
		a[4 * k + 2].j = (int64_t)(k + 1) << 33;
		a[4 * k + 3].f = 0.25f * (float)(k + 1);
	}
	{
		double want = c_mix(a[0].i, a[1].d, a[2].j, a[3].f, a[4].i, a[5].d, a[6].j, a[7].f,
				    a[8].i, a[9].d, a[10].j, a[11].f, a[12].i, a[13].d, a[14].j,
				    a[15].f, a[16].i, a[17].d, a[18].j, a[19].f);

		m = nt_reg(owner, "mix", MIXSIG, r_mix, S);
		T_ASSERT_EQ(m->call_kind, NC_FFI);
		CALL(m, 0);
		T_ASSERT(r.d == want);
		m = nt_reg(crit_owner, "mix", MIXSIG, c_mix, C);
		CALL(m, 0);
		T_ASSERT(r.d == want);
	}

	/* arrays: regular gets handles, critical gets (len, ptr) */
	{
		static const int32_t iv[5] = { 1, -2, 3, -4, 5 };
		static const double dv[3] = { 0.5, 1.25, -2.0 };
		int64_t want = c_arr(5, (int32_t *)iv, 3, (double *)dv, 9);
		int64_t want_null = c_arr(0, NULL, 3, (double *)dv, 9);

		a[0].l = int_array(iv, 5);
		a[1].l = prim_array(KGC_PRIM_DOUBLE, 3, dv);
		a[2].i = 9;
		m = nt_reg(owner, "arr", "([I[DI)J", r_arr, S);
		CALL(m, 0);
		T_ASSERT_EQ(r.j, want);
		a[0].l = int_array(iv, 5);	/* raw refs die at safepoints: reload */
		a[1].l = prim_array(KGC_PRIM_DOUBLE, 3, dv);
		m = nt_reg(crit_owner, "arr", "([I[DI)J", c_arr, C);
		CALL(m, 0);
		T_ASSERT_EQ(r.j, want);
		/* null array: regular gets a NULL handle, critical gets (0, NULL) */
		a[0].l = NULL;
		a[1].l = prim_array(KGC_PRIM_DOUBLE, 3, dv);
		m = nt_reg(owner, "arr", "([I[DI)J", r_arr, S);
		CALL(m, 0);
		T_ASSERT_EQ(r.j, want_null);
		a[0].l = NULL;
		a[1].l = prim_array(KGC_PRIM_DOUBLE, 3, dv);
		m = nt_reg(crit_owner, "arr", "([I[DI)J", c_arr, C);
		CALL(m, 0);
		T_ASSERT_EQ(r.j, want_null);
	}
	{
		int8_t b0[2] = { -1, 0 };
		int16_t s0[3] = { 300, 0, 0 };
		int64_t j0[4] = { 1ll << 40, 0, 0, 0 };
		float f0[5] = { 2.0f, 0, 0, 0, 0 };
		int64_t want = c_arr4(2, b0, 3, s0, 77, 4, j0, 5, f0);

		a[0].l = prim_array(KGC_PRIM_BYTE, 2, b0);
		a[1].l = prim_array(KGC_PRIM_SHORT, 3, s0);
		a[2].i = 77;
		a[3].l = prim_array(KGC_PRIM_LONG, 4, j0);
		a[4].l = prim_array(KGC_PRIM_FLOAT, 5, f0);
		m = nt_reg(crit_owner, "arr4", "([B[SI[J[F)J", c_arr4, C);
		T_ASSERT_EQ(m->call_kind, NC_FFI);	/* 9 C integer args */
		CALL(m, 0);
		T_ASSERT_EQ(r.j, want);
	}
	{
		int32_t ia[3] = { 5, 6, 7 };
		double da[1] = { 0.125 };
		double want = c_mixarr(1, 2, 3, ia, 0.5, 0.25f, 3, 4, 1, da, 1, 2, 3, 4, 5, 6, 7, 1.5f);

		a[0].i = 1; a[1].j = 2; a[2].l = int_array(ia, 3); a[3].d = 0.5; a[4].f = 0.25f;
		a[5].i = 3; a[6].j = 4;
		a[7].l = prim_array(KGC_PRIM_DOUBLE, 1, da);
		for (int k = 0; k < 7; k++)
			a[8 + k].d = k + 1;
		a[15].f = 1.5f;
		m = nt_reg(crit_owner, "mixarr", MIXARRSIG, c_mixarr, C);
		CALL(m, 0);
		T_ASSERT(r.d == want);
	}
	/* a non-array object passed where a critical array is expected */
	{
		kgc_obj ra = kgc_alloc_array(nt_thread, KGC_TYPE_REF_ARRAY, 2);

		a[0].l = ra;
		a[1].l = NULL;
		a[2].i = 0;
		m = nt_reg(crit_owner, "arr", "([I[DI)J", c_arr, C);
		T_ASSERT_EQ(kgc_native_call(nt_thread, m, NULL, a, &r), -EINVAL);
		T_ASSERT_STR_HAS(kgc_last_error(), "argument 1");
	}
	printf("%s (%s): direct int %u, direct reg %u, ffi %u calls\n", owner,
	       ffi ? "ffi forced" : "default", kinds[NC_INT6], kinds[NC_REG], kinds[NC_FFI]);
	if (ffi) {
		T_ASSERT_EQ(kinds[NC_INT6] + kinds[NC_REG], 0);
	} else {
		T_ASSERT(kinds[NC_INT6] > 0);
		T_ASSERT(kinds[NC_REG] > 0);
		T_ASSERT(kinds[NC_FFI] > 0);
	}
	kgcn_force_ffi = 0;
}

int main(void)
{
	nt_setup();
	run("kgc/test/Args", false);
	kgc_native_heap_release(nt_heap);
	run("kgc/test/ArgsFfi", true);
	nt_teardown();
	puts("ok");
	return 0;
}
