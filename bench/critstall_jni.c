/* SPDX-License-Identifier: MIT */
/*
 * The native half of CritStall.java: CritStall.hold(byte[] a, int ms) holds
 * a critical for ms milliseconds (GetPrimitiveArrayCritical .. nanosleep ..
 * ReleasePrimitiveArrayCritical), writing its first and last byte as JNI
 * code working on the array would. Built against the JDK's own <jni.h>
 * (bench/Makefile: out/libcritstall.so), loaded by HotSpot 17 and 25 alike.
 */
#include <jni.h>
#include <time.h>

JNIEXPORT void JNICALL Java_CritStall_hold(JNIEnv *env, jclass cls, jbyteArray a, jint ms)
{
	jsize len = (*env)->GetArrayLength(env, a);
	jbyte *p = (*env)->GetPrimitiveArrayCritical(env, a, NULL);
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	(void)cls;
	if (!p)
		return;	/* OutOfMemoryError pending */
	p[0] = 1;
	p[len - 1] = 2;
	if (ms > 0)
		nanosleep(&ts, NULL);
	(*env)->ReleasePrimitiveArrayCritical(env, a, p, 0);
}
