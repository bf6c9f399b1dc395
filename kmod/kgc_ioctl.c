// SPDX-License-Identifier: GPL-2.0
/*
 * kgc ioctls: copy the argument in, validate, dispatch, copy the result
 * out. No lock is held across a user copy.
 *
 * Errors common to all commands:
 *   -ENOTTY  unknown command
 *   -EFAULT  bad argument or bitmap pointer
 *   -EINVAL  nonzero flags/reserved fields, bad sizes, bad region ranges
 *   -ENODEV  COMMIT, UNCOMMIT, PIN_QUERY, PIN_WATCH, MOVE before HEAP_CREATE
 *            (as mmap)
 *   -EBADF   HEAP_CREATE, COMMIT, UNCOMMIT, MOVE on an fd not open for
 *            writing
 *   -EINTR   fatal signal while waiting for the heap lock, populating or
 *            walking a PIN_WATCH range
 * HEAP_CREATE: -EEXIST on a second create, -E2BIG over max_heap_mb.
 * UNCOMMIT, MOVE: -EBUSY with busy_region set (the struct is copied out).
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "kgc_internal.h"

union kgc_ioctl_arg {
	struct kgc_info info;
	struct kgc_heap_create create;
	struct kgc_region_range range;
	struct kgc_pin_query pin;
	struct kgc_dev_stats stats;
	struct kgc_pin_watch watch;
	struct kgc_region_move move;
};

static int kgc_ioctl_info(struct kgc_info *info)
{
	u64 max_bytes = kgc_max_heap_bytes();

	info->api_version = KGC_API_VERSION;
	info->page_size = PAGE_SIZE;
	info->features = KGC_FEAT_REGION_TABLE | KGC_FEAT_PIN_QUERY |
			 KGC_FEAT_STATS | KGC_FEAT_DEBUGFS | KGC_FEAT_POPULATE |
			 KGC_FEAT_PIN_SELECT | KGC_FEAT_SHMEM |
			 KGC_FEAT_PIN_WATCH | KGC_FEAT_REGION_MOVE;
	info->region_shift_min = KGC_REGION_SHIFT_MIN;
	info->region_shift_max = KGC_REGION_SHIFT_MAX;
	info->max_heap_bytes = max_bytes;
	info->max_regions = min_t(u64, max_bytes >> KGC_REGION_SHIFT_MIN,
				  U32_MAX);
	info->region_rec_size = sizeof(struct kgc_region_rec);
	info->table_offset = kgc_table_offset();
	info->huge_region_shift = kgc_huge_region_shift();
	return 0;
}

static int kgc_ioctl_pin_query(struct kgc_heap *heap,
			       struct kgc_pin_query *pin)
{
	void __user *ubitmap = u64_to_user_ptr(pin->bitmap_ptr);
	size_t words, bytes;
	u64 *bitmap, *select = NULL;
	int ret;

	if (pin->flags & ~KGC_PIN_QUERY_SELECT)
		return -EINVAL;
	if (memchr_inv(pin->reserved, 0, sizeof(pin->reserved)))
		return -EINVAL;
	if (!pin->count || pin->count > heap->nr_regions)
		return -EINVAL;

	words = DIV_ROUND_UP(pin->count, 64);
	bytes = words * sizeof(u64);
	/* Result and (with SELECT) selection in one allocation. */
	bitmap = kvzalloc(pin->flags & KGC_PIN_QUERY_SELECT ? 2 * bytes : bytes,
			  GFP_KERNEL_ACCOUNT);
	if (!bitmap)
		return -ENOMEM;

	if (pin->flags & KGC_PIN_QUERY_SELECT) {
		select = bitmap + words;
		ret = -EFAULT;
		if (copy_from_user(select, ubitmap, bytes))
			goto free_bitmap;
		ret = -EINVAL;
		if (pin->count % 64 &&
		    select[words - 1] & ~GENMASK_ULL(pin->count % 64 - 1, 0))
			goto free_bitmap;
	}

	ret = kgc_heap_pin_query(heap, pin->first, pin->count, select, bitmap,
				 &pin->nr_pinned);
	if (ret)
		goto free_bitmap;
	if (copy_to_user(ubitmap, bitmap, bytes))
		ret = -EFAULT;

free_bitmap:
	kvfree(bitmap);
	return ret;
}

static int kgc_ioctl_pin_watch(struct kgc_heap *heap,
			       struct kgc_pin_watch *w)
{
	void __user *ubitmap = u64_to_user_ptr(w->bitmap_ptr);
	size_t words, bytes;
	u64 *bitmap;
	int ret;

	if (w->op > KGC_WATCH_FIRED)
		return -EINVAL;
	if (memchr_inv(w->reserved, 0, sizeof(w->reserved)))
		return -EINVAL;
	if (!w->count || w->first >= heap->nr_regions ||
	    w->count > heap->nr_regions - w->first)
		return -EINVAL;

	words = DIV_ROUND_UP(w->count, 64);
	bytes = words * sizeof(u64);
	bitmap = kvzalloc(bytes, GFP_KERNEL_ACCOUNT);
	if (!bitmap)
		return -ENOMEM;
	if (w->op != KGC_WATCH_FIRED) {
		ret = -EFAULT;
		if (copy_from_user(bitmap, ubitmap, bytes))
			goto free_bitmap;
		ret = -EINVAL;
		if (w->count % 64 &&
		    bitmap[words - 1] & ~GENMASK_ULL(w->count % 64 - 1, 0))
			goto free_bitmap;
	}
	ret = kgc_heap_pin_watch(heap, w, bitmap);
	if (!ret && w->op == KGC_WATCH_FIRED &&
	    copy_to_user(ubitmap, bitmap, bytes))
		ret = -EFAULT;
free_bitmap:
	kvfree(bitmap);
	return ret;
}

static int kgc_ioctl_stats(struct kgc_heap *heap, struct kgc_dev_stats *st)
{
	st->heap_pages = kgc_heap_nr_pages(heap);
	st->faults = atomic64_read(&heap->faults);
	st->commits = atomic64_read(&heap->commits);
	st->uncommits = atomic64_read(&heap->uncommits);
	st->uncommit_busy = atomic64_read(&heap->uncommit_busy);
	st->pin_queries = atomic64_read(&heap->pin_queries);
	st->pages_freed = atomic64_read(&heap->pages_freed);
	st->moves = atomic64_read(&heap->moves);
	st->move_busy = atomic64_read(&heap->move_busy);
	st->move_copied_pages = atomic64_read(&heap->move_copied);
	return 0;
}

long kgc_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kgc_heap *heap = file->private_data;
	void __user *uarg = (void __user *)arg;
	union kgc_ioctl_arg u;
	size_t size = _IOC_SIZE(cmd);
	int ret;

	switch (cmd) {
	case KGC_IOC_INFO:
	case KGC_IOC_STATS:
		/* Output only. */
		memset(&u, 0, sizeof(u));
		break;
	case KGC_IOC_HEAP_CREATE:
	case KGC_IOC_REGION_COMMIT:
	case KGC_IOC_REGION_UNCOMMIT:
	case KGC_IOC_REGION_MOVE:
		/* They change the heap: a writable fd only, checked first. */
		if (!(file->f_mode & FMODE_WRITE))
			return -EBADF;
		fallthrough;
	case KGC_IOC_PIN_QUERY:
	case KGC_IOC_PIN_WATCH:
		if (copy_from_user(&u, uarg, size))
			return -EFAULT;
		break;
	default:
		return -ENOTTY;
	}

	switch (cmd) {
	case KGC_IOC_INFO:
		ret = kgc_ioctl_info(&u.info);
		break;
	case KGC_IOC_HEAP_CREATE:
		ret = kgc_heap_create(heap, &u.create);
		break;
	case KGC_IOC_REGION_COMMIT:
		ret = kgc_heap_created(heap) ?
		      kgc_heap_commit(heap, &u.range) : -ENODEV;
		break;
	case KGC_IOC_REGION_UNCOMMIT:
		ret = kgc_heap_created(heap) ?
		      kgc_heap_uncommit(heap, &u.range) : -ENODEV;
		break;
	case KGC_IOC_PIN_QUERY:
		ret = kgc_heap_created(heap) ?
		      kgc_ioctl_pin_query(heap, &u.pin) : -ENODEV;
		break;
	case KGC_IOC_REGION_MOVE:
		ret = kgc_heap_created(heap) ?
		      kgc_heap_move(heap, &u.move) : -ENODEV;
		break;
	case KGC_IOC_STATS:
		ret = kgc_ioctl_stats(heap, &u.stats);
		break;
	case KGC_IOC_PIN_WATCH:
		ret = kgc_heap_created(heap) ?
		      kgc_ioctl_pin_watch(heap, &u.watch) : -ENODEV;
		break;
	default:
		ret = -ENOTTY;
		break;
	}
	/* UNCOMMIT, MOVE: busy_region is part of the -EBUSY answer. */
	if (ret == -EBUSY && copy_to_user(uarg, &u, size))
		return -EFAULT;
	if (ret)
		return ret;

	if (copy_to_user(uarg, &u, size))
		return -EFAULT;
	return 0;
}
