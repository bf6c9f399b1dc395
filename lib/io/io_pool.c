/* SPDX-License-Identifier: MIT */
/*
 * io_pool.c - provided-buffer pools: arrays of the pinned-object space
 * handed to the kernel as an io_uring provided-buffer ring, for multishot
 * recv (io_prep.c) where the kernel picks the array each chunk of data goes
 * into.
 *
 * The kernel writes into a pool's arrays by address (no page pinning per
 * operation) at any time while they are in its buffer ring, so they must
 * never move or be freed meanwhile: they are pinned-space arrays (no
 * collection moves them) and the pool roots them (io_roots.c) from the
 * moment they go in until the program takes them out. A completion that
 * names one (IORING_CQE_F_BUFFER) makes its place done (io_reap.c); the
 * program takes the array (an ordinary array of its own from then on),
 * puts arrays back, or refills the empty places with new ones. Every
 * change of a place: managed state, r->lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "io/io_internal.h"

#define POOL_BUFS_MAX	32768u			/* io_uring's buffer ring limit */
#define POOL_LEN_MAX	0x7fffffffu		/* cqe->res is an int32_t */
#define OPTS_SIZE_MAX	4096u

static uint32_t cqe_bid(uint32_t flags)
{
	return flags >> IORING_CQE_BUFFER_SHIFT;
}

/* Array o into empty place bid, and into the kernel's ring. */
static void place_fill(struct kgc_io_pool *p, uint16_t bid, kgc_obj o)
{
	size_t bytes = kgc_array_length(o) << hdr_info(*obj_hdr(o));

	__atomic_store_n(&p->arr[bid], o, __ATOMIC_RELEASE);
	p->place[bid] = PLACE_KERNEL;
	io_uring_buf_ring_add(p->br, kgc_array_data(o), (unsigned)bytes, bid,
			      io_uring_buf_ring_mask(p->nbufs), 0);
	io_uring_buf_ring_advance(p->br, 1);	/* a release store: the kernel sees it whole */
	__atomic_fetch_add(&p->avail, 1, __ATOMIC_RELAXED);
}

void kgci_io_pool_done(struct kgc_io_pool *p, const struct io_uring_cqe *cqe)
{
	uint32_t bid = cqe_bid(cqe->flags);

	if (!(cqe->flags & IORING_CQE_F_BUFFER))
		return;
	if (bid >= p->nbufs || p->place[bid] != PLACE_KERNEL)
		kgci_fatal("kgc_io_reap: %s: the kernel picked buffer %u of a pool of %u not in its ring",
			   p->r->name, bid, p->nbufs);
	p->place[bid] = PLACE_DONE;
	__atomic_fetch_sub(&p->avail, 1, __ATOMIC_RELAXED);
}

kgc_obj *kgci_io_pool_place(struct kgc_io_pool *p, uint32_t flags)
{
	uint32_t bid = cqe_bid(flags);

	return (flags & IORING_CQE_F_BUFFER) && bid < p->nbufs ? &p->arr[bid] : NULL;
}

/* r->lock held: a new array in every empty place. */
static int refill_locked(struct kgc_io_pool *p, struct kgc_thread *t)
{
	int n = 0;

	while (p->nfree) {
		/* may collect (r->lock held: allowed, like a wait in fixed_sync) */
		kgc_obj o = kgc_alloc_array_pinned(t, p->type, p->length);

		if (!o)
			return n ? n : IO_FAIL(ENOMEM, "kgc_io_pool_refill: %s: no room for a pinned array "
					       "of %u elements", p->r->name, p->length);
		place_fill(p, (uint16_t)p->free[--p->nfree], o);
		n++;
	}
	return n;
}

static int opts_check(struct kgc_heap *h, const struct kgc_io_pool_opts *o)
{
	const char *b = (const char *)o;
	int shift;

	if (!o)
		return IO_FAIL(EINVAL, "kgc_io_pool_create: NULL opts");
	if (o->size < sizeof(*o) || o->size > OPTS_SIZE_MAX)
		return IO_FAIL(EINVAL, "kgc_io_pool_create: opts size %u (%zu..%u)", o->size, sizeof(*o),
			       OPTS_SIZE_MAX);
	for (size_t i = offsetof(struct kgc_io_pool_opts, reserved); i < o->size; i++)
		if (b[i])
			return IO_FAIL(EINVAL, "kgc_io_pool_create: opts byte %zu (reserved) not zero", i);
	if (!o->nbufs || o->nbufs > POOL_BUFS_MAX || (o->nbufs & (o->nbufs - 1)))
		return IO_FAIL(EINVAL, "kgc_io_pool_create: nbufs %u (a power of two, 1..%u)", o->nbufs,
			       POOL_BUFS_MAX);
	if (o->array_type < 1 || o->array_type >= KGC_TYPE_REF_ARRAY)
		return IO_FAIL(EINVAL, "kgc_io_pool_create: type %u is not a primitive array type",
			       o->array_type);
	shift = (int)type_get(h, o->array_type)->elem_shift;
	if (!o->length || o->length > POOL_LEN_MAX >> shift)
		return IO_FAIL(EINVAL, "kgc_io_pool_create: length %u (1..%u elements of %d bytes)",
			       o->length, POOL_LEN_MAX >> shift, 1 << shift);
	return 0;
}

static void pool_free(struct kgc_io_pool *p)
{
	free(p->br);
	free(p->free);
	free(p->place);
	free(p->arr);
	free(p);
}

static struct kgc_io_pool *pool_alloc(const struct kgc_io_pool_opts *o)
{
	struct kgc_io_pool *p = calloc(1, sizeof(*p));
	long pg = sysconf(_SC_PAGESIZE);
	size_t brsz = o->nbufs * sizeof(struct io_uring_buf);

	if (!p)
		return NULL;
	p->nbufs = o->nbufs;
	p->length = o->length;
	p->type = o->array_type;
	p->free = calloc(o->nbufs, sizeof(*p->free));
	p->place = calloc(o->nbufs, sizeof(*p->place));
	p->arr = calloc(o->nbufs, sizeof(*p->arr));
	/* the kernel wants the ring page-aligned */
	brsz = (brsz + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
	if (!p->free || !p->place || !p->arr || posix_memalign((void **)&p->br, (size_t)pg, brsz)) {
		p->br = NULL;
		pool_free(p);
		return NULL;
	}
	memset(p->br, 0, brsz);
	io_uring_buf_ring_init(p->br);
	for (uint32_t i = 0; i < o->nbufs; i++)
		p->free[i] = o->nbufs - 1 - i;	/* place 0 filled first */
	p->nfree = o->nbufs;
	return p;
}

/* Register p's buffer ring with r (native state: a registration may
 * quiesce the ring). */
static int pool_register(struct kgc_io_ring *r, struct kgc_thread *t, struct kgc_io_pool *p)
{
	struct io_uring_buf_reg reg = { .ring_addr = (uintptr_t)p->br, .ring_entries = p->nbufs,
					.bgid = p->bgid };
	int err;

	kgc_enter_native(t);
	err = io_uring_register_buf_ring(&r->ur, &reg, 0);
	kgc_leave_native(t);
	return err;
}

KGC_API int kgc_io_pool_create(kgc_io_ring *r, kgc_thread *t, const struct kgc_io_pool_opts *o,
			       kgc_io_pool **out)
{
	struct kgc_io_pool *p;
	int err;

	if (!out)
		return IO_FAIL(EINVAL, "kgc_io_pool_create: NULL out");
	if (!r)
		return IO_FAIL(EINVAL, "kgc_io_pool_create: NULL ring");
	if ((err = opts_check(r->h, o)))
		return err;
	if (!(p = pool_alloc(o)))
		return IO_FAIL(ENOMEM, "kgc_io_pool_create: out of memory (%u buffers)", o->nbufs);
	if ((err = kgci_io_begin(r, t, "kgc_io_pool_create", false))) {
		pool_free(p);
		return err;
	}
	p->r = r;
	p->bgid = r->next_bgid++;
	err = pool_register(r, t, p);
	if (err < 0) {
		pthread_mutex_unlock(&r->lock);
		pool_free(p);
		return IO_FAIL(-err, "kgc_io_pool_create: %s: io_uring_register_buf_ring(%u buffers): %s",
			       r->name, o->nbufs, strerror(-err));
	}
	p->next = r->pools;
	__atomic_store_n(&r->pools, p, __ATOMIC_RELEASE);	/* a root set from now on */
	err = refill_locked(p, t);
	pthread_mutex_unlock(&r->lock);
	if (err < 0) {
		kgc_io_pool_destroy(p, t);
		return err;
	}
	*out = p;
	return 0;
}

/* p out of r's list and the kernel's table, freed (r->lock held or the
 * ring going away). */
static void pool_drop(struct kgc_io_ring *r, struct kgc_io_pool *p)
{
	struct kgc_io_pool **pp = &r->pools;

	while (*pp != p)
		pp = &(*pp)->next;
	__atomic_store_n(pp, p->next, __ATOMIC_RELEASE);
	io_uring_unregister_buf_ring(&r->ur, p->bgid);
	pool_free(p);
}

KGC_API int kgc_io_pool_destroy(kgc_io_pool *p, kgc_thread *t)
{
	struct kgc_io_ring *r;
	int err;

	if (!p)
		return IO_FAIL(EINVAL, "kgc_io_pool_destroy: NULL pool");
	r = p->r;
	if ((err = kgci_io_begin(r, t, "kgc_io_pool_destroy", false)))
		return err;
	if (p->users)
		err = IO_FAIL(EBUSY, "kgc_io_pool_destroy: %s: %u recv(s) on the pool in flight", r->name,
			      p->users);
	else
		pool_drop(r, p);	/* (no collection meanwhile: managed, no safepoint) */
	pthread_mutex_unlock(&r->lock);
	return err;
}

void kgci_io_pools_destroy(struct kgc_io_ring *r)
{
	while (r->pools)
		pool_drop(r, r->pools);
}

KGC_API int kgc_io_pool_take(kgc_io_pool *p, kgc_thread *t, const struct kgc_io_cqe *c, kgc_obj *root)
{
	uint32_t bid;
	int err;

	if (!p || !c || !root)
		return IO_FAIL(EINVAL, "kgc_io_pool_take: pool %p, cqe %p, root %p", (void *)p,
			       (const void *)c, (void *)root);
	bid = cqe_bid(c->flags);
	if (!(c->flags & IORING_CQE_F_BUFFER) || bid >= p->nbufs)
		return IO_FAIL(EINVAL, "kgc_io_pool_take: completion (user_data %llu, flags %#x) names no "
			       "buffer of a pool of %u", (unsigned long long)c->user_data, c->flags, p->nbufs);
	if ((err = kgci_io_begin(p->r, t, "kgc_io_pool_take", false)))
		return err;
	if (p->place[bid] != PLACE_DONE) {
		err = IO_FAIL(ENOENT, "kgc_io_pool_take: %s: buffer %u is %s", p->r->name, bid,
			      p->place[bid] == PLACE_EMPTY ? "taken already" : "back in the kernel's ring");
	} else {
		*root = p->arr[bid];
		__atomic_store_n(&p->arr[bid], NULL, __ATOMIC_RELAXED);
		p->place[bid] = PLACE_EMPTY;
		p->free[p->nfree++] = bid;
		err = c->res;
	}
	pthread_mutex_unlock(&p->r->lock);
	return err;
}

/* o: a primitive array of the pinned-object space of h, 1..2^31-1 bytes. */
static int put_check(struct kgc_heap *h, kgc_obj o)
{
	uint64_t hd;
	size_t bytes;

	if (!o || !is_ref(h, o) || !in_heap(h, o) || region_of(h, o)->type == RT_FREE)
		return IO_FAIL(EINVAL, "kgc_io_pool_put: %p is not an object of the pool's heap", (void *)o);
	hd = *obj_hdr(o);
	if (hdr_kind(hd) != KIND_PRIM_ARRAY)
		return IO_FAIL(EINVAL, "kgc_io_pool_put: %p is not a primitive array", (void *)o);
	if (region_of(h, o)->pinspace != PS_MEMBER)
		return IO_FAIL(EINVAL, "kgc_io_pool_put: array %p is not in the pinned-object space "
			       "(kgc_alloc_array_pinned)", (void *)o);
	bytes = kgc_array_length(o) << hdr_info(hd);
	if (!bytes || bytes > POOL_LEN_MAX)
		return IO_FAIL(EINVAL, "kgc_io_pool_put: array %p of %zu bytes (1..%u)", (void *)o, bytes,
			       POOL_LEN_MAX);
	return 0;
}

KGC_API int kgc_io_pool_put(kgc_io_pool *p, kgc_thread *t, kgc_obj *array)
{
	int err;

	if (!p || !array)
		return IO_FAIL(EINVAL, "kgc_io_pool_put: pool %p, array %p", (void *)p, (void *)array);
	if ((err = kgci_io_check(p->r, t, "kgc_io_pool_put")) || (err = put_check(p->r->h, *array)))
		return err;
	kgci_io_lock(p->r, t);	/* (*array: the caller's root, updated if we wait) */
	for (uint32_t i = 0; i < p->nbufs && !err; i++)
		if (p->arr[i] == *array)
			err = IO_FAIL(EINVAL, "kgc_io_pool_put: %s: array %p is the pool's buffer %u already",
				      p->r->name, (void *)*array, i);
	if (!err && !p->nfree)
		err = IO_FAIL(ENOSPC, "kgc_io_pool_put: %s: the pool holds its %u arrays", p->r->name,
			      p->nbufs);
	if (!err)
		place_fill(p, (uint16_t)p->free[--p->nfree], *array);
	pthread_mutex_unlock(&p->r->lock);
	return err;
}

KGC_API int kgc_io_pool_refill(kgc_io_pool *p, kgc_thread *t)
{
	int n;

	if (!p)
		return IO_FAIL(EINVAL, "kgc_io_pool_refill: NULL pool");
	if ((n = kgci_io_begin(p->r, t, "kgc_io_pool_refill", false)))
		return n;
	n = refill_locked(p, t);
	pthread_mutex_unlock(&p->r->lock);
	return n;
}

KGC_API unsigned kgc_io_pool_avail(const kgc_io_pool *p)
{
	return p ? __atomic_load_n(&p->avail, __ATOMIC_RELAXED) : 0;
}
