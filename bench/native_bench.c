/* SPDX-License-Identifier: MIT */
/*
 * native_bench - cost of a native call through the kgc bridge (issue 5).
 *
 * A static method summing an int[16], called through
 *   (a) a regular native that uses the critical API inside (env +
 *       Get/ReleasePrimitiveArrayCritical),
 *   (b) a critical native ((len, ptr) arguments, array pinned by the bridge),
 *   (c) a plain C call of the same summing function (the floor),
 * plus empty calls (regular, critical, plain C). (a) and (b) are called the
 * way a runtime's compiled code would: through the method's prepared entry
 * (kgc_native_entry, KGC_NATIVE_SHAPE_L_I). The same calls through the
 * generic kgc_native_call, and (b) with libffi forced instead of the direct
 * trampoline, are extra rows.
 * Targets (issue 15 restated issue 5's as overhead over the plain C call,
 * since (a)/(b) >= 4x also counts the summing both do): (a)-(c) >= 4x
 * (b)-(c), and (b)-(c) <= 3 ns per call. (a)/(b) is still printed.
 *
 * Each variant makes ITERS calls in REPS chunks interleaved with the other
 * variants (so load changes on a shared machine hit all alike); the table
 * shows the best and the median chunk (ns/call). The best chunk is the
 * figure least disturbed by preemption and frequency changes.
 */
#include "common.h"

#ifdef HAVE_KGC
#include <kgc_native.h>

extern int kgcn_force_ffi;	/* lib/native/native_plan.c (libkgc-native internal; static link) */

#define ITERS 4000000	/* calls per variant (BENCH_SCALE scales) */
#define REPS 40		/* ... in REPS interleaved chunks */
#define LEN 16

__attribute__((noinline)) static int32_t sum16(int32_t len, const int32_t *p)
{
	int32_t s = 0;

	for (int32_t i = 0; i < len; i++)
		s += p[i];
	return s;
}

__attribute__((noinline)) static void empty_c(void)
{
	__asm__ volatile("" ::: "memory");
}

static int32_t r_sum(kgc_env *env, kgc_jclass cls, kgc_jobject arr)
{
	size_t n;
	const int32_t *p = (*env)->GetPrimitiveArrayCritical(env, arr, &n);
	int32_t s;

	if (!p)
		return -1;
	s = sum16((int32_t)n, p);
	(*env)->ReleasePrimitiveArrayCritical(env, arr, (void *)p, KGC_CRITICAL_ABORT);
	return s;
}

static void r_empty(kgc_env *env, kgc_jclass cls)
{
	__asm__ volatile("" ::: "memory");
}

static kgc_heap *heap;
static kgc_thread *th;
static kgc_obj slots[1];
static int32_t (*volatile sum_ptr)(int32_t, const int32_t *) = sum16;
static void (*volatile empty_ptr)(void) = empty_c;

enum {
	V_REG_SUM, V_CRIT_SUM, V_C_SUM, V_REG_EMPTY, V_CRIT_EMPTY, V_C_EMPTY,
	V_REG_SUM_CALL, V_CRIT_SUM_CALL, V_REG_EMPTY_CALL, V_CRIT_EMPTY_CALL, V_CRIT_FFI, NV
};
static const char *const vname[NV] = {
	"(a) regular native + critical API, sum int[16]",
	"(b) critical native, sum int[16]",
	"(c) plain C call, sum int[16]",
	"regular native, empty",
	"critical native, empty",
	"plain C call, empty",
	"(a) through kgc_native_call",
	"(b) through kgc_native_call",
	"regular native, empty, through kgc_native_call",
	"critical native, empty, through kgc_native_call",
	"(b) through kgc_native_call, libffi forced",
};

static kgc_method *meth[NV];
static union kgc_native_entry ent[NV];

static uint64_t run_once(int v, long iters, int32_t want)
{
	union kgc_value a[1], r;
	uint64_t t0, t1;
	int64_t acc = 0;

	t0 = now_ns();
	switch (v) {
	case V_C_SUM:
		for (long i = 0; i < iters; i++)
			acc += sum_ptr(LEN, kgc_array_data(slots[0]));
		break;
	case V_C_EMPTY:
		for (long i = 0; i < iters; i++)
			empty_ptr();
		break;
	case V_REG_SUM:
	case V_CRIT_SUM:
		for (long i = 0; i < iters; i++) {
			int32_t x;

			/* raw refs are reloaded from the root */
			if (ent[v].l_i(th, meth[v], slots[0], &x))
				die("call %s: %s", vname[v], kgc_last_error());
			acc += x;
		}
		break;
	case V_REG_EMPTY:
	case V_CRIT_EMPTY:
		for (long i = 0; i < iters; i++)
			if (ent[v].v(th, meth[v]))
				die("call %s: %s", vname[v], kgc_last_error());
		break;
	case V_REG_EMPTY_CALL:
	case V_CRIT_EMPTY_CALL:
		for (long i = 0; i < iters; i++)
			if (kgc_native_call(th, meth[v], NULL, NULL, NULL))
				die("call %s: %s", vname[v], kgc_last_error());
		break;
	default:
		for (long i = 0; i < iters; i++) {
			a[0].l = slots[0];	/* raw refs are reloaded from the root */
			if (kgc_native_call(th, meth[v], NULL, a, &r))
				die("call %s: %s", vname[v], kgc_last_error());
			acc += r.i;
		}
		break;
	}
	t1 = now_ns();
	if ((v == V_C_SUM || v == V_REG_SUM || v == V_CRIT_SUM || v == V_REG_SUM_CALL ||
	     v == V_CRIT_SUM_CALL || v == V_CRIT_FFI) && acc != (int64_t)want * iters)
		die("%s: wrong sum %lld", vname[v], (long long)acc);
	return t1 - t0;
}

int main(void)
{
	struct kgc_native_method tab[] = {
		{ "sumRegular", "([I)I", r_sum, KGC_NATIVE_STATIC },
		{ "sumCritical", "([I)I", sum16, KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL },
		{ "emptyRegular", "()V", r_empty, KGC_NATIVE_STATIC },
		{ "emptyCritical", "()V", empty_c, KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL },
	};
	struct kgc_native_method ffi_tab[] = {
		{ "sumCritical", "([I)I", sum16, KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL },
	};
	long iters = (long)(ITERS * bench_scale());
	double best[NV], med[NV];
	struct kgc_frame f;
	struct kgc_options o;
	int32_t want = 0;
	FILE *md;
	char path[512];

	if (iters < 100 * REPS)
		iters = 100 * REPS;
	kgc_options_init(&o);
	o.verify = 0;		/* measuring calls, not the verifier */
	o.max_heap = 64u << 20;
	if (kgc_heap_create(&o, &heap) || kgc_thread_attach(heap, "bench", &th))
		die("heap: %s", kgc_last_error());
	if (kgc_native_register(heap, "kgc/bench/Sum", tab, 4))
		die("register: %s", kgc_last_error());
	kgcn_force_ffi = 1;
	if (kgc_native_register(heap, "kgc/bench/SumFfi", ffi_tab, 1))
		die("register: %s", kgc_last_error());
	kgcn_force_ffi = 0;
	if (kgc_native_method_find(heap, "kgc/bench/Sum", "sumRegular", "([I)I",
				   KGC_NATIVE_STATIC, &meth[V_REG_SUM]) ||
	    kgc_native_method_find(heap, "kgc/bench/Sum", "sumCritical", "([I)I",
				   KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL, &meth[V_CRIT_SUM]) ||
	    kgc_native_method_find(heap, "kgc/bench/Sum", "emptyRegular", "()V",
				   KGC_NATIVE_STATIC, &meth[V_REG_EMPTY]) ||
	    kgc_native_method_find(heap, "kgc/bench/Sum", "emptyCritical", "()V",
				   KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL, &meth[V_CRIT_EMPTY]) ||
	    kgc_native_method_find(heap, "kgc/bench/SumFfi", "sumCritical", "([I)I",
				   KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL, &meth[V_CRIT_FFI]))
		die("find: %s", kgc_last_error());
	meth[V_REG_SUM_CALL] = meth[V_REG_SUM];
	meth[V_CRIT_SUM_CALL] = meth[V_CRIT_SUM];
	meth[V_REG_EMPTY_CALL] = meth[V_REG_EMPTY];
	meth[V_CRIT_EMPTY_CALL] = meth[V_CRIT_EMPTY];
	/* the prepared entries compiled code would call */
	if (kgc_native_entry(meth[V_REG_SUM], KGC_NATIVE_SHAPE_L_I, &ent[V_REG_SUM]) ||
	    kgc_native_entry(meth[V_CRIT_SUM], KGC_NATIVE_SHAPE_L_I, &ent[V_CRIT_SUM]) ||
	    kgc_native_entry(meth[V_REG_EMPTY], KGC_NATIVE_SHAPE_V, &ent[V_REG_EMPTY]) ||
	    kgc_native_entry(meth[V_CRIT_EMPTY], KGC_NATIVE_SHAPE_V, &ent[V_CRIT_EMPTY]))
		die("entry: %s", kgc_last_error());

	kgc_frame_push(th, &f, slots, 1, NULL);
	slots[0] = kgc_alloc_array(th, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), LEN);
	if (!slots[0])
		die("alloc: %s", kgc_last_error());
	for (int i = 0; i < LEN; i++) {
		((int32_t *)kgc_array_data(slots[0]))[i] = i * 5 - 7;
		want += i * 5 - 7;
	}

	/* warm up, then interleave chunks so drift hits every variant alike */
	for (int v = 0; v < NV; v++)
		run_once(v, iters / REPS, want);
	{
		static double t[NV][REPS];
		long chunk = iters / REPS;

		for (int rep = 0; rep < REPS; rep++)
			for (int v = 0; v < NV; v++)
				t[v][rep] = (double)run_once(v, chunk, want) / (double)chunk;
		for (int v = 0; v < NV; v++) {
			for (int i = 1; i < REPS; i++)	/* insertion sort */
				for (int j = i; j > 0 && t[v][j - 1] > t[v][j]; j--) {
					double x = t[v][j];

					t[v][j] = t[v][j - 1];
					t[v][j - 1] = x;
				}
			best[v] = t[v][0];
			med[v] = t[v][REPS / 2];
		}
	}
	kgc_frame_pop(th, &f);
	kgc_native_heap_release(heap);
	kgc_thread_detach(th);
	kgc_heap_destroy(heap);

	{
		double ratio = best[V_REG_SUM] / best[V_CRIT_SUM];
		double over = best[V_CRIT_SUM] - best[V_C_SUM];
		double ratio_m = med[V_REG_SUM] / med[V_CRIT_SUM];
		double over_m = med[V_CRIT_SUM] - med[V_C_SUM];
		/* overhead ratio: what (a) adds to the plain call against what (b) adds */
		double oratio = (best[V_REG_SUM] - best[V_C_SUM]) / over;
		double oratio_m = (med[V_REG_SUM] - med[V_C_SUM]) / over_m;

		printf("%-52s %10s %10s\n", "variant", "best ns", "median ns");
		for (int v = 0; v < NV; v++)
			printf("%-52s %10.2f %10.2f\n", vname[v], best[v], med[v]);
		printf("((a)-(c))/((b)-(c)) = %.2fx (target >= 4x) %s; (b)-(c) = %.2f ns (target <= 3 ns) %s; "
		       "(a)/(b) = %.2fx [best]\n", oratio, oratio >= 4 ? "MET" : "MISSED", over,
		       over <= 3 ? "MET" : "MISSED", ratio);
		printf("((a)-(c))/((b)-(c)) = %.2fx; (b)-(c) = %.2f ns; (a)/(b) = %.2fx [median]\n",
		       oratio_m, over_m, ratio_m);
		printf("through kgc_native_call: (a)/(b) = %.2fx, (b)-(c) = %.2f ns [best]\n",
		       best[V_REG_SUM_CALL] / best[V_CRIT_SUM_CALL],
		       best[V_CRIT_SUM_CALL] - best[V_C_SUM]);

		snprintf(path, sizeof(path), "%s/native_bench.md",
			 getenv("BENCH_OUT") ? getenv("BENCH_OUT") : ".");
		md = fopen(path, "w");
		if (md) {
			fprintf(md, "\n## Native-call bridge\n\n");
			fprintf(md, "`bench/native_bench.c`: a static method summing an int[16]; "
				    "(a) and (b) through the method's prepared entry "
				    "(`kgc_native_entry`, what compiled code calls), the same through "
				    "`kgc_native_call` as extra rows; %ld calls per variant in %d chunks "
				    "interleaved across variants; ns/call of the best and the median "
				    "chunk.\n\n", iters, REPS);
			fprintf(md, "| variant | best ns/call | median ns/call |\n|---|---:|---:|\n");
			for (int v = 0; v < NV; v++)
				fprintf(md, "| %s | %.2f | %.2f |\n", vname[v], best[v], med[v]);
			fprintf(md, "\n- overhead over the plain C call, ((a)-(c))/((b)-(c)) = **%.2fx** "
				"(median %.2fx); target >= 4x (issue 15's restatement): **%s**\n",
				oratio, oratio_m, oratio >= 4 ? "met" : "missed");
			fprintf(md, "- (a)/(b) = %.2fx (median %.2fx): issue 5's original form, which "
				"counts the summing both do (no target since issue 15)\n", ratio, ratio_m);
			fprintf(md, "- (b)-(c) = **%.2f ns** (median %.2f ns); target <= 3 ns: **%s**\n",
				over, over_m, over <= 3 ? "met" : "missed");
			fprintf(md, "- through `kgc_native_call` instead: (a)/(b) = %.2fx, "
				"(b)-(c) = %.2f ns (best)\n",
				best[V_REG_SUM_CALL] / best[V_CRIT_SUM_CALL],
				best[V_CRIT_SUM_CALL] - best[V_C_SUM]);
			fclose(md);
		}
	}
	return 0;
}

#else	/* !HAVE_KGC */

int main(void)
{
	const char *dir = getenv("BENCH_OUT");
	char path[512];
	FILE *md;

	printf("native_bench: libkgc not available; nothing measured\n");
	snprintf(path, sizeof(path), "%s/native_bench.md", dir ? dir : ".");
	md = fopen(path, "w");
	if (md) {
		fprintf(md, "\n## Native-call bridge\n\nNot available: libkgc did not build/link "
			    "when the bench ran (no numbers).\n");
		fclose(md);
	}
	return 0;
}
#endif
