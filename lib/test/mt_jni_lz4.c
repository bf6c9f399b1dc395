/* SPDX-License-Identifier: MIT */
/*
 * mt_jni_lz4: Debian's lz4-java natives (liblz4-jni, jni/liblz4-java.so),
 * unmodified, on kgc through libkgc-jni: byte[] round trips from 1 byte to
 * humongous (LZ4_compress_limitedOutput, LZ4_compressHC, LZ4_decompress_safe,
 * LZ4_decompress_fast; the .so pins both arrays with
 * GetPrimitiveArrayCritical) while another thread allocates and collects;
 * checked byte for byte against a C copy of the input. XXH32 through the
 * JNI entry equals liblz4's own XXH32 on the same bytes. A non-array
 * argument makes the .so throw the OutOfMemoryError class it looked up in
 * init() (FindClass kept in a static, then ThrowNew).
 */
#include <dlfcn.h>
#include "jni_test.h"

#define LZ4_SO "/usr/lib/x86_64-linux-gnu/jni/liblz4-java.so"
#define LZ4J "net/jpountz/lz4/LZ4JNI"
#define BB "Ljava/nio/ByteBuffer;"

static kgc_method *m_bound, *m_comp, *m_hc, *m_safe, *m_fast;

static int32_t compress(kgc_obj *slots, int hc, int32_t n, int32_t cap)
{
	/* (src, srcBuf, srcOff, srcLen, dest, destBuf, destOff, maxDestLen[, level]) */
	union kgc_value a[9] = {
		{ .l = slots[0] }, { .l = NULL }, { .i = 0 }, { .i = n },
		{ .l = slots[1] }, { .l = NULL }, { .i = 0 }, { .i = cap }, { .i = 9 },
	};

	return jt_call_i(hc ? m_hc : m_comp, a);
}

static void round_trip(kgc_obj *slots, size_t n, unsigned long long *seed, int hc)
{
	union kgc_value a[8];
	unsigned char *orig;
	int32_t cap, clen, got;

	jt_bytes(&slots[0], n, seed);
	orig = malloc(n);
	T_ASSERT(orig);
	memcpy(orig, kgc_array_data(slots[0]), n);
	cap = jt_call_i(m_bound, (union kgc_value[]){ { .i = (int32_t)n } });
	T_ASSERT(cap >= (int32_t)n);
	slots[1] = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), (size_t)cap);
	T_ASSERT(slots[1]);
	clen = compress(slots, hc, (int32_t)n, cap);
	if (clen <= 0 || clen > cap)
		T_FAIL("compress%s of %zu bytes: %d (bound %d)", hc ? "HC" : "", n, clen, cap);
	slots[2] = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), n);
	T_ASSERT(slots[2]);
	/* decompress_safe(src, srcBuf, srcOff, srcLen, dest, destBuf, destOff, maxDestLen) */
	a[0].l = slots[1]; a[1].l = NULL; a[2].i = 0; a[3].i = clen;
	a[4].l = slots[2]; a[5].l = NULL; a[6].i = 0; a[7].i = (int32_t)n;
	got = jt_call_i(m_safe, a);
	if (got != (int32_t)n)
		T_FAIL("decompress_safe of %d bytes: %d, want %zu", clen, got, n);
	if (memcmp(kgc_array_data(slots[2]), orig, n))
		T_FAIL("decompress_safe: %zu bytes differ from the input", n);
	/* decompress_fast(src, srcBuf, srcOff, dest, destBuf, destOff, destLen): reads clen */
	memset(kgc_array_data(slots[2]), 0, n);
	/* the arrays may have moved since a[] was filled: raw values are reloaded from the roots */
	a[0].l = slots[1];
	a[3].l = slots[2]; a[4].l = NULL; a[5].i = 0; a[6].i = (int32_t)n;
	got = jt_call_i(m_fast, a);
	if (got != clen)
		T_FAIL("decompress_fast: read %d, want %d", got, clen);
	if (memcmp(kgc_array_data(slots[2]), orig, n))
		T_FAIL("decompress_fast: %zu bytes differ from the input", n);
	/* the input itself survived the collections untouched */
	if (memcmp(kgc_array_data(slots[0]), orig, n))
		T_FAIL("the input array changed (%zu bytes)", n);
	free(orig);
}

static void xxhash(kgc_obj *slots, unsigned long long *seed)
{
	kgc_method *m = jt_method("net/jpountz/xxhash/XXHashJNI", "XXH32", "([BIII)I",
				  KGC_JNI_STATIC);
	unsigned (*xxh32)(const void *, size_t, unsigned) =
		(unsigned (*)(const void *, size_t, unsigned))dlsym(RTLD_DEFAULT, "XXH32");
	void *dl = dlopen(LZ4_SO, RTLD_NOW | RTLD_NOLOAD);

	if (!xxh32 && dl)
		xxh32 = (unsigned (*)(const void *, size_t, unsigned))dlsym(dl, "XXH32");
	T_ASSERT(xxh32);
	jt_call_i(jt_method("net/jpountz/xxhash/XXHashJNI", "init", "()V", KGC_JNI_STATIC), NULL);
	jt_bytes(&slots[0], 100000, seed);
	for (int off = 0; off < 50; off += 7) {
		union kgc_value a[4] = { { .l = slots[0] }, { .i = off }, { .i = 99000 - off },
					 { .i = 0x9747b28c + off } };
		int32_t h = jt_call_i(m, a);
		unsigned want = xxh32((char *)kgc_array_data(slots[0]) + off, 99000 - off,
				      0x9747b28c + off);

		if ((unsigned)h != want)
			T_FAIL("XXH32 off %d: JNI %#x, liblz4 %#x", off, (unsigned)h, want);
	}
	if (dl)
		dlclose(dl);
}

/* A String where a byte[] belongs: GetPrimitiveArrayCritical returns NULL
 * and the .so throws OutOfMemoryError (its class from FindClass in init). */
static void not_an_array(kgc_obj *slots)
{
	union kgc_value a[8];
	union kgc_value r;
	int rc;

	slots[0] = kgc_jni_string_new(jt_vm, jt_t, "not a byte[]");
	slots[1] = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 64);
	a[0].l = slots[0]; a[1].l = NULL; a[2].i = 0; a[3].i = 4;
	a[4].l = slots[1]; a[5].l = NULL; a[6].i = 0; a[7].i = 64;
	rc = kgc_native_call(jt_t, m_comp, NULL, a, &r);
	if (getenv("KGC_CHECK") && atoi(getenv("KGC_CHECK"))) {
		/* checked mode: the bridge refuses the argument before the call */
		T_ASSERT_EQ(rc, -EINVAL);
		return;
	}
	T_ASSERT_EQ(rc, -EPROTO);
	T_ASSERT(jt_exc_class() && !strcmp(jt_exc_class(), "java/lang/OutOfMemoryError"));
	T_ASSERT(kgc_native_exception_message(jt_t));
	printf("not an array: %s: %s\n", jt_exc_class(), kgc_native_exception_message(jt_t));
	kgc_native_exception_clear(jt_t);
}

int main(void)
{
	static const size_t sizes[] = { 1, 2, 15, 100, 4096, 65536, 1 << 20, 5 << 20, 12 << 20 };
	unsigned long long seed = t_seed();
	struct kgc_stats s0, s1;
	kgc_obj slots[3] = { NULL };
	struct kgc_frame f;
	pthread_t gc;

	jt_need(LZ4_SO, "liblz4-jni");
	jt_setup(512u << 20, 8u << 20);
	T_ASSERT_EQ(kgc_jni_load_library(jt_vm, jt_t, LZ4_SO), 0);
	m_bound = jt_method(LZ4J, "LZ4_compressBound", "(I)I", KGC_JNI_STATIC);
	m_comp = jt_method(LZ4J, "LZ4_compress_limitedOutput", "([B" BB "II[B" BB "II)I",
			   KGC_JNI_STATIC);
	m_hc = jt_method(LZ4J, "LZ4_compressHC", "([B" BB "II[B" BB "III)I", KGC_JNI_STATIC);
	m_safe = jt_method(LZ4J, "LZ4_decompress_safe", "([B" BB "II[B" BB "II)I",
			   KGC_JNI_STATIC);
	m_fast = jt_method(LZ4J, "LZ4_decompress_fast", "([B" BB "I[B" BB "II)I",
			   KGC_JNI_STATIC);
	jt_call_i(jt_method(LZ4J, "init", "()V", KGC_JNI_STATIC), NULL);
	T_ASSERT_EQ(jt_call_i(m_bound, (union kgc_value[]){ { .i = 1000 } }), 1000 + 1000 / 255 + 16);

	kgc_frame_push(jt_t, &f, slots, 3, NULL);
	T_ASSERT_EQ(kgc_stats_get(jt_heap, &s0, sizeof(s0)), 0);
	T_ASSERT_EQ(pthread_create(&gc, NULL, jt_gc_thread, (void *)(uintptr_t)(seed + 1)), 0);
	for (int round = 0; round < 3; round++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			round_trip(slots, sizes[i], &seed, (int)(i + round) % 3 == 0);
			if (sizes[i] >= (1 << 20))
				jt_wait_gcs(1);	/* collections ran between the big calls */
		}
	xxhash(slots, &seed);
	not_an_array(slots);
	atomic_store(&jt_stop, 1);
	kgc_enter_native(jt_t);
	pthread_join(gc, NULL);
	kgc_leave_native(jt_t);
	T_ASSERT_EQ(kgc_stats_get(jt_heap, &s1, sizeof(s1)), 0);
	printf("collections: %llu young, %llu full; critical sections: %llu; GC thread: %d\n",
	       (unsigned long long)(s1.young_gcs - s0.young_gcs),
	       (unsigned long long)(s1.full_gcs - s0.full_gcs),
	       (unsigned long long)(s1.critical_gets - s0.critical_gets), atomic_load(&jt_gcs));
	T_ASSERT(s1.young_gcs + s1.full_gcs > s0.young_gcs + s0.full_gcs);
	/* two pins per compress and per decompress call */
	T_ASSERT(s1.critical_gets - s0.critical_gets >= 3 * 9 * 6);
	kgc_frame_pop(jt_t, &f);
	jt_teardown();
	printf("mt_jni_lz4: ok\n");
	return 0;
}
