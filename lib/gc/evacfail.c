/* SPDX-License-Identifier: MIT */
/*
 * evacfail.c - evacuation failure in the young pause. A young region that
 * is pinned (critical sections, or the kernel via PIN_QUERY) is not
 * evacuated at all; when to-space runs out an object is "self-forwarded"
 * in place (young.c). Such objects are marked in their header (tag 10),
 * scanned like copied ones, and their region becomes old in place; the
 * unmarked objects in it become fillers. A region that failed because it
 * was pinned is retained (JEP 423): its references stay carded, and a later
 * young pause evacuates it once it is unpinned, within the policy's limits.
 * One that failed for lack of to-space, or because the pause ran over its
 * evacuation budget (young.c: the rest of the young objects promoted in
 * place), gives its dead space to promotion.
 */
#include <string.h>
#include "gc/young.h"

/* Cset selection: a pinned young region fails evacuation at once. */
void kgci_evacfail_pinned_young(struct region *r, uint32_t *npinned)
{
	if (r->flags & (RF_PINNED | RF_KPINNED)) {
		r->flags |= RF_FAILED;
		r->fail_cause = (r->flags & RF_PINNED) ? FAIL_PINNED : FAIL_KPINNED;
		(*npinned)++;
	}
}

/*
 * Cset selection: does retained region r, unpinned since it failed, join
 * the collection set now (if the cycle allows, at most rmax of them, their
 * live bytes within rbudget, the first one always)?
 */
bool kgci_evacfail_retained_join(struct region *r, bool allowed, struct yres *res, uint32_t rmax,
				 size_t rbudget)
{
	if (r->type != RT_OLD || !r->retained || (r->flags & (RF_PINNED | RF_KPINNED)) ||
	    !allowed || res->nretained >= rmax ||
	    (res->nretained && res->rlive + r->live_bytes > rbudget))
		return false;
	r->flags |= RF_CSET;
	res->cset_bytes += (size_t)(r->top - r->bottom);
	res->rlive += r->live_bytes;
	res->nretained++;
	return true;
}

/* After evacuation: an object of r was not copied (to-space ran out, or
 * the pause ran over its budget: r->evac_alloc_failed says which). */
void kgci_evacfail_note_alloc(struct region *r)
{
	if (r->evac_alloc_failed && !(r->flags & RF_FAILED)) {
		r->flags |= RF_FAILED;
		r->fail_cause = r->evac_alloc_failed;
	}
	r->evac_alloc_failed = 0;
}

/* Objects left in a failed region: live ones keep their place, dead ones become fillers. */
static size_t fixup_failed(struct kgc_heap *h, struct region *r)
{
	char *p = r->bottom, *dead = NULL;
	size_t live = 0;

	while (p < r->top) {
		uint64_t hd = *obj_hdr(p);
		size_t sz;

		if (hdr_is_fwd(hd)) {
			char *n = (char *)(uintptr_t)(hd & ~HDR_TAG_MASK);

			sz = obj_size_h(p, *obj_hdr(n));
		} else {
			sz = obj_size_h(p, hd);
		}
		if ((hd & HDR_TAG_MASK) == HDR_TAG_FAILED) {
			if (dead) {
				kgci_obj_fill(dead, (size_t)(p - dead));
				dead = NULL;
			}
			/* atomic: native code may read a pinned array's header (kgc_obj_type) */
			__atomic_store_n(obj_hdr(p), hd & ~HDR_TAG_MASK, __ATOMIC_RELAXED);
			live += sz;
		} else if (!dead) {
			dead = p;
		}
		p += sz;
	}
	if (dead) {
		kgci_obj_fill(dead, (size_t)(r->top - dead));
		if (h->opt.poison && r->top - dead > 16)
			memset(dead + 16, 0xde, (size_t)(r->top - dead) - 16);
	}
	return live;
}

/*
 * A region whose evacuation failed for lack of to-space becomes old in
 * place; its dead objects (fillers now) are known dead already: promotion
 * may reuse them at once rather than after the next concurrent sweep.
 * (Pinned regions are retained instead; kgci_cm_chunk_take skips kernel pins.)
 */
static void failed_gaps(struct kgc_heap *h, struct region *r)
{
	for (char *p = r->bottom; p < r->top; p += obj_size(p)) {
		uint64_t hd = *obj_hdr(p);

		if (hdr_kind(hd) == KIND_FILLER && obj_size_h(p, hd) >= CM_CHUNK_MIN)
			kgci_cm_chunk_give_back(h, (struct gap){ p, obj_size_h(p, hd) });
	}
}

/* A cset region that failed evacuation stays, old, its dead objects filled. */
void kgci_evacfail_keep(struct kgc_heap *h, struct region *r, uint32_t i, struct yres *res,
			unsigned *fail_mask)
{
	size_t live, used = (size_t)(r->top - r->bottom);

	/* the unused rest of the region is a gap like the dead objects */
	if (r->top < r->end) {
		kgci_obj_fill(r->top, (size_t)(r->end - r->top));
		r->top = r->end;
	}
	live = fixup_failed(h, r);
	r->live_bytes = live;	/* an upper bound from now on */
	res->fails[r->fail_cause]++;
	if (r->fail_cause == FAIL_BUDGET)
		res->kept += live;
	*fail_mask |= 1u << r->fail_cause;
	res->freed += used > live ? used - live : 0;
	kgci_region_set_type(h, r, RT_OLD);
	kgci_bot_rebuild(h, r);
	if (r->fail_cause == FAIL_ALLOC || r->fail_cause == FAIL_BUDGET)
		failed_gaps(h, r);	/* reused in place */
	else
		r->retained = 1;	/* evacuated once unpinned */
	kgci_region_track_update(h, r);
	kgci_log_line(h, LOG_PIN, "region %u: evacuation failed (%s), %zuK live kept in place",
		      i, r->fail_cause == FAIL_ALLOC ? "allocation" : r->fail_cause == FAIL_BUDGET ? "over budget" :
		      r->fail_cause == FAIL_PINNED ? "pinned" : "kernel pinned", live >> 10);
}

