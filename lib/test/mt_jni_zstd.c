/* SPDX-License-Identifier: MIT */
/*
 * mt_jni_zstd: Debian's zstd-jni natives (libzstd-jni1, libzstd-jni.so.1),
 * unmodified, on kgc. Host classes stand in for zstd-jni's Java half with
 * its fields; the natives keep their native pointers in long fields
 * (GetObjectClass, GetFieldID, Get/SetLongField):
 *  - ZstdCompressCtx / ZstdDecompressCtx: init() stores the context in
 *    nativePtr; byte[] round trips from 1 byte to humongous at two levels
 *    while another thread allocates and collects, byte for byte;
 *  - streaming: ZstdOutputStreamNoFinalizer.compressStream/endStream and
 *    ZstdInputStreamNoFinalizer.decompressStream in small pieces, the
 *    positions travelling in srcPos/dstPos fields;
 *  - a dictionary: ZstdDictCompress/ZstdDictDecompress (nativePtr), loaded
 *    into the contexts by loadCDictFast0/loadDDictFast0 (which read the
 *    dictionary object's field): smaller output than without, and a frame
 *    made with it does not decompress without it (Zstd.isError, getErrorCode
 *    is errCorruptionDetected, getErrorName a String from NewStringUTF).
 */
#include "jni_test.h"

#define ZSTD_SO "/usr/lib/x86_64-linux-gnu/libzstd-jni.so.1"
#define P "com/github/luben/zstd/"

#define F(n, s) { .name = (n), .sig = (s) }
static const struct kgc_jni_field_def cctx_f[] = {
	F("nativePtr", "J"), F("compression_dict", "L" P "ZstdDictCompress;"),
};
static const struct kgc_jni_field_def dctx_f[] = {
	F("nativePtr", "J"), F("decompression_dict", "L" P "ZstdDictDecompress;"),
};
static const struct kgc_jni_field_def cdict_f[] = { F("nativePtr", "J"), F("level", "I") };
static const struct kgc_jni_field_def ddict_f[] = { F("nativePtr", "J") };
static const struct kgc_jni_field_def out_f[] = {
	F("stream", "J"), F("srcPos", "J"), F("dstPos", "J"),
};
static const struct kgc_jni_field_def in_f[] = {
	F("stream", "J"), F("dstPos", "J"), F("srcPos", "J"), F("srcSize", "J"),
};

static JNIEnv *env;
enum { S_CCTX, S_DCTX, S_CDICT, S_DDICT, S_OUT, S_IN, S_A, S_B, S_C, S_D, NSLOTS };
static kgc_obj slots[NSLOTS];

static void define(const char *name, const struct kgc_jni_field_def *f, uint32_t n)
{
	struct kgc_jni_class_def d = { .size = sizeof(d), .name = name, .fields = f, .nfields = n };

	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, jt_t, &d), 0);
}

/* A new instance of cls into slots[s] (the env in managed state, a local frame). */
static void new_obj(const char *cls, int s)
{
	T_ASSERT_EQ((*env)->PushLocalFrame(env, 2), 0);
	slots[s] = *(kgc_obj *)(*env)->AllocObject(env, (*env)->FindClass(env, cls));
	(*env)->PopLocalFrame(env, NULL);
	T_ASSERT(slots[s]);
}

static jlong get_long(int s, const char *cls, const char *field)
{
	jfieldID f = (*env)->GetFieldID(env, (*env)->FindClass(env, cls), field, "J");

	T_ASSERT(f);
	return (*env)->GetLongField(env, (jobject)&slots[s], f);
}

static void set_long(int s, const char *cls, const char *field, jlong v)
{
	jfieldID f = (*env)->GetFieldID(env, (*env)->FindClass(env, cls), field, "J");

	T_ASSERT(f);
	(*env)->SetLongField(env, (jobject)&slots[s], f, v);
}

static union kgc_value call(int self, const char *cls, const char *name, const char *sig,
			    const union kgc_value *a)
{
	kgc_method *m = jt_method(cls, name, sig, self < 0 ? KGC_JNI_STATIC : 0);
	union kgc_value r = { 0 };
	int rc = kgc_native_call(jt_t, m, self < 0 ? NULL : slots[self], a, &r);

	if (rc)
		T_FAIL("%s.%s%s: %d (%s)", cls, name, sig, rc, jt_exc_class() ? jt_exc_class() : "-");
	return r;
}

static int is_error(jlong code)
{
	return call(-1, P "Zstd", "isError", "(J)Z", (union kgc_value[]){ { .j = code } }).z;
}

static kgc_obj new_bytes(size_t n)
{
	kgc_obj a = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), n);

	T_ASSERT(a);
	return a;
}

/* compressByteArray0(dst, dstOff, dstSize, src, srcOff, srcSize) of slots[S_A] into slots[S_B] */
static jlong compress(size_t n)
{
	int64_t bound = call(-1, P "Zstd", "compressBound", "(J)J",
			     (union kgc_value[]){ { .j = (int64_t)n } }).j;

	slots[S_B] = new_bytes((size_t)bound);
	return call(S_CCTX, P "ZstdCompressCtx", "compressByteArray0", "([BII[BII)J",
		    (union kgc_value[]){ { .l = slots[S_B] }, { .i = 0 }, { .i = (int32_t)bound },
					 { .l = slots[S_A] }, { .i = 0 }, { .i = (int32_t)n } }).j;
}

static jlong decompress(size_t clen, size_t n)
{
	slots[S_C] = new_bytes(n);
	return call(S_DCTX, P "ZstdDecompressCtx", "decompressByteArray0", "([BII[BII)J",
		    (union kgc_value[]){ { .l = slots[S_C] }, { .i = 0 }, { .i = (int32_t)n },
					 { .l = slots[S_B] }, { .i = 0 }, { .i = (int32_t)clen } }).j;
}

static void round_trips(unsigned long long *seed)
{
	static const size_t sizes[] = { 1, 7, 1000, 65536, 1 << 20, 6 << 20 };

	for (int level = 1; level <= 6; level += 5) {
		call(S_CCTX, P "ZstdCompressCtx", "setLevel0", "(I)V",
		     (union kgc_value[]){ { .i = level } });
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			size_t n = sizes[i];
			unsigned char *orig = malloc(n);
			jlong clen, got;

			jt_bytes(&slots[S_A], n, seed);
			memcpy(orig, kgc_array_data(slots[S_A]), n);
			clen = compress(n);
			if (clen <= 0 || is_error(clen))
				T_FAIL("compress %zu bytes at level %d: %lld", n, level, (long long)clen);
			got = decompress((size_t)clen, n);
			if (got != (jlong)n || memcmp(kgc_array_data(slots[S_C]), orig, n))
				T_FAIL("decompress %zu bytes at level %d: %lld", n, level, (long long)got);
			free(orig);
			if (n >= (1 << 20))
				jt_wait_gcs(1);
		}
	}
}

/* Streams n bytes of slots[S_A] through compressStream in 1000-byte pieces, then back. */
static void streaming(unsigned long long *seed)
{
	const size_t n = 200000, piece = 1000, dsz = 4096;
	unsigned char *orig = malloc(n), *comp = malloc(n + 4096);
	size_t clen = 0, done = 0;
	int64_t stream;
	int32_t rc;

	T_ASSERT(orig && comp);
	jt_bytes(&slots[S_A], n, seed);
	memcpy(orig, kgc_array_data(slots[S_A]), n);
	slots[S_B] = new_bytes(dsz);
	new_obj(P "ZstdOutputStreamNoFinalizer", S_OUT);
	stream = call(-1, P "ZstdOutputStreamNoFinalizer", "createCStream", "()J", NULL).j;
	T_ASSERT(stream);
	set_long(S_OUT, P "ZstdOutputStreamNoFinalizer", "stream", stream);
	T_ASSERT_EQ(call(S_OUT, P "ZstdOutputStreamNoFinalizer", "resetCStream", "(J)I",
			 (union kgc_value[]){ { .j = stream } }).i, 0);
	/* write(src, off, len) as the Java half does: srcPos from off to off+len */
	for (size_t off = 0; off < n; off += piece) {
		size_t end = off + piece < n ? off + piece : n;

		set_long(S_OUT, P "ZstdOutputStreamNoFinalizer", "srcPos", (jlong)off);
		while ((size_t)get_long(S_OUT, P "ZstdOutputStreamNoFinalizer", "srcPos") < end) {
			rc = call(S_OUT, P "ZstdOutputStreamNoFinalizer", "compressStream",
				  "(J[BI[BI)I", (union kgc_value[]){ { .j = stream },
				  { .l = slots[S_B] }, { .i = (int32_t)dsz }, { .l = slots[S_A] },
				  { .i = (int32_t)end } }).i;
			T_ASSERT(!is_error(rc));
			jlong out = get_long(S_OUT, P "ZstdOutputStreamNoFinalizer", "dstPos");

			memcpy(comp + clen, kgc_array_data(slots[S_B]), (size_t)out);
			clen += (size_t)out;
		}
	}
	do {
		rc = call(S_OUT, P "ZstdOutputStreamNoFinalizer", "endStream", "(J[BI)I",
			  (union kgc_value[]){ { .j = stream }, { .l = slots[S_B] },
			  { .i = (int32_t)dsz } }).i;
		T_ASSERT(!is_error(rc));
		jlong out = get_long(S_OUT, P "ZstdOutputStreamNoFinalizer", "dstPos");

		memcpy(comp + clen, kgc_array_data(slots[S_B]), (size_t)out);
		clen += (size_t)out;
	} while (rc > 0);
	call(-1, P "ZstdOutputStreamNoFinalizer", "freeCStream", "(J)I",
	     (union kgc_value[]){ { .j = stream } });
	T_ASSERT(clen > 0 && clen < n);

	/* back through decompressStream: 700-byte inputs into a 3000-byte window */
	new_obj(P "ZstdInputStreamNoFinalizer", S_IN);
	stream = call(-1, P "ZstdInputStreamNoFinalizer", "createDStream", "()J", NULL).j;
	set_long(S_IN, P "ZstdInputStreamNoFinalizer", "stream", stream);
	T_ASSERT(!is_error(call(S_IN, P "ZstdInputStreamNoFinalizer", "initDStream", "(J)I",
				(union kgc_value[]){ { .j = stream } }).i));
	slots[S_C] = new_bytes(3000);
	slots[S_D] = new_bytes(700);
	for (size_t in = 0; in < clen || done < n;) {
		size_t take = clen - in < 700 ? clen - in : 700;
		jlong dpos, spos;

		memcpy(kgc_array_data(slots[S_D]), comp + in, take);
		set_long(S_IN, P "ZstdInputStreamNoFinalizer", "srcPos", 0);
		set_long(S_IN, P "ZstdInputStreamNoFinalizer", "dstPos", 0);
		rc = call(S_IN, P "ZstdInputStreamNoFinalizer", "decompressStream", "(J[BI[BI)I",
			  (union kgc_value[]){ { .j = stream }, { .l = slots[S_C] }, { .i = 3000 },
			  { .l = slots[S_D] }, { .i = (int32_t)take } }).i;
		T_ASSERT(!is_error(rc));
		dpos = get_long(S_IN, P "ZstdInputStreamNoFinalizer", "dstPos");
		spos = get_long(S_IN, P "ZstdInputStreamNoFinalizer", "srcPos");
		T_ASSERT(done + (size_t)dpos <= n);
		if (memcmp(kgc_array_data(slots[S_C]), orig + done, (size_t)dpos))
			T_FAIL("decompressStream: bytes from %zu differ", done);
		done += (size_t)dpos;
		in += (size_t)spos;
		T_ASSERT(spos > 0 || dpos > 0);
	}
	call(-1, P "ZstdInputStreamNoFinalizer", "freeDStream", "(J)I",
	     (union kgc_value[]){ { .j = stream } });
	printf("streaming: %zu bytes -> %zu -> %zu\n", n, clen, done);
	free(orig);
	free(comp);
}

static void dictionary(unsigned long long *seed)
{
	static const char sample[] = "{\"user\":\"kgc\",\"event\":\"collection\",\"kind\":\"young\","
				     "\"pause_ms\":1.25,\"regions\":[\"eden\",\"survivor\",\"old\"]}";
	const size_t n = sizeof(sample) - 1;
	jlong plain, with, got;
	int64_t err;
	char name[128];

	/* the dictionary: raw content */
	slots[S_D] = new_bytes(n);
	memcpy(kgc_array_data(slots[S_D]), sample, n);
	new_obj(P "ZstdDictCompress", S_CDICT);
	call(S_CDICT, P "ZstdDictCompress", "init", "([BIII)V",
	     (union kgc_value[]){ { .l = slots[S_D] }, { .i = 0 }, { .i = (int32_t)n }, { .i = 3 } });
	T_ASSERT(get_long(S_CDICT, P "ZstdDictCompress", "nativePtr"));
	new_obj(P "ZstdDictDecompress", S_DDICT);
	call(S_DDICT, P "ZstdDictDecompress", "init", "([BII)V",
	     (union kgc_value[]){ { .l = slots[S_D] }, { .i = 0 }, { .i = (int32_t)n } });
	T_ASSERT(get_long(S_DDICT, P "ZstdDictDecompress", "nativePtr"));

	/* a record like the dictionary */
	slots[S_A] = new_bytes(n);
	memcpy(kgc_array_data(slots[S_A]), sample, n);
	((char *)kgc_array_data(slots[S_A]))[40] = 'X';
	plain = compress(n);
	T_ASSERT(!is_error(plain));
	T_ASSERT(!is_error(call(S_CCTX, P "ZstdCompressCtx", "loadCDictFast0",
				"(L" P "ZstdDictCompress;)J",
				(union kgc_value[]){ { .l = slots[S_CDICT] } }).j));
	with = compress(n);
	T_ASSERT(!is_error(with));
	printf("dictionary: %zu bytes -> %lld plain, %lld with the dictionary\n", n,
	       (long long)plain, (long long)with);
	T_ASSERT(with < plain);
	/* without the dictionary: an error code, named by getErrorName (NewStringUTF) */
	/* (not ZstdDecompressCtx.reset0: in zstd-jni 1.5.2 it reads nativePtr with the
	 * field ID of ZstdCompressCtx - checked mode stops it; it works where both
	 * classes put nativePtr first, as HotSpot and this host do) */
	err = decompress((size_t)with, n);
	T_ASSERT(is_error(err));
	{
		union kgc_value r = call(-1, P "Zstd", "getErrorName", "(J)Ljava/lang/String;",
					 (union kgc_value[]){ { .j = err } });
		kgc_obj s = r.l;
		const char *u;

		T_ASSERT_EQ((*env)->PushLocalFrame(env, 1), 0);
		u = (*env)->GetStringUTFChars(env, (jobject)&s, NULL);
		snprintf(name, sizeof(name), "%s", u);
		(*env)->ReleaseStringUTFChars(env, (jobject)&s, u);
		(*env)->PopLocalFrame(env, NULL);
		printf("without the dictionary: %s\n", name);
		/* a raw-content dictionary has no ID: the frame reads as corrupt */
		T_ASSERT_EQ(call(-1, P "Zstd", "getErrorCode", "(J)J",
				 (union kgc_value[]){ { .j = err } }).j,
			    call(-1, P "Zstd", "errCorruptionDetected", "()J", NULL).j);
		T_ASSERT(!strcmp(name, "Data corruption detected"));
	}
	T_ASSERT(!is_error(call(S_DCTX, P "ZstdDecompressCtx", "loadDDictFast0",
				"(L" P "ZstdDictDecompress;)J",
				(union kgc_value[]){ { .l = slots[S_DDICT] } }).j));
	got = decompress((size_t)with, n);
	T_ASSERT_EQ(got, (jlong)n);
	T_ASSERT(!memcmp(kgc_array_data(slots[S_C]), kgc_array_data(slots[S_A]), n));
	call(S_CDICT, P "ZstdDictCompress", "free", "()V", NULL);
	call(S_DDICT, P "ZstdDictDecompress", "free", "()V", NULL);
	(void)seed;
}

int main(void)
{
	unsigned long long seed = t_seed();
	struct kgc_frame f;
	pthread_t gc;

	jt_need(ZSTD_SO, "libzstd-jni1");
	jt_setup(512u << 20, 8u << 20);
	define(P "ZstdDictCompress", cdict_f, 2);
	define(P "ZstdDictDecompress", ddict_f, 1);
	define(P "ZstdCompressCtx", cctx_f, 2);
	define(P "ZstdDecompressCtx", dctx_f, 2);
	define(P "ZstdOutputStreamNoFinalizer", out_f, 3);
	define(P "ZstdInputStreamNoFinalizer", in_f, 4);
	T_ASSERT_EQ(kgc_jni_load_library(jt_vm, jt_t, ZSTD_SO), 0);
	T_ASSERT_EQ(kgc_jni_env(jt_vm, jt_t, &env), 0);
	kgc_frame_push(jt_t, &f, slots, NSLOTS, NULL);
	new_obj(P "ZstdCompressCtx", S_CCTX);
	new_obj(P "ZstdDecompressCtx", S_DCTX);
	call(S_CCTX, P "ZstdCompressCtx", "init", "()V", NULL);
	call(S_DCTX, P "ZstdDecompressCtx", "init", "()V", NULL);
	T_ASSERT(get_long(S_CCTX, P "ZstdCompressCtx", "nativePtr"));
	T_ASSERT(get_long(S_DCTX, P "ZstdDecompressCtx", "nativePtr"));

	T_ASSERT_EQ(pthread_create(&gc, NULL, jt_gc_thread, (void *)(uintptr_t)(seed + 1)), 0);
	round_trips(&seed);
	streaming(&seed);
	dictionary(&seed);
	atomic_store(&jt_stop, 1);
	kgc_enter_native(jt_t);
	pthread_join(gc, NULL);
	kgc_leave_native(jt_t);
	printf("GC thread: %d collections\n", atomic_load(&jt_gcs));
	call(S_CCTX, P "ZstdCompressCtx", "free", "()V", NULL);
	call(S_DCTX, P "ZstdDecompressCtx", "free", "()V", NULL);
	kgc_frame_pop(jt_t, &f);
	jt_teardown();
	printf("mt_jni_zstd: ok\n");
	return 0;
}
