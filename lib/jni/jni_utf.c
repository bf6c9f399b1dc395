/* SPDX-License-Identifier: MIT */
/*
 * jni_utf.c - java/lang/String objects: an instance whose field value is a
 * char[] of UTF-16 code units; conversions to and from Java's modified
 * UTF-8 (U+0000 as C0 80, supplementary characters as two 3-byte
 * surrogates; standard 4-byte sequences are accepted on input).
 */
#include <stdlib.h>
#include <string.h>

#include "jni_internal.h"

/* -------------------------------------------------------- modified UTF-8 */

/* Decodes one character at *p (advancing it) into u[0..1]; returns units (1 or 2). */
static int utf8_next(const unsigned char **p, jchar *u)
{
	const unsigned char *s = *p;
	uint32_t cp;

	if (s[0] < 0x80) {
		*p = s + 1;
		u[0] = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0 && (s[1] & 0xc0) == 0x80) {
		*p = s + 2;
		u[0] = (jchar)(((s[0] & 0x1f) << 6) | (s[1] & 0x3f));
		return 1;
	}
	if ((s[0] & 0xf0) == 0xe0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80) {
		*p = s + 3;
		u[0] = (jchar)(((s[0] & 0x0f) << 12) | ((s[1] & 0x3f) << 6) | (s[2] & 0x3f));
		return 1;
	}
	if ((s[0] & 0xf8) == 0xf0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80 &&
	    (s[3] & 0xc0) == 0x80) {
		*p = s + 4;
		cp = ((uint32_t)(s[0] & 0x07) << 18) | ((s[1] & 0x3f) << 12) |
		     ((s[2] & 0x3f) << 6) | (s[3] & 0x3f);
		cp -= 0x10000;
		u[0] = (jchar)(0xd800 + (cp >> 10));
		u[1] = (jchar)(0xdc00 + (cp & 0x3ff));
		return 2;
	}
	*p = s + 1;	/* a malformed byte stands for itself (Latin-1) */
	u[0] = s[0];
	return 1;
}

static size_t utf8_units(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	jchar u[2];
	size_t n = 0;

	while (*p)
		n += utf8_next(&p, u);
	return n;
}

static size_t unit_utf8_len(jchar c)
{
	return c && c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
}

size_t kgcj_utf8_len(const jchar *u, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += unit_utf8_len(u[i]);
	return len;
}

void kgcj_utf8_encode(const jchar *u, size_t n, char *out)
{
	unsigned char *o = (unsigned char *)out;

	for (size_t i = 0; i < n; i++) {
		jchar c = u[i];

		if (c && c < 0x80) {
			*o++ = (unsigned char)c;
		} else if (c < 0x800) {
			*o++ = (unsigned char)(0xc0 | (c >> 6));
			*o++ = (unsigned char)(0x80 | (c & 0x3f));
		} else {
			*o++ = (unsigned char)(0xe0 | (c >> 12));
			*o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3f));
			*o++ = (unsigned char)(0x80 | (c & 0x3f));
		}
	}
	*o = 0;
}

/* ------------------------------------------------------------ the objects */

kgc_obj kgcj_string_make(struct kgcj_env *e, const jchar *u, size_t n, const char *utf8)
{
	kgc_obj slot[1], s;
	struct kgc_frame f;

	slot[0] = kgc_alloc_array(e->t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_CHAR), n);
	if (!slot[0])
		return NULL;
	if (u) {
		memcpy(kgc_array_data(slot[0]), u, n * sizeof(jchar));
	} else {
		const unsigned char *p = (const unsigned char *)utf8;
		jchar *d = kgc_array_data(slot[0]);

		while (*p)
			d += utf8_next(&p, d);
	}
	kgc_frame_push(e->t, &f, slot, 1, NULL);
	s = kgc_alloc(e->t, e->vm->c_string->type);
	if (s)
		kgc_set_ref(e->t, s, e->vm->f_str_value->offset, slot[0]);
	kgc_frame_pop(e->t, &f);
	return s;
}

kgc_obj kgcj_string_new(struct kgcj_env *e, const char *utf8)
{
	return kgcj_string_make(e, NULL, utf8_units(utf8), utf8);
}

char *kgcj_string_utf8(struct kgcj_vm *vm, kgc_obj s)
{
	kgc_obj a = kgcj_class_of_obj(vm, s) == vm->c_string ?
		    kgc_get_ref(s, vm->f_str_value->offset) : NULL;
	size_t n = a ? kgc_array_length(a) : 0;
	char *out;

	if (!a)
		return NULL;
	out = malloc(kgcj_utf8_len(kgc_array_data(a), n) + 1);
	if (out)
		kgcj_utf8_encode(kgc_array_data(a), n, out);
	return out;
}
