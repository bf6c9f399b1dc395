/* SPDX-License-Identifier: MIT */
/*
 * cm_young.h - what a young pause needs of the concurrent cycle, and all
 * it may call of it (the young pause's files include this, not cm.h;
 * lib/test/check_deps.sh checks that they call nothing else of it):
 *   at its start    the cycle's state, and the mixed candidates to evacuate
 *   roots           the cycle's own references into the collection set
 *   while copying   marking the promoted objects the cycle must see live,
 *                   and the swept gaps of old regions to promote into
 *   at its end      copies the marker must trace again; a region evacuated
 *                   and freed
 * The cycle's step for the pause (initial mark, remark, cleanup) is run
 * by the collection driver after it (kgci_cm_after_young, gc_internal.h).
 */
#ifndef KGC_CM_YOUNG_H
#define KGC_CM_YOUNG_H
#include "gc_internal.h"

struct cm_young {
	bool marking;		/* promoted objects below TAMS are marked (kgci_cm_young_promoted) */
	bool retained_ok;	/* retained (formerly pinned) old regions may be evacuated now */
	bool idle;		/* no cycle runs: old regions may grow (kgci_promote_begin) */
	uint32_t nmixed;	/* mixed candidates put in the collection set (RF_CSET) */
	size_t mixed_live;	/* their live bytes, estimated */
};

/* Start of the pause (flags of the last one cleared): what the cycle allows,
 * and the mixed candidates it adds to the collection set. */
void kgci_cm_young_begin(struct kgc_heap *h, struct cm_young *cy);
/* The collection set is chosen: gaps inside it are no promotion space now. */
void kgci_cm_young_cset(struct kgc_heap *h);
/* Old cset regions while marking: the mark stack's and SATB entries into
 * them are roots (fn is the pause's root visitor). */
void kgci_cm_young_roots(struct kgc_heap *h, slot_fn fn, void *ctx);
/* Object p was promoted into old space while marking (GC workers: atomic). */
void kgci_cm_young_promoted(struct kgc_heap *h, const void *p);
/* Copies out of old cset regions while marking: the marker traces them. */
void kgci_cm_young_gray(struct kgc_heap *h, const kgc_obj *v, size_t n);
/* Old region idx was evacuated and is free. */
void kgci_cm_young_freed(struct kgc_heap *h, uint32_t idx);
/* Promotion space: a swept gap of at least min bytes; one taken but unused,
 * or known dead (under the gang's lock). */
bool kgci_cm_chunk_take(struct kgc_heap *h, size_t min, struct gap *out);
void kgci_cm_chunk_give_back(struct kgc_heap *h, struct gap g);

#endif
