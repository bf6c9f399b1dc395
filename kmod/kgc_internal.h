/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kgc.ko internals shared by the module's source files.
 *
 * Locking (outermost first):
 *
 *   mmap_lock (core mm)
 *     heap->lock       mutex: serialises create, uncommit and pin queries
 *                      of one heap, and each region of a debugfs dump.
 *                      Always taken killable (-EINTR); long walks under
 *                      it cond_resched() and stop on a fatal signal.
 *                      COMMIT does not take it while it populates (it
 *                      only adds pages), only to count each populated
 *                      region's pages afterwards. Never held across
 *                      copy_{from,to}_user, so no heap->lock -> mmap_lock
 *                      edge exists.
 *       i_rwsem of the heap's shmem inode (vfs_fallocate() in uncommit
 *                      and move)
 *       folio locks    (move: a source folio, then a destination one on
 *                      its copy path; see kgc_move.c)
 *       heap->slot_lock  spinlock: heap->regions[] and the module-owned
 *                      fields of the region table. Never held across
 *                      allocation, sleeping or unmapping.
 *   kgc_heaps_lock     spinlock: the list of heaps (module-wide count).
 *
 * Faults on heap mappings are shmem's and take none of these.
 *
 * mmap does not take heap->lock: it only reads the heap geometry, which is
 * immutable once heap->created is set (store-release / load-acquire).
 */
#ifndef _KGC_INTERNAL_H
#define _KGC_INTERNAL_H

#include <linux/atomic.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/poll.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "kgc.h"

#define KGC_NAME		"kgc"

/* Hard ceiling for the max_heap_mb parameter (64 GiB, 16M pages). */
#define KGC_MAX_HEAP_MB_LIMIT	65536U

/* Kernel-side view of a region; the user-visible copy lives in the table. */
struct kgc_region {
	u32 nr_pages;		/* resident pages seen at the last refresh */
	u32 flags;		/* KGC_RF_* */
	u32 kernel_pins;	/* pinned pages seen at the last refresh */
	u32 pin_hint;		/* its first pinned page then, if any */
};

struct kgc_heap {
	struct mutex lock;		/* ioctls, debugfs; see top */
	spinlock_t slot_lock;		/* regions[], table */
	struct inode *inode;		/* hosts the table's address_space */
	struct file *shm;		/* the heap's memory (shmem) */
	struct list_head node;		/* in the module's list of heaps */
	u32 id;
	bool created;			/* smp_store_release()d by HEAP_CREATE */

	/* Geometry: written once under @lock before @created is set. */
	unsigned int region_shift;
	u32 nr_regions;
	unsigned long region_pages;
	unsigned long nr_pages;
	u64 heap_size;
	bool huge;			/* on kgc_shm_mnt_huge, else no THP */
	size_t table_size;
	pgoff_t table_pgoff;

	struct kgc_region *regions;	/* nr_regions */
	struct kgc_region_rec *table;	/* vmalloc, memcg-charged, mapped */

	struct dentry *dentry;

	/* Pin-drop watches (kgc_watch.c): under @lock but nr_fired. */
	unsigned long *watch_armed;	/* nr_regions bits */
	unsigned long *watch_fired;	/* nr_regions bits */
	u32 nr_armed;
	u32 watch_cursor;
	atomic_t nr_fired;
	struct delayed_work watch_work;	/* queued only while nr_armed */
	wait_queue_head_t watch_wq;	/* poll */

	atomic64_t faults;
	atomic64_t commits;
	atomic64_t uncommits;
	atomic64_t uncommit_busy;
	atomic64_t pin_queries;
	atomic64_t pages_freed;
	atomic64_t moves;
	atomic64_t move_busy;
	atomic64_t move_copied;
};

/* kgc_main.c */
extern unsigned int kgc_max_heap_mb;
extern struct vfsmount *kgc_shm_mnt_huge;
extern struct vfsmount *kgc_shm_mnt_small;
extern unsigned int kgc_watch_interval_ms;

/* kgc_heap.c */
struct kgc_heap *kgc_heap_alloc(void);
void kgc_heap_free(struct kgc_heap *heap);
int kgc_heap_create(struct kgc_heap *heap, struct kgc_heap_create *arg);
unsigned long kgc_heap_nr_pages(struct kgc_heap *heap);
long kgc_pages_held(void);
int kgc_heap_commit(struct kgc_heap *heap, struct kgc_region_range *arg);
int kgc_heap_uncommit(struct kgc_heap *heap, struct kgc_region_range *arg);
int kgc_heap_pin_query(struct kgc_heap *heap, u32 first, u32 count,
		       const u64 *select, u64 *bitmap, u32 *nr_pinned);
u32 kgc_region_kernel_pins(struct kgc_heap *heap, u32 region);
u32 kgc_region_refresh(struct kgc_heap *heap, u32 region);
bool kgc_region_hint_pinned(struct kgc_heap *heap, u32 region);
u64 kgc_max_heap_bytes(void);
unsigned int kgc_huge_region_shift(void);

static inline bool kgc_heap_created(struct kgc_heap *heap)
{
	/* Pairs with smp_store_release() in kgc_heap_create(). */
	return smp_load_acquire(&heap->created);
}

/* kgc_mmap.c */
u64 kgc_table_offset(void);
int kgc_mmap(struct file *file, struct vm_area_struct *vma);
unsigned long kgc_get_unmapped_area(struct file *file, unsigned long addr,
				    unsigned long len, unsigned long pgoff,
				    unsigned long flags);

/* kgc_ioctl.c */
long kgc_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* kgc_watch.c */
void kgc_watch_init(struct kgc_heap *heap);
void kgc_watch_stop(struct kgc_heap *heap);
int kgc_watch_alloc(struct kgc_heap *heap, u32 nr_regions);
void kgc_watch_free(struct kgc_heap *heap);
int kgc_heap_pin_watch(struct kgc_heap *heap, struct kgc_pin_watch *w,
		       u64 *bitmap);
__poll_t kgc_poll(struct file *file, poll_table *wait);

/* kgc_move.c */
int kgc_heap_move(struct kgc_heap *heap, struct kgc_region_move *arg);

/* kgc_debugfs.c */
void kgc_debugfs_init(void);
void kgc_debugfs_exit(void);
void kgc_debugfs_heap_add(struct kgc_heap *heap);
void kgc_debugfs_heap_remove(struct kgc_heap *heap);

#endif /* _KGC_INTERNAL_H */
