// SPDX-License-Identifier: GPL-2.0
/*
 * kgc pin-drop watches: the library arms a watch on regions the kernel
 * pins (io_uring fixed buffers, O_DIRECT); the fd polls readable once the
 * kernel pins of a watched region are gone, so the collector learns it
 * can evacuate the region without waiting for a collection to look.
 *
 * The kernel has no unpin callback: while any watch is armed a delayed
 * work rechecks the armed regions every watch_interval_ms, at most
 * KGC_WATCH_BATCH of them per run (a cursor goes round). With no watch
 * armed the work is not queued: no timer, no wakeup.
 *
 * The recheck runs on system_wq: its CPU time is charged to no cgroup.
 * That is kept small rather than moved: a recheck of a region whose pin
 * lasts is one page-cache lookup (the page found pinned last time, see
 * kgc_region_hint_pinned()); only a region whose pinned page was unpinned
 * is walked again, once per folio, and then usually fires. So a heap costs
 * at most KGC_WATCH_BATCH lookups per watch_interval_ms (root's, >= 10 ms,
 * 100 by default) plus one walk per region per pin dropped, and a region
 * only stays armed while its owner keeps a kernel pin in it (io_uring
 * fixed buffers are charged to RLIMIT_MEMLOCK). ARM itself walks in the
 * caller's context.
 *
 * heap->lock guards watch_armed, watch_fired, nr_armed and the cursor;
 * nr_fired is atomic so that poll needs no lock.
 */
#include <linux/bitmap.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "kgc_internal.h"
#include "kgc_trace.h"

static void kgc_watch_schedule(struct kgc_heap *heap)
{
	lockdep_assert_held(&heap->lock);
	if (heap->nr_armed)
		schedule_delayed_work(&heap->watch_work,
				      msecs_to_jiffies(READ_ONCE(kgc_watch_interval_ms)));
}

/* Region @r's pins are gone: disarm and fire it. Caller holds heap->lock. */
static void kgc_watch_fire(struct kgc_heap *heap, u32 r)
{
	if (test_and_clear_bit(r, heap->watch_armed))
		heap->nr_armed--;
	if (!test_and_set_bit(r, heap->watch_fired))
		atomic_inc(&heap->nr_fired);
	trace_kgc_watch_fire(heap->id, r, heap->nr_armed);
}

static void kgc_watch_wake(struct kgc_heap *heap)
{
	wake_up_interruptible_poll(&heap->watch_wq,
				   EPOLLIN | EPOLLPRI | EPOLLRDNORM);
}

static void kgc_watch_work(struct work_struct *work)
{
	struct kgc_heap *heap = container_of(to_delayed_work(work),
					     struct kgc_heap, watch_work);
	u32 todo, r, cursor;
	bool fired = false;

	mutex_lock(&heap->lock);
	todo = min_t(u32, heap->nr_armed, KGC_WATCH_BATCH);
	cursor = heap->watch_cursor;
	while (todo--) {
		r = find_next_bit(heap->watch_armed, heap->nr_regions, cursor);
		if (r >= heap->nr_regions)
			r = find_first_bit(heap->watch_armed, heap->nr_regions);
		if (r >= heap->nr_regions)
			break;
		cursor = r + 1;
		if (!kgc_region_hint_pinned(heap, r) &&
		    !kgc_region_refresh(heap, r)) {
			kgc_watch_fire(heap, r);
			fired = true;
		}
		cond_resched();
	}
	heap->watch_cursor = cursor;
	kgc_watch_schedule(heap);
	mutex_unlock(&heap->lock);
	if (fired)
		kgc_watch_wake(heap);
}

void kgc_watch_init(struct kgc_heap *heap)
{
	INIT_DELAYED_WORK(&heap->watch_work, kgc_watch_work);
	init_waitqueue_head(&heap->watch_wq);
	atomic_set(&heap->nr_fired, 0);
}

/* Before the heap is freed: no recheck may run any more. */
void kgc_watch_stop(struct kgc_heap *heap)
{
	cancel_delayed_work_sync(&heap->watch_work);
}

int kgc_watch_alloc(struct kgc_heap *heap, u32 nr_regions)
{
	heap->watch_armed = bitmap_zalloc(nr_regions, GFP_KERNEL_ACCOUNT);
	heap->watch_fired = bitmap_zalloc(nr_regions, GFP_KERNEL_ACCOUNT);
	if (heap->watch_armed && heap->watch_fired)
		return 0;
	kgc_watch_free(heap);
	return -ENOMEM;
}

void kgc_watch_free(struct kgc_heap *heap)
{
	bitmap_free(heap->watch_armed);
	bitmap_free(heap->watch_fired);
	heap->watch_armed = NULL;
	heap->watch_fired = NULL;
}

/*
 * FIRED stopped by a fatal signal: its caller dies without the bits it
 * took, so they go back to the heap for the fd's other holders. @bitmap
 * holds what was taken from regions [first, first + n).
 */
static bool kgc_watch_unfire(struct kgc_heap *heap, u32 first, u32 n,
			     const u64 *bitmap)
{
	bool any = false;
	u32 i;

	for (i = 0; i < n; i++) {
		if (!(bitmap[i / 64] & (1ULL << (i % 64))))
			continue;
		if (!test_and_set_bit(first + i, heap->watch_fired))
			atomic_inc(&heap->nr_fired);
		any = true;
	}
	return any;
}

/*
 * KGC_IOC_PIN_WATCH on [first, first + count) (validated by the caller):
 * ARM/DISARM read @bitmap, FIRED fills it (zeroed by the caller).
 * -EINTR when a fatal signal stops the walk: ARM/DISARM keep what they
 * did so far, FIRED gives back every bit it took.
 */
int kgc_heap_pin_watch(struct kgc_heap *heap, struct kgc_pin_watch *w,
		       u64 *bitmap)
{
	u32 i, r;
	bool fired = false;
	int ret = 0;
	u64 bits;

	if (mutex_lock_killable(&heap->lock))
		return -EINTR;
	for (i = 0; i < w->count; i++) {
		r = w->first + i;
		switch (w->op) {
		case KGC_WATCH_ARM:
			bits = bitmap[i / 64];
			if (!(bits & (1ULL << (i % 64))) ||
			    test_bit(r, heap->watch_armed))
				break;
			if (!kgc_region_refresh(heap, r)) {
				kgc_watch_fire(heap, r);
				fired = true;
			} else {
				set_bit(r, heap->watch_armed);
				heap->nr_armed++;
			}
			break;
		case KGC_WATCH_DISARM:
			bits = bitmap[i / 64];
			if ((bits & (1ULL << (i % 64))) &&
			    test_and_clear_bit(r, heap->watch_armed))
				heap->nr_armed--;
			break;
		case KGC_WATCH_FIRED:
			if (test_and_clear_bit(r, heap->watch_fired)) {
				bitmap[i / 64] |= 1ULL << (i % 64);
				atomic_dec(&heap->nr_fired);
			}
			break;
		}
		if ((i % 1024) == 1023) {
			if (fatal_signal_pending(current)) {
				ret = -EINTR;
				break;
			}
			cond_resched();
		}
	}
	if (ret && w->op == KGC_WATCH_FIRED)
		fired = kgc_watch_unfire(heap, w->first, i + 1, bitmap);
	if (w->op == KGC_WATCH_ARM)
		kgc_watch_schedule(heap);
	else if (!heap->nr_armed)
		cancel_delayed_work(&heap->watch_work);	/* nothing to recheck */
	w->nr_armed = heap->nr_armed;
	mutex_unlock(&heap->lock);
	if (fired)
		kgc_watch_wake(heap);
	return ret;
}

__poll_t kgc_poll(struct file *file, poll_table *wait)
{
	struct kgc_heap *heap = file->private_data;

	/*
	 * The wait queue exists from open: an epoll set or a poll() that
	 * starts before HEAP_CREATE waits on it too, and learns of the
	 * first watch to fire. nr_fired stays 0 until then.
	 */
	poll_wait(file, &heap->watch_wq, wait);
	return atomic_read(&heap->nr_fired) ?
	       EPOLLIN | EPOLLPRI | EPOLLRDNORM : 0;
}
