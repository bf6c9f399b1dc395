/* SPDX-License-Identifier: MIT */
/*
 * cmverify.c - KGC_VERIFY's checks of the concurrent cycle: the bitmap and
 * TAMS invariants at every step, and at remark that marking is complete
 * (every object reachable from the roots below TAMS is marked).
 */
#include <stdlib.h>
#include "cycle/cm.h"

/*
 * KGC_VERIFY, at every phase change of a cycle (every young pause's cycle
 * step, and after an abort): TAMS lies in [bottom, top] of an old or
 * humongous start region and is the bottom of every other region; no mark
 * bit lies at or above TAMS, none in a region the sweep is done with, and
 * none at all between cycles (so each initial mark starts from a clear
 * bitmap: a stale bit would hide an object from the next cycle).
 */
void kgci_cm_verify_bits(struct kgc_heap *h, const char *when)
{
	struct cmark *cm = h->cm;

	for (uint32_t i = 0; i < h->nregions; i++) {
		const struct region *r = &h->regions[i];
		const char *tams = cm->tams[i], *from = tams, *stale;

		if (tams < r->bottom || tams > r->end ||
		    (tams > r->bottom && r->type != RT_OLD && r->type != RT_HUM_START) ||
		    (r->type == RT_OLD && tams > r->top))
			kgci_fatal("verify (%s, cycle %s): region %u (%s) has TAMS at +%#zx (top +%#zx)", when,
			      cm_state_name(cm), i, kgci_region_type_name(r->type),
			      (size_t)(tams - r->bottom), (size_t)(r->top - r->bottom));
		if (cm->state == CM_IDLE || (cm->state >= CM_SWEEPING && cm->swept[i] != SW_NOT))
			from = r->bottom;
		stale = kgci_markbits_first(&cm->bits, from, r->end);
		if (stale)
			kgci_fatal("verify (%s, cycle %s): stale mark bit at %p in region %u (%s), "
			      "TAMS +%#zx: nothing there may be marked", when, cm_state_name(cm),
			      (const void *)stale, i, kgci_region_type_name(r->type),
			      (size_t)(tams - r->bottom));
	}
}

/* KGC_VERIFY at remark: every object reachable from the roots that lies
 * below TAMS in an old or humongous region is marked (uses h->full.mark). */
struct vm_ctx { struct kgc_heap *h; kgc_obj *st; size_t len, cap; };

static void vm_visit(struct kgc_heap *h, kgc_obj *slot, void *arg)
{
	struct vm_ctx *v = arg;
	kgc_obj o = *slot;

	if (!o || !mb_set(&h->full.mark, o))
		return;
	if (v->len == v->cap)
		v->st = kgci_array_grow(v->st, &v->cap, sizeof(*v->st), "verify (remark) stack");
	v->st[v->len++] = o;
}

void kgci_verify_marking(struct kgc_heap *h)
{
	struct cmark *cm = h->cm;
	struct vm_ctx v = { .h = h };
	size_t n = 0;

	kgci_markbits_clear_all(&h->full.mark);
	kgci_roots_iterate(h, vm_visit, &v);
	kgci_roots_iterate_critical(h, vm_visit, &v);
	while (v.len) {
		kgc_obj o = v.st[--v.len];
		uint32_t i = region_index(h, o);

		n++;
		if ((char *)o < cm->tams[i] && !cm_marked(cm, o))
			kgci_fatal("verify (remark): reachable object %p in region %u (%s) below TAMS is not marked",
			      (void *)o, i, kgci_region_type_name(h->regions[i].type));
		kgci_obj_iterate_refs(h, o, vm_visit, &v);
	}
	free(v.st);
	kgci_markbits_clear_all(&h->full.mark);
	kgci_log_line(h, LOG_HEAP, "verify (remark): %zu reachable objects, marking complete", n);
}
