/* SPDX-License-Identifier: MIT */
/*
 * scan.c - runtime-defined layouts (kgc_scan.3): a type registered with a
 * scan function instead of a reference offset map. The walkers of
 * references (kgci_obj_iterate_refs and its range variant, cm_obj_refs)
 * run a type's map first - empty for a scanned type - and then, on one
 * predictable branch, come here: the scan function reports slots through
 * a visitor that checks each one lies inside the object, filters the
 * range and loads the value as the map walkers do.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"

struct scan_visitor {
	struct kgc_slot_visitor pub;	/* first: the scan function gets &pub */
	struct kgc_heap *h;
	const struct type_info *ti;
	char *o, *end;			/* the object */
	char *lo, *hi;			/* the slots wanted */
	void (*fn)(struct kgc_heap *h, kgc_obj *slot, void *ctx);
	void (*mark)(struct kgc_heap *h, void *ctx, kgc_obj v);
	void *ctx;
};

static void bad_slot(struct scan_visitor *sv, kgc_obj *slot)
{
	kgci_fatal("scan function of type '%s' reported slot %p outside object %p (%zu bytes) or misaligned",
		   sv->ti->name, (void *)slot, (void *)sv->o, (size_t)(sv->end - sv->o));
}

static inline bool slot_ok(struct scan_visitor *sv, kgc_obj *slot)
{
	return (char *)slot >= sv->o + KGC_HEADER_SIZE && (char *)slot < sv->end &&
	       !((uintptr_t)slot & (WORD - 1));
}

static void visit_ref(struct kgc_slot_visitor *v, kgc_obj *slot)
{
	struct scan_visitor *sv = (struct scan_visitor *)v;

	if (unlikely(!slot_ok(sv, slot)))
		bad_slot(sv, slot);
	/* relaxed atomic: concurrent readers (refinement, the mark rebuild) */
	if ((char *)slot >= sv->lo && (char *)slot < sv->hi &&
	    is_ref(sv->h, __atomic_load_n(slot, __ATOMIC_RELAXED)))
		sv->fn(sv->h, slot, sv->ctx);
}

static void visit_value(struct kgc_slot_visitor *v, kgc_obj *slot)
{
	struct scan_visitor *sv = (struct scan_visitor *)v;

	if (unlikely(!slot_ok(sv, slot)))
		bad_slot(sv, slot);
	sv->mark(sv->h, sv->ctx, __atomic_load_n(slot, __ATOMIC_RELAXED));
}

static void run_scan(struct scan_visitor *sv)
{
	const char *prev = kgci_cb_running;

	kgci_cb_running = "a scan function";
	sv->ti->scan((kgc_obj)sv->o, &sv->pub, sv->ti->scan_ctx);
	kgci_cb_running = prev;
}

void kgci_scan_refs(struct kgc_heap *h, const struct type_info *ti, void *o, char *lo, char *hi,
		    void (*fn)(struct kgc_heap *h, kgc_obj *slot, void *ctx), void *ctx)
{
	struct scan_visitor sv = {
		.pub.visit = visit_ref, .h = h, .ti = ti, .o = o, .end = (char *)o + ti->size_words * WORD,
		.lo = lo, .hi = hi, .fn = fn, .ctx = ctx,
	};

	run_scan(&sv);
}

void kgci_scan_values(struct kgc_heap *h, const struct type_info *ti, void *o,
		      void (*mark)(struct kgc_heap *h, void *ctx, kgc_obj v), void *ctx)
{
	struct scan_visitor sv = {
		.pub.visit = visit_value, .h = h, .ti = ti, .o = o, .end = (char *)o + ti->size_words * WORD,
		.mark = mark, .ctx = ctx,
	};

	run_scan(&sv);
}

static bool desc_ok(struct kgc_heap *h, const struct kgc_scan_type_desc *d, kgc_type_id *out)
{
	uint64_t words;

	if (!h || !d || !out) {
		kgci_err_set(EINVAL, "kgc_type_register_scanned: NULL argument");
		return false;
	}
	if (d->size != sizeof(*d)) {
		kgci_err_set(EINVAL, "kgc_type_register_scanned: desc->size %u, this library's is %zu",
			     d->size, sizeof(*d));
		return false;
	}
	if (!d->scan) {
		kgci_err_set(EINVAL, "kgc_type_register_scanned: '%s': no scan function",
			     d->name ? d->name : "?");
		return false;
	}
	for (int i = 0; i < 4; i++)
		if (d->reserved[i]) {
			kgci_err_set(EINVAL, "kgc_type_register_scanned: reserved[%d] not zero", i);
			return false;
		}
	words = (KGC_HEADER_SIZE + (uint64_t)d->payload_size + WORD - 1) / WORD;
	if (words > INSTANCE_MAX_WORDS || words * WORD >= h->alloc.humongous_threshold) {
		kgci_err_set(EINVAL, "kgc_type_register_scanned: '%s': instance of %u bytes is too large",
			     d->name ? d->name : "?", d->payload_size);
		return false;
	}
	return true;
}

KGC_API
int kgc_type_register_scanned(kgc_heap *h, const struct kgc_scan_type_desc *d, kgc_type_id *out)
{
	struct type_info *ti;
	uint32_t id;
	int err;

	if (!desc_ok(h, d, out))
		return -EINVAL;
	ti = calloc(1, sizeof(*ti));
	if (!ti || !(ti->name = strdup(d->name ? d->name : "?"))) {
		free(ti);
		kgci_err_set(ENOMEM, "kgc_type_register_scanned: out of memory");
		return -ENOMEM;
	}
	ti->kind = KIND_INSTANCE;
	ti->size_words = (uint32_t)((KGC_HEADER_SIZE + (uint64_t)d->payload_size + WORD - 1) / WORD);
	ti->scan = d->scan;
	ti->scan_ctx = d->ctx;
	if ((err = kgci_types_add(h, ti, &id))) {
		free(ti->name);
		free(ti);
		kgci_err_set(-err, "kgc_type_register_scanned: type table full");
		return err;
	}
	*out = id;
	return 0;
}
