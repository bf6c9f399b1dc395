/* SPDX-License-Identifier: MIT */
/*
 * native_sig.c - JNI method descriptors: parsing and validation, the 64-bit
 * fingerprint, and JNI name mangling for lazy lookup.
 *
 * Grammar (JVMS 4.3.3):
 *   MethodDescriptor: '(' FieldType* ')' ( FieldType | 'V' )
 *   FieldType:        'Z'|'B'|'C'|'S'|'I'|'J'|'F'|'D' | 'L' ClassName ';' | '[' FieldType
 * Columns in error messages are 1-based byte offsets into the descriptor.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native_internal.h"

int kgcn_prim_of_char(char c)
{
	switch (c) {
	case 'Z': return KGC_PRIM_BOOLEAN;
	case 'B': return KGC_PRIM_BYTE;
	case 'C': return KGC_PRIM_CHAR;
	case 'S': return KGC_PRIM_SHORT;
	case 'I': return KGC_PRIM_INT;
	case 'F': return KGC_PRIM_FLOAT;
	case 'J': return KGC_PRIM_LONG;
	case 'D': return KGC_PRIM_DOUBLE;
	default: return -1;
	}
}

size_t kgcn_prim_size(int prim)
{
	static const uint8_t sz[KGC_PRIM_COUNT] = {
		[KGC_PRIM_BOOLEAN] = 1, [KGC_PRIM_BYTE] = 1, [KGC_PRIM_CHAR] = 2,
		[KGC_PRIM_SHORT] = 2, [KGC_PRIM_INT] = 4, [KGC_PRIM_FLOAT] = 4,
		[KGC_PRIM_LONG] = 8, [KGC_PRIM_DOUBLE] = 8,
	};

	return prim >= 0 && prim < KGC_PRIM_COUNT ? sz[prim] : 0;
}

static int prim_type(char c)
{
	switch (c) {
	case 'Z': return NT_Z;
	case 'B': return NT_B;
	case 'C': return NT_C;
	case 'S': return NT_S;
	case 'I': return NT_I;
	case 'J': return NT_J;
	case 'F': return NT_F;
	case 'D': return NT_D;
	default: return -1;
	}
}

struct parser {
	const char *s;
	size_t pos;
	char *err;
	size_t errsz;
};

static int perr(struct parser *p, size_t col0, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int perr(struct parser *p, size_t col0, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!p->err || !p->errsz)
		return -EINVAL;
	va_start(ap, fmt);
	n = vsnprintf(p->err, p->errsz, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < p->errsz)
		snprintf(p->err + n, p->errsz - n, " at column %zu", col0 + 1);
	return -EINVAL;
}

static const char *show(char c, char buf[8])
{
	if (c == 0)
		return "end of descriptor";
	if (c >= 0x20 && c < 0x7f)
		snprintf(buf, 8, "'%c'", c);
	else
		snprintf(buf, 8, "0x%02x", (unsigned char)c);
	return buf;
}

/*
 * One field type at p->pos. *type / *elem out; allow_void for the return.
 * Returns 0 or -EINVAL.
 */
static int parse_field(struct parser *p, bool allow_void, uint8_t *type, uint8_t *elem)
{
	size_t start = p->pos, dims = 0;
	char c = p->s[p->pos], b[8];
	int t;

	while (c == '[') {
		dims++;
		c = p->s[++p->pos];
	}
	if (dims > 255)
		return perr(p, start, "array of more than 255 dimensions");
	*elem = 0;
	if (c == 'L') {
		size_t name = ++p->pos;

		while (p->s[p->pos] && p->s[p->pos] != ';') {
			char k = p->s[p->pos];

			if (k == ')' || k == '(')
				break;	/* reported as unterminated below */
			if (k == '.' || k == '[' ||
			    (k == '/' && (p->pos == name || p->s[p->pos - 1] == '/')))
				return perr(p, p->pos, "bad syntax: %s in class name",
					    show(k, b));
			p->pos++;
		}
		if (p->s[p->pos] != ';')
			return perr(p, name - 1, "bad syntax: class name not terminated by ';'");
		if (p->pos == name)
			return perr(p, name - 1, "bad syntax: empty class name");
		if (p->s[p->pos - 1] == '/')
			return perr(p, p->pos - 1, "bad syntax: '/' ends class name");
		p->pos++;
		*type = dims ? NT_RARR : NT_OBJ;
		return 0;
	}
	if (c == 'V') {
		if (dims)
			return perr(p, p->pos, "bad syntax: array of void");
		if (!allow_void)
			return perr(p, p->pos, "bad syntax: void parameter");
		p->pos++;
		*type = NT_VOID;
		return 0;
	}
	t = prim_type(c);
	if (t < 0) {
		if (c == 0 || c == ')' || c == '(' || c == ';')
			return perr(p, p->pos, "bad syntax: expected a type, found %s",
				    show(c, b));
		return perr(p, p->pos, "unknown type %s", show(c, b));
	}
	p->pos++;
	if (dims == 0)
		*type = (uint8_t)t;
	else if (dims == 1) {
		*type = NT_PARR;
		*elem = (uint8_t)kgcn_prim_of_char(c);
	} else {
		*type = NT_RARR;
	}
	return 0;
}

uint64_t kgcn_sig_fingerprint(const struct native_sig *sig)
{
	uint64_t fp;

	if (sig->nparams > NATIVE_FP_MAX_PARAMS)
		return 0;
	fp = NATIVE_FP_VALID | sig->ret | ((uint64_t)sig->nparams << 4);
	for (unsigned i = 0; i < sig->nparams; i++)
		fp |= (uint64_t)sig->types[i] << (8 + 4 * i);
	return fp;
}

int kgcn_sig_parse(const char *desc, struct native_sig *out, char *err, size_t errsz)
{
	struct parser p = { .s = desc, .err = err, .errsz = errsz };
	uint8_t types[NATIVE_MAX_SLOTS + 1], elems[NATIVE_MAX_SLOTS + 1];
	unsigned n = 0, slots = 0;
	char b[8];
	int rc;

	memset(out, 0, sizeof(*out));
	if (err && errsz)
		err[0] = 0;
	if (!desc) {
		if (err && errsz)
			snprintf(err, errsz, "no descriptor");
		return -EINVAL;
	}
	if (desc[0] != '(')
		return perr(&p, 0, "bad syntax: expected '(', found %s", show(desc[0], b));
	p.pos = 1;
	while (desc[p.pos] != ')') {
		size_t col = p.pos;

		if (!desc[p.pos])
			return perr(&p, p.pos, "bad syntax: missing ')'");
		if (n == NATIVE_MAX_SLOTS)
			return perr(&p, col, "more than %d parameters", NATIVE_MAX_SLOTS);
		rc = parse_field(&p, false, &types[n], &elems[n]);
		if (rc)
			return rc;
		slots += (types[n] == NT_J || types[n] == NT_D) ? 2 : 1;
		if (slots > NATIVE_MAX_SLOTS)
			return perr(&p, col, "parameters exceed %d slots", NATIVE_MAX_SLOTS);
		n++;
	}
	p.pos++;
	rc = parse_field(&p, true, &out->ret, &out->ret_elem);
	if (rc)
		return rc;
	if (desc[p.pos])
		return perr(&p, p.pos, "bad syntax: %s after the return type",
			    show(desc[p.pos], b));

	out->nparams = (uint16_t)n;
	out->slots = (uint16_t)slots;
	out->types = malloc(n + 1);
	out->elems = malloc(n + 1);
	if (!out->types || !out->elems) {
		kgcn_sig_free(out);
		if (err && errsz)
			snprintf(err, errsz, "out of memory");
		return -ENOMEM;
	}
	memcpy(out->types, types, n);
	memcpy(out->elems, elems, n);
	out->fingerprint = kgcn_sig_fingerprint(out);
	return 0;
}

void kgcn_sig_free(struct native_sig *sig)
{
	free(sig->types);
	free(sig->elems);
	sig->types = sig->elems = NULL;
}

/* ---------------------------------------------------------------- mangling */

struct sbuf {
	char *buf;
	size_t size, len;
};

static void put(struct sbuf *b, char c)
{
	if (b->len + 1 < b->size)
		b->buf[b->len] = c;
	b->len++;
}

static void puts_(struct sbuf *b, const char *s)
{
	while (*s)
		put(b, *s++);
}

static void put_u16(struct sbuf *b, unsigned u)
{
	static const char hex[] = "0123456789abcdef";

	puts_(b, "_0");
	for (int sh = 12; sh >= 0; sh -= 4)
		put(b, hex[(u >> sh) & 0xf]);
}

/*
 * Decodes one (modified) UTF-8 code point. Returns bytes consumed, 0 on
 * malformed input. Modified UTF-8's 2-byte NUL (C0 80) is accepted.
 */
static int utf8_next(const unsigned char *s, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if ((s[0] & 0xe0) == 0xc0 && (s[1] & 0xc0) == 0x80) {
		*cp = ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
		return 2;
	}
	if ((s[0] & 0xf0) == 0xe0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80) {
		*cp = ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) |
		      (s[2] & 0x3f);
		return 3;
	}
	if ((s[0] & 0xf8) == 0xf0 && (s[1] & 0xc0) == 0x80 && (s[2] & 0xc0) == 0x80 &&
	    (s[3] & 0xc0) == 0x80) {
		*cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
		      ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
		return *cp <= 0x10ffff ? 4 : 0;
	}
	return 0;
}

/*
 * JNI spec "Resolving Native Method Names": '/' -> '_', '_' -> "_1",
 * ';' -> "_2", '[' -> "_3", other non-alphanumeric (or non-ASCII) UTF-16 code
 * units -> "_0xxxx" (lowercase hex). in_sig: ';' and '[' are signature
 * characters (stop-free); in a name they are escaped the same way.
 */
static int mangle_part(struct sbuf *b, const char *s, const char *end)
{
	const unsigned char *u = (const unsigned char *)s;

	while ((const char *)u < end && *u) {
		uint32_t cp;
		int k = utf8_next(u, &cp);

		if (!k)
			return -EINVAL;
		u += k;
		if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
		    (cp >= '0' && cp <= '9'))
			put(b, (char)cp);
		else if (cp == '/')
			put(b, '_');
		else if (cp == '_')
			puts_(b, "_1");
		else if (cp == ';')
			puts_(b, "_2");
		else if (cp == '[')
			puts_(b, "_3");
		else if (cp > 0xffff) {
			cp -= 0x10000;
			put_u16(b, 0xd800 | (cp >> 10));
			put_u16(b, 0xdc00 | (cp & 0x3ff));
		} else
			put_u16(b, cp);
	}
	return 0;
}

int kgcn_mangle(char *buf, size_t size, const char *prefix, const char *owner,
		  const char *name, const char *desc)
{
	struct sbuf b = { buf, size, 0 };

	puts_(&b, prefix);
	if (mangle_part(&b, owner, owner + strlen(owner)))
		return -EINVAL;
	put(&b, '_');
	if (mangle_part(&b, name, name + strlen(name)))
		return -EINVAL;
	if (desc) {
		const char *open = strchr(desc, '('), *close = strchr(desc, ')');

		if (!open || !close || close < open)
			return -EINVAL;
		puts_(&b, "__");
		if (mangle_part(&b, open + 1, close))
			return -EINVAL;
	}
	if (size)
		buf[b.len < size ? b.len : size - 1] = 0;
	return (int)b.len;
}
