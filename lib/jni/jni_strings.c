/* SPDX-License-Identifier: MIT */
/*
 * jni_strings.c - the JNI string functions over the String objects of
 * jni_utf.c: lengths, regions, copies (GetString[UTF]Chars) and the pinned
 * GetStringCritical.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jni_internal.h"

/* The char[] of a String, or NULL (checked mode: not a String aborts). */
static kgc_obj chars_of(struct kgcj_env *e, kgc_obj s, const char *fn)
{
	if (!s || kgcj_class_of_obj(e->vm, s) != e->vm->c_string) {
		if (e->vm->checked)
			kgcj_fatal(fn, "%s is not a java/lang/String", s ? "the object" : "null");
		return NULL;
	}
	return kgc_get_ref(s, e->vm->f_str_value->offset);
}

KGC_API kgc_obj kgc_jni_string_new(JavaVM *jvm, kgc_thread *t, const char *utf8)
{
	struct kgcj_env *e;

	if (!jvm || !t || !utf8) {
		kgcj_error("kgc_jni_string_new: NULL argument");
		return NULL;
	}
	e = kgcj_env_get(VM(jvm), t);
	return e ? kgcj_string_new(e, utf8) : NULL;
}

/* ------------------------------------------------------------------ JNI */

jstring kgcj_NewString(JNIEnv *env, const jchar *u, jsize len)
{
	struct kgcj_env *e = ENV(env);
	jobject r = NULL;
	kgc_obj s;
	bool n;

	kgcj_check(e, "NewString");
	n = kgcj_in(e);
	if (len < 0 || (len && !u)) {
		kgcj_throw(e, "java/lang/IllegalArgumentException", "NewString: length %d, "
			   "chars %p", (int)len, (const void *)u);
	} else {
		s = kgcj_string_make(e, u, (size_t)len, NULL);
		if (s)
			r = kgcj_local(e, s);
		else
			kgcj_throw(e, "java/lang/OutOfMemoryError", "NewString: %d chars", (int)len);
	}
	kgcj_out(e, n);
	return r;
}

jstring kgcj_NewStringUTF(JNIEnv *env, const char *utf8)
{
	struct kgcj_env *e = ENV(env);
	jobject r = NULL;
	kgc_obj s;
	bool n;

	kgcj_check(e, "NewStringUTF");
	if (!utf8)
		return NULL;
	n = kgcj_in(e);
	s = kgcj_string_new(e, utf8);
	if (s)
		r = kgcj_local(e, s);
	else
		kgcj_throw(e, "java/lang/OutOfMemoryError", "NewStringUTF");
	kgcj_out(e, n);
	return r;
}

jsize kgcj_GetStringLength(JNIEnv *env, jstring str)
{
	struct kgcj_env *e = ENV(env);
	kgc_obj a;
	bool n;

	kgcj_check(e, "GetStringLength");
	n = kgcj_in(e);
	a = chars_of(e, kgcj_deref(e, str, "GetStringLength"), "GetStringLength");
	kgcj_out(e, n);
	return a ? (jsize)kgc_array_length(a) : 0;
}

jsize kgcj_GetStringUTFLength(JNIEnv *env, jstring str)
{
	struct kgcj_env *e = ENV(env);
	size_t len = 0;
	kgc_obj a;
	bool n;

	kgcj_check(e, "GetStringUTFLength");
	n = kgcj_in(e);
	a = chars_of(e, kgcj_deref(e, str, "GetStringUTFLength"), "GetStringUTFLength");
	if (a)
		len = kgcj_utf8_len(kgc_array_data(a), kgc_array_length(a));
	kgcj_out(e, n);
	return (jsize)len;
}

const jchar *kgcj_GetStringChars(JNIEnv *env, jstring str, jboolean *isCopy)
{
	struct kgcj_env *e = ENV(env);
	jchar *p = NULL;
	size_t len;
	kgc_obj a;
	bool n;

	kgcj_check(e, "GetStringChars");
	n = kgcj_in(e);
	a = chars_of(e, kgcj_deref(e, str, "GetStringChars"), "GetStringChars");
	if (a) {
		len = kgc_array_length(a);
		p = malloc((len + 1) * sizeof(jchar));
		if (p) {
			memcpy(p, kgc_array_data(a), len * sizeof(jchar));
			p[len] = 0;
		} else {
			kgcj_throw(e, "java/lang/OutOfMemoryError", "GetStringChars");
		}
	}
	kgcj_out(e, n);
	kgcj_copy_track(e, p, "GetStringChars");
	if (p && isCopy)
		*isCopy = JNI_TRUE;
	return p;
}

void kgcj_ReleaseStringChars(JNIEnv *env, jstring str, const jchar *chars)
{
	struct kgcj_env *e = ENV(env);

	if (e->vm->checked)
		kgcj_check_crit(e, "ReleaseStringChars");
	kgcj_copy_untrack(e, (void *)chars, "ReleaseStringChars", "GetStringChars", false);
	free((void *)chars);
}

const char *kgcj_GetStringUTFChars(JNIEnv *env, jstring str, jboolean *isCopy)
{
	struct kgcj_env *e = ENV(env);
	char *p = NULL;
	bool n;

	kgcj_check(e, "GetStringUTFChars");
	n = kgcj_in(e);
	if (chars_of(e, kgcj_deref(e, str, "GetStringUTFChars"), "GetStringUTFChars")) {
		p = kgcj_string_utf8(e->vm, kgcj_deref(e, str, "GetStringUTFChars"));
		if (!p)
			kgcj_throw(e, "java/lang/OutOfMemoryError", "GetStringUTFChars");
	}
	kgcj_out(e, n);
	kgcj_copy_track(e, p, "GetStringUTFChars");
	if (p && isCopy)
		*isCopy = JNI_TRUE;
	return p;
}

void kgcj_ReleaseStringUTFChars(JNIEnv *env, jstring str, const char *chars)
{
	struct kgcj_env *e = ENV(env);

	if (e->vm->checked)
		kgcj_check_crit(e, "ReleaseStringUTFChars");
	kgcj_copy_untrack(e, (void *)chars, "ReleaseStringUTFChars", "GetStringUTFChars", false);
	free((void *)chars);
}

/* [start, start+len) of the string's units, or NULL with the exception thrown. */
static const jchar *region(struct kgcj_env *e, jstring str, jsize start, jsize len,
			   const char *fn)
{
	kgc_obj a = chars_of(e, kgcj_deref(e, str, fn), fn);
	size_t n;

	if (!a)
		return NULL;
	n = kgc_array_length(a);
	if (start < 0 || len < 0 || (size_t)start > n || (size_t)len > n - (size_t)start) {
		kgcj_throw(e, "java/lang/StringIndexOutOfBoundsException",
			   "%s: region [%d, %d+%d) outside a string of %zu", fn, (int)start,
			   (int)start, (int)len, n);
		return NULL;
	}
	return (const jchar *)kgc_array_data(a) + start;
}

void kgcj_GetStringRegion(JNIEnv *env, jstring str, jsize start, jsize len, jchar *buf)
{
	struct kgcj_env *e = ENV(env);
	const jchar *u;
	bool n;

	kgcj_check(e, "GetStringRegion");
	n = kgcj_in(e);
	u = region(e, str, start, len, "GetStringRegion");
	if (u)
		memcpy(buf, u, (size_t)len * sizeof(jchar));
	kgcj_out(e, n);
}

void kgcj_GetStringUTFRegion(JNIEnv *env, jstring str, jsize start, jsize len, char *buf)
{
	struct kgcj_env *e = ENV(env);
	const jchar *u;
	bool n;

	kgcj_check(e, "GetStringUTFRegion");
	n = kgcj_in(e);
	u = region(e, str, start, len, "GetStringUTFRegion");
	if (u)
		kgcj_utf8_encode(u, (size_t)len, buf);
	kgcj_out(e, n);
}

/*
 * Pins the string's char[] like GetPrimitiveArrayCritical (a local roots
 * it). Not inside another critical region: the thread cannot leave native
 * state there to read the string (NULL; checked mode aborts).
 */
const jchar *kgcj_GetStringCritical(JNIEnv *env, jstring str, jboolean *isCopy)
{
	struct kgcj_env *e = ENV(env);
	jobject slot;
	size_t len;
	void *p;
	bool n;

	if (e->vm->checked)
		kgcj_check_exc(e, "GetStringCritical");
	if (e->crit) {
		if (e->vm->checked)
			kgcj_fatal("GetStringCritical", "inside another critical region "
				   "(not supported by libkgc-jni)");
		kgcj_error("GetStringCritical: inside another critical region");
		return NULL;
	}
	n = kgcj_in(e);
	slot = kgcj_local(e, chars_of(e, kgcj_deref(e, str, "GetStringCritical"),
				      "GetStringCritical"));
	kgcj_out(e, n);
	if (!slot)
		return NULL;
	p = kgc_critical_get(e->t, (kgc_obj *)slot, &len);
	if (p) {
		e->crit++;
		if (isCopy)
			*isCopy = JNI_FALSE;
	}
	return p;
}

void kgcj_ReleaseStringCritical(JNIEnv *env, jstring str, const jchar *chars)
{
	struct kgcj_env *e = ENV(env);
	kgc_obj a;

	if (!chars)
		return;
	if (!e->crit) {
		if (e->vm->checked)
			kgcj_fatal("ReleaseStringCritical", "no critical region is open");
		return;
	}
	a = (kgc_obj)((char *)chars - KGC_ARRAY_DATA_OFFSET);
	if (kgc_critical_release(e->t, &a, (void *)chars, KGC_CRITICAL_COMMIT)) {
		if (e->vm->checked)
			kgcj_fatal("ReleaseStringCritical", "%p was not returned by "
				   "GetStringCritical: %s", (const void *)chars, kgc_last_error());
		return;
	}
	e->crit--;
}
