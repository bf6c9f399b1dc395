/* SPDX-License-Identifier: MIT */
/*
 * jni_refs: references of libkgc-jni while collections move objects. A
 * native makes 5000 local references (far beyond the 16 per call) while
 * its own allocations collect; every one still names its string after.
 * PushLocalFrame/PopLocalFrame nest and pass a result out; GetObjectRefType
 * tells local, global and weak global apart; a local deleted after use gives
 * its slot back (100000 made and deleted in turn use one slot); a global reference keeps its
 * object across native calls and full collections; a weak global one is
 * cleared once nothing else holds the object, and not while a global does.
 */
#include "jni_test.h"

#define EXPORT __attribute__((visibility("default")))

static jobject global, weak_dead, weak_live;

static jstring str(JNIEnv *env, int i)
{
	char b[32];

	snprintf(b, sizeof(b), "local %d", i);
	return (*env)->NewStringUTF(env, b);
}

static int is(JNIEnv *env, jobject s, int i)
{
	char want[32], got[32];

	snprintf(want, sizeof(want), "local %d", i);
	if ((*env)->GetStringUTFLength(env, s) != (jsize)strlen(want))
		return 0;
	(*env)->GetStringUTFRegion(env, s, 0, (*env)->GetStringLength(env, s), got);
	return !strcmp(got, want);
}

/* n locals, a byte[] of 64 KiB every 8th (the heap's young space fills) */
EXPORT jint Java_kgc_Refs_many(JNIEnv *env, jclass c, jint n)
{
	jobject *refs = malloc(sizeof(*refs) * (size_t)n);
	jint ok = 0;

	for (jint i = 0; i < n; i++) {
		refs[i] = str(env, i);
		if (!(i & 7))
			(*env)->NewByteArray(env, 65536);
	}
	for (jint i = 0; i < n; i++)
		ok += is(env, refs[i], i);
	free(refs);
	return ok;
}

EXPORT jint Java_kgc_Refs_frames(JNIEnv *env, jclass c)
{
	jobject inner, out;

	if ((*env)->EnsureLocalCapacity(env, 4000) || (*env)->PushLocalFrame(env, 16))
		return -1;
	(*env)->PushLocalFrame(env, 16);
	for (int i = 0; i < 100; i++)
		str(env, i);
	inner = str(env, 7);
	out = (*env)->PopLocalFrame(env, inner);	/* out lives in the outer frame */
	if (!is(env, out, 7) || (*env)->GetObjectRefType(env, out) != JNILocalRefType)
		return -2;
	out = (*env)->PopLocalFrame(env, out);
	if (!is(env, out, 7))
		return -3;
	global = (*env)->NewGlobalRef(env, out);
	if ((*env)->GetObjectRefType(env, global) != JNIGlobalRefType)
		return -4;
	weak_live = (*env)->NewWeakGlobalRef(env, out);
	if ((*env)->GetObjectRefType(env, weak_live) != JNIWeakGlobalRefType)
		return -5;
	weak_dead = (*env)->NewWeakGlobalRef(env, str(env, 99));
	if ((*env)->IsSameObject(env, weak_dead, NULL))
		return -6;	/* not yet: a local holds it */
	return 0;
}

/* a local deleted right after its use gives its slot back: 100000 in a row fit */
EXPORT jint Java_kgc_Refs_reuse(JNIEnv *env, jclass c)
{
	jobject first = str(env, 1), l;

	(*env)->DeleteLocalRef(env, first);
	for (int i = 0; i < 100000; i++) {
		l = str(env, i);
		if (l != first || !is(env, l, i))
			return i + 1;
		(*env)->DeleteLocalRef(env, l);
	}
	return 0;
}

/* after full collections: the global and its weak alive, the other weak cleared */
EXPORT jint Java_kgc_Refs_after(JNIEnv *env, jclass c)
{
	jobject l;

	if (!is(env, global, 7))
		return -1;
	if (!(*env)->IsSameObject(env, weak_live, global))
		return -2;
	l = (*env)->NewLocalRef(env, weak_live);
	if (!l || !is(env, l, 7))
		return -3;
	if (!(*env)->IsSameObject(env, weak_dead, NULL))
		return -4;
	if ((*env)->NewLocalRef(env, weak_dead))
		return -5;
	(*env)->DeleteWeakGlobalRef(env, weak_dead);
	(*env)->DeleteWeakGlobalRef(env, weak_live);
	(*env)->DeleteGlobalRef(env, global);
	return 0;
}

int main(void)
{
	struct kgc_stats s0, s1;

	jt_setup(256u << 20, 2u << 20);
	T_ASSERT_EQ(kgc_stats_get(jt_heap, &s0, sizeof(s0)), 0);
	T_ASSERT_EQ(jt_call_i(jt_method("kgc/Refs", "many", "(I)I", KGC_JNI_STATIC),
			      (union kgc_value[]){ { .i = 5000 } }), 5000);
	T_ASSERT_EQ(kgc_stats_get(jt_heap, &s1, sizeof(s1)), 0);
	printf("5000 locals: %llu collections during the call\n",
	       (unsigned long long)(s1.young_gcs - s0.young_gcs));
	T_ASSERT(s1.young_gcs > s0.young_gcs);
	T_ASSERT_EQ(jt_call_i(jt_method("kgc/Refs", "reuse", "()I", KGC_JNI_STATIC), NULL), 0);
	T_ASSERT_EQ(jt_call_i(jt_method("kgc/Refs", "frames", "()I", KGC_JNI_STATIC), NULL), 0);
	T_ASSERT_EQ(kgc_collect(jt_t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_collect(jt_t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(jt_t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(jt_call_i(jt_method("kgc/Refs", "after", "()I", KGC_JNI_STATIC), NULL), 0);
	jt_teardown();
	printf("jni_refs: ok\n");
	return 0;
}
