/* SPDX-License-Identifier: MIT */
/*
 * mt_jni_snappy: Debian's snappy-java natives (libsnappy-jni,
 * jni/libsnappyjava.so), unmodified, on kgc: instance natives of
 * org/xerial/snappy/SnappyNative with byte[] (pinned by
 * GetPrimitiveArrayCritical) round trips from 1 byte to humongous while
 * another thread allocates and collects, checked byte for byte; the direct
 * ByteBuffer variants (NewDirectByteBuffer, GetDirectBufferAddress);
 * nativeLibraryVersion (NewStringUTF). A corrupt input makes the .so call
 * back into Java (FindClass, GetMethodID, CallVoidMethod on throw_error(I)V):
 * the host's throw_error, written as snappy-java's Java half, throws
 * java/io/IOException("FAILED_TO_UNCOMPRESS(5)"), which kgc_native_call
 * returns as -EPROTO.
 */
#include "jni_test.h"

#define SNAPPY_SO "/usr/lib/x86_64-linux-gnu/jni/libsnappyjava.so"
#define SN "org/xerial/snappy/SnappyNative"
#define OBJ "Ljava/lang/Object;"
#define BB "Ljava/nio/ByteBuffer;"

static kgc_method *m_max, *m_comp, *m_uncomp, *m_ulen, *m_valid, *m_bbcomp, *m_bbuncomp;
static int throw_calls;

/* SnappyErrorCode's names, by code (snappy-java 1.1.8) */
static const char *const codes[] = {
	"UNKNOWN", "FAILED_TO_LOAD_NATIVE_LIBRARY", "PARSING_ERROR", "NOT_A_DIRECT_BUFFER",
	"OUT_OF_MEMORY", "FAILED_TO_UNCOMPRESS", "EMPTY_INPUT", "INCOMPATIBLE_VERSION",
	"INVALID_CHUNK_SIZE", "UNSUPPORTED_PLATFORM",
};

/* SnappyNative.throw_error(int): throw new IOException(String.format("%s(%d)", name, code)) */
static void throw_error(JNIEnv *env, jobject self, const jvalue *args, jvalue *res, void *d)
{
	int code = args[0].i;
	char msg[96];

	throw_calls++;
	snprintf(msg, sizeof(msg), "%s(%d)", code >= 0 && code < 10 ? codes[code] : "UNKNOWN",
		 code);
	(*env)->ThrowNew(env, (*env)->FindClass(env, "java/io/IOException"), msg);
}

static const struct kgc_jni_method_def sn_methods[] = {
	{ .name = "<init>", .sig = "()V" },
	{ .name = "throw_error", .sig = "(I)V", .fn = throw_error },
	{ .name = "rawCompress", .sig = "(" OBJ "II" OBJ "I)I", .flags = KGC_JNI_NATIVE },
	{ .name = "rawUncompress", .sig = "(" OBJ "II" OBJ "I)I", .flags = KGC_JNI_NATIVE },
	{ .name = "maxCompressedLength", .sig = "(I)I", .flags = KGC_JNI_NATIVE },
};

static int32_t call_i(kgc_obj self, kgc_method *m, const union kgc_value *a, int *rc)
{
	union kgc_value r = { 0 };

	*rc = kgc_native_call(jt_t, m, self, a, &r);
	return r.i;
}

static int32_t call_ok(kgc_obj self, kgc_method *m, const union kgc_value *a)
{
	int rc;
	int32_t v = call_i(self, m, a, &rc);

	if (rc)
		T_FAIL("snappy native: %d (%s: %s)", rc, jt_exc_class() ? jt_exc_class() : "-",
		       kgc_native_exception_message(jt_t) ? kgc_native_exception_message(jt_t) : "-");
	return v;
}

/* slots: 0 self, 1 input, 2 compressed, 3 output */
static void round_trip(kgc_obj *slots, size_t n, unsigned long long *seed)
{
	unsigned char *orig;
	int32_t cap, clen, ulen;

	jt_bytes(&slots[1], n, seed);
	orig = malloc(n);
	T_ASSERT(orig);
	memcpy(orig, kgc_array_data(slots[1]), n);
	cap = call_ok(slots[0], m_max, (union kgc_value[]){ { .i = (int32_t)n } });
	T_ASSERT(cap >= (int32_t)n);
	slots[2] = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), (size_t)cap + 3);
	T_ASSERT(slots[2]);
	/* rawCompress(input, inputOffset, inputLength, output, outputOffset) */
	clen = call_ok(slots[0], m_comp, (union kgc_value[]){ { .l = slots[1] }, { .i = 0 },
		       { .i = (int32_t)n }, { .l = slots[2] }, { .i = 3 } });
	if (clen <= 0 || clen > cap)
		T_FAIL("rawCompress of %zu bytes: %d (max %d)", n, clen, cap);
	ulen = call_ok(slots[0], m_ulen, (union kgc_value[]){ { .l = slots[2] }, { .i = 3 },
		       { .i = clen } });
	T_ASSERT_EQ(ulen, (int32_t)n);
	T_ASSERT_EQ(call_ok(slots[0], m_valid, (union kgc_value[]){ { .l = slots[2] }, { .i = 3 },
			    { .i = clen } }) & 0xff, 1);
	slots[3] = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), n + 5);
	T_ASSERT(slots[3]);
	ulen = call_ok(slots[0], m_uncomp, (union kgc_value[]){ { .l = slots[2] }, { .i = 3 },
		       { .i = clen }, { .l = slots[3] }, { .i = 5 } });
	T_ASSERT_EQ(ulen, (int32_t)n);
	if (memcmp((char *)kgc_array_data(slots[3]) + 5, orig, n))
		T_FAIL("rawUncompress: %zu bytes differ from the input", n);
	free(orig);
}

/* The direct ByteBuffer natives on malloc'd memory. */
static void direct(kgc_obj *slots, JNIEnv *env)
{
	size_t n = 300000;
	unsigned char *in = malloc(n), *comp = malloc(n + n / 6 + 64), *out = malloc(n);
	unsigned long long s = 7;
	int32_t clen, ulen;

	T_ASSERT(in && comp && out);
	for (size_t i = 0; i < n; i++)
		in[i] = (t_rand(&s) & 7) ? 'x' : (unsigned char)t_rand(&s);
	T_ASSERT_EQ((*env)->PushLocalFrame(env, 4), 0);
	slots[1] = *(kgc_obj *)(*env)->NewDirectByteBuffer(env, in, (jlong)n);
	slots[2] = *(kgc_obj *)(*env)->NewDirectByteBuffer(env, comp, (jlong)(n + n / 6 + 64));
	slots[3] = *(kgc_obj *)(*env)->NewDirectByteBuffer(env, out, (jlong)n);
	(*env)->PopLocalFrame(env, NULL);
	clen = call_ok(slots[0], m_bbcomp, (union kgc_value[]){ { .l = slots[1] }, { .i = 0 },
		       { .i = (int32_t)n }, { .l = slots[2] }, { .i = 0 } });
	T_ASSERT(clen > 0 && clen < (int32_t)n);
	ulen = call_ok(slots[0], m_bbuncomp, (union kgc_value[]){ { .l = slots[2] }, { .i = 0 },
		       { .i = clen }, { .l = slots[3] }, { .i = 0 } });
	T_ASSERT_EQ(ulen, (int32_t)n);
	T_ASSERT(!memcmp(in, out, n));
	free(in);
	free(comp);
	free(out);
}

/* A corrupt input: the .so calls throw_error(FAILED_TO_UNCOMPRESS). */
static void corrupt(kgc_obj *slots)
{
	int rc, before = throw_calls;
	char msg[128];

	slots[2] = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 64);
	memcpy(kgc_array_data(slots[2]), "\x20\xff\xff\xff garbage, not snappy at all", 32);
	slots[3] = kgc_alloc_array(jt_t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 64);
	call_i(slots[0], m_uncomp, (union kgc_value[]){ { .l = slots[2] }, { .i = 0 },
	       { .i = 32 }, { .l = slots[3] }, { .i = 0 } }, &rc);
	T_ASSERT_EQ(rc, -EPROTO);
	T_ASSERT_EQ(throw_calls, before + 1);
	T_ASSERT(jt_exc_class() && !strcmp(jt_exc_class(), "java/io/IOException"));
	T_ASSERT(kgc_jni_exception_message(jt_vm, jt_t, kgc_native_exception(jt_t), msg,
					   sizeof(msg)) > 0);
	if (strcmp(msg, "FAILED_TO_UNCOMPRESS(5)"))
		T_FAIL("corrupt input: IOException(\"%s\")", msg);
	T_ASSERT(!strcmp(kgc_native_exception_message(jt_t), "FAILED_TO_UNCOMPRESS(5)"));
	printf("corrupt input: %s: %s\n", jt_exc_class(), msg);
	kgc_native_exception_clear(jt_t);
	/* uncompressedLength of a length that is no varint: PARSING_ERROR(2) */
	memset(kgc_array_data(slots[2]), 0xff, 16);
	call_i(slots[0], m_ulen, (union kgc_value[]){ { .l = slots[2] }, { .i = 0 }, { .i = 16 } },
	       &rc);
	T_ASSERT_EQ(rc, -EPROTO);
	T_ASSERT(!strcmp(kgc_native_exception_message(jt_t), "PARSING_ERROR(2)"));
	kgc_native_exception_clear(jt_t);
}

int main(void)
{
	static const size_t sizes[] = { 1, 3, 100, 4096, 65536, 1 << 20, 6 << 20 };
	struct kgc_jni_class_def def = {
		.size = sizeof(def), .name = SN, .methods = sn_methods,
		.nmethods = sizeof(sn_methods) / sizeof(sn_methods[0]),
	};
	unsigned long long seed = t_seed();
	kgc_obj slots[4] = { NULL };
	struct kgc_frame f;
	union kgc_value r;
	char ver[64];
	JNIEnv *env;
	pthread_t gc;

	jt_need(SNAPPY_SO, "libsnappy-jni");
	jt_setup(512u << 20, 8u << 20);
	T_ASSERT_EQ(kgc_jni_class_define(jt_vm, jt_t, &def), 0);
	T_ASSERT_EQ(kgc_jni_load_library(jt_vm, jt_t, SNAPPY_SO), 0);
	m_max = jt_method(SN, "maxCompressedLength", "(I)I", 0);
	m_comp = jt_method(SN, "rawCompress", "(" OBJ "II" OBJ "I)I", 0);
	m_uncomp = jt_method(SN, "rawUncompress", "(" OBJ "II" OBJ "I)I", 0);
	m_ulen = jt_method(SN, "uncompressedLength", "(" OBJ "II)I", 0);
	m_valid = jt_method(SN, "isValidCompressedBuffer", "(" OBJ "II)Z", 0);
	m_bbcomp = jt_method(SN, "rawCompress", "(" BB "II" BB "I)I", 0);
	m_bbuncomp = jt_method(SN, "rawUncompress", "(" BB "II" BB "I)I", 0);

	kgc_frame_push(jt_t, &f, slots, 4, NULL);
	T_ASSERT_EQ(kgc_jni_env(jt_vm, jt_t, &env), 0);
	T_ASSERT_EQ((*env)->PushLocalFrame(env, 4), 0);
	slots[0] = *(kgc_obj *)(*env)->AllocObject(env, (*env)->FindClass(env, SN));
	(*env)->PopLocalFrame(env, NULL);
	T_ASSERT(slots[0]);
	T_ASSERT_EQ(kgc_native_call(jt_t, jt_method(SN, "nativeLibraryVersion",
						    "()Ljava/lang/String;", 0), slots[0], NULL, &r), 0);
	T_ASSERT(!strcmp(kgc_jni_class_name(jt_vm, r.l), "java/lang/String"));
	{
		char *s = NULL;
		kgc_obj str = r.l;	/* no safepoint until it is read */
		jobject h;

		T_ASSERT_EQ((*env)->PushLocalFrame(env, 2), 0);
		h = (*env)->NewLocalRef(env, (jobject)&str);
		s = (char *)(*env)->GetStringUTFChars(env, h, NULL);
		snprintf(ver, sizeof(ver), "%s", s);
		(*env)->ReleaseStringUTFChars(env, h, s);
		(*env)->PopLocalFrame(env, NULL);
		printf("snappy nativeLibraryVersion: %s\n", ver);
		T_ASSERT(ver[0] >= '1' && ver[0] <= '9');
	}

	T_ASSERT_EQ(pthread_create(&gc, NULL, jt_gc_thread, (void *)(uintptr_t)(seed + 1)), 0);
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			round_trip(slots, sizes[i], &seed);
			if (sizes[i] >= (1 << 20))
				jt_wait_gcs(1);
		}
	direct(slots, env);
	corrupt(slots);
	atomic_store(&jt_stop, 1);
	kgc_enter_native(jt_t);
	pthread_join(gc, NULL);
	kgc_leave_native(jt_t);
	printf("GC thread: %d collections\n", atomic_load(&jt_gcs));
	kgc_frame_pop(jt_t, &f);
	jt_teardown();
	printf("mt_jni_snappy: ok\n");
	return 0;
}
