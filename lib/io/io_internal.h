/* SPDX-License-Identifier: MIT */
/*
 * io_internal.h - kgc_io rings (io_core.c: checks, lock, slots; io_ring.c:
 * lifecycle, submit, cancel; io_prep.c: the prep calls; io_reap.c:
 * completions, the eventfd; io_skip.c: KGC_IO_SKIP_SUCCESS chains; io_pool.c:
 * provided-buffer pools; io_roots.c:
 * what the collector sees).
 *
 * A slot is one operation queued, in flight, or completed and held by a
 * reap that has not returned it yet: the arrays it holds are roots
 * (io_roots.c) and each pins its region (one count in the region's pin
 * count per array) from the prep until a reap returns its completion. The
 * sqe's user_data is the slot index; the program's user_data stays in the
 * slot. Slots change only in managed state with r->lock held, so a
 * collection (at a safepoint) never sees one half-written; the collector
 * reads them with __atomic loads and without the lock.
 *
 * r->lock is never held while blocked on the kernel's completions; a thread
 * that finds it taken waits for it in native state (a thread holding it may
 * be in native state inside io_uring_enter, or waiting for a collection).
 */
#ifndef KGC_IO_INTERNAL_H
#define KGC_IO_INTERNAL_H

#include <sys/socket.h>
#include <liburing.h>
#include "gc_internal.h"

#define IO_SLOTS_MAX	4096u
#define IO_TAG_CANCEL	UINT64_MAX	/* user_data of our cancel sqes */
#define IO_NONE		UINT32_MAX
/* the kernel's opcodes (uapi io_uring.h, Linux 6.15) newer than liburing 2.3 */
#define IO_OP_READV_FIXED	60
#define IO_OP_WRITEV_FIXED	61

enum io_slot_state {
	SLOT_FREE,
	SLOT_INFLIGHT,	/* queued or in the kernel */
	SLOT_DONE,	/* completed: a reap holds it until it returns it */
	SLOT_INLINE,	/* done at prep (io_inline.c), no reap has taken it yet */
};

struct io_slot {
	kgc_obj arr[KGC_IO_IOV_MAX];	/* roots, pinned (__atomic: the collector reads) */
	uint32_t narr;			/* arrays held (__atomic); 0 for fsync, poll, ... */
	uint32_t next_free;		/* free, or held by a reap: the next in its list */
	uint8_t state;			/* enum io_slot_state */
	int fd;				/* the operation's (-1: a timeout) */
	uint64_t user_data;		/* the program's */
	struct kgc_io_pool *pool;	/* a multishot recv's provided buffers, or NULL */
	int32_t res;			/* SLOT_INLINE: the result */
	uint64_t off;			/* a deferred read's file offset (io_inline.c) */
	/* KGC_IO_SKIP_SUCCESS (io_skip.c): the skip operation a follower
	 * releases (IO_NONE: none, or it completed on its own) */
	uint32_t releases;
	uint32_t chain_next;		/* the operation linked after this one, or IO_NONE */
	bool skip;			/* no completion of its own if it succeeds */
	bool hard;			/* skip, after a KGC_IO_HARDLINK */
	/* what the kernel reads until the completion */
	struct iovec iov[KGC_IO_IOV_MAX];	/* readv/writev/sendmsg/recvmsg */
	struct msghdr msg;			/* sendmsg/recvmsg */
	union {
		struct __kernel_timespec ts;		/* timeout */
		struct sockaddr_storage addr;		/* connect, sendmsg's destination */
	} u;
};

/* The ring's registered-buffer table (io_fixed.c): entry i is the
 * pinned-object space's unit starting at region i, while it is one. */
struct io_fixed {
	uint32_t cap;		/* entries (0: no table, every operation plain) */
	uint64_t gen;		/* the h->ps.gen the table follows */
	uint64_t *have;		/* entries registered, a bit each */
	bool warned;		/* a registration failed (said once) */
};

/*
 * A provided-buffer pool (io_pool.c): place (buffer id) i holds arr[i], a
 * pinned-space array, or NULL (empty, on the free stack). A place is in the
 * kernel's buffer ring (the kernel may pick it) or done (a completion named
 * it; the program takes it). arr[] is a root (io_roots.c), written in
 * managed state with r->lock held.
 */
enum io_place { PLACE_EMPTY, PLACE_KERNEL, PLACE_DONE };

struct kgc_io_pool {
	struct kgc_io_ring *r;
	struct kgc_io_pool *next;		/* r->pools */
	struct io_uring_buf_ring *br;		/* the ring the kernel picks from */
	uint32_t nbufs, length, avail;		/* avail: places in the kernel's ring */
	uint16_t bgid;
	kgc_type_id type;
	uint32_t users;				/* recvs in flight on it */
	uint32_t nfree, *free;			/* empty places */
	uint8_t *place;				/* enum io_place */
	kgc_obj *arr;				/* __atomic: the collector reads */
};

struct kgc_io_ring {
	struct kgc_heap *h;
	struct kgc_io_ring *next, *prev;	/* h->io_rings (h->lock) */
	pthread_mutex_t lock;			/* all below */
	struct io_uring ur;
	struct io_slot *slots;
	uint32_t nslots, free_head;
	_Atomic uint32_t inflight;		/* slots in use (kgc_io_inflight reads it unlocked) */
	uint32_t kernel;			/* of those, not completed (queued or in the kernel) */
	int efd;				/* the eventfd registered with the ring, or -1 */
	char name[32];				/* for messages: "ring 0x..." */
	struct io_fixed fx;			/* registered buffers: the pinned space */
	struct io_uring_sqe *last_sqe;		/* the last operation queued, until submitted */
	struct kgc_thread *last_thread;		/* the thread that queued it */
	bool vec_fixed;				/* the kernel has READV_FIXED/WRITEV_FIXED */
	uint32_t inline_max;			/* reads this short are done by the library (io_inline.c) */
	uint32_t inl_head, inl_tail;		/* their slots, done, until a reap takes them */
	/* reads deferred at prep, not done yet: one file's consecutive ranges,
	 * one thread's, in prep order (io_inline.c; io_prep.c flushes them) */
	uint32_t def_head, def_tail, def_n, def_iov;
	int def_fd;
	uint64_t def_end;			/* the file offset the next one must start at */
	struct kgc_thread *def_thread;
	int inl_memfd;				/* the last fd found on tmpfs/ramfs, or -1 */
	struct kgc_io_pool *pools;		/* provided-buffer pools */
	uint16_t next_bgid;			/* the next pool's buffer group */
};

#define IO_FAIL(err, ...) (kgci_err_set((err), __VA_ARGS__), -(err))

/* io_core.c */
int kgci_io_check(struct kgc_io_ring *r, struct kgc_thread *t, const char *what);
int kgci_io_begin(struct kgc_io_ring *r, struct kgc_thread *t, const char *what, bool sync);
void kgci_io_lock(struct kgc_io_ring *r, struct kgc_thread *t);
int kgci_io_submit_locked(struct kgc_io_ring *r, struct kgc_thread *t);
/* io_skip.c (KGC_IO_SKIP_SUCCESS), r->lock held, managed */
int kgci_io_skip_set(struct kgc_io_ring *r, struct io_uring_sqe *sqe, unsigned flags);
void kgci_io_chain(struct kgc_io_ring *r, struct io_slot *s);	/* s queued after r->last_sqe */
void kgci_io_skip_orphan(struct kgc_io_ring *r);	/* a submit: no follower came */
void kgci_io_skip_own_cqe(struct kgc_io_ring *r, struct io_slot *s);	/* it failed */
struct io_uring_sqe *kgci_io_get_sqe(struct kgc_io_ring *r, struct kgc_thread *t);
/* slot bookkeeping, r->lock held, managed */
struct io_slot *kgci_io_slot_get(struct kgc_io_ring *r);
void kgci_io_slot_hold(struct kgc_io_ring *r, struct io_slot *s, const kgc_obj *objs, unsigned n,
		       uint64_t user_data);

/* io_prep.c, r->lock held, managed: the deferred reads done, or queued
 * for io_uring, before anything that must come after them */
void kgci_io_defer_flush(struct kgc_io_ring *r, struct kgc_thread *t);

/* io_reap.c, r->lock held, managed */
int kgci_io_drain_locked(struct kgc_io_ring *r, struct kgc_thread *t);	/* every completion, dropped */
void kgci_io_eventfd_destroy(struct kgc_io_ring *r);			/* nothing in flight */

/* io_inline.c, r->lock held, managed. A read of len bytes in n buffers
 * at file_off by t: may the library do it (kgci_io_inline_fits), and does
 * it continue the deferred ones (kgci_io_defer_extends; true when there
 * are none)? kgci_io_defer_add: slot s (arrays held, iovecs filled) joins
 * them. kgci_io_inline_batch: does them, one call when it can; the slots
 * it completed go to the inline list; returns the first slot left for
 * io_uring (the rest follow it by next_free), or IO_NONE. */
bool kgci_io_inline_fits(const struct kgc_io_ring *r, size_t len, uint64_t file_off);
bool kgci_io_defer_extends(const struct kgc_io_ring *r, const struct kgc_thread *t, int fd,
			   uint64_t file_off, unsigned n);
void kgci_io_defer_add(struct kgc_io_ring *r, struct kgc_thread *t, struct io_slot *s, unsigned n,
		       uint64_t file_off, size_t len);
uint32_t kgci_io_inline_batch(struct kgc_io_ring *r, struct kgc_thread *t);
void kgci_io_inline_done(struct kgc_io_ring *r, struct io_slot *s, int32_t res);
/* the first inline completion, off the list (IO_NONE: none); its result */
uint32_t kgci_io_inline_pop(struct kgc_io_ring *r, int32_t *res);

/* io_pool.c, r->lock held, managed */
void kgci_io_pool_done(struct kgc_io_pool *p, const struct io_uring_cqe *cqe);	/* names a place */
kgc_obj *kgci_io_pool_place(struct kgc_io_pool *p, uint32_t flags);	/* the cqe's, or NULL */
void kgci_io_pools_destroy(struct kgc_io_ring *r);	/* nothing in flight */

/* io_fixed.c: the pinned-object space as io_uring fixed buffers */
void kgci_io_fixed_init(struct kgc_io_ring *r);
void kgci_io_fixed_sync(struct kgc_io_ring *r, struct kgc_thread *t);	/* r->lock held, managed */
int kgci_io_fixed_index(const struct kgc_io_ring *r, kgc_obj o);	/* buf_index or -1 */
int kgci_io_fixed_index_all(const struct kgc_io_ring *r, const kgc_obj *objs, unsigned n);
void kgci_io_fixed_destroy(struct kgc_io_ring *r);	/* before io_uring_queue_exit */

#endif
