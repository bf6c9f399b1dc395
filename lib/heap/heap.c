/* SPDX-License-Identifier: MIT */
/* heap.c - heap creation and destruction. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gc_internal.h"


/* The caller's options, validated: heap and region size decided. */
static int heap_geometry(const struct kgc_options *opts, struct kgc_options *o, size_t *heap,
			 size_t *rs)
{
	int err;

	if (opts) {
		if ((err = kgci_options_import(opts, o)))
			return err;
	} else if ((err = kgc_options_init(o))) {
		return err;
	}
	*heap = o->max_heap ? o->max_heap : kgci_policy_default_heap();
	*rs = o->region_size ? o->region_size
			     : kgci_policy_region_size(*heap, kgci_backend_region_hint(o->backend));
	if (*rs < ((size_t)1 << 20) || *rs > ((size_t)1 << 25) || (*rs & (*rs - 1))) {
		kgci_err_set(EINVAL, "kgc_heap_create: region size %zu not a power of two in 1..32 MiB", *rs);
		return -EINVAL;
	}
	*heap = ALIGN_UP(*heap, *rs);
	if (*heap / *rs < 2 || *heap / *rs > (1u << 24) || o->pin_mode < 0 || o->pin_mode > 1 ||
	    o->backend < 0 || o->backend > 2 || o->refine > KGC_REFINE_ALWAYS ||
	    o->pause_budget > KGC_PAUSE_BUDGET_ON) {
		kgci_err_set(EINVAL, "kgc_heap_create: bad options (heap %zu, region %zu)", *heap, *rs);
		return -EINVAL;
	}
	if (o->tag_mask & ~7u) {
		kgci_err_set(EINVAL, "kgc_heap_create: tag_mask %#x: tag bits must be a subset of 0x7 "
			     "(objects are 8-byte aligned)", o->tag_mask);
		return -EINVAL;
	}
	if (o->reserved2 || o->reserved3) {
		kgci_err_set(EINVAL, "kgc_heap_create: kgc_options.reserved2/reserved3 is not zero");
		return -EINVAL;
	}
	return 0;
}

/* Side tables and the region array for a heap of h->nregions (0 or -ENOMEM). */
static int heap_tables(struct kgc_heap *h)
{
	h->regions = calloc(h->nregions, sizeof(*h->regions));
	h->kpin_bits = calloc((h->nregions + 63) / 64, sizeof(uint64_t));
	h->region_track = malloc(h->nregions);
	if (!h->regions || !h->kpin_bits || !h->region_track ||
	    kgci_cards_init(h) || kgci_types_init(h)) {
		kgci_err_set(ENOMEM, "kgc_heap_create: out of memory for side tables");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < h->nregions; i++) {
		struct region *r = &h->regions[i];

		r->bottom = r->top = h->base + (size_t)i * h->region_size;
		r->end = r->bottom + h->region_size;
		r->type = RT_FREE;
		r->flags = RF_ZEROED;
		h->region_track[i] = 1;	/* free: may become young */
	}
	h->count[RT_FREE] = h->nregions;
	h->alloc.eden_cur = -1;
	return 0;
}

static void heap_tables_free(struct kgc_heap *h)
{
	kgci_os_free(h->cards, h->ncards);
	kgci_os_free(h->card_sum, h->ncards / CARDS_PER_SUM);
	kgci_os_free(h->bot, h->ncards * sizeof(uint32_t));
	free(h->kpin_bits);
	free(h->region_track);
	for (uint32_t i = 0; h->regions && i < h->nregions; i++)
		kgci_remset_clear(&h->regions[i].rs);	/* candidates' */
	free(h->regions);
	kgci_types_destroy(h);	/* a later step failed: the predefined types */
}

static void heap_locks(struct kgc_heap *h, bool init)
{
	pthread_mutex_t *m[] = { &h->lock, &h->gc_lock, &h->sp.lock, &h->ext_lock };
	pthread_cond_t *c[] = { &h->sp.cond, &h->sp.locker_cond };

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		init ? pthread_mutex_init(m[i], NULL) : pthread_mutex_destroy(m[i]);
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		init ? pthread_cond_init(c[i], NULL) : pthread_cond_destroy(c[i]);
}

/* The subsystems with their own state, in the order they are set up (and
 * torn down in reverse when one of them fails). */
static const struct subsystem {
	int (*init)(struct kgc_heap *h);
	void (*destroy)(struct kgc_heap *h);
} subsystems[] = {
	{ kgci_full_init, kgci_full_destroy },	/* full collection's side tables */
	{ kgci_cm_init, kgci_cm_destroy },	/* concurrent cycle */
	{ kgci_weak_init, kgci_weak_destroy },	/* weak cells */
	{ kgci_stale_init, kgci_stale_destroy },	/* KGC_STALE_CHECK */
	{ kgci_statpub_open, kgci_statpub_close },	/* KGC_STATS_PUBLISH page */
	{ kgci_pretouch_init, kgci_pretouch_destroy },	/* the kgc-pretouch thread */
	{ kgci_refine_init, kgci_refine_destroy },	/* the kgc-refine thread */
};

static int heap_subsystems(struct kgc_heap *h)
{
	size_t n = sizeof(subsystems) / sizeof(subsystems[0]), i;
	int err = 0;

	kgci_policy_init(h);
	kgci_young_init(h);
	/* calls up, passed down: the layers below call these through h */
	h->sp.collect = kgci_collect_run;
	h->alloc.pretouch_kick = kgci_pretouch_kick;
	for (i = 0; i < n && !err; i++)
		err = subsystems[i].init(h);
	if (err)
		for (i--; i-- > 0;)
			subsystems[i].destroy(h);
	return err;
}

KGC_API int kgc_heap_create(const struct kgc_options *opts, kgc_heap **out)
{
	struct kgc_options o;
	struct kgc_heap *h;
	size_t rs, heap;
	int err, log_mask;

	if (!out) {
		kgci_err_set(EINVAL, "kgc_heap_create: out is NULL");
		return -EINVAL;
	}
	*out = NULL;
	if ((err = heap_geometry(opts, &o, &heap, &rs)))
		return err;
	log_mask = kgci_log_parse(o.log);
	if (log_mask < 0) {
		kgci_err_set(EINVAL, "kgc_heap_create: log '%s': a selector is not gc, gc+<tags> (heap, pin, "
			     "safepoint, phases) or gc*", o.log);
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->opt = o;
	h->region_size = rs;
	h->region_shift = (uint32_t)__builtin_ctzl(rs);
	h->nregions = (uint32_t)(heap / rs);
	h->log_mask = (unsigned)log_mask;
	h->opt.log = NULL;	/* the caller's strings may go away */
	h->opt.log_file = NULL;
	err = kgci_log_open(h, &o);
	if (!err && (err = kgci_backend_open(h, o.backend, rs, h->nregions)))	/* may fit nregions to the module */
		kgci_log_close(h);
	if (err) {
		free(h);
		return err;
	}
	h->limit = h->base + (size_t)h->nregions * rs;
	err = heap_tables(h);
	if (!err) {
		heap_locks(h, true);
		err = heap_subsystems(h);
		if (err)
			heap_locks(h, false);
	}
	if (err) {
		heap_tables_free(h);
		kgci_backend_close(h);
		kgci_log_close(h);
		free(h);
		return err;
	}
	kgci_young_start(h);	/* the gang's threads exist before the first pause */
	*out = h;
	return 0;
}

KGC_API int kgc_heap_destroy(kgc_heap *h)
{
	if (!h)
		return -EINVAL;
	pthread_mutex_lock(&h->lock);
	/* the library's own threads (kgc-kpinwatch) do not count: stopped below */
	struct kgc_thread *user = h->thr.threads;

	while (user && user->service)
		user = user->next;
	if (h->io_rings) {
		pthread_mutex_unlock(&h->lock);
		kgci_err_set(EBUSY, "kgc_heap_destroy: a kgc_io ring is still open (kgc_io_ring_destroy)");
		return -EBUSY;
	}
	if (user) {
		struct kgc_thread *t = user;
		uint32_t top = __atomic_load_n(&t->pub.crit_top, __ATOMIC_SEQ_CST);

		for (struct kgc_thread *u = h->thr.threads; u; u = u->next)
			if (!u->service && u->pub.crit_open) {
				t = u;
				top = __atomic_load_n(&u->pub.crit_top, __ATOMIC_SEQ_CST);
				break;
			}
		pthread_mutex_unlock(&h->lock);
		if (t->pub.crit_open) {
			kgc_obj a = NULL;

			for (uint32_t i = 0; i < top && !a; i++)
				a = __atomic_load_n(&t->crit[i], __ATOMIC_SEQ_CST);
			if (h->opt.check)
				kgci_fatal("kgc_heap_destroy: thread '%s' still has %u critical section(s) open (array %p)",
				      t->name, t->pub.crit_open, (void *)a);
			kgci_err_set(EBUSY, "kgc_heap_destroy: thread '%s' still has %u critical section(s) open (array %p)",
				t->name, t->pub.crit_open, (void *)a);
		} else {
			kgci_err_set(EBUSY, "kgc_heap_destroy: thread '%s' is still attached", t->name);
		}
		return -EBUSY;
	}
	pthread_mutex_unlock(&h->lock);
	kgci_kpinwatch_destroy(h);	/* its thread detaches */
	kgci_pretouch_destroy(h);	/* so do these */
	kgci_refine_destroy(h);		/* now no thread is attached */
	kgci_statpub_close(h);		/* no collection can run any more */
	kgci_ext_heap_destroy(h);	/* layered libraries' heap data, e.g. libkgc-native's registry */
	kgci_young_destroy(h);		/* its worker gang */
	kgci_cm_destroy(h);
	while (h->thr.zombies) {
		struct kgc_thread *z = h->thr.zombies;

		h->thr.zombies = z->next;
		free(z);
	}
	kgci_handles_destroy(h);
	kgci_pinh_destroy(h);
	kgci_hooks_destroy(h);
	kgci_weak_destroy(h);
	kgci_stale_destroy(h);
	kgci_full_destroy(h);
	kgci_pinspace_destroy(h);
	heap_tables_free(h);	/* the type table too */
	kgci_backend_close(h);
	kgci_log_close(h);
	pthread_mutex_destroy(&h->lock);
	pthread_mutex_destroy(&h->gc_lock);
	pthread_mutex_destroy(&h->sp.lock);
	pthread_cond_destroy(&h->sp.cond);
	pthread_cond_destroy(&h->sp.locker_cond);
	pthread_mutex_destroy(&h->ext_lock);
	free(h);
	return 0;
}

KGC_API const char *kgc_heap_backend(const kgc_heap *h)
{
	return kgci_backend_name(h);
}

KGC_API size_t kgc_heap_region_size(const kgc_heap *h)
{
	return h->region_size;
}
