/* SPDX-License-Identifier: MIT */
/*
 * io_prep.c - the kgc_io prep calls: read, write, readv, writev, recv, send
 * into or out of (array root, byte offset, byte length) of primitive
 * arrays; fsync, close, poll, timeout, accept, connect, which hold no
 * array. Every argument is checked before anything is queued; then the
 * arrays are rooted and pinned in a slot of the ring (io_core.c), what
 * else the kernel reads until the completion (iovecs, a timeout's time, a
 * connect's address) is copied into the slot, and the sqe is queued for
 * kgc_io_submit.
 */
#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include "io/io_internal.h"

#define IO_LEN_MAX	0x7fffffffu	/* cqe->res is an int32_t */

enum io_op {
	OP_READ, OP_WRITE, OP_READV, OP_WRITEV, OP_RECV, OP_SEND,	/* arrays */
	OP_SENDMSG, OP_RECVMSG,
	OP_FSYNC, OP_CLOSE, OP_POLL, OP_TIMEOUT, OP_ACCEPT, OP_CONNECT,	/* none */
	OP_RECV_MULTI,		/* a pool's arrays (io_pool.c) */
};

static const char *const op_name[] = {
	"kgc_io_prep_read", "kgc_io_prep_write", "kgc_io_prep_readv",
	"kgc_io_prep_writev", "kgc_io_prep_recv", "kgc_io_prep_send",
	"kgc_io_prep_sendmsg", "kgc_io_prep_recvmsg",
	"kgc_io_prep_fsync", "kgc_io_prep_close", "kgc_io_prep_poll",
	"kgc_io_prep_timeout", "kgc_io_prep_accept", "kgc_io_prep_connect",
	"kgc_io_prep_recv_multishot",
};

struct io_req {
	enum io_op op;
	int fd, msg_flags;	/* msg_flags: recv/send's; fsync, poll, accept flags */
	uint64_t file_off, user_data;	/* file_off: a timeout's ns */
	const void *addr;	/* connect, sendmsg: copied; recvmsg: the caller's, written */
	unsigned addrlen;
	struct kgc_io_pool *pool;	/* multishot recv's */
};

/* Buffer i: *array a primitive array of h, [offset, offset+length) in its
 * bytes. Sets *o and *p (the first byte). */
static int buf_check(struct kgc_heap *h, const char *what, unsigned i, const struct kgc_io_buf *b,
		     kgc_obj *o, char **p)
{
	uint64_t hd;
	size_t bytes;

	if (!b->array || !(*o = *b->array))
		return IO_FAIL(EINVAL, "%s: buffer %u: NULL array", what, i);
	if (!is_ref(h, *o))	/* its "header" would be a wild read */
		return IO_FAIL(EINVAL, "%s: buffer %u: %p is a tagged immediate (tag_mask %#x), not an array",
			       what, i, (void *)*o, h->opt.tag_mask);
	if (!in_heap(h, *o) || region_of(h, *o)->type == RT_FREE)
		return IO_FAIL(EINVAL, "%s: buffer %u: %p is not an object of the ring's heap", what, i,
			       (void *)*o);
	hd = *obj_hdr(*o);
	if (hdr_kind(hd) != KIND_PRIM_ARRAY || (hd & HDR_TAG_MASK))
		return IO_FAIL(EINVAL, "%s: buffer %u: array %p is not a primitive array (%s)", what, i,
			       (void *)*o, hdr_kind(hd) == KIND_REF_ARRAY ? "a reference array" : "kind");
	bytes = kgc_array_length(*o) << hdr_info(hd);
	if (b->offset > bytes || b->length > bytes - b->offset)
		return IO_FAIL(EFAULT, "%s: buffer %u: offset %zu + length %zu beyond array %p (%zu bytes)",
			       what, i, b->offset, b->length, (void *)*o, bytes);
	if (b->length > IO_LEN_MAX)
		return IO_FAIL(EINVAL, "%s: buffer %u: length %zu over %u", what, i, b->length, IO_LEN_MAX);
	*p = (char *)kgc_array_data(*o) + b->offset;
	return 0;
}

/* sendmsg/recvmsg: the msghdr in the slot; a destination is copied there
 * too, a recvmsg's source address goes to the caller's memory. */
static void sqe_fill_msg(struct io_uring_sqe *sqe, const struct io_req *q, struct io_slot *s,
			 unsigned n)
{
	s->msg = (struct msghdr){ .msg_iov = s->iov, .msg_iovlen = n };
	if (q->op == OP_RECVMSG) {
		s->msg.msg_name = (void *)q->addr;
		s->msg.msg_namelen = q->addr ? sizeof(struct sockaddr_storage) : 0;
		io_uring_prep_recvmsg(sqe, q->fd, &s->msg, (unsigned)q->msg_flags);
		return;
	}
	if (q->addr) {
		memcpy(&s->u.addr, q->addr, q->addrlen);
		s->msg.msg_name = &s->u.addr;
		s->msg.msg_namelen = q->addrlen;
	}
	io_uring_prep_sendmsg(sqe, q->fd, &s->msg, (unsigned)q->msg_flags);
}

/* An operation without arrays; what the kernel reads goes in the slot. */
static void sqe_fill_noarr(struct io_uring_sqe *sqe, const struct io_req *q, struct io_slot *s)
{
	switch (q->op) {
	case OP_FSYNC:
		io_uring_prep_fsync(sqe, q->fd, (unsigned)q->msg_flags);
		break;
	case OP_CLOSE:
		io_uring_prep_close(sqe, q->fd);
		break;
	case OP_POLL:
		io_uring_prep_poll_add(sqe, q->fd, (unsigned)q->msg_flags);
		break;
	case OP_TIMEOUT:
		s->u.ts = (struct __kernel_timespec){ (int64_t)(q->file_off / 1000000000),
						      (long long)(q->file_off % 1000000000) };
		io_uring_prep_timeout(sqe, &s->u.ts, 0, 0);
		break;
	case OP_ACCEPT:
		io_uring_prep_accept(sqe, q->fd, NULL, NULL, q->msg_flags);
		break;
	case OP_CONNECT:
		memcpy(&s->u.addr, q->addr, q->addrlen);
		io_uring_prep_connect(sqe, q->fd, (struct sockaddr *)&s->u.addr, q->addrlen);
		break;
	case OP_RECV_MULTI:	/* the kernel picks a buffer of the pool's group */
		io_uring_prep_recv_multishot(sqe, q->fd, NULL, 0, q->msg_flags);
		sqe->flags |= IOSQE_BUFFER_SELECT;
		sqe->buf_group = q->pool->bgid;
		break;
	default:
		kgci_fatal("kgc_io: operation %d has arrays", (int)q->op);
	}
}

/* fixed: the buffer's index in the ring's registered table (a pinned
 * array: io_fixed.c), or -1 */
static void sqe_fill(struct io_uring_sqe *sqe, const struct io_req *q, struct io_slot *s,
		     char *p, size_t len, unsigned n, int fixed)
{
	switch (q->op) {
	case OP_READ:
		if (fixed >= 0)
			io_uring_prep_read_fixed(sqe, q->fd, p, (unsigned)len, q->file_off, fixed);
		else
			io_uring_prep_read(sqe, q->fd, p, (unsigned)len, q->file_off);
		break;
	case OP_WRITE:
		if (fixed >= 0)
			io_uring_prep_write_fixed(sqe, q->fd, p, (unsigned)len, q->file_off, fixed);
		else
			io_uring_prep_write(sqe, q->fd, p, (unsigned)len, q->file_off);
		break;
	case OP_READV:
	case OP_WRITEV:
		if (q->op == OP_READV)
			io_uring_prep_readv(sqe, q->fd, s->iov, n, q->file_off);
		else
			io_uring_prep_writev(sqe, q->fd, s->iov, n, q->file_off);
		if (fixed >= 0) {	/* every iovec in registered buffer fixed */
			sqe->opcode = q->op == OP_READV ? IO_OP_READV_FIXED : IO_OP_WRITEV_FIXED;
			sqe->buf_index = (uint16_t)fixed;
		}
		break;
	case OP_RECV:
		io_uring_prep_recv(sqe, q->fd, p, len, q->msg_flags);
		break;
	case OP_SEND:
		io_uring_prep_send(sqe, q->fd, p, len, q->msg_flags);
		break;
	case OP_SENDMSG:
	case OP_RECVMSG:
		sqe_fill_msg(sqe, q, s, n);
		break;
	default:
		sqe_fill_noarr(sqe, q, s);
	}
}

/* The operation in slot s (arrays held, iovecs filled) into sqe: r->lock
 * held, managed. */
static void queue_sqe(struct kgc_io_ring *r, struct kgc_thread *t, const struct io_req *q,
		      struct io_slot *s, unsigned n, struct io_uring_sqe *sqe)
{
	int fixed = -1;

	if (q->op == OP_READ || q->op == OP_WRITE ||
	    ((q->op == OP_READV || q->op == OP_WRITEV) && r->vec_fixed)) {
		kgci_io_fixed_sync(r, t);	/* arrays pinned by the slot: may go native */
		fixed = kgci_io_fixed_index_all(r, s->arr, n);
	}
	if (n)
		atomic_fetch_add_explicit(&r->h->io_stat[fixed >= 0 ? IOS_FIXED : IOS_PLAIN], 1,
					  memory_order_relaxed);
	sqe_fill(sqe, q, s, n ? s->iov[0].iov_base : NULL, n ? s->iov[0].iov_len : 0, n, fixed);
	sqe->user_data = (uint64_t)(s - r->slots);
	kgci_io_chain(r, s);
	r->last_sqe = sqe;
	r->last_thread = t;
}

/* Slots from i on (by next_free) to io_uring, in order. */
static void defer_to_uring(struct kgc_io_ring *r, struct kgc_thread *t, uint32_t i)
{
	while (i != IO_NONE) {
		struct io_slot *s = &r->slots[i];
		unsigned n = __atomic_load_n(&s->narr, __ATOMIC_RELAXED);
		struct io_req q = { n == 1 ? OP_READ : OP_READV, s->fd, 0, s->off, s->user_data, NULL, 0,
				    NULL };
		struct io_uring_sqe *sqe = kgci_io_get_sqe(r, t);

		i = s->next_free;
		if (sqe) {
			queue_sqe(r, t, &q, s, n, sqe);
			r->last_thread = r->def_thread;	/* kgc_io_set_flags: its preparer's */
		} else {	/* the ring cannot take it: its completion says so */
			kgci_io_inline_done(r, s, -EBUSY);
			if (r->efd >= 0)	/* and an event loop hears of it */
				(void)eventfd_write(r->efd, 1);
		}
	}
}

/*
 * A batch of large reads is split: its second half goes to io_uring first
 * (a worker copies it on another CPU) while this thread copies the first
 * half. Under DEFER_SPLIT bytes one thread's copy is cheaper than waking a
 * worker.
 */
#define DEFER_SPLIT	((size_t)512 << 10)
static void defer_split(struct kgc_io_ring *r, struct kgc_thread *t)
{
	uint32_t i, half;

	if (r->def_n < 2 || r->def_end - r->slots[r->def_head].off < DEFER_SPLIT)
		return;
	half = r->def_n / 2;
	for (i = r->def_head; --half;)
		i = r->slots[i].next_free;
	defer_to_uring(r, t, r->slots[i].next_free);
	r->slots[i].next_free = IO_NONE;
	r->def_tail = i;
	(void)kgci_io_submit_locked(r, t);	/* an error: the reap reports it */
}

void kgci_io_defer_flush(struct kgc_io_ring *r, struct kgc_thread *t)
{
	if (r->def_head == IO_NONE)
		return;
	defer_split(r, t);
	/* what the library could not do goes to io_uring, in prep order */
	defer_to_uring(r, t, kgci_io_inline_batch(r, t));
}

static size_t bufs_len(const struct kgc_io_buf *bufs, unsigned n)
{
	size_t len = 0;

	for (unsigned i = 0; i < n; i++)
		len += bufs[i].length;
	return len;
}

/* Ring r: r->lock held, managed, objs the arrays now. A read the library
 * may do (io_inline.c) is deferred to the next submit; anything else goes
 * after the reads deferred before it. */
static int queue_locked(struct kgc_io_ring *r, struct kgc_thread *t, const struct io_req *q,
			const struct kgc_io_buf *bufs, const kgc_obj *objs, unsigned n)
{
	bool rd = q->op == OP_READ || q->op == OP_READV;
	size_t len = rd ? bufs_len(bufs, n) : 0;
	bool defer = rd && kgci_io_inline_fits(r, len, q->file_off);
	struct io_uring_sqe *sqe = NULL;
	struct io_slot *s;

	if (!defer || !kgci_io_defer_extends(r, t, q->fd, q->file_off, n))
		kgci_io_defer_flush(r, t);
	if (!(s = kgci_io_slot_get(r)))
		return IO_FAIL(EAGAIN, "%s: %s: %u operations in flight (reap first)", op_name[q->op],
			       r->name, r->nslots);
	/* an sqe now only when the SQ is full (a deferred read needs none) */
	if (!defer && !io_uring_sq_space_left(&r->ur) && !(sqe = kgci_io_get_sqe(r, t))) {
		s->next_free = r->free_head;
		r->free_head = (uint32_t)(s - r->slots);
		return IO_FAIL(EAGAIN, "%s: %s: submission queue full", op_name[q->op], r->name);
	}
	for (unsigned i = 0; i < n; i++)
		s->iov[i] = (struct iovec){ (char *)kgc_array_data(objs[i]) + bufs[i].offset,
					    bufs[i].length };
	kgci_io_slot_hold(r, s, objs, n, q->user_data);
	s->fd = q->fd;
	if ((s->pool = q->pool))
		q->pool->users++;
	if (defer) {
		kgci_io_defer_add(r, t, s, n, q->file_off, len);
		r->last_sqe = NULL;	/* kgc_io_set_flags: nothing to flag */
		return 0;
	}
	if (!sqe)
		sqe = io_uring_get_sqe(&r->ur);	/* there is room: r->lock held since */
	queue_sqe(r, t, q, s, n, sqe);
	return 0;
}

static int prep(struct kgc_io_ring *r, struct kgc_thread *t, const struct io_req *q,
		const struct kgc_io_buf *bufs, unsigned n)
{
	const char *what = op_name[q->op];
	kgc_obj objs[KGC_IO_IOV_MAX];
	struct kgc_frame f;
	char *p;
	int err;

	if (!r)
		return IO_FAIL(EINVAL, "%s: NULL ring", what);
	if ((err = kgci_io_check(r, t, what)))
		return err;
	if (!bufs || n == 0 || n > KGC_IO_IOV_MAX)
		return IO_FAIL(EINVAL, "%s: %u buffers (1..%u)", what, n, KGC_IO_IOV_MAX);
	for (unsigned i = 0; i < n; i++)
		if ((err = buf_check(r->h, what, i, &bufs[i], &objs[i], &p)))
			return err;
	/* taking the lock, doing the reads deferred before this one and
	 * submitting to make room may each go native (a collection may move
	 * the arrays): objs is a frame until the slot holds them */
	kgc_frame_push(t, &f, objs, n, NULL);
	kgci_io_lock(r, t);
	err = queue_locked(r, t, q, bufs, objs, n);
	kgc_frame_pop(t, &f);
	pthread_mutex_unlock(&r->lock);
	return err;
}

static int prep1(struct kgc_io_ring *r, struct kgc_thread *t, struct io_req q, kgc_obj *array,
		 size_t offset, size_t length)
{
	struct kgc_io_buf b = { array, offset, length };

	return prep(r, t, &q, &b, 1);
}

KGC_API int kgc_io_prep_read(kgc_io_ring *r, kgc_thread *t, int fd, kgc_obj *array, size_t offset,
			 size_t length, uint64_t file_off, uint64_t user_data)
{
	return prep1(r, t, (struct io_req){ OP_READ, fd, 0, file_off, user_data, NULL, 0, NULL }, array, offset, length);
}

KGC_API int kgc_io_prep_write(kgc_io_ring *r, kgc_thread *t, int fd, kgc_obj *array, size_t offset,
			  size_t length, uint64_t file_off, uint64_t user_data)
{
	return prep1(r, t, (struct io_req){ OP_WRITE, fd, 0, file_off, user_data, NULL, 0, NULL }, array, offset, length);
}

KGC_API int kgc_io_prep_recv(kgc_io_ring *r, kgc_thread *t, int sockfd, kgc_obj *array, size_t offset,
			 size_t length, int msg_flags, uint64_t user_data)
{
	return prep1(r, t, (struct io_req){ OP_RECV, sockfd, msg_flags, 0, user_data, NULL, 0, NULL }, array, offset,
		     length);
}

KGC_API int kgc_io_prep_send(kgc_io_ring *r, kgc_thread *t, int sockfd, kgc_obj *array, size_t offset,
			 size_t length, int msg_flags, uint64_t user_data)
{
	return prep1(r, t, (struct io_req){ OP_SEND, sockfd, msg_flags, 0, user_data, NULL, 0, NULL }, array, offset,
		     length);
}

KGC_API int kgc_io_prep_readv(kgc_io_ring *r, kgc_thread *t, int fd, const struct kgc_io_buf *bufs,
			  unsigned nbufs, uint64_t file_off, uint64_t user_data)
{
	return prep(r, t, &(struct io_req){ OP_READV, fd, 0, file_off, user_data, NULL, 0, NULL }, bufs, nbufs);
}

KGC_API int kgc_io_prep_writev(kgc_io_ring *r, kgc_thread *t, int fd, const struct kgc_io_buf *bufs,
			   unsigned nbufs, uint64_t file_off, uint64_t user_data)
{
	return prep(r, t, &(struct io_req){ OP_WRITEV, fd, 0, file_off, user_data, NULL, 0, NULL }, bufs, nbufs);
}

/* The operations without arrays: r and t checked, then queued. */
static int prep0(struct kgc_io_ring *r, struct kgc_thread *t, const struct io_req *q)
{
	int err;

	if (!r)
		return IO_FAIL(EINVAL, "%s: NULL ring", op_name[q->op]);
	if ((err = kgci_io_check(r, t, op_name[q->op])))
		return err;
	kgci_io_lock(r, t);
	err = queue_locked(r, t, q, NULL, NULL, 0);
	pthread_mutex_unlock(&r->lock);
	return err;
}

KGC_API int kgc_io_prep_fsync(kgc_io_ring *r, kgc_thread *t, int fd, unsigned fsync_flags,
			  uint64_t user_data)
{
	if (fsync_flags & ~IORING_FSYNC_DATASYNC)
		return IO_FAIL(EINVAL, "kgc_io_prep_fsync: fsync_flags %#x (0 or IORING_FSYNC_DATASYNC)",
			       fsync_flags);
	return prep0(r, t, &(struct io_req){ OP_FSYNC, fd, (int)fsync_flags, 0, user_data, NULL, 0, NULL });
}

KGC_API int kgc_io_prep_close(kgc_io_ring *r, kgc_thread *t, int fd, uint64_t user_data)
{
	return prep0(r, t, &(struct io_req){ OP_CLOSE, fd, 0, 0, user_data, NULL, 0, NULL });
}

KGC_API int kgc_io_prep_poll(kgc_io_ring *r, kgc_thread *t, int fd, unsigned poll_mask,
			 uint64_t user_data)
{
	if (!poll_mask || poll_mask > 0xffff)
		return IO_FAIL(EINVAL, "kgc_io_prep_poll: poll_mask %#x (POLLIN, POLLOUT, ...)", poll_mask);
	return prep0(r, t, &(struct io_req){ OP_POLL, fd, (int)poll_mask, 0, user_data, NULL, 0, NULL });
}

KGC_API int kgc_io_prep_timeout(kgc_io_ring *r, kgc_thread *t, uint64_t ns, uint64_t user_data)
{
	if (ns > INT64_MAX)
		return IO_FAIL(EINVAL, "kgc_io_prep_timeout: %llu ns (at most 2^63-1)", (unsigned long long)ns);
	return prep0(r, t, &(struct io_req){ OP_TIMEOUT, -1, 0, ns, user_data, NULL, 0, NULL });
}

KGC_API int kgc_io_prep_accept(kgc_io_ring *r, kgc_thread *t, int sockfd, int flags,
			   uint64_t user_data)
{
	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
		return IO_FAIL(EINVAL, "kgc_io_prep_accept: flags %#x (SOCK_NONBLOCK, SOCK_CLOEXEC)",
			       (unsigned)flags);
	return prep0(r, t, &(struct io_req){ OP_ACCEPT, sockfd, flags, 0, user_data, NULL, 0, NULL });
}

KGC_API int kgc_io_prep_connect(kgc_io_ring *r, kgc_thread *t, int sockfd, const struct sockaddr *addr,
			    unsigned addrlen, uint64_t user_data)
{
	if (!addr)
		return IO_FAIL(EINVAL, "kgc_io_prep_connect: NULL address");
	if (!addrlen || addrlen > sizeof(struct sockaddr_storage))
		return IO_FAIL(EINVAL, "kgc_io_prep_connect: addrlen %u (1..%zu)", addrlen,
			       sizeof(struct sockaddr_storage));
	return prep0(r, t, &(struct io_req){ OP_CONNECT, sockfd, 0, 0, user_data, addr, addrlen, NULL });
}

KGC_API int kgc_io_prep_recv_multishot(kgc_io_ring *r, kgc_thread *t, int sockfd, kgc_io_pool *p,
				       int msg_flags, uint64_t user_data)
{
	if (!p || p->r != r)
		return IO_FAIL(EINVAL, "kgc_io_prep_recv_multishot: pool %p is not one of %s", (void *)p,
			       r ? r->name : "a NULL ring");
	return prep0(r, t, &(struct io_req){ OP_RECV_MULTI, sockfd, msg_flags, 0, user_data, NULL, 0, p });
}

KGC_API int kgc_io_set_flags(kgc_io_ring *r, kgc_thread *t, unsigned flags)
{
	static const struct { unsigned kgc, iosqe; } map[] = {
		{ KGC_IO_LINK, IOSQE_IO_LINK }, { KGC_IO_HARDLINK, IOSQE_IO_HARDLINK },
		{ KGC_IO_DRAIN, IOSQE_IO_DRAIN }, { KGC_IO_ASYNC, IOSQE_ASYNC },
		{ KGC_IO_FIXED_FILE, IOSQE_FIXED_FILE },
	};
	int err;

	if (flags & ~(unsigned)(KGC_IO_LINK | KGC_IO_HARDLINK | KGC_IO_DRAIN | KGC_IO_ASYNC |
				KGC_IO_FIXED_FILE | KGC_IO_SKIP_SUCCESS))
		return IO_FAIL(EINVAL, "kgc_io_set_flags: flags %#x (KGC_IO_LINK, _HARDLINK, _DRAIN, _ASYNC, "
			       "_FIXED_FILE, _SKIP_SUCCESS)", flags);
	if ((err = kgci_io_begin(r, t, "kgc_io_set_flags", false)))
		return err;
	kgci_io_defer_flush(r, t);	/* a deferred read left for io_uring can take flags */
	if (!r->last_sqe || r->last_thread != t) {
		err = IO_FAIL(ENOENT, "kgc_io_set_flags: %s: the last operation queued is %s", r->name,
			      r->last_sqe ? "another thread's" : "submitted (or none was)");
	} else if (!(err = kgci_io_skip_set(r, r->last_sqe, flags))) {
		for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (flags & map[i].kgc)
				r->last_sqe->flags |= map[i].iosqe;
	}
	pthread_mutex_unlock(&r->lock);
	return err;
}

KGC_API int kgc_io_prep_sendmsg(kgc_io_ring *r, kgc_thread *t, int sockfd, const struct kgc_io_buf *bufs,
			    unsigned nbufs, const struct sockaddr *to, unsigned tolen, int msg_flags,
			    uint64_t user_data)
{
	if (tolen > sizeof(struct sockaddr_storage) || (!to) != (!tolen))
		return IO_FAIL(EINVAL, "kgc_io_prep_sendmsg: to %p, tolen %u (both set, at most %zu; or "
			       "neither)", (const void *)to, tolen, sizeof(struct sockaddr_storage));
	return prep(r, t, &(struct io_req){ OP_SENDMSG, sockfd, msg_flags, 0, user_data, to, tolen, NULL },
		    bufs, nbufs);
}

KGC_API int kgc_io_prep_recvmsg(kgc_io_ring *r, kgc_thread *t, int sockfd, const struct kgc_io_buf *bufs,
			    unsigned nbufs, struct sockaddr_storage *from, int msg_flags,
			    uint64_t user_data)
{
	if (from && r && in_heap(r->h, from))
		return IO_FAIL(EINVAL, "kgc_io_prep_recvmsg: from %p lies in the heap", (void *)from);
	return prep(r, t, &(struct io_req){ OP_RECVMSG, sockfd, msg_flags, 0, user_data, from, 0, NULL },
		    bufs, nbufs);
}
