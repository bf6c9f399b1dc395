/* SPDX-License-Identifier: MIT */
/*
 * walk.c - the heap walk and the histogram by type (kgc_heap_walk.3): at a
 * safepoint of their own (kgci_sp_run), a full collection unless told
 * not to, then every object of every region in address order. The
 * runtime's callback runs under kgci_cb_running: a managed kgc call from
 * it fails (checked mode: aborts).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"

struct walk {
	unsigned flags;
	kgc_walk_fn fn;
	void *ctx;
	int ret;
};

/* the object a walk callback on this thread was given (kgc_walk_refs) */
static __thread const struct kgc_walk_object *walk_cur;
static __thread struct kgc_heap *walk_heap;

static int visit(struct kgc_heap *h, struct walk *w, char *p, uint32_t idx, uint64_t hd)
{
	struct kgc_walk_object o = {
		.size = sizeof(o), .type = hdr_type(hd), .obj = (kgc_obj)p, .bytes = obj_size_h(p, hd),
		.region = idx,
	};
	const char *prev = kgci_cb_running;
	int ret;

	walk_cur = &o;
	walk_heap = h;
	kgci_cb_running = "a heap walk callback";
	ret = w->fn(&o, w->ctx);
	kgci_cb_running = prev;
	walk_cur = NULL;
	return ret;
}

/* Every object of region r (index idx): fillers and, without a collection,
 * the cycle's known garbage skipped. Stops at fn's nonzero return. */
static int walk_region(struct kgc_heap *h, struct walk *w, struct region *r, uint32_t idx)
{
	int ret;

	if (r->type == RT_HUM_START)
		return visit(h, w, r->bottom, idx, *obj_hdr(r->bottom));
	for (char *p = r->bottom; p < r->top; p += obj_size(p)) {
		uint64_t hd = *obj_hdr(p);

		if (hdr_kind(hd) == KIND_FILLER || kgci_cm_obj_dead(h, p))
			continue;
		if ((ret = visit(h, w, p, idx, hd)))
			return ret;
	}
	return 0;
}

static void walk_at_safepoint(struct kgc_heap *h, void *ctx)
{
	struct walk *w = ctx;

	if (!(w->flags & KGC_WALK_NO_COLLECT))
		kgci_collect_run(h, KGC_GC_FULL, GCR_EXPLICIT);
	kgci_alloc_retire_tlabs(h);	/* the heap parsable up to each region's top */
	kgci_cm_pause_begin(h);		/* the marker and the sweeper off the heap */
	for (uint32_t i = 0; i < h->nregions && !w->ret; i++) {
		struct region *r = &h->regions[i];

		if (r->type != RT_FREE && r->type != RT_HUM_CONT)
			w->ret = walk_region(h, w, r, i);
	}
	kgci_cm_pause_end(h);
}

static int walk_run(kgc_thread *t, unsigned flags, kgc_walk_fn fn, void *ctx, const char *what)
{
	struct walk w = { .flags = flags, .fn = fn, .ctx = ctx };

	if (!t || !fn || (flags & ~(unsigned)KGC_WALK_NO_COLLECT)) {
		kgci_err_set(EINVAL, "%s: %s", what, !t || !fn ? "NULL argument" : "unknown flags");
		return -EINVAL;
	}
	if (!kgci_thread_check_managed(t, what))
		return -EPERM;
	kgci_sp_run(t, walk_at_safepoint, &w);
	return w.ret;
}

KGC_API
int kgc_heap_walk(kgc_thread *t, unsigned flags, kgc_walk_fn fn, void *ctx)
{
	return walk_run(t, flags, fn, ctx, "kgc_heap_walk");
}

struct refs_ctx {
	void (*fn)(kgc_obj ref, void *ctx);
	void *ctx;
};

static void refs_slot(struct kgc_heap *h, kgc_obj *slot, void *ctx)
{
	struct refs_ctx *rc = ctx;

	rc->fn(*slot, rc->ctx);
}

KGC_API
int kgc_walk_refs(const struct kgc_walk_object *o, void (*fn)(kgc_obj ref, void *ctx), void *ctx)
{
	struct refs_ctx rc = { fn, ctx };

	if (!o || !fn || o != walk_cur) {
		kgci_err_set(EINVAL, "kgc_walk_refs: %s", !o || !fn ? "NULL argument" :
			     "not the object of the running kgc_heap_walk callback");
		return -EINVAL;
	}
	kgci_obj_iterate_refs(walk_heap, o->obj, refs_slot, &rc);
	return 0;
}

/* ---------------------------------------------------------------- histogram */

struct histo {
	struct kgc_heap *h;
	uint32_t ntypes;
	uint64_t *count, *bytes;	/* per type id */
};

static int histo_add(const struct kgc_walk_object *o, void *ctx)
{
	struct histo *hs = ctx;

	if (o->type >= hs->ntypes)	/* cannot happen: ids are valid in a parsable heap */
		kgci_fatal("kgc_heap_histogram: object %p has type %u of %u", (void *)o->obj, o->type,
			   hs->ntypes);
	hs->count[o->type]++;
	hs->bytes[o->type] += o->bytes;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct kgc_histogram_row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->type < y->type ? -1 : x->type > y->type;
}

static int histo_rows(struct histo *hs, struct kgc_histogram *out)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < hs->ntypes; i++)
		n += hs->count[i] != 0;
	out->rows = calloc(n ? n : 1, sizeof(*out->rows));
	if (!out->rows)
		return -ENOMEM;
	for (uint32_t i = 0; i < hs->ntypes; i++) {
		struct kgc_histogram_row *r;

		if (!hs->count[i])
			continue;
		r = &out->rows[out->nrows++];
		r->type = i;
		r->count = hs->count[i];
		r->bytes = hs->bytes[i];
		r->name = type_get(hs->h, i)->name;
		out->count += r->count;
		out->bytes += r->bytes;
	}
	qsort(out->rows, out->nrows, sizeof(*out->rows), row_cmp);
	return 0;
}

KGC_API
int kgc_heap_histogram(kgc_thread *t, unsigned flags, struct kgc_histogram *out)
{
	struct histo hs = { 0 };
	int err;

	if (!t || !out || out->size != sizeof(*out)) {
		kgci_err_set(EINVAL, "kgc_heap_histogram: %s", !t || !out ? "NULL argument" :
			     "out->size is not sizeof(struct kgc_histogram)");
		return -EINVAL;
	}
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	hs.h = t->heap;
	hs.ntypes = atomic_load_explicit(&hs.h->types.count, memory_order_acquire);
	hs.count = calloc(hs.ntypes, sizeof(*hs.count));
	hs.bytes = calloc(hs.ntypes, sizeof(*hs.bytes));
	err = hs.count && hs.bytes ? walk_run(t, flags, histo_add, &hs, "kgc_heap_histogram") : -ENOMEM;
	if (!err)
		err = histo_rows(&hs, out);
	if (err == -ENOMEM)
		kgci_err_set(ENOMEM, "kgc_heap_histogram: out of memory for %u types", hs.ntypes);
	free(hs.count);
	free(hs.bytes);
	return err;
}

KGC_API
void kgc_histogram_free(struct kgc_histogram *hg)
{
	if (!hg)
		return;
	free(hg->rows);
	hg->rows = NULL;
	hg->nrows = 0;
}

KGC_API
int kgc_histogram_print(const struct kgc_histogram *hg, unsigned max_rows, void *file)
{
	FILE *f = file;

	if (!hg || !f || (hg->nrows && !hg->rows)) {
		kgci_err_set(EINVAL, "kgc_histogram_print: NULL argument");
		return -EINVAL;
	}
	fprintf(f, " num     #instances         #bytes  type name\n");
	fprintf(f, "-------------------------------------------------------\n");
	for (uint32_t i = 0; i < hg->nrows && (!max_rows || i < max_rows); i++)
		fprintf(f, "%4u: %14llu %14llu  %s (%u)\n", i + 1, (unsigned long long)hg->rows[i].count,
			(unsigned long long)hg->rows[i].bytes, hg->rows[i].name, hg->rows[i].type);
	fprintf(f, "Total %14llu %14llu\n", (unsigned long long)hg->count, (unsigned long long)hg->bytes);
	return 0;
}
