/* SPDX-License-Identifier: MIT */
/*
 * io_inline.c - short reads done by the library (kgc_io_ring_set_inline):
 * the copy path's speed at small sizes without its copy. io_uring hands a
 * read the page cache cannot serve without blocking - and every tmpfs
 * read - to a worker thread; for a few KiB that hand-off and the wake-up
 * cost more than the copy. So a read of at most r->inline_max bytes at an
 * explicit offset is deferred at prep (its arrays pinned and rooted by its
 * slot) and done on the thread that next submits (kgc_io_submit, a reap,
 * or a prep of anything that does not continue it: io_prep.c's
 * kgci_io_defer_flush), in native state (no collection waits for it, none
 * moves the arrays). Reads of one file's consecutive ranges prepared one
 * after another are done in one preadv2 - a loop reading a file in blocks
 * pays one system call per batch, not per block.
 * preadv2(RWF_NOWAIT) returns what the page cache holds or -EAGAIN; tmpfs
 * and ramfs, which refuse RWF_NOWAIT, are memory and get a plain preadv.
 * A read the call covered completes (SLOT_INLINE, on the ring's inline
 * list, which a reap takes before the CQ); one it covered in part
 * completes short, as a read does (the end of the file, or the page cache
 * ending there); the reads after it, and all of them on "would block" or
 * an error, go to io_uring in order.
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

#define DEFER_SLOTS	64u	/* reads per batch */
#define DEFER_IOV	256u	/* iovecs per batch (IOV_MAX is 1024) */

bool kgci_io_inline_fits(const struct kgc_io_ring *r, size_t len, uint64_t file_off)
{
	return r->inline_max && len <= r->inline_max && file_off != KGC_IO_OFF_CUR &&
	       file_off <= INT64_MAX &&
	       !(r->last_sqe && (r->last_sqe->flags & (IOSQE_IO_LINK | IOSQE_IO_HARDLINK)));
}

bool kgci_io_defer_extends(const struct kgc_io_ring *r, const struct kgc_thread *t, int fd,
			   uint64_t file_off, unsigned n)
{
	return r->def_head == IO_NONE ||
	       (r->def_thread == t && r->def_fd == fd && r->def_end == file_off &&
		r->def_n < DEFER_SLOTS && r->def_iov + n <= DEFER_IOV);
}

void kgci_io_defer_add(struct kgc_io_ring *r, struct kgc_thread *t, struct io_slot *s, unsigned n,
		       uint64_t file_off, size_t len)
{
	uint32_t i = (uint32_t)(s - r->slots);

	s->off = file_off;
	s->next_free = IO_NONE;
	if (r->def_head == IO_NONE) {
		r->def_head = i;
		r->def_thread = t;
		r->def_fd = s->fd;
		r->def_n = r->def_iov = 0;
	} else {
		r->slots[r->def_tail].next_free = i;
	}
	r->def_tail = i;
	r->def_n++;
	r->def_iov += n;
	r->def_end = file_off + len;
}

void kgci_io_inline_done(struct kgc_io_ring *r, struct io_slot *s, int32_t res)
{
	uint32_t i = (uint32_t)(s - r->slots);

	s->res = res;
	s->state = SLOT_INLINE;
	s->next_free = IO_NONE;
	if (r->inl_head == IO_NONE)
		r->inl_head = i;
	else
		r->slots[r->inl_tail].next_free = i;
	r->inl_tail = i;
	atomic_fetch_add_explicit(&r->h->io_stat[IOS_INLINE], 1, memory_order_relaxed);
}

static size_t slot_len(const struct io_slot *s)
{
	size_t len = 0;

	for (unsigned k = 0; k < __atomic_load_n(&s->narr, __ATOMIC_RELAXED); k++)
		len += s->iov[k].iov_len;
	return len;
}

uint32_t kgci_io_inline_batch(struct kgc_io_ring *r, struct kgc_thread *t)
{
	struct iovec iov[DEFER_IOV];
	uint32_t i, head = r->def_head, ndone = 0;
	unsigned niov = 0;
	ssize_t got;

	for (i = head; i != IO_NONE; i = r->slots[i].next_free)
		for (unsigned k = 0; k < __atomic_load_n(&r->slots[i].narr, __ATOMIC_RELAXED); k++)
			iov[niov++] = r->slots[i].iov[k];
	r->def_head = r->def_tail = IO_NONE;
	kgc_enter_native(t);	/* the slots pin and root the arrays */
	got = try_read(r, r->def_fd, iov, niov, r->slots[head].off);
	kgc_leave_native(t);
	atomic_fetch_add_explicit(&r->h->io_stat[IOS_INLINE_CALLS], 1, memory_order_relaxed);
	for (i = head; got >= 0 && i != IO_NONE;) {
		struct io_slot *s = &r->slots[i];
		size_t len = slot_len(s);
		uint32_t next = s->next_free;

		if ((size_t)got < len && got == 0 && i != head)
			break;	/* not covered at all: the end of the file, or of the cache */
		kgci_io_inline_done(r, s, (int32_t)((size_t)got < len ? (size_t)got : len));
		ndone++;
		i = next;
		if ((size_t)got < len)
			break;	/* a short read ends the batch */
		got -= (ssize_t)len;
	}
	if (ndone && r->efd >= 0)	/* an event loop sees them like any completion */
		(void)eventfd_write(r->efd, ndone);
	return got < 0 ? head : i;
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
