/* SPDX-License-Identifier: MIT */
/*
 * array_region.c - bulk copies out of and into a primitive array (JNI's
 * Get/Set<Type>ArrayRegion): element index + count, bounds and type
 * checked.
 *
 * The copy runs in managed state, where no collection can start: a
 * collection needs every managed thread at a safepoint, and the copy
 * reaches one only between pieces of REGION_PIECE bytes. There, if a
 * collection is pending, it blocks like any safepoint - the array may move
 * - and then reads the array's address again from a frame of its own, which
 * the collector updated. So a piece is never copied from or to an address
 * the array has left, and a long copy holds up a collection for one piece
 * at most. No pin: the copy never delays a young collection's evacuation.
 */
#include <errno.h>
#include <string.h>
#include "gc_internal.h"

#define REGION_PIECE	((size_t)64 * 1024)	/* bytes between safepoint polls */
#define FAIL(err, ...)	(kgci_err_set((err), __VA_ARGS__), -(err))

struct region_copy {
	const char *what;
	kgc_obj *ref;
	enum kgc_prim type;
	size_t start, count;
	char *buf;		/* ordinary memory */
	bool in;		/* buf -> array (set) or array -> buf (get) */
};

/* q's array is a primitive array of q->type holding [start, start+count);
 * buf is outside the heap. Managed. Sets *shift (log2 element size). */
static int region_check(struct kgc_heap *h, const struct region_copy *q, unsigned *shift)
{
	kgc_obj o = q->ref ? *q->ref : NULL;
	size_t len, bytes;
	uint64_t hd;

	if (!o)
		return FAIL(EINVAL, "%s: NULL array%s", q->what, q->ref ? "" : " root");
	if (!in_heap(h, o) || region_of(h, o)->type == RT_FREE)
		return FAIL(EINVAL, "%s: %p is not an object of the thread's heap", q->what,
				    (void *)o);
	hd = *obj_hdr(o);
	if ((unsigned)q->type >= KGC_PRIM_COUNT || hdr_kind(hd) != KIND_PRIM_ARRAY ||
	    hdr_type(hd) != KGC_TYPE_PRIM_ARRAY(q->type))
		return FAIL(EINVAL, "%s: array %p is %s, not an array of element type %d", q->what,
				    (void *)o, hdr_kind(hd) == KIND_PRIM_ARRAY ? "a primitive array of another type" :
				    "not a primitive array", (int)q->type);
	len = kgc_array_length(o);
	if (q->start > len || q->count > len - q->start)
		return FAIL(ERANGE, "%s: elements [%zu, %zu + %zu) beyond array %p of length %zu",
				    q->what, q->start, q->start, q->count, (void *)o, len);
	*shift = (unsigned)hdr_info(hd);
	bytes = q->count << *shift;
	if (q->count && !q->buf)
		return FAIL(EINVAL, "%s: NULL buffer for %zu elements", q->what, q->count);
	if (bytes && q->buf < h->limit && q->buf + bytes > h->base)
		return FAIL(EINVAL, "%s: buffer %p (%zu bytes) lies in the heap (collections move "
				    "it: use a critical section or a pinned array)", q->what, (void *)q->buf,
				    bytes);
	return 0;
}

/* The copy, a piece at a time; between pieces a pending collection may
 * move the array (o: a frame of ours). Managed. */
static void region_move(struct kgc_thread *t, const struct region_copy *q, unsigned shift)
{
	size_t off = q->start << shift, total = q->count << shift;
	kgc_obj o = *q->ref;
	struct kgc_frame f;

	kgc_frame_push(t, &f, &o, 1, NULL);
	for (size_t done = 0; done < total;) {
		size_t n = total - done < REGION_PIECE ? total - done : REGION_PIECE;
		char *p = (char *)kgc_array_data(o) + off + done;

		if (q->in)
			memcpy(p, q->buf + done, n);
		else
			memcpy(q->buf + done, p, n);
		done += n;
		if (done < total &&
		    unlikely(atomic_load_explicit(&t->heap->sp.poll_word, memory_order_acquire)))
			kgci_sp_block(t);
	}
	kgc_frame_pop(t, &f);
	if (*q->ref != o)	/* a plain variable (managed callers): its new address */
		*q->ref = o;
}

static int region_copy(struct kgc_thread *t, const struct region_copy *q)
{
	bool was_native;
	unsigned shift;
	int err;

	kgci_thread_check(t, q->what);
	if (t->pub.crit_open)
		return FAIL(EPERM, "%s inside a critical section: thread '%s' (%u open)", q->what,
				    t->name, t->pub.crit_open);
	was_native = thread_state(t) != TS_MANAGED;
	if (was_native)		/* nothing moves while managed */
		thread_to_managed(t);
	err = region_check(t->heap, q, &shift);
	if (!err && q->count)
		region_move(t, q, shift);
	if (was_native)
		thread_set_native(t, TS_NATIVE);
	return err;
}

KGC_API int kgc_array_get_region(kgc_thread *t, kgc_obj *array, enum kgc_prim type, size_t start,
				 size_t count, void *buf)
{
	return region_copy(t, &(struct region_copy){ "kgc_array_get_region", array, type, start, count,
						     buf, false });
}

KGC_API int kgc_array_set_region(kgc_thread *t, kgc_obj *array, enum kgc_prim type, size_t start,
				 size_t count, const void *buf)
{
	return region_copy(t, &(struct region_copy){ "kgc_array_set_region", array, type, start, count,
						     (char *)buf, true });
}
