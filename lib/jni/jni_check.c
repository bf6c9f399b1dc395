/* SPDX-License-Identifier: MIT */
/*
 * jni_check.c - fatal errors and checked mode (the heap's KGC_CHECK, like
 * -Xcheck:jni): each message names the JNI function at fault; kgc_last_error.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jni_internal.h"

void kgcj_error(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	kgc_ext_error("%s", buf);
}

void kgcj_fatal(const char *fn, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kgc-jni: FATAL: JNI %s: ", fn);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	abort();
}

void kgcj_check_crit(struct kgcj_env *e, const char *fn)
{
	if (e->crit)
		kgcj_fatal(fn, "called inside a critical region (%u open: "
			   "GetPrimitiveArrayCritical/GetStringCritical without release)", e->crit);
}

void kgcj_check_exc(struct kgcj_env *e, const char *fn)
{
	if (e->exc_pending)
		kgcj_fatal(fn, "called with an exception pending (the native ignored it: "
			   "check ExceptionCheck/ExceptionOccurred after the call that threw)");
}

/* Checked mode: copies handed out (Get<T>ArrayElements, GetString[UTF]Chars)
 * are tracked so that a release of anything else is caught. */
void kgcj_copy_track(struct kgcj_env *e, void *elems, const char *getfn)
{
	struct kgcj_copy *c;

	if (!e->vm->checked || !elems)
		return;
	c = malloc(sizeof(*c));
	if (!c)
		kgcj_fatal(getfn, "out of memory (checked mode)");
	c->elems = elems;
	c->fn = getfn;
	c->next = e->copies;
	e->copies = c;
}

void kgcj_copy_untrack(struct kgcj_env *e, void *elems, const char *relfn, const char *getfn,
		       bool keep)
{
	struct kgcj_copy **pp, *c;

	if (!e->vm->checked)
		return;
	for (pp = &e->copies; (c = *pp); pp = &c->next)
		if (c->elems == elems)
			break;
	if (!c || strcmp(c->fn, getfn))
		kgcj_fatal(relfn, "%p was not returned by %s (%s)", elems, getfn,
			   c ? "it came from another Get function" : "released twice, or never got");
	if (!keep) {
		*pp = c->next;
		free(c);
	}
}
