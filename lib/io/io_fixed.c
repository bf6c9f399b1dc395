/* SPDX-License-Identifier: MIT */
/*
 * io_fixed.c - a ring's registered (fixed) buffers: the pinned-object space
 * (pinspace.c). Each ring has a sparse io_uring buffer table with an entry
 * per region; entry i holds the space's unit that starts at region i (a
 * region, or a humongous array's regions) while it is one. Registration
 * pins the unit's pages once, so a read or write into a pinned array needs
 * no page pinning per operation (READ_FIXED / WRITE_FIXED, io_prep.c).
 *
 * The table follows the space lazily: the space bumps h->ps.gen whenever a
 * unit joins or leaves it, and each ring call (r->lock held) compares it
 * with the generation its table follows; the kernel calls run in native
 * state. A unit the ring registered counts in its first region's
 * fixed_rings, and the space frees no unit while that is non-zero: the
 * kernel holds its pages until every ring has updated its table (an idle
 * ring holds them until its next call, or its destroy).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/io_internal.h"

#define IO_FIXED_MAX	16384u			/* io_uring's table limit */
#define IO_FIXED_LEN_MAX ((size_t)1 << 30)	/* and its largest buffer */

static bool have(const struct io_fixed *fx, uint32_t i)
{
	return fx->have[i / 64] >> (i % 64) & 1;
}

/* IORING_OP_READV_FIXED / WRITEV_FIXED (Linux 6.15; liburing 2.3 does not
 * name them): each iovec lies in the one registered buffer buf_index names. */
static bool vec_fixed_supported(struct io_uring *ur)
{
	struct io_uring_probe *p = io_uring_get_probe_ring(ur);
	bool ok = p && io_uring_opcode_supported(p, IO_OP_READV_FIXED) &&
		  io_uring_opcode_supported(p, IO_OP_WRITEV_FIXED);

	if (p)
		io_uring_free_probe(p);
	return ok;
}

void kgci_io_fixed_init(struct kgc_io_ring *r)
{
	uint32_t cap = r->h->nregions < IO_FIXED_MAX ? r->h->nregions : IO_FIXED_MAX;
	int err;

	r->vec_fixed = vec_fixed_supported(&r->ur);
	r->fx.gen = UINT64_MAX;		/* the first call looks */
	r->fx.have = calloc((cap + 63) / 64, sizeof(uint64_t));
	err = r->fx.have ? io_uring_register_buffers_sparse(&r->ur, cap) : -ENOMEM;
	if (err < 0) {
		kgci_log_line(r->h, LOG_GC, "%s: no registered buffers (%s): every operation names its "
			      "buffer by address", r->name, strerror(-err));
		free(r->fx.have);
		r->fx.have = NULL;
		return;
	}
	r->fx.cap = cap;
}

struct fx_change {
	uint32_t i;
	struct iovec iov;	/* NULL base: unregister */
	bool ok;
};

/* The entries that differ from the space now; units to register are
 * counted in fixed_rings already (h->lock held). */
static size_t changes(struct kgc_io_ring *r, struct fx_change *ch)
{
	struct kgc_heap *h = r->h;
	size_t n = 0;

	for (uint32_t i = 0; i < r->fx.cap; i++) {
		size_t len = kgci_pinspace_unit_bytes(h, i);
		bool want = len && len <= IO_FIXED_LEN_MAX;

		if (want == have(&r->fx, i))
			continue;
		ch[n++] = (struct fx_change){ i, { want ? h->regions[i].bottom : NULL, want ? len : 0 }, false };
		if (want)
			h->regions[i].fixed_rings++;
	}
	return n;
}

void kgci_io_fixed_sync(struct kgc_io_ring *r, struct kgc_thread *t)
{
	struct kgc_heap *h = r->h;
	uint64_t g = atomic_load_explicit(&h->ps.gen, memory_order_acquire);
	struct fx_change *ch;
	size_t n;
	int failed = 0, err = 0;

	if (!r->fx.cap || g == r->fx.gen)
		return;
	ch = malloc(r->fx.cap * sizeof(*ch));
	if (!ch)
		return;		/* next call */
	pthread_mutex_lock(&h->lock);
	g = atomic_load_explicit(&h->ps.gen, memory_order_acquire);
	n = changes(r, ch);
	pthread_mutex_unlock(&h->lock);
	/* pinning a large unit takes a while: in native state, so no collection
	 * waits for it; none frees a unit counted in fixed_rings, none moves one */
	kgc_enter_native(t);
	for (size_t k = 0; k < n; k++) {
		int ret = io_uring_register_buffers_update_tag(&r->ur, ch[k].i, &ch[k].iov, NULL, 1);

		ch[k].ok = ret == 1;
		if (!ch[k].ok && ch[k].iov.iov_base) {
			failed++;
			err = ret;
		}
	}
	kgc_leave_native(t);
	pthread_mutex_lock(&h->lock);
	for (size_t k = 0; k < n; k++) {
		uint32_t i = ch[k].i;
		bool reg = ch[k].iov.iov_base != NULL;

		if (ch[k].ok)
			r->fx.have[i / 64] ^= 1ull << (i % 64);
		if (ch[k].ok != reg)	/* unregistered, or failed to register */
			h->regions[i].fixed_rings--;
	}
	pthread_mutex_unlock(&h->lock);
	free(ch);
	r->fx.gen = g;		/* a failed registration is retried when the space changes */
	if (failed && !r->fx.warned) {
		r->fx.warned = true;
		kgci_log_line(h, LOG_GC, "%s: %d pinned-space unit(s) not registered as fixed buffers (%s%s): "
			      "their operations name buffers by address", r->name, failed, strerror(err < 0 ? -err : EIO),
			      err == -ENOMEM ? "; RLIMIT_MEMLOCK?" : "");
	}
}

int kgci_io_fixed_index(const struct kgc_io_ring *r, kgc_obj o)
{
	uint32_t i = region_index(r->h, o);

	return i < r->fx.cap && have(&r->fx, i) ? (int)i : -1;
}

/* The one entry every array of objs[0..n) lies in (a vectored fixed
 * operation names one registered buffer for all its iovecs), or -1. */
int kgci_io_fixed_index_all(const struct kgc_io_ring *r, const kgc_obj *objs, unsigned n)
{
	int idx = kgci_io_fixed_index(r, objs[0]);

	for (unsigned i = 1; i < n && idx >= 0; i++)
		if (kgci_io_fixed_index(r, objs[i]) != idx)
			return -1;
	return idx;
}

/* Ring destroy (nothing in flight): the kernel lets go of every unit now,
 * and the space may free them. */
void kgci_io_fixed_destroy(struct kgc_io_ring *r)
{
	struct kgc_heap *h = r->h;

	if (!r->fx.cap)
		return;
	io_uring_unregister_buffers(&r->ur);
	pthread_mutex_lock(&h->lock);
	for (uint32_t i = 0; i < r->fx.cap; i++)
		if (have(&r->fx, i))
			h->regions[i].fixed_rings--;
	pthread_mutex_unlock(&h->lock);
	free(r->fx.have);
	r->fx.have = NULL;
	r->fx.cap = 0;
}
