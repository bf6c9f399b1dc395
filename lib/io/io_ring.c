/* SPDX-License-Identifier: MIT */
/*
 * io_ring.c - kgc_io rings: an io_uring (liburing) bound to a heap. Setup
 * and teardown (a destroy waits until the kernel is done with every array),
 * submit, cancel. The checks, lock and slots every call shares are
 * io_core.c's (a slot roots and pins its arrays until a reap returns its
 * completion); the prep calls, io_prep.c's; reaping and the eventfd,
 * io_reap.c's; what the collector sees of a ring, io_roots.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io/io_internal.h"

KGC_API int kgc_io_ring_create(kgc_thread *t, unsigned entries, unsigned setup_flags, kgc_io_ring **out)
{
	struct kgc_io_ring *r;
	int err = kgci_io_check(NULL, t, "kgc_io_ring_create");

	if (err)
		return err;
	if (!out || entries == 0 || entries > IO_SLOTS_MAX)
		return IO_FAIL(EINVAL, "kgc_io_ring_create: entries %u (1..%u), out %p", entries,
			       IO_SLOTS_MAX, (void *)out);
	r = calloc(1, sizeof(*r));
	if (r)
		r->slots = calloc(entries, sizeof(*r->slots));
	if (!r || !r->slots) {
		free(r);
		return IO_FAIL(ENOMEM, "kgc_io_ring_create: out of memory (%u entries)", entries);
	}
	err = io_uring_queue_init(entries, &r->ur, setup_flags);
	if (err < 0) {
		free(r->slots);
		free(r);
		return IO_FAIL(-err, "kgc_io_ring_create: io_uring_setup(%u, flags %#x): %s", entries,
			       setup_flags, strerror(-err));
	}
	r->h = t->heap;
	r->nslots = entries;
	r->efd = -1;
	r->inl_head = r->inl_tail = IO_NONE;
	r->inl_memfd = -1;
	r->def_head = r->def_tail = IO_NONE;
	snprintf(r->name, sizeof(r->name), "kgc_io ring %p", (void *)r);
	kgci_io_fixed_init(r);
	for (uint32_t i = 0; i < entries; i++)
		r->slots[i].next_free = i + 1 < entries ? i + 1 : IO_NONE;
	pthread_mutex_init(&r->lock, NULL);
	pthread_mutex_lock(&r->h->lock);
	r->next = r->h->io_rings;
	if (r->next)
		r->next->prev = r;
	r->h->io_rings = r;
	pthread_mutex_unlock(&r->h->lock);
	*out = r;
	return 0;
}

/* Which operations a cancel names. */
struct cancel_match {
	enum { BY_USER_DATA, BY_FD, BY_ALL } by;
	uint64_t v;		/* the user_data or fd */
	const char *what;
};

static bool cancel_matches(const struct io_slot *s, const struct cancel_match *m)
{
	/* (a completed slot a reap holds until it returns: nothing to cancel) */
	if (s->state != SLOT_INFLIGHT)
		return false;
	return m->by == BY_ALL || (m->by == BY_FD ? (uint64_t)(int64_t)s->fd == m->v :
				   s->user_data == m->v);
}

/* Cancel every slot in flight m names; r->lock held. Returns how many
 * matched, or -errno. */
static int cancel_locked(struct kgc_io_ring *r, struct kgc_thread *t, const struct cancel_match *m)
{
	int n = 0, err;

	for (uint32_t i = 0; i < r->nslots; i++) {
		struct io_uring_sqe *sqe;

		if (!cancel_matches(&r->slots[i], m))
			continue;
		sqe = kgci_io_get_sqe(r, t);
		if (!sqe)
			return IO_FAIL(EBUSY, "%s: %s: no submission entry", m->what, r->name);
		io_uring_prep_cancel64(sqe, i, 0);
		sqe->user_data = IO_TAG_CANCEL;
		atomic_fetch_add_explicit(&r->h->io_stat[IOS_CANCELS], 1, memory_order_relaxed);
		n++;
	}
	err = kgci_io_submit_locked(r, t);
	return err < 0 ? IO_FAIL(-err, "%s: %s: io_uring_submit: %s", m->what, r->name,
				 strerror(-err)) : n;
}

static int cancel(struct kgc_io_ring *r, struct kgc_thread *t, const struct cancel_match *m)
{
	int n;

	if ((n = kgci_io_begin(r, t, m->what, true)))
		return n;
	kgci_io_defer_flush(r, t);	/* deferred reads: done, or in the kernel */
	n = cancel_locked(r, t, m);
	pthread_mutex_unlock(&r->lock);
	return n;
}

KGC_API int kgc_io_cancel(kgc_io_ring *r, kgc_thread *t, uint64_t user_data)
{
	int n = cancel(r, t, &(struct cancel_match){ BY_USER_DATA, user_data, "kgc_io_cancel" });

	if (n == 0)
		return IO_FAIL(ENOENT, "kgc_io_cancel: %s: no operation in flight with user_data %llu",
			       r->name, (unsigned long long)user_data);
	return n;
}

KGC_API int kgc_io_cancel_fd(kgc_io_ring *r, kgc_thread *t, int fd)
{
	int n;

	if (fd < 0)
		return IO_FAIL(EINVAL, "kgc_io_cancel_fd: fd %d", fd);
	n = cancel(r, t, &(struct cancel_match){ BY_FD, (uint64_t)fd, "kgc_io_cancel_fd" });
	if (n == 0)
		return IO_FAIL(ENOENT, "kgc_io_cancel_fd: %s: no operation in flight on fd %d", r->name, fd);
	return n;
}

KGC_API int kgc_io_cancel_all(kgc_io_ring *r, kgc_thread *t)
{
	return cancel(r, t, &(struct cancel_match){ BY_ALL, 0, "kgc_io_cancel_all" });
}

KGC_API int kgc_io_ring_destroy(kgc_io_ring *r, kgc_thread *t)
{
	unsigned was;
	int err;

	if ((err = kgci_io_begin(r, t, "kgc_io_ring_destroy", false)))
		return err;
	was = atomic_load(&r->inflight);
	kgci_io_defer_flush(r, t);
	err = was ? cancel_locked(r, t, &(struct cancel_match){ BY_ALL, 0, "kgc_io_ring_destroy" }) : 0;
	/* the kernel may write into the arrays until each has completed */
	if (err >= 0)
		err = kgci_io_drain_locked(r, t);
	if (err >= 0 && atomic_load(&r->inflight))
		err = IO_FAIL(EBUSY, "kgc_io_ring_destroy: %s: a reap on another thread holds %u "
			      "completions", r->name, atomic_load(&r->inflight));
	pthread_mutex_unlock(&r->lock);
	if (err < 0)
		return err;	/* still in flight or held: the ring stays, pinned and rooted */
	pthread_mutex_lock(&r->h->lock);
	if (r->prev)
		r->prev->next = r->next;
	else
		r->h->io_rings = r->next;
	if (r->next)
		r->next->prev = r->prev;
	pthread_mutex_unlock(&r->h->lock);
	kgci_io_pools_destroy(r);
	kgci_io_fixed_destroy(r);
	kgci_io_eventfd_destroy(r);
	io_uring_queue_exit(&r->ur);
	pthread_mutex_destroy(&r->lock);
	free(r->slots);
	free(r);
	return (int)was;
}

KGC_API int kgc_io_register_files(kgc_io_ring *r, kgc_thread *t, const int *fds, unsigned n)
{
	int err;

	if (!fds && n)
		return IO_FAIL(EINVAL, "kgc_io_register_files: NULL fds, n %u", n);
	if ((err = kgci_io_begin(r, t, "kgc_io_register_files", false)))
		return err;
	kgc_enter_native(t);	/* older kernels quiesce the ring for a registration */
	err = io_uring_unregister_files(&r->ur);
	if (err == -ENXIO)	/* there was none */
		err = 0;
	if (!err && n)
		err = io_uring_register_files(&r->ur, fds, n);
	kgc_leave_native(t);
	pthread_mutex_unlock(&r->lock);
	return err < 0 ? IO_FAIL(-err, "kgc_io_register_files: %s: %u files: %s (the ring has no table "
				 "now)", r->name, n, strerror(-err)) : 0;
}

KGC_API int kgc_io_submit(kgc_io_ring *r, kgc_thread *t)
{
	int n;

	if ((n = kgci_io_begin(r, t, "kgc_io_submit", true)))
		return n;
	kgci_io_defer_flush(r, t);	/* the reads the library does (io_inline.c) */
	n = kgci_io_submit_locked(r, t);
	pthread_mutex_unlock(&r->lock);
	return n < 0 ? IO_FAIL(-n, "kgc_io_submit: %s: io_uring_submit: %s", r->name, strerror(-n)) : n;
}

KGC_API unsigned kgc_io_inflight(const kgc_io_ring *r)
{
	return r ? atomic_load_explicit(&r->inflight, memory_order_relaxed) : 0;
}
