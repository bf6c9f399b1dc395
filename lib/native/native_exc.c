/* SPDX-License-Identifier: MIT */
/*
 * native_exc.c - the pending exception a native left (Throw/ThrowNew in
 * its env, native_env.c) for the runtime to take after the call: kept per
 * thread in the bridge's extension slot, rooted by a global handle.
 */
#include <errno.h>
#include <stdlib.h>

#include "native_internal.h"

/*
 * The pending exception of a kgc_thread: allocated on its first exception,
 * kept as the thread's data in exc_ext's slot (kgc_ext.h), freed by
 * kgc_native_exception_clear or by exc_ext's thread_detach hook, which
 * kgc_thread_detach runs from whichever OS thread detaches t. An extension
 * of its own (the registry's, kgcn_ext, holds heap data only), so that this
 * file needs nothing above it.
 */
struct native_exc {
	kgc_handle h;		/* roots the exception object */
	char *msg;		/* ThrowNew message, or NULL */
	bool pending;
};

static void exception_free(kgc_thread *t, void *data);

static const struct kgc_ext exc_ext = {
	.name = "libkgc-native exceptions",
	.thread_detach = exception_free,
};

int kgcn_exception_set(kgc_thread *t, kgc_obj exc, char *msg)
{
	struct native_exc *e = kgc_ext_thread_get(t, &exc_ext);

	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || kgc_ext_thread_set(t, &exc_ext, e)) {
			free(e);
			free(msg);
			return -ENOMEM;
		}
	}
	if (!e->h) {
		e->h = kgc_handle_new(t, exc);
		if (!e->h) {
			free(msg);
			return -ENOMEM;
		}
	} else {
		kgc_handle_set(e->h, exc);
	}
	free(e->msg);
	e->msg = msg;
	e->pending = true;
	return 0;
}

KGC_API kgc_obj kgc_native_exception(kgc_thread *t)
{
	const struct native_exc *e = t ? kgc_ext_thread_get(t, &exc_ext) : NULL;

	if (!e || !e->pending)
		return NULL;
	return kgc_handle_get(e->h);
}

KGC_API const char *kgc_native_exception_message(kgc_thread *t)
{
	const struct native_exc *e = t ? kgc_ext_thread_get(t, &exc_ext) : NULL;

	if (!e || !e->pending)
		return NULL;
	return e->msg;
}

static void exception_free(kgc_thread *t, void *data)
{
	struct native_exc *e = data;

	if (e->h)
		kgc_handle_free(t, e->h);
	free(e->msg);
	free(e);
}

KGC_API void kgc_native_exception_clear(kgc_thread *t)
{
	struct native_exc *e = t ? kgc_ext_thread_get(t, &exc_ext) : NULL;

	if (!e)
		return;
	kgc_ext_thread_set(t, &exc_ext, NULL);
	exception_free(t, e);
}
