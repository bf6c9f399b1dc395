/* SPDX-License-Identifier: MIT */
/* roots.c - frames (runtime-owned slot arrays with a refmap), global handles,
 * and root iteration for the collectors (an object's references are
 * heap/object.c's). */
#include "kgc_api.h"
/* kgc.h's inline kgc_frame_push/_pop become this file's exported
 * definitions (before the include), for callers that take their address,
 * bind them by name, or were built against ABI 4 or with KGC_V1_CALLS */
#define KGC_INLINE_ROOTS KGC_API

#include <errno.h>
#include <stdlib.h>
#include "gc_internal.h"


/* The checked paths of kgc.h's inline kgc_frame_push/_pop (the inline path
 * calls them whenever pub.checked is set, and pop for a frame not on top):
 * checked mode checks the thread first, then links or unlinks as inline. */
KGC_API void kgc__frame_push_slow(kgc_thread *t, struct kgc_frame *f, kgc_obj *slots,
				  uint32_t nslots, const uint64_t *refmap)
{
	if (t->pub.checked)
		kgci_thread_check_managed(t, "kgc_frame_push");
	kgc__frame_link(t, f, slots, nslots, refmap);
}

KGC_API int kgc__frame_pop_slow(kgc_thread *t, struct kgc_frame *f)
{
	if (t->pub.checked)
		kgci_thread_check(t, "kgc_frame_pop");
	if (unlikely(!kgc__frame_is_top(t, f))) {
		if (t->heap->opt.check)
			kgci_fatal("kgc_frame_pop: thread '%s': frame %p popped out of order (top is %p)",
			      t->name, (void *)f, (void *)t->frames);
		kgci_err_set(EINVAL, "kgc_frame_pop: thread '%s': frame %p is not the top frame (%p)",
			t->name, (void *)f, (void *)t->frames);
		return -EINVAL;
	}
	kgc__frame_unlink(t, f);
	return 0;
}

KGC_API kgc_handle kgc_handle_new(kgc_thread *t, kgc_obj obj)
{
	struct kgc_heap *h = t->heap;
	struct kgc_handle_cell *c;

	if (t->pub.checked)
		kgci_thread_check_managed(t, "kgc_handle_new");
	if ((uintptr_t)obj & 7) {	/* bit 0 marks a free cell */
		kgci_err_set(EINVAL, "kgc_handle_new: thread '%s': %p is %s, not an object", t->name, (void *)obj,
			     (uintptr_t)obj & h->opt.tag_mask ? "a tagged immediate" : "misaligned");
		return NULL;
	}
	pthread_mutex_lock(&h->lock);
	if (!h->hd.hfree) {
		struct handle_block *b = malloc(sizeof(*b));

		if (!b) {
			pthread_mutex_unlock(&h->lock);
			kgci_err_set(ENOMEM, "kgc_handle_new: out of memory");
			return NULL;
		}
		b->next = h->hd.hblocks;
		h->hd.hblocks = b;
		for (int i = HANDLE_BLOCK - 1; i >= 0; i--) {
			b->cells[i].obj = (kgc_obj)((uintptr_t)h->hd.hfree | HANDLE_FREE_TAG);
			h->hd.hfree = &b->cells[i];
		}
	}
	c = h->hd.hfree;
	h->hd.hfree = (struct kgc_handle_cell *)((uintptr_t)c->obj & ~HANDLE_FREE_TAG);
	c->obj = obj;
	pthread_mutex_unlock(&h->lock);
	return c;
}

KGC_API void kgc_handle_free(kgc_thread *t, kgc_handle c)
{
	struct kgc_heap *h = t->heap;

	if (!c)
		return;
	pthread_mutex_lock(&h->lock);
	if ((uintptr_t)c->obj & HANDLE_FREE_TAG) {
		pthread_mutex_unlock(&h->lock);
		if (h->opt.check)
			kgci_fatal("kgc_handle_free: thread '%s': handle %p freed twice", t->name, (void *)c);
		return;
	}
	c->obj = (kgc_obj)((uintptr_t)h->hd.hfree | HANDLE_FREE_TAG);
	h->hd.hfree = c;
	pthread_mutex_unlock(&h->lock);
}

void kgci_handles_destroy(struct kgc_heap *h)
{
	while (h->hd.hblocks) {
		struct handle_block *b = h->hd.hblocks;

		h->hd.hblocks = b->next;
		free(b);
	}
	h->hd.hfree = NULL;
}

void kgci_roots_iterate(struct kgc_heap *h, slot_fn fn, void *ctx)
{
	for (struct kgc_thread *t = h->thr.threads; t; t = t->next) {
		for (struct kgc_frame *f = t->frames; f; f = f->prev) {
			for (uint32_t i = 0; i < f->nslots; i++) {
				if (f->refmap && !(f->refmap[i / 64] >> (i % 64) & 1))
					continue;
				if (is_ref(h, f->slots[i]))
					fn(h, &f->slots[i], ctx);
			}
		}
	}
	for (struct handle_block *b = h->hd.hblocks; b; b = b->next)
		for (int i = 0; i < HANDLE_BLOCK; i++) {
			kgc_obj o = b->cells[i].obj;

			if (!((uintptr_t)o & HANDLE_FREE_TAG) && is_ref(h, o))
				fn(h, &b->cells[i].obj, ctx);
		}
}

/* Open critical arrays, running critical natives' arrays, those of I/O in
 * flight and the objects of pinned handles are pinned roots (kgci_pinned_root, gc_internal.h). */
void kgci_roots_iterate_critical(struct kgc_heap *h, slot_fn fn, void *ctx)
{
	for (struct kgc_thread *t = h->thr.threads; t; t = t->next) {
		uint32_t top = __atomic_load_n(&t->pub.crit_top, __ATOMIC_ACQUIRE);

		kgci_pinned_root(h, "thread", t->name, __atomic_load_n(&t->cn_arg, __ATOMIC_ACQUIRE),
				 "critical native array", fn, ctx);
		for (uint32_t i = 0; i < top && i < CRIT_MAX; i++)
			kgci_pinned_root(h, "thread", t->name, __atomic_load_n(&t->crit[i], __ATOMIC_ACQUIRE),
					 "critical array", fn, ctx);
	}
	kgci_io_roots_iterate(h, fn, ctx);
	kgci_pinh_roots_iterate(h, fn, ctx);
}
