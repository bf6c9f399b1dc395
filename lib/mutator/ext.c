/* SPDX-License-Identifier: MIT */
/*
 * ext.c - the extension hooks (kgc_ext.h): per-heap and per-thread slots
 * for libraries layered on libkgc (libkgc-native), the hooks run at thread
 * detach and heap destroy, and the exported slow paths of kgc_ext.h's
 * inline native-state transitions.
 *
 * Heap slots: written under h->ext_lock (data first, then the owner with
 * release), read lock-free. A slot keeps its owner once claimed; its data
 * may go back to NULL (kgc_ext_heap_take). Thread slots belong to the
 * thread that runs the kgc_thread: plain accesses.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include "gc_internal.h"
#include "mutator/crit_fast.h"
#include <kgc_ext.h>


/* kgc_ext.h's view of the first bytes of a thread */
_Static_assert(offsetof(struct kgc_thread, pub) == offsetof(struct kgc_ext_thread_pub, pub),
	       "kgc_ext_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread, cn_arg) == offsetof(struct kgc_ext_thread_pub, cn_arg),
	       "kgc_ext_thread_pub layout");
_Static_assert(EXT_SLOTS == KGC_EXT_SLOTS, "extension slots");

KGC_API void *kgc_ext_heap_get(kgc_heap *h, const struct kgc_ext *ext)
{
	for (unsigned i = 0; i < EXT_SLOTS; i++)
		if (__atomic_load_n(&h->ext[i].ext, __ATOMIC_ACQUIRE) == ext)
			return __atomic_load_n(&h->ext[i].data, __ATOMIC_ACQUIRE);
	return NULL;
}

KGC_API void *kgc_ext_heap_install(kgc_heap *h, const struct kgc_ext *ext, void *data)
{
	struct ext_slot *s = NULL;
	void *cur;

	pthread_mutex_lock(&h->ext_lock);
	for (unsigned i = 0; i < EXT_SLOTS; i++) {
		if (h->ext[i].ext == ext) {
			s = &h->ext[i];
			break;
		}
		if (!h->ext[i].ext && !s)
			s = &h->ext[i];
	}
	if (!s) {
		pthread_mutex_unlock(&h->ext_lock);
		kgci_err_set(ENOSPC, "%s: all %d extension slots of the heap are taken",
			ext->name ? ext->name : "extension", EXT_SLOTS);
		return NULL;
	}
	cur = s->data;
	if (!cur) {
		__atomic_store_n(&s->data, data, __ATOMIC_RELEASE);
		cur = data;
	}
	__atomic_store_n(&s->ext, ext, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&h->ext_lock);
	return cur;
}

KGC_API void *kgc_ext_heap_take(kgc_heap *h, const struct kgc_ext *ext)
{
	void *d = NULL;

	pthread_mutex_lock(&h->ext_lock);
	for (unsigned i = 0; i < EXT_SLOTS; i++)
		if (h->ext[i].ext == ext) {
			d = h->ext[i].data;
			__atomic_store_n(&h->ext[i].data, NULL, __ATOMIC_RELEASE);
			break;
		}
	pthread_mutex_unlock(&h->ext_lock);
	return d;
}

KGC_API void *kgc_ext_thread_get(kgc_thread *t, const struct kgc_ext *ext)
{
	for (unsigned i = 0; i < EXT_SLOTS; i++)
		if (t->ext[i].ext == ext)
			return t->ext[i].data;
	return NULL;
}

KGC_API int kgc_ext_thread_set(kgc_thread *t, const struct kgc_ext *ext, void *data)
{
	struct ext_slot *s = NULL;

	for (unsigned i = 0; i < EXT_SLOTS; i++) {
		if (t->ext[i].ext == ext) {
			s = &t->ext[i];
			break;
		}
		if (!t->ext[i].ext && !s)
			s = &t->ext[i];
	}
	if (!s) {
		kgci_err_set(ENOSPC, "%s: all %d extension slots of thread '%s' are taken",
			ext->name ? ext->name : "extension", EXT_SLOTS, t->name);
		return -ENOSPC;
	}
	s->ext = data ? ext : NULL;
	s->data = data;
	return 0;
}

KGC_API int kgc_ext_heap_checked(const kgc_heap *h)
{
	return h->opt.check ? 1 : 0;
}

KGC_API void kgc_ext_error(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	kgci_err_set(0, "%s", buf);
}

/* kgc_thread_detach: t attached and managed. */
void kgci_ext_thread_detach(struct kgc_thread *t)
{
	for (unsigned i = 0; i < EXT_SLOTS; i++) {
		const struct kgc_ext *ext = t->ext[i].ext;
		void *d = t->ext[i].data;

		if (!ext)
			continue;
		t->ext[i].ext = NULL;
		t->ext[i].data = NULL;
		if (d && ext->thread_detach)
			ext->thread_detach(t, d);
	}
}

/* kgc_heap_destroy: no thread attached. */
void kgci_ext_heap_destroy(struct kgc_heap *h)
{
	for (unsigned i = 0; i < EXT_SLOTS; i++) {
		const struct kgc_ext *ext = h->ext[i].ext;
		void *d = h->ext[i].data;

		h->ext[i].ext = NULL;
		h->ext[i].data = NULL;
		if (ext && d && ext->heap_destroy)
			ext->heap_destroy(h, d);
	}
}

KGC_API void kgc__leave_native_slow(kgc_thread *t)
{
	kgci_thread_to_managed_slow(t, TS_NATIVE);
}

KGC_API void kgc__cn_exit_slow(kgc_thread *t)
{
	kgci_crit_native_exit_slow(t);
}
