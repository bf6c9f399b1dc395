/* SPDX-License-Identifier: MIT */
/*
 * satb.c - the snapshot-at-the-beginning barrier's buffers. While a cycle
 * marks, kgc.h's inline barrier logs each reference a mutator overwrites
 * into the thread's buffer; a full buffer is handed over to the cycle's
 * queue (cm->full, cm->satb_lock) for the marker to drain. Detach hands the
 * partial buffer over; a pause may read every pending entry.
 */
#include <stdlib.h>
#include "cycle/cm.h"

static void hand_over(struct cmark *cm, struct satb_buf *b)
{
	pthread_mutex_lock(&cm->satb_lock);
	b->next = cm->full;
	cm->full = b;
	pthread_mutex_unlock(&cm->satb_lock);
}

/* The SATB barrier's slow path: old (non-null) is about to be overwritten. */
KGC_API void kgc__satb_slow(kgc_thread *t, kgc_obj old)
{
	struct satb_buf *b = t->satb;

	if (unlikely(!b || b->n == SATB_CAP)) {
		struct cmark *cm = t->heap->cm;
		struct satb_buf *nb = malloc(sizeof(*nb));

		if (!nb)
			kgci_fatal("concurrent mark: out of memory for an SATB buffer (thread '%s')", t->name);
		nb->n = 0;
		nb->next = NULL;
		if (b)
			hand_over(cm, b);
		t->satb = b = nb;
	}
	b->e[b->n++] = old;
}

/* Detach: hand the thread's partial buffer over (h->lock held). */
void kgci_cm_thread_detach(struct kgc_thread *t)
{
	struct cmark *cm = t->heap->cm;
	struct satb_buf *b = t->satb;

	t->satb = NULL;
	if (!b)
		return;
	if (!cm || !b->n || !__atomic_load_n(&t->pub.satb_active, __ATOMIC_RELAXED)) {
		free(b);
		return;
	}
	hand_over(cm, b);
}

void kgci_satb_set_active(struct kgc_heap *h, uint32_t on)
{
	for (struct kgc_thread *t = h->thr.threads; t; t = t->next)
		__atomic_store_n(&t->pub.satb_active, on, __ATOMIC_RELAXED);
	h->satb_active = on;
}

/* Take the buffers mutators handed over. */
struct satb_buf *kgci_satb_take(struct cmark *cm)
{
	struct satb_buf *b;

	pthread_mutex_lock(&cm->satb_lock);
	b = cm->full;
	cm->full = NULL;
	pthread_mutex_unlock(&cm->satb_lock);
	return b;
}

void kgci_satb_free_list(struct satb_buf *b)
{
	while (b) {
		struct satb_buf *n = b->next;

		free(b);
		b = n;
	}
}

/* A full collection: the cycle is abandoned, so is what was logged for it. */
void kgci_satb_drop(struct kgc_heap *h, struct cmark *cm)
{
	for (struct kgc_thread *t = h->thr.threads; t; t = t->next)
		if (t->satb)
			t->satb->n = 0;
	kgci_satb_free_list(kgci_satb_take(cm));
}

/* Every entry not yet drained, handed over or still in a thread's buffer
 * (at a pause: the threads are stopped). */
void kgci_satb_each(struct kgc_heap *h, slot_fn fn, void *ctx)
{
	struct cmark *cm = h->cm;

	pthread_mutex_lock(&cm->satb_lock);
	for (struct satb_buf *b = cm->full; b; b = b->next)
		for (uint32_t i = 0; i < b->n; i++)
			fn(h, &b->e[i], ctx);
	pthread_mutex_unlock(&cm->satb_lock);
	for (struct kgc_thread *t = h->thr.threads; t; t = t->next)
		if (t->satb)
			for (uint32_t i = 0; i < t->satb->n; i++)
				fn(h, &t->satb->e[i], ctx);
}
