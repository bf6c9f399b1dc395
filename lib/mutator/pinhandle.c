/* SPDX-License-Identifier: MIT */
/*
 * pinhandle.c - pinned handles (like .NET's GCHandle.Alloc(o, Pinned)): a
 * root that also pins its object's region (JEP 423 style, as critical
 * sections and I/O in flight do: one count in the region's pin counter).
 * A young GC keeps a pinned region in place (evacuation failure), mixed
 * collections skip it, a full GC compacts around it; so the object never
 * moves while the handle lives, whatever its holder calls meanwhile.
 *
 * Cells live in blocks (never returned before heap destroy), guarded by
 * h->lock: collections hold it, so a free from a native thread waits for a
 * running pause, and the root iteration needs no lock of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include "gc_internal.h"

#define PINH_BLOCK 128
#define PINH_LIVE 0x70696e68u	/* "pinh" */
#define PINH_FREE 0x66726565u	/* "free" */

struct kgc_pin_handle_cell {
	kgc_obj obj;			/* first: kgc_pin_handle_get reads it */
	uint32_t state;			/* PINH_LIVE / PINH_FREE */
	uint32_t region;
	struct kgc_pin_handle_cell *next_free;
};

struct pinh_block {
	struct pinh_block *next;
	struct kgc_pin_handle_cell cells[PINH_BLOCK];
};

struct pinh {
	struct pinh_block *blocks;
	struct kgc_pin_handle_cell *free;
	size_t live;
};

/* h->lock held: a free cell, or NULL (out of memory). */
static struct kgc_pin_handle_cell *cell_get(struct kgc_heap *h)
{
	struct pinh *p = h->pinh;
	struct kgc_pin_handle_cell *c;

	if (!p && !(p = h->pinh = calloc(1, sizeof(*p))))
		return NULL;
	if (!p->free) {
		struct pinh_block *b = calloc(1, sizeof(*b));

		if (!b)
			return NULL;
		b->next = p->blocks;
		p->blocks = b;
		for (int i = PINH_BLOCK - 1; i >= 0; i--) {
			b->cells[i].state = PINH_FREE;
			b->cells[i].next_free = p->free;
			p->free = &b->cells[i];
		}
	}
	c = p->free;
	p->free = c->next_free;
	p->live++;
	return c;
}

KGC_API kgc_pin_handle kgc_pin_handle_new(kgc_thread *t, kgc_obj obj)
{
	struct kgc_heap *h;
	struct kgc_pin_handle_cell *c;
	int err;

	kgci_thread_check(t, "kgc_pin_handle_new");
	err = kgci_obj_arg_check(t, obj, "kgc_pin_handle_new");
	if (err)
		return NULL;
	h = t->heap;
	pthread_mutex_lock(&h->lock);
	c = cell_get(h);
	if (c) {
		c->obj = obj;
		c->region = region_index(h, obj);
		c->state = PINH_LIVE;
		/* managed: no collection runs now, the next one sees the pin */
		atomic_fetch_add(region_pins(h, c->region), 1);
	}
	pthread_mutex_unlock(&h->lock);
	if (!c)
		kgci_err_set(ENOMEM, "kgc_pin_handle_new: out of memory");
	return c;
}

KGC_API int kgc_pin_handle_free(kgc_thread *t, kgc_pin_handle c)
{
	struct kgc_heap *h;

	kgci_thread_check(t, "kgc_pin_handle_free");
	h = t->heap;
	if (!c) {
		kgci_err_set(EINVAL, "kgc_pin_handle_free: NULL handle");
		return -EINVAL;
	}
	pthread_mutex_lock(&h->lock);
	if (c->state != PINH_LIVE) {
		uint32_t st = c->state;

		pthread_mutex_unlock(&h->lock);
		if (h->opt.check)
			kgci_fatal("kgc_pin_handle_free: thread '%s': %p %s", t->name, (void *)c,
				   st == PINH_FREE ? "freed twice" : "is not a pinned handle");
		kgci_err_set(EINVAL, "kgc_pin_handle_free: %p %s", (void *)c,
			     st == PINH_FREE ? "freed twice" : "is not a pinned handle");
		return -EINVAL;
	}
	atomic_fetch_sub(region_pins(h, c->region), 1);
	c->state = PINH_FREE;
	c->obj = NULL;
	c->next_free = h->pinh->free;
	h->pinh->free = c;
	h->pinh->live--;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

/* At a safepoint (h->lock held): every live handle's object, a pinned root. */
void kgci_pinh_roots_iterate(struct kgc_heap *h, slot_fn fn, void *ctx)
{
	if (!h->pinh || !h->pinh->live)
		return;
	for (struct pinh_block *b = h->pinh->blocks; b; b = b->next)
		for (int i = 0; i < PINH_BLOCK; i++)
			if (b->cells[i].state == PINH_LIVE)
				kgci_pinned_root(h, "pinned handle", "", b->cells[i].obj, "object", fn, ctx);
}

/* Heap destroy: every handle goes (the regions' pins with the heap). */
void kgci_pinh_destroy(struct kgc_heap *h)
{
	struct pinh *p = h->pinh;

	if (!p)
		return;
	while (p->blocks) {
		struct pinh_block *b = p->blocks;

		p->blocks = b->next;
		free(b);
	}
	free(p);
	h->pinh = NULL;
}
