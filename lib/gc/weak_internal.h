/* SPDX-License-Identifier: MIT */
/*
 * weak_internal.h - the weak cells (weak.c) and the reference queues they
 * are delivered to (refqueue.c): one lock, w->lock, guards both.
 */
#ifndef KGC_WEAK_INTERNAL_H
#define KGC_WEAK_INTERNAL_H

#include "gc_internal.h"

#define WEAK_BLOCK 256

/* WK_DEFER: freed by the runtime while the kgc-cleaner thread still holds it
 * on its pending list; that thread puts it on the free list. WK_CLEANER_H:
 * a cleaner with a handle (kgc_cleaner_new), kept until kgc_cleaner_cancel. */
enum { WK_FREE, WK_WEAK, WK_CLEANER, WK_HASH, WK_EPHEMERON, WK_CLEANER_H, WK_DEFER };

/* where a cleared cell is on its way to its queue (refqueue.c) */
enum { QS_NONE, QS_PENDING, QS_QUEUED, QS_TAKEN };
/* a WK_CLEANER_H cell's function */
enum { CS_ARMED, CS_PENDING, CS_RUNNING, CS_RAN };

struct weak_cell {
	kgc_obj obj;			/* NULL: cleared (or free); an ephemeron's key */
	kgc_obj value;			/* an ephemeron's (NULL, an object or a tagged immediate) */
	uint32_t kind;
	uint32_t hash;
	void (*fn)(void *arg);		/* cleaner */
	void *arg;
	struct weak_cell *next_free;
	/* reference queue (refqueue.c) */
	struct kgc_refqueue *q;		/* attached queue or NULL */
	uint64_t tag;
	struct weak_cell *qnext, *qprev;	/* pending list (qnext) or the queue's list */
	uint8_t qstate;			/* QS_* */
	uint8_t cstate;			/* CS_* (WK_CLEANER_H) */
	bool cancelled;			/* WK_CLEANER_H cancelled while pending */
};

struct weak_block {
	struct weak_block *next;
	struct weak_cell cells[WEAK_BLOCK];
};

struct cleaner_job {
	struct cleaner_job *next;
	void (*fn)(void *arg);
	void *arg;
};

struct weak {
	pthread_mutex_t lock;
	struct weak_block *blocks;
	struct weak_cell *free;
	uint64_t hash_seq;
	size_t nephemerons;		/* live WK_EPHEMERON cells */
	/* identity hash index: address -> cell, rebuilt when stale */
	struct weak_cell **index;
	size_t index_cap, nhash;
	bool index_stale;
	/* cleaners */
	pthread_mutex_t cleaner_lock;
	pthread_cond_t cleaner_cond;
	struct cleaner_job *jobs, **jobs_tail;
	pthread_t cleaner;
	bool cleaner_started, cleaner_stop;
	uint64_t running;		/* jobs taken but not finished */
	/* reference queues (refqueue.c), under lock */
	struct weak_cell *pending, **pending_tail;	/* cleared, for the kgc-cleaner thread */
	bool has_pending;		/* under cleaner_lock: the cleaner thread has work there */
	pthread_cond_t ran_cond;	/* a WK_CLEANER_H function finished (kgc_cleaner_cancel waits) */
	struct kgc_refqueue *queues;	/* every queue of the heap (freed at heap destroy) */
};

struct weak_cell *kgci_cell_new(struct weak *w, kgc_obj o, uint32_t kind);
void kgci_cell_free(struct weak *w, struct weak_cell *c);
int kgci_cleaner_start(struct kgc_heap *h, const char *what);
bool kgci_weak_arg_ok(kgc_thread *t, kgc_obj o, const char *what);

/* refqueue.c */
void kgci_refq_cleared(struct weak *w, struct weak_cell *c);	/* pause, w->lock: c was cleared */
bool kgci_refq_drain_pending(struct kgc_heap *h);		/* kgc-cleaner thread; true if it did work */
void kgci_refq_release(struct weak *w, struct weak_cell *c);	/* w->lock: the runtime frees c */
void kgci_refq_destroy_all(struct kgc_heap *h);			/* heap destroy */
void kgci_refq_init(struct weak *w);

#endif
