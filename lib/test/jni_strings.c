/* SPDX-License-Identifier: MIT */
/*
 * jni_strings: java/lang/String in libkgc-jni holds UTF-16; the UTF
 * functions speak Java's modified UTF-8: U+0000 is C0 80 both ways, a
 * 2- and a 3-byte character round-trip, a supplementary character given in
 * standard 4-byte UTF-8 becomes a surrogate pair and comes back as two
 * 3-byte sequences. NewString/GetStringChars/GetStringRegion on UTF-16,
 * GetStringUTFRegion, GetStringCritical (pinned: the chars in place), a
 * region out of range throws StringIndexOutOfBoundsException.
 */
#include "jni_test.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT jint Java_kgc_Strings_run(JNIEnv *env, jclass c)
{
	/* a, U+0000, e-acute, euro, U+1F600 (4-byte UTF-8 in) */
	static const char in[] = "a\xc0\x80\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	static const char out[] = "a\xc0\x80\xc3\xa9\xe2\x82\xac\xed\xa0\xbd\xed\xb8\x80";
	static const jchar units[] = { 'a', 0, 0xe9, 0x20ac, 0xd83d, 0xde00 };
	jchar u[8];
	char b[32];
	const char *utf;
	const jchar *cp;
	jboolean copy;
	jstring s = (*env)->NewStringUTF(env, in), t;
	jthrowable e;

	if ((*env)->GetStringLength(env, s) != 6)
		return __LINE__;
	(*env)->GetStringRegion(env, s, 0, 6, u);
	if (memcmp(u, units, sizeof(units)))
		return __LINE__;
	if ((*env)->GetStringUTFLength(env, s) != (jsize)strlen(out))
		return __LINE__;
	utf = (*env)->GetStringUTFChars(env, s, &copy);
	if (!utf || strcmp(utf, out))
		return __LINE__;
	(*env)->ReleaseStringUTFChars(env, s, utf);
	(*env)->GetStringUTFRegion(env, s, 2, 2, b);
	if (strcmp(b, "\xc3\xa9\xe2\x82\xac"))
		return __LINE__;
	t = (*env)->NewString(env, units, 6);
	cp = (*env)->GetStringChars(env, t, NULL);
	if (!cp || memcmp(cp, units, sizeof(units)))
		return __LINE__;
	(*env)->ReleaseStringChars(env, t, cp);
	cp = (*env)->GetStringCritical(env, t, &copy);
	if (!cp || copy || memcmp(cp, units, sizeof(units)))
		return __LINE__;
	(*env)->ReleaseStringCritical(env, t, cp);
	(*env)->GetStringRegion(env, t, 4, 3, u);
	e = (*env)->ExceptionOccurred(env);
	(*env)->ExceptionClear(env);
	if (!e || !(*env)->IsInstanceOf(env, e, (*env)->FindClass(env,
					 "java/lang/StringIndexOutOfBoundsException")))
		return __LINE__;
	if ((*env)->GetStringLength(env, (*env)->NewStringUTF(env, "")) != 0)
		return __LINE__;
	return 0;
}

int main(void)
{
	jt_setup(64u << 20, 0);
	T_ASSERT_EQ(jt_call_i(jt_method("kgc/Strings", "run", "()I", KGC_JNI_STATIC), NULL), 0);
	jt_teardown();
	printf("jni_strings: ok\n");
	return 0;
}
