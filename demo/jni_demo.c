/* SPDX-License-Identifier: MIT */
/*
 * kgc JNI demo: Debian's lz4-java natives (liblz4-jni, jni/liblz4-java.so,
 * unmodified - built for a JVM) compress managed byte arrays through
 * libkgc-jni's JNIEnv while two threads allocate and the collector runs.
 *
 * The .so's LZ4_compressHC holds its input and output arrays with
 * GetPrimitiveArrayCritical for the whole call (tens of ms). Twice, each in
 * a fresh process:
 *   pin       the critical section pins the arrays' regions: collections
 *             go on during the call, the arrays stay where they are
 *   gclocker  the critical section blocks collections: threads that need
 *             one wait for the native (the pre-JEP 423 way)
 * Each call: a fresh 1 MiB byte[] (young: a collection would move it)
 * compressed (collections that completed while the .so held it counted,
 * its address when the .so releases it compared with the one it got),
 * decompressed (LZ4_decompress_safe) and compared with the input byte for
 * byte.
 *
 * `jni_demo` runs both; `jni_demo run <pin|gclocker> <seconds>` is one run.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <kgc_jni.h>

#define LZ4_SO "/usr/lib/x86_64-linux-gnu/jni/liblz4-java.so"
#define LZ4J "net/jpountz/lz4/LZ4JNI"
#define BB "Ljava/nio/ByteBuffer;"
#define ARRAY_BYTES (1u << 20)	/* not humongous in 4 MiB regions */
#define SHOW_CALLS 4		/* calls printed as they happen */
#define HC_LEVEL 4		/* a call of tens of ms */

enum { NALLOC = 2, LIST_LEN = 16, BATCH = 1000 };
#define LIVE_LISTS 40000	/* per allocating thread: ~15 MB of 24-byte nodes */

static kgc_heap *heap;
static JavaVM *vm;
static kgc_type_id NODE;
static kgc_method *m_hc, *m_safe, *m_bound;
static atomic_int stop;
static atomic_ulong batch_max_ns, batches_over_50ms;
static unsigned char *orig;	/* the input, outside the heap */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "jni_demo: %s failed: %s\n", what, kgc_last_error());
	exit(1);
}

static uint64_t gc_count(void)
{
	struct kgc_stats st;

	kgc_stats_get(heap, &st, sizeof(st));
	return st.young_gcs + st.full_gcs;
}

static kgc_thread *attach(const char *name)
{
	kgc_thread *t;

	if (kgc_thread_attach(heap, name, &t))
		die("kgc_thread_attach");
	return t;
}

/* ------------------------------------------------------- allocating threads */

static void *alloc_main(void *arg)
{
	unsigned long long rng = 0x5eed + (unsigned long long)(uintptr_t)arg;
	kgc_thread *t = attach("alloc");
	kgc_obj slots[2] = { NULL };	/* table of lists, list being built */
	struct kgc_frame f;
	uint64_t seq = 0;

	kgc_frame_push(t, &f, slots, 2, NULL);
	if (!(slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, LIVE_LISTS)))
		die("kgc_alloc_array");
	while (!atomic_load(&stop)) {
		uint64_t t0 = now_ns(), dt;

		for (int i = 0; i < BATCH; i++) {
			kgc_obj o = kgc_alloc(t, NODE);

			if (!o)
				die("kgc_alloc");
			kgc_set_ref(t, o, KGC_HEADER_SIZE, slots[1]);
			slots[1] = o;
			if (i % LIST_LEN == LIST_LEN - 1) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				kgc_array_set_ref(t, slots[0], seq < LIVE_LISTS ? seq : (rng >> 33) % LIVE_LISTS,
						  slots[1]);
				seq++;
				slots[1] = NULL;
			}
		}
		dt = now_ns() - t0;
		if (dt > atomic_load(&batch_max_ns))
			atomic_store(&batch_max_ns, dt);	/* racy max: a display figure */
		if (dt > 50000000)
			atomic_fetch_add(&batches_over_50ms, 1);
	}
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	return NULL;
}

/* ------------------------------------------------------------ the natives */

static int32_t call(kgc_thread *t, kgc_method *m, union kgc_value *a, const char *what)
{
	union kgc_value r;

	if (kgc_native_call(t, m, NULL, a, &r))
		die(what);
	return r.i;
}

struct tally {
	unsigned long calls, gcs_pinned, calls_with_gc, moved_pinned, roundtrip_bad;
	uint64_t call_max_ns;
};

/*
 * What the .so saw, by interposing on two slots of this thread's JNIEnv
 * function table (as a JVMTI agent does with SetJNIFunctionTable; the .so
 * is untouched): the collections that completed between its
 * GetPrimitiveArrayCritical of the input and the matching release, and
 * whether the array was still at the address it got then (a nested get in
 * the section returns where the array is now).
 */
static const struct JNINativeInterface_ *real;
static struct JNINativeInterface_ spy;
static struct {
	void *elems;		/* the first array the call got (the input) */
	uint64_t gcs;		/* collections so far when it got it */
	int depth;
	unsigned long gcs_pinned, moved;
} seen;

static void *JNICALL spy_get(JNIEnv *env, jarray a, jboolean *copy)
{
	void *p = real->GetPrimitiveArrayCritical(env, a, copy);

	if (p && seen.depth++ == 0) {
		seen.elems = p;
		seen.gcs = gc_count();
	}
	return p;
}

static void JNICALL spy_release(JNIEnv *env, jarray a, void *elems, jint mode)
{
	if (elems && elems == seen.elems) {
		void *now = real->GetPrimitiveArrayCritical(env, a, NULL);

		seen.gcs_pinned = gc_count() - seen.gcs;
		seen.moved = now != elems;
		real->ReleasePrimitiveArrayCritical(env, a, now, JNI_ABORT);
		seen.elems = NULL;
	}
	if (elems)
		seen.depth--;
	real->ReleasePrimitiveArrayCritical(env, a, elems, mode);
}

static void spy_install(kgc_thread *t)
{
	JNIEnv *env;

	if (kgc_jni_env(vm, t, &env))
		die("kgc_jni_env");
	real = *env;
	spy = *real;
	spy.GetPrimitiveArrayCritical = spy_get;
	spy.ReleasePrimitiveArrayCritical = spy_release;
	*env = &spy;
}

/* One call: slots[0] a fresh input, slots[1] the output, slots[2] the copy back. */
static void one_call(kgc_thread *t, kgc_obj *slots, int32_t cap, struct tally *y, const char *mode)
{
	uint64_t t0, dt;
	int32_t clen, n;

	slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ARRAY_BYTES);
	if (!slots[0])
		die("byte[]");
	memcpy(kgc_array_data(slots[0]), orig, ARRAY_BYTES);
	seen.gcs_pinned = seen.moved = 0;
	t0 = now_ns();
	/* LZ4_compressHC(src, srcBuf, srcOff, srcLen, dest, destBuf, destOff, maxDestLen, level) */
	clen = call(t, m_hc, (union kgc_value[]){ { .l = slots[0] }, { .l = NULL }, { .i = 0 },
						  { .i = ARRAY_BYTES }, { .l = slots[1] }, { .l = NULL },
						  { .i = 0 }, { .i = cap }, { .i = HC_LEVEL } }, "LZ4_compressHC");
	dt = now_ns() - t0;
	y->calls++;
	y->gcs_pinned += seen.gcs_pinned;
	y->calls_with_gc += seen.gcs_pinned > 0;
	y->moved_pinned += seen.moved;
	y->call_max_ns = dt > y->call_max_ns ? dt : y->call_max_ns;
	slots[2] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ARRAY_BYTES);
	if (!slots[2])
		die("byte[]");
	n = call(t, m_safe, (union kgc_value[]){ { .l = slots[1] }, { .l = NULL }, { .i = 0 },
						 { .i = clen }, { .l = slots[2] }, { .l = NULL },
						 { .i = 0 }, { .i = ARRAY_BYTES } }, "LZ4_decompress_safe");
	y->roundtrip_bad += n != ARRAY_BYTES || memcmp(kgc_array_data(slots[2]), orig, ARRAY_BYTES);
	if (y->calls <= SHOW_CALLS)
		printf("  [%s] compressHC byte[1 MiB] -> %d bytes in %.1f ms: %lu collection(s) while the "
		       ".so held it, array %s; round trip %s\n", mode, clen, (double)dt / 1e6,
		       seen.gcs_pinned, seen.moved ? "MOVED" : "did not move",
		       n == ARRAY_BYTES && !memcmp(kgc_array_data(slots[2]), orig, ARRAY_BYTES)
			       ? "byte for byte" : "WRONG");
}

static void fill_input(void)
{
	uint64_t s = 42;

	if (!(orig = malloc(ARRAY_BYTES)))
		die("malloc");
	for (size_t i = 0; i < ARRAY_BYTES; i++) {	/* text-like: phrases repeat */
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		orig[i] = i >= 64 && (s >> 60) ? orig[i - 1 - ((s >> 40) & 63)]
					       : (unsigned char)('a' + (s >> 33) % 26);
	}
}

static kgc_method *method(const char *name, const char *sig)
{
	kgc_method *m;

	if (kgc_jni_method(vm, LZ4J, name, sig, KGC_JNI_STATIC, &m))
		die(name);
	return m;
}

static int run(const char *mode, double secs)
{
	static const uint32_t refs[1] = { KGC_HEADER_SIZE };
	struct kgc_type_desc desc = { .name = "Node", .payload_size = 16, .nrefs = 1, .ref_offsets = refs };
	struct kgc_options o;
	struct kgc_stats s0, s1;
	struct tally y = { 0 };
	kgc_obj slots[3] = { NULL };
	struct kgc_frame f;
	pthread_t th[NALLOC];
	kgc_thread *t;
	uint64_t end;
	int32_t cap;

	fill_input();
	kgc_options_init(&o);
	o.pin_mode = !strcmp(mode, "gclocker") ? KGC_PIN_MODE_GCLOCKER : KGC_PIN_MODE_PIN;
	o.max_heap = 512ul << 20;
	o.region_size = 4ul << 20;
	o.young_size = 16ul << 20;
	if (kgc_heap_create(&o, &heap))
		die("kgc_heap_create");
	if (kgc_type_register(heap, &desc, &NODE))
		die("kgc_type_register");
	t = attach("native");
	if (kgc_jni_vm_create(heap, t, &vm))
		die("kgc_jni_vm_create");
	if (kgc_jni_load_library(vm, t, LZ4_SO))
		die("kgc_jni_load_library " LZ4_SO);
	m_hc = method("LZ4_compressHC", "([B" BB "II[B" BB "III)I");
	m_safe = method("LZ4_decompress_safe", "([B" BB "II[B" BB "II)I");
	m_bound = method("LZ4_compressBound", "(I)I");
	call(t, method("init", "()V"), NULL, "LZ4JNI.init");
	spy_install(t);
	cap = call(t, m_bound, (union kgc_value[]){ { .i = ARRAY_BYTES } }, "LZ4_compressBound");
	kgc_frame_push(t, &f, slots, 3, NULL);
	if (!(slots[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), (size_t)cap)))
		die("byte[]");
	for (long i = 0; i < NALLOC; i++)
		pthread_create(&th[i], NULL, alloc_main, (void *)i);
	kgc_stats_get(heap, &s0, sizeof(s0));
	end = now_ns() + (uint64_t)(secs * 1e9);
	while (now_ns() < end)
		one_call(t, slots, cap, &y, mode);
	atomic_store(&stop, 1);
	kgc_enter_native(t);
	for (int i = 0; i < NALLOC; i++)
		pthread_join(th[i], NULL);
	kgc_leave_native(t);
	kgc_stats_get(heap, &s1, sizeof(s1));
	kgc_frame_pop(t, &f);
	printf("RESULT calls=%lu gcs=%lu gcs_pinned=%lu calls_with_gc=%lu moved_pinned=%lu "
	       "roundtrip_bad=%lu call_max_ms=%.1f pinned=%lu stalls=%lu stall_ms=%.1f batch_max_ms=%.1f "
	       "over50=%lu crit=%lu\n",
	       y.calls, (unsigned long)(s1.young_gcs + s1.full_gcs - s0.young_gcs - s0.full_gcs),
	       y.gcs_pinned, y.calls_with_gc, y.moved_pinned, y.roundtrip_bad,
	       (double)y.call_max_ns / 1e6, (unsigned long)(s1.evac_fail_pinned - s0.evac_fail_pinned),
	       (unsigned long)(s1.gclocker_stalls - s0.gclocker_stalls),
	       (double)(s1.gclocker_stall_ns - s0.gclocker_stall_ns) / 1e6,
	       (double)atomic_load(&batch_max_ns) / 1e6, atomic_load(&batches_over_50ms),
	       (unsigned long)(s1.critical_gets - s0.critical_gets));
	if (kgc_jni_vm_destroy(vm, t) || kgc_thread_detach(t) || kgc_heap_destroy(heap))
		die("teardown");
	return y.roundtrip_bad ? 1 : 0;
}

/* ------------------------------------------------------------------ driver */

/* Runs `self run mode secs`, echoing its output; its RESULT line into res. */
static int run_child(const char *self, const char *mode, double secs, char *res, size_t n)
{
	char cmd[4200], line[1024];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' run %s %g", self, mode, secs);
	if (!(p = popen(cmd, "r")))
		return -1;
	res[0] = 0;
	while (fgets(line, sizeof(line), p))
		if (!strncmp(line, "RESULT ", 7))
			snprintf(res, n, "%s", line + 7);
		else
			fputs(line, stdout);
	return pclose(p) == 0 && res[0] ? 0 : -1;
}

static double get(const char *res, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = res; (p = strstr(p, key)); p += kl)
		if ((p == res || p[-1] == ' ') && p[kl] == '=')
			return atof(p + kl + 1);
	return -1;
}

int main(int argc, char **argv)
{
	static const char *const modes[2] = { "pin", "gclocker" };
	const char *s = getenv("DEMO_JNI_SECS");
	double secs = s ? atof(s) : 4;
	char res[2][1024];

	if (argc > 3 && !strcmp(argv[1], "run"))
		return run(argv[2], atof(argv[3]));
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("kgc JNI demo: Debian's lz4-java natives, unmodified, on managed arrays\n"
	       "=======================================================================\n");
	if (access(LZ4_SO, R_OK)) {
		printf("SKIPPED: %s is not installed (apt-get install liblz4-jni; "
		       "scripts/deps.sh build installs it)\n", LZ4_SO);
		return 0;
	}
	printf("%s (built for a JVM) loaded into libkgc-jni's JNIEnv. For %.0f s each: 2 threads\n"
	       "allocate linked lists; this thread calls the .so's LZ4_compressHC on a fresh byte[1 MiB]\n"
	       "(it holds both arrays with GetPrimitiveArrayCritical for the whole call), then\n"
	       "LZ4_decompress_safe and a byte-for-byte check.\n\n", LZ4_SO, secs);
	for (int m = 0; m < 2; m++) {
		printf("--- %s mode: %s\n", modes[m],
		       m ? "the .so's critical sections block collections (GCLocker)"
			 : "the .so's critical sections pin their regions; collections go on");
		if (run_child(argv[0], modes[m], secs, res[m], sizeof(res[m]))) {
			printf("  %s run failed (see above)\n", modes[m]);
			return 1;
		}
	}
	printf("\nSummary (%.0f s each)\n%-56s %10s  %10s\n", secs, "", "pin mode", "GCLocker");
	printf("------------------------------------------------------------------------------\n");
#define ROW(label, fmt, key) printf("%-56s " fmt "  " fmt "\n", label, get(res[0], key), get(res[1], key))
	ROW("native calls (compressHC, 1 MiB)", "%10.0f", "calls");
	ROW("longest native call (ms)", "%10.1f", "call_max_ms");
	ROW("collections", "%10.0f", "gcs");
	ROW("collections while the .so held an array critical", "%10.0f", "gcs_pinned");
	ROW("  calls they ran in", "%10.0f", "calls_with_gc");
	ROW("arrays moved while held (must be 0)", "%10.0f", "moved_pinned");
	ROW("regions kept in place because pinned", "%10.0f", "pinned");
	ROW("GCLocker stalls (threads waited for the native)", "%10.0f", "stalls");
	ROW("  time waited (ms)", "%10.1f", "stall_ms");
	ROW("longest allocation batch (1000 nodes, ms)", "%10.1f", "batch_max_ms");
	ROW("batches over 50 ms", "%10.0f", "over50");
	printf("%-56s %10s  %10s\n", "round trips byte for byte",
	       get(res[0], "roundtrip_bad") == 0 ? "all" : "NO", get(res[1], "roundtrip_bad") == 0 ? "all" : "NO");
	printf("\nPin mode: %.0f collections ran while the .so held arrays critical, and no held array\n"
	       "moved (%.0f): the collector moves young objects, but not a pinned region's. GCLocker mode:\n"
	       "%.0f collections in the sections; threads waited %.0f times (%.0f ms) for the native code.\n"
	       "(The demo sees what the .so sees by interposing on its JNIEnv's GetPrimitiveArrayCritical and\n"
	       "ReleasePrimitiveArrayCritical, as a JVMTI agent would.) Measured: bench/RESULTS.md (jnibench).\n",
	       get(res[0], "gcs_pinned"), get(res[0], "moved_pinned"), get(res[1], "gcs_pinned"),
	       get(res[1], "stalls"), get(res[1], "stall_ms"));
	return get(res[0], "moved_pinned") == 0 && get(res[1], "moved_pinned") == 0 ? 0 : 1;
}
