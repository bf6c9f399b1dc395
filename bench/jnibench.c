/* SPDX-License-Identifier: MIT */
/*
 * jnibench - Debian's lz4-java natives (liblz4-jni's jni/liblz4-java.so,
 * unmodified) on kgc through libkgc-jni against HotSpot running the same
 * .so through Debian's jar (liblz4-java; bench/JniBench.java), same run
 * (issue 29):
 *
 *  ops    LZ4_compress_limitedOutput and LZ4_decompress_safe throughput on
 *         byte[] of 64 KiB and 4 MiB (the .so pins both arrays with
 *         GetPrimitiveArrayCritical), and ns per call of the trivial native
 *         LZ4_compressBound(I)I: kgc (its prepared entry, what compiled
 *         code calls, and kgc_native_call; the JNIEnv of libkgc-jni) vs
 *         HotSpot 17 and JDK 25 (C2-compiled calls).
 *  stall  two threads allocate 16-node lists in batches of 1000 (~50 MB
 *         live, replaced gradually) while a third compresses a 4 MiB or a
 *         64 MiB byte[] in a loop: batch latency p50/p99.9/max, batches over
 *         50 ms, allocation rate. kgc pin mode (the .so's critical section
 *         pins the array's regions, collections go on) and GCLocker mode vs
 *         JDK 17 G1 (GCLocker) and JDK 25 G1 (JEP 423 region pinning).
 *
 * Both sides use the same data (xorshift64*, seed 42: copies of 4..19 bytes
 * from up to 64 back, one fresh byte in four; ~0.37 compression ratio).
 * `jnibench` is the driver (each configuration a fresh process);
 * `jnibench ops kgc|jdk17|jdk25`, `jnibench stall <pin|gclocker|jdk17|jdk25>
 * <bytes>` are single runs. BENCH_SCALE scales the seconds.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include "common.h"
#ifdef HAVE_KGC
#include <kgc_jni.h>
#endif
#include "stall_load.h"

#define LZ4_SO "/usr/lib/x86_64-linux-gnu/jni/liblz4-java.so"
#define LZ4_DIR "/usr/lib/x86_64-linux-gnu/jni"
#define LZ4_JAR "/usr/share/java/lz4-java.jar"
#define JAVA25 JDK25_HOME "/bin/java"	/* common.h: jdk_select's JDK 25 */
#define HEAP "1g"			/* every configuration's maximum heap */
#define HEAP_BYTES (1ul << 30)

enum { CHUNKS = 10 };
#define LIVE_BYTES 25000000ul		/* per allocating thread, in 24-byte nodes */

/* The data of JniBench.data(): the same bytes on both sides. */
static void fill_data(unsigned char *b, size_t n)
{
	uint64_t s = 42;
	size_t d = 1, left = 0;

	for (size_t i = 0; i < n; i++) {
		if (!left) {
			uint64_t r;

			s ^= s >> 12;
			s ^= s << 25;
			s ^= s >> 27;
			r = s * 0x2545F4914F6CDD1Dull;
			if (i < 64 || !(r & 3)) {
				b[i] = (unsigned char)(r >> 16);
				continue;
			}
			d = 1 + ((r >> 8) & 63);
			left = 4 + ((r >> 24) & 15);
		}
		b[i] = b[i - d];
		left--;
	}
}

static double secs_of(double base) { return base * bench_scale(); }

/* ------------------------------------------------------ HotSpot workers */

/* java [-XX:+UseG1GC] -cp <out>:<jar> -Djava.library.path=<jni dir> JniBench args... */
static int java_worker(const char *jdk, char *const jargs[])
{
	char dir[4096], cp[4200], res[1024];
	char *args[16] = { NULL, "-Xmx" HEAP, "-Xms" HEAP, "-XX:+UseG1GC", "-cp", cp,
			   "-Djava.library.path=" LZ4_DIR, "JniBench" };
	int n = 8;

	jdk_select(!strcmp(jdk, "jdk25") ? "lz4@25" : "lz4");	/* sets java_bin */
	args[0] = (char *)java_bin;
	exe_dir(dir, sizeof(dir));
	snprintf(cp, sizeof(cp), "%s:%s", dir, LZ4_JAR);
	for (int i = 0; jargs[i] && n < 15; i++)
		args[n++] = jargs[i];
	args[n] = NULL;
	if (run_java_class(dir, "JniBench", args, res, sizeof(res)))
		return 0;
	printf("RESULT %s\n", res);
	return 0;
}

/* --------------------------------------------------------- kgc workers */
#ifdef HAVE_KGC
#define LZ4J "net/jpountz/lz4/LZ4JNI"
#define BB "Ljava/nio/ByteBuffer;"

static JavaVM *vm;
static kgc_method *m_bound, *m_comp, *m_decomp;
static atomic_int ready;
static atomic_ulong ncalls;

static kgc_method *method(const char *name, const char *sig)
{
	kgc_method *m;

	if (kgc_jni_method(vm, LZ4J, name, sig, KGC_JNI_STATIC, &m))
		die("%s%s: %s", name, sig, kgc_last_error());
	return m;
}

/* A heap with its JavaVM and the .so loaded; returns the main thread. */
static kgc_thread *kgc_setup(int pin_mode, size_t young)
{
	static const uint32_t refs[1] = { KGC_HEADER_SIZE };
	struct kgc_type_desc desc = { .name = "JNode", .payload_size = 16, .nrefs = 1,
				      .ref_offsets = refs };
	struct kgc_options o;
	kgc_thread *t;

	kgc_options_init(&o);
	o.pin_mode = pin_mode;
	if (!getenv("KGC_HEAP_MAX"))
		o.max_heap = HEAP_BYTES;
	if (young && !getenv("KGC_YOUNG_SIZE"))
		o.young_size = young;
	if (kgc_heap_create(&o, &heap))
		die("kgc_heap_create: %s", kgc_last_error());
	if (kgc_type_register(heap, &desc, &NODE))
		die("kgc_type_register: %s", kgc_last_error());
	t = attach("main");
	if (kgc_jni_vm_create(heap, t, &vm) || kgc_jni_load_library(vm, t, LZ4_SO))
		die("libkgc-jni: %s", kgc_last_error());
	m_bound = method("LZ4_compressBound", "(I)I");
	m_comp = method("LZ4_compress_limitedOutput", "([B" BB "II[B" BB "II)I");
	m_decomp = method("LZ4_decompress_safe", "([B" BB "II[B" BB "II)I");
	if (kgc_native_call(t, method("init", "()V"), NULL, NULL, NULL))
		die("LZ4JNI.init: %s", kgc_last_error());
	return t;
}

static void kgc_teardown(kgc_thread *t)
{
	if (kgc_jni_vm_destroy(vm, t) || kgc_thread_detach(t) || kgc_heap_destroy(heap))
		die("teardown: %s", kgc_last_error());
}

/* compress (comp) or decompress slots[0][0..n) into slots[1]; the .so's result.
 * The arrays are read from the roots at each call: they may have moved. */
static int32_t lz4(kgc_thread *t, bool comp, const kgc_obj *slots, int32_t n)
{
	union kgc_value a[8] = {
		{ .l = slots[0] }, { .l = NULL }, { .i = 0 }, { .i = n },
		{ .l = slots[1] }, { .l = NULL }, { .i = 0 },
		{ .i = (int32_t)kgc_array_length(slots[1]) },
	}, r;

	if (kgc_native_call(t, comp ? m_comp : m_decomp, NULL, a, &r))
		die("lz4 %s: %s", comp ? "compress" : "decompress", kgc_last_error());
	return r.i;
}

static kgc_obj bytes(kgc_thread *t, size_t n)
{
	kgc_obj o = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), n);

	if (!o)
		die("byte[%zu]: %s", n, kgc_last_error());
	return o;
}

/* *slot = a byte[] of the bench's data (made outside the heap, copied in
 * 1 MiB pieces with a safepoint poll between them: collections need not
 * wait for the copy, and the array may move at each poll). */
static void data_array(kgc_thread *t, kgc_obj *slot, size_t n)
{
	unsigned char *b = malloc(n);

	if (!b)
		die("oom");
	fill_data(b, n);
	*slot = bytes(t, n);
	for (size_t off = 0; off < n; off += 1 << 20) {
		kgc_safepoint_poll(t);
		memcpy((char *)kgc_array_data(*slot) + off, b + off, n - off < (1 << 20) ? n - off : 1 << 20);
	}
	free(b);
}

/* Median MB/s over CHUNKS chunks after a warm-up chunk (JniBench.rate). */
static double rate(kgc_thread *t, bool comp, const kgc_obj *slots, int32_t n, double secs)
{
	double r[CHUNKS];

	for (int c = -1; c < CHUNKS; c++) {
		uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs / CHUNKS * 1e9), b = 0;

		do {
			int32_t got = lz4(t, comp, slots, n);

			if (got <= 0)
				die("%s: %d", comp ? "compress" : "decompress", got);
			b += comp ? (uint64_t)n : (uint64_t)got;
		} while (now_ns() < end);
		if (c >= 0)
			r[c] = (double)b / ((double)(now_ns() - t0) / 1e9) / 1e6;
	}
	qsort(r, CHUNKS, sizeof(r[0]), cmp_double);
	return r[CHUNKS / 2];
}

static int32_t bound(kgc_thread *t, int32_t n)
{
	union kgc_value a = { .i = n }, r;

	if (kgc_native_call(t, m_bound, NULL, &a, &r))
		die("compressBound: %s", kgc_last_error());
	return r.i;
}

static void tput(kgc_thread *t, size_t n, const char *tag, double secs)
{
	kgc_obj slots[3] = { NULL };	/* src, compressed, back */
	kgc_obj cs[2], ds[2];
	struct kgc_frame f;
	int32_t clen;
	double c, d;

	kgc_frame_push(t, &f, slots, 3, NULL);
	data_array(t, &slots[0], n);
	slots[1] = bytes(t, (size_t)bound(t, (int32_t)n));
	slots[2] = bytes(t, n);
	clen = lz4(t, true, slots, (int32_t)n);
	c = rate(t, true, slots, (int32_t)n, secs);
	cs[0] = slots[1];
	cs[1] = slots[2];
	d = rate(t, false, cs, clen, secs);
	ds[0] = slots[1];
	ds[1] = slots[2];
	if (lz4(t, false, ds, clen) != (int32_t)n ||
	    memcmp(kgc_array_data(slots[0]), kgc_array_data(slots[2]), n))
		die("round trip of %zu bytes", n);
	printf("c%s=%.1f d%s=%.1f clen%s=%d ", tag, c, tag, d, tag, clen);
	kgc_frame_pop(t, &f);
}

static union kgc_native_entry bound_entry;	/* KGC_NATIVE_SHAPE_I_I */

static int32_t bound_e(kgc_thread *t, int32_t n)
{
	int32_t v;

	if (bound_entry.i_i(t, m_bound, n, &v))
		die("compressBound (entry): %s", kgc_last_error());
	return v;
}

/* ns per LZ4_compressBound call (through kgc_native_call, or the prepared
 * entry: what compiled code calls): 20 chunks of secs/20 after 5 warm-up
 * ones; the best and the median chunk, and the fastest batch of 4096 calls
 * (~40 us: one no other process interrupted; JniBench.boundCost alike). */
static void bound_cost(kgc_thread *t, double secs, bool entry, const char *key)
{
	enum { NCH = 20 };
	double ns[NCH];
	int64_t acc = 0;
	uint64_t batch = UINT64_MAX;

	for (int c = -5; c < NCH; c++) {
		uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs / NCH * 1e9), calls = 0, t1, b0 = t0;

		do {
			for (int i = 0; i < 4096; i++)
				acc += entry ? bound_e(t, i) : bound(t, i);
			calls += 4096;
			t1 = now_ns();
			if (c >= 0 && t1 - b0 < batch)
				batch = t1 - b0;
			b0 = t1;
		} while (t1 < end);
		if (c >= 0)
			ns[c] = (double)(t1 - t0) / (double)calls;
	}
	if (acc == 42)
		printf("unlikely\n");
	qsort(ns, NCH, sizeof(ns[0]), cmp_double);
	printf("%s_best=%.2f %s_med=%.2f %s_batch=%.2f ", key, ns[0], key, ns[NCH / 2], key,
	       (double)batch / 4096);
}

static int ops_kgc(double secs)
{
	kgc_thread *t = kgc_setup(KGC_PIN_MODE_PIN, 0);

	printf("RESULT ");
	tput(t, 64 << 10, "64k", secs);
	tput(t, 4 << 20, "4m", secs);
	if (kgc_native_entry(m_bound, KGC_NATIVE_SHAPE_I_I, &bound_entry))
		die("kgc_native_entry: %s", kgc_last_error());
	bound_cost(t, secs, true, "bound");
	bound_cost(t, secs, false, "boundcall");
	printf("\n");
	kgc_teardown(t);
	return 0;
}

/* ---- stall: two allocators (pinbench's workload, half its live set) */

/* The native thread: compress a byte[] of size bytes in a loop; then one
 * round trip checks the bytes (the arrays moved or stayed pinned). */
static void *native_main(void *arg)
{
	size_t size = (size_t)arg;
	kgc_thread *t = attach("native");
	kgc_obj slots[3] = { NULL };
	struct kgc_frame f;
	int32_t clen = 0;

	kgc_frame_push(t, &f, slots, 3, NULL);
	data_array(t, &slots[0], size);
	slots[1] = bytes(t, (size_t)bound(t, (int32_t)size));
	atomic_store(&ready, 1);
	kgc_enter_native(t);
	while (!atomic_load(&timing))	/* the arrays are made before the window */
		usleep(1000);
	kgc_leave_native(t);
	while (!atomic_load(&stop)) {
		if ((clen = lz4(t, true, slots, (int32_t)size)) <= 0)
			die("compress: %d", clen);
		atomic_fetch_add(&ncalls, 1);
	}
	slots[2] = bytes(t, size);
	{
		kgc_obj ds[2] = { slots[1], slots[2] };

		if (clen && (lz4(t, false, ds, clen) != (int32_t)size ||
			     memcmp(kgc_array_data(slots[0]), kgc_array_data(slots[2]), size)))
			die("the round trip of %zu bytes differs", size);
	}
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	return NULL;
}

static int stall_kgc(int mode, size_t size, double secs)
{
	pthread_t th[NALLOC], nat;
	struct kgc_stats s0, s1;
	kgc_thread *t = kgc_setup(mode, 0);	/* young size: kgc's policy, as HotSpot's */
	uint64_t *all, t0, el;
	size_t n = 0, over50 = 0;

	live_lists_per_thread = LIVE_BYTES / (LIST_LEN * 24);
	for (long i = 0; i < NALLOC; i++)
		pthread_create(&th[i], NULL, alloc_main, (void *)i);
	pthread_create(&nat, NULL, native_main, (void *)size);
	kgc_enter_native(t);
	while (atomic_load(&filled) < NALLOC || !atomic_load(&ready))
		usleep(5000);
	usleep(500000);		/* warm-up, as JniBench's */
	kgc_leave_native(t);
	if (kgc_collect(t, KGC_GC_FULL))	/* System.gc() */
		die("collect: %s", kgc_last_error());
	kgc_stats_get(heap, &s0, sizeof(s0));
	atomic_store(&timing, 1);
	t0 = now_ns();
	kgc_enter_native(t);
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&timing, 0);
	el = now_ns() - t0;
	atomic_store(&stop, 1);
	pthread_join(nat, NULL);
	for (int i = 0; i < NALLOC; i++)
		pthread_join(th[i], NULL);
	kgc_leave_native(t);
	kgc_stats_get(heap, &s1, sizeof(s1));
	for (int i = 0; i < NALLOC; i++)
		n += lats[i].n;
	all = malloc((n ? n : 1) * sizeof(uint64_t));
	n = 0;
	for (int i = 0; i < NALLOC; i++) {
		memcpy(all + n, lats[i].v, lats[i].n * sizeof(uint64_t));
		n += lats[i].n;
	}
	qsort(all, n, sizeof(uint64_t), cmp_u64);
	for (size_t i = 0; i < n; i++)
		over50 += all[i] > 50000000;
	printf("RESULT batches=%zu p50=%.4f p999=%.4f max=%.3f over50=%zu mallocs=%.2f calls=%lu "
	       "young=%lu full=%lu crit=%lu\n",
	       n, ms(pct_sorted(all, n, 50)), ms(pct_sorted(all, n, 99.9)), n ? ms(all[n - 1]) : 0,
	       over50, (double)n * BATCH / ((double)el / 1e9) / 1e6, atomic_load(&ncalls),
	       (unsigned long)(s1.young_gcs - s0.young_gcs), (unsigned long)(s1.full_gcs - s0.full_gcs),
	       (unsigned long)(s1.critical_gets - s0.critical_gets));
	kgc_teardown(t);
	return 0;
}
#endif /* HAVE_KGC */

/* ------------------------------------------------------------- driver */

static const char *const jdks[] = { "kgc", "jdk17", "jdk25" };
static const char *const jdk_name[] = { "kgc (libkgc-jni)", "HotSpot 17", "JDK 25" };

/* Why a configuration cannot run here, or NULL. */
static const char *missing(const char *cfg)
{
	bool java = !strncmp(cfg, "jdk", 3);

	if (access(LZ4_SO, R_OK))
		return "liblz4-jni not installed (" LZ4_SO ")";
	if (java && access(LZ4_JAR, R_OK))
		return "liblz4-java not installed (" LZ4_JAR ")";
	if (!strcmp(cfg, "jdk25") && access(JAVA25, X_OK))
		return "no JDK 25 on this machine (" JAVA25 ")";
#ifndef HAVE_KGC
	if (!java)
		return "library not built";
#endif
	return NULL;
}

static bool run_cfg(const char *argv0, const char *what, const char *cfg, const char *size,
		    char *res, size_t n)
{
	char *args[] = { (char *)argv0, (char *)what, (char *)cfg, (char *)size, NULL };

	if (missing(cfg)) {
		snprintf(res, n, "skip=1");
		return false;
	}
	return !run_worker(args, NULL, res, n) && res_get(res, "nojava") < 0;
}

static const char *verdict(bool met) { return met ? "**MET**" : "**NOT MET**"; }

/*
 * The throughput rows compare separate processes, so a load spike on this
 * shared machine in one of them moves the ratio by itself (a whole kgc
 * process 0.63x while its fastest call batch was unchanged). The section
 * runs ROUNDS rounds of the three configurations, rotating which one goes
 * first, and each figure is the median of its rounds (JNIBENCH_ROUNDS).
 */
#define MAX_ROUNDS 7

static int rounds(void)
{
	const char *e = getenv("JNIBENCH_ROUNDS");
	int n = e ? atoi(e) : 3;

	return n < 1 ? 1 : n > MAX_ROUNDS ? MAX_ROUNDS : n;
}

/* Median over the rounds that ran of key in res[r][j]; -1 when none did. */
static double med(char (*res)[3][1024], bool (*ok)[3], int nr, int j, const char *key)
{
	double v[MAX_ROUNDS];
	int n = 0;

	for (int r = 0; r < nr; r++)
		if (ok[r][j] && res_get(res[r][j], key) >= 0)
			v[n++] = res_get(res[r][j], key);
	if (!n)
		return -1;
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void ops_section(FILE *md, const char *argv0, double secs)
{
	static char res[MAX_ROUNDS][3][1024];
	static bool okr[MAX_ROUNDS][3];
	char r1[32], r2[32];
	bool ok[3] = { false, false, false };
	static const char *const rows[][3] = {
		{ "c64k", "compress", "64 KiB" }, { "d64k", "decompress", "64 KiB" },
		{ "c4m", "compress", "4 MiB" }, { "d4m", "decompress", "4 MiB" },
	};
	double worst = 1e9;
	int nr = rounds();

	for (int r = 0; r < nr; r++)
		for (int k = 0; k < 3; k++) {
			int j = (r + k) % 3;

			okr[r][j] = run_cfg(argv0, "ops", jdks[j], "", res[r][j], sizeof(res[r][j]));
			ok[j] |= okr[r][j];
		}
	both(md, "\n### Throughput and the trivial native\n\n"
		 "`LZ4_compress_limitedOutput` / `LZ4_decompress_safe` on one byte[] in a loop, %.1f s each\n"
		 "in %d chunks after a warm-up chunk (median chunk, MB/s of uncompressed bytes); kgc calls\n"
		 "through `kgc_native_call`, HotSpot through constant method handles to `LZ4JNI`'s natives\n"
		 "(C2 compiles them to a direct native call). %d rounds of the three configurations, each\n"
		 "a fresh process, the first one rotating; every figure is the median of its rounds.\n\n",
	     secs, CHUNKS, nr);
	both(md, "| operation | array | kgc MB/s | HotSpot 17 MB/s | JDK 25 MB/s | kgc / HotSpot 17 | kgc / JDK 25 |\n");
	both(md, "|---|---|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double v[3];

		for (int j = 0; j < 3; j++)
			v[j] = med(res, okr, nr, j, rows[i][0]);
		both(md, "| %s | %s |", rows[i][1], rows[i][2]);
		for (int j = 0; j < 3; j++)
			if (v[j] >= 0)
				both(md, " %.0f |", v[j]);
			else
				both(md, " %s |", missing(jdks[j]) ? missing(jdks[j]) : "run failed");
		both(md, " %s | %s |\n", ratio_str(r1, sizeof(r1), v[0], v[1]),
		     ratio_str(r2, sizeof(r2), v[0], v[2]));
		for (int j = 1; j < 3; j++)
			if (v[0] >= 0 && v[j] > 0 && v[0] / v[j] < worst)
				worst = v[0] / v[j];
	}
	both(md, "\n| `LZ4_compressBound(I)I` | best chunk ns/call | median chunk ns/call | fastest 4096-call batch ns/call |\n"
		 "|---|---:|---:|---:|\n");
	for (int j = 0; j < 3; j++)
		if (ok[j]) {
			both(md, "| %s%s | %.1f | %.1f | %.2f |\n", jdk_name[j],
			     j ? " (C2-compiled call)" : ": prepared entry (`KGC_NATIVE_SHAPE_I_I`, what compiled code calls)",
			     med(res, okr, nr, j, "bound_best"), med(res, okr, nr, j, "bound_med"),
			     med(res, okr, nr, j, "bound_batch"));
			if (!j)
				both(md, "| kgc: through `kgc_native_call` (interpreter-style) | %.1f | %.1f | %.2f |\n",
				     med(res, okr, nr, 0, "boundcall_best"), med(res, okr, nr, 0, "boundcall_med"),
				     med(res, okr, nr, 0, "boundcall_batch"));
		} else
			both(md, "| %s | %s | | |\n", jdk_name[j],
			     missing(jdks[j]) ? missing(jdks[j]) : "run failed");
	both(md, "\n");
	if (ok[0] && (ok[1] || ok[2]))
		both(md, "- throughput: the lowest kgc/HotSpot ratio is %.3fx; target >= 0.9x: %s\n",
		     worst, verdict(worst >= 0.9));
	if (ok[0] && ok[1]) {
		double k = med(res, okr, nr, 0, "bound_best"), h = med(res, okr, nr, 1, "bound_best");
		double kb = med(res, okr, nr, 0, "bound_batch"), hb = med(res, okr, nr, 1, "bound_batch");

		both(md, "- trivial-native overhead: kgc's prepared entry %.1f ns vs HotSpot 17's compiled call "
			 "%.1f ns (best chunk, %.2fx); target <= HotSpot 17's: %s\n", k, h, k / h, verdict(k <= h));
		both(md, "- the same, fastest 4096-call batch (what a loaded machine leaves intact): %.2f vs "
			 "%.2f ns (%.2fx): %s\n", kb, hb, kb / hb, verdict(kb <= hb));
	}
}

static void stall_section(FILE *md, const char *argv0, double secs)
{
	static const char *const cfgs[] = { "pin", "gclocker", "jdk17", "jdk25" };
	static const char *const cname[] = { "kgc pin mode", "kgc GCLocker mode", "JDK 17 G1 (GCLocker)",
					     "JDK 25 G1 (JEP 423)" };
	static const char *const sizes[] = { "4194304", "67108864" };
	char res[2][4][1024];
	bool ok[2][4];

	for (int s = 0; s < 2; s++)
		for (int c = 0; c < 4; c++)
			ok[s][c] = run_cfg(argv0, "stall", cfgs[c], sizes[s], res[s][c], sizeof(res[s][c]));
	both(md, "\n### Allocation stalls while natives run\n\n"
		 "Two threads allocate 16-node lists in batches of %d nodes (~%lu MB live, replaced\n"
		 "gradually; heap %s, every collector's own young sizing) while a third compresses one byte[] in a loop\n"
		 "(`LZ4_compress_limitedOutput`: the .so holds both arrays with GetPrimitiveArrayCritical\n"
		 "for the whole call); %.1f s timed after the live set is built, 0.5 s of warm-up and a full\n"
		 "collection. Batch latencies in ms; M allocs/s of the two threads together; natives: calls\n"
		 "completed; GCs: kgc's young collections in the window.\n\n",
		 BATCH, 2 * LIVE_BYTES / 1000000, HEAP, secs);
	both(md, "| natives | configuration | batches | M allocs/s | p50 | p99.9 | max | >50 ms | natives | GCs |\n");
	both(md, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int s = 0; s < 2; s++)
		for (int c = 0; c < 4; c++) {
			const char *r = res[s][c];

			both(md, "| %s MiB | %s |", s ? "64" : "4", cname[c]);
			if (!ok[s][c]) {
				both(md, " %s | | | | | | | |\n", missing(cfgs[c]) ? missing(cfgs[c]) : "run failed");
				continue;
			}
			both(md, " %.0f | %.1f | %.3f | %.3f | %.2f | %.0f | %.0f |", res_get(r, "batches"),
			     res_get(r, "mallocs"), res_get(r, "p50"), res_get(r, "p999"), res_get(r, "max"),
			     res_get(r, "over50"), res_get(r, "calls"));
			if (c < 2)
				both(md, " %.0f |\n", res_get(r, "young") + res_get(r, "full"));
			else
				both(md, " |\n");
		}
	both(md, "\n");
	for (int s = 0; s < 2; s++) {
		const char *k = res[s][0], *j = res[s][3];

		if (!ok[s][0])
			continue;
		if (ok[s][3])
			both(md, "- %s MiB natives: kgc pin mode max %.2f ms vs JDK 25 G1 %.2f ms (%.2fx), "
				 "p99.9 %.3f vs %.3f ms; target <= JDK 25 G1's: %s\n", s ? "64" : "4",
			     res_get(k, "max"), res_get(j, "max"), res_get(k, "max") / res_get(j, "max"),
			     res_get(k, "p999"), res_get(j, "p999"),
			     verdict(res_get(k, "max") <= res_get(j, "max")));
		both(md, "- %s MiB natives: kgc pin mode batches over 50 ms: %.0f; target none: %s\n",
		     s ? "64" : "4", res_get(k, "over50"), verdict(res_get(k, "over50") == 0));
	}
}

int main(int argc, char **argv)
{
	double secs = secs_of(1.0), ssecs = secs_of(3.0);
	FILE *md;

	if (argc > 2 && !strcmp(argv[1], "ops")) {
		char s[32], *ja[] = { "ops", s, NULL };

		snprintf(s, sizeof(s), "%g", secs);
		if (strcmp(argv[2], "kgc"))
			return java_worker(argv[2], ja);
#ifdef HAVE_KGC
		return ops_kgc(secs);
#endif
	}
	if (argc > 3 && !strcmp(argv[1], "stall")) {
		char s[32], *ja[] = { "stall", argv[3], s, NULL };

		snprintf(s, sizeof(s), "%g", ssecs);
		if (!strncmp(argv[2], "jdk", 3))
			return java_worker(argv[2], ja);
#ifdef HAVE_KGC
		return stall_kgc(!strcmp(argv[2], "gclocker") ? KGC_PIN_MODE_GCLOCKER : KGC_PIN_MODE_PIN,
				 strtoul(argv[3], NULL, 0), ssecs);
#endif
	}
	if (argc > 1) {
		printf("RESULT unavailable=1\n");
		return argc > 2 ? 0 : 2;
	}
	md = md_open("jnibench");
	both(md, "\n## Debian's lz4-java natives: kgc (libkgc-jni) vs HotSpot, same .so (issue 29)\n\n"
		 "`bench/jnibench.c`, `bench/JniBench.java`: liblz4-jni's `%s`, unmodified, called on kgc\n"
		 "through libkgc-jni's JNIEnv and on HotSpot through liblz4-java's jar; each configuration\n"
		 "a fresh process, same data on both sides.\n", LZ4_SO);
	ops_section(md, argv[0], secs);
	stall_section(md, argv[0], ssecs);
	fclose(md);
	return 0;
}
