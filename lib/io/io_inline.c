/* SPDX-License-Identifier: MIT */
/*
 * io_inline.c - short reads done at prep (kgc_io_ring_set_inline): the
 * copy path's speed at small sizes without its copy. io_uring hands a read
 * the page cache cannot serve without blocking - and every tmpfs read - to
 * a worker thread; for a few KiB that hand-off and the wake-up cost more
 * than the copy. So a read of at most r->inline_max bytes at an explicit
 * offset is tried on the calling thread first, in native state with its
 * arrays already pinned and rooted by its slot (no collection waits for
 * it, none moves them): preadv2(RWF_NOWAIT) returns what the page cache
 * holds or -EAGAIN; tmpfs and ramfs, which refuse RWF_NOWAIT, are memory
 * and get a plain preadv. A result - bytes, 0 at the end of the file, or
 * an error other than "would block" - completes the slot (SLOT_INLINE,
 * on the ring's inline list, which a reap takes before the CQ); anything
 * else goes to io_uring.
 */
#define _GNU_SOURCE	/* preadv2 */
#include <errno.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <sys/vfs.h>
#include <linux/magic.h>
#include "io/io_internal.h"

/* fd a tmpfs or ramfs file (no RWF_NOWAIT; its reads are memory copies). */
static bool in_memory_fs(int fd)
{
	struct statfs sf;

	return fstatfs(fd, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC);
}

/* The read's result, or -EAGAIN: it would block (or cannot say). The
 * last fd found on tmpfs/ramfs (r->inl_memfd) is read at once: one call
 * instead of three (a descriptor reused for a disk file then blocks this
 * thread, in native state, for one read; a pipe or socket fails ESPIPE). */
static ssize_t try_read(struct kgc_io_ring *r, int fd, const struct iovec *iov, unsigned n,
			uint64_t off)
{
	ssize_t got;

	if (fd == r->inl_memfd && (got = preadv(fd, iov, (int)n, (off_t)off)) >= 0)
		return got;
	got = preadv2(fd, iov, (int)n, (off_t)off, RWF_NOWAIT);
	if (got >= 0)
		return got;
	r->inl_memfd = -1;
	if (errno == EOPNOTSUPP && in_memory_fs(fd) && (got = preadv(fd, iov, (int)n, (off_t)off)) >= 0) {
		r->inl_memfd = fd;
		return got;
	}
	/* errors go to io_uring too: it reports them the same way */
	return -EAGAIN;
}

bool kgci_io_inline_read(struct kgc_io_ring *r, struct kgc_thread *t, struct io_slot *s,
			 unsigned n, uint64_t file_off)
{
	size_t len = 0;
	ssize_t got;

	for (unsigned i = 0; i < n; i++)
		len += s->iov[i].iov_len;
	if (len > r->inline_max || file_off == KGC_IO_OFF_CUR || file_off > INT64_MAX ||
	    (r->last_sqe && (r->last_sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK))))
		return false;
	kgc_enter_native(t);	/* the slot pins and roots the arrays */
	got = try_read(r, s->fd, s->iov, n, file_off);
	kgc_leave_native(t);
	if (got < 0)
		return false;
	s->res = (int32_t)got;
	s->state = SLOT_INLINE;
	s->next_free = IO_NONE;
	if (r->inl_head == IO_NONE)
		r->inl_head = (uint32_t)(s - r->slots);
	else
		r->slots[r->inl_tail].next_free = (uint32_t)(s - r->slots);
	r->inl_tail = (uint32_t)(s - r->slots);
	atomic_fetch_add_explicit(&r->h->io_stat[IOS_INLINE], 1, memory_order_relaxed);
	if (r->efd >= 0)	/* an event loop sees it like any completion */
		(void)eventfd_write(r->efd, 1);
	return true;
}

uint32_t kgci_io_inline_pop(struct kgc_io_ring *r, int32_t *res)
{
	uint32_t i = r->inl_head;

	if (i == IO_NONE)
		return IO_NONE;
	r->inl_head = r->slots[i].next_free;
	*res = r->slots[i].res;
	return i;
}

KGC_API int kgc_io_ring_set_inline(kgc_io_ring *r, kgc_thread *t, size_t max_bytes)
{
	int err;

	if (max_bytes > INT32_MAX)
		return IO_FAIL(EINVAL, "kgc_io_ring_set_inline: max_bytes %zu (at most %d)", max_bytes,
			       INT32_MAX);
	if ((err = kgci_io_begin(r, t, "kgc_io_ring_set_inline", false)))
		return err;
	r->inline_max = (uint32_t)max_bytes;
	pthread_mutex_unlock(&r->lock);
	return 0;
}
