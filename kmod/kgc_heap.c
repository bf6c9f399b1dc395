// SPDX-License-Identifier: GPL-2.0
/*
 * kgc heap: geometry, the backing shmem file, commit/uncommit and pin
 * detection.
 *
 * The heap's memory is a shmem file of heap_size bytes, one per heap, on
 * a private tmpfs mount: huge=within_size when regions are at least a PMD
 * (2 MiB) in size, else huge=never (kgc_main.c). mmap puts
 * that file into the VMA (vma_set_file()), so shmem's own fault path
 * serves the heap: huge folios, swap, reclaim, migration and compaction,
 * NUMA policy (mbind) and memcg charging to the mapping's owner all come
 * from mm. The module never holds a page reference of its own.
 *
 * UNCOMMIT checks the regions' pins, then punches a hole in the file
 * (which unmaps the range from every mapping and drops the page cache's
 * references). A page the kernel pins (FOLL_PIN: io_uring fixed buffers,
 * O_DIRECT) is never freed under its pinner: the pin holds a reference.
 *
 * The region table's committed_pages and kernel_pins are refreshed by
 * COMMIT, UNCOMMIT, PIN_QUERY and the debugfs dump, not by each fault.
 */
#include <linux/fs.h>
#include <linux/falloc.h>
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/pagemap.h>
#include <linux/pagevec.h>
#include <linux/sched/signal.h>
#include <linux/shmem_fs.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "kgc_internal.h"
#include "kgc_trace.h"

static atomic_t kgc_heap_ids = ATOMIC_INIT(0);

/* Live heaps, for the module-wide page count. */
static LIST_HEAD(kgc_heaps);
static DEFINE_SPINLOCK(kgc_heaps_lock);

u64 kgc_max_heap_bytes(void)
{
	return (u64)READ_ONCE(kgc_max_heap_mb) << 20;
}

/* Pages of the heap's file: resident plus swapped out. */
unsigned long kgc_heap_nr_pages(struct kgc_heap *heap)
{
	struct inode *inode;

	if (!kgc_heap_created(heap))
		return 0;
	inode = file_inode(heap->shm);
	return READ_ONCE(inode->i_mapping->nrpages) +
	       READ_ONCE(SHMEM_I(inode)->swapped);
}

long kgc_pages_held(void)
{
	struct kgc_heap *heap;
	long n = 0;

	spin_lock(&kgc_heaps_lock);
	list_for_each_entry(heap, &kgc_heaps, node)
		n += kgc_heap_nr_pages(heap);
	spin_unlock(&kgc_heaps_lock);
	return n;
}

/*
 * log2 of the smallest region size whose heaps get huge folios now, 0 when
 * none do (shmem_enabled=deny, THP unsupported, no huge mount). Asks shmem
 * itself rather than copying its rules: the first folio of a PMD-sized
 * file on the huge mount is huge or not. Costs one transient huge page
 * (charged to the caller, which may also make the answer 0 at its limit).
 */
unsigned int kgc_huge_region_shift(void)
{
	unsigned int shift = 0;
	struct folio *folio;
	struct file *probe;

	if (!kgc_shm_mnt_huge)
		return 0;
	probe = shmem_file_setup_with_mnt(kgc_shm_mnt_huge, "kgc-probe",
					  HPAGE_PMD_SIZE, VM_NORESERVE);
	if (IS_ERR(probe))
		return 0;
	folio = shmem_read_folio_gfp(probe->f_mapping, 0,
				     mapping_gfp_mask(probe->f_mapping) |
				     __GFP_NORETRY | __GFP_NOWARN);
	if (!IS_ERR(folio)) {
		if (folio_test_pmd_mappable(folio))
			shift = HPAGE_PMD_SHIFT;
		folio_put(folio);
	}
	fput(probe);
	return shift;
}

struct kgc_heap *kgc_heap_alloc(void)
{
	struct kgc_heap *heap;

	heap = kzalloc(sizeof(*heap), GFP_KERNEL_ACCOUNT);
	if (!heap)
		return NULL;
	mutex_init(&heap->lock);
	spin_lock_init(&heap->slot_lock);
	INIT_LIST_HEAD(&heap->node);
	kgc_watch_init(heap);
	heap->id = atomic_inc_return(&kgc_heap_ids);
	return heap;
}

/*
 * Only called once no ioctl and no table mapping can exist. Heap mappings
 * hold the shmem file, not ours: they keep the memory until unmapped.
 */
void kgc_heap_free(struct kgc_heap *heap)
{
	kgc_watch_stop(heap);
	kgc_watch_free(heap);
	spin_lock(&kgc_heaps_lock);
	list_del(&heap->node);
	spin_unlock(&kgc_heaps_lock);
	if (heap->shm)
		fput(heap->shm);
	kvfree(heap->regions);
	vfree(heap->table);
	if (heap->inode)
		iput(heap->inode);
	mutex_destroy(&heap->lock);
	kfree(heap);
}

int kgc_heap_create(struct kgc_heap *heap, struct kgc_heap_create *arg)
{
	struct kgc_region_rec *table;
	struct kgc_region *regions;
	unsigned long region_pages;
	struct vfsmount *mnt;
	unsigned int shift;
	struct file *shm;
	size_t table_size;
	bool huge;
	u64 size;
	int ret;

	if (arg->flags || memchr_inv(arg->reserved, 0, sizeof(arg->reserved)))
		return -EINVAL;
	if (!is_power_of_2(arg->region_size))
		return -EINVAL;
	shift = ilog2(arg->region_size);
	if (shift < KGC_REGION_SHIFT_MIN || shift > KGC_REGION_SHIFT_MAX)
		return -EINVAL;
	if (!arg->nr_regions)
		return -EINVAL;
	if (check_mul_overflow(arg->region_size, (u64)arg->nr_regions, &size) ||
	    size > kgc_max_heap_bytes())
		return -E2BIG;

	region_pages = 1UL << (shift - PAGE_SHIFT);
	table_size = PAGE_ALIGN((size_t)arg->nr_regions *
				sizeof(struct kgc_region_rec));
	/* No huge folio over two regions: kgc_shm_mnt_small, VM_NOHUGEPAGE. */
	huge = kgc_shm_mnt_huge && shift >= HPAGE_PMD_SHIFT;
	mnt = huge ? kgc_shm_mnt_huge : kgc_shm_mnt_small;

	if (mutex_lock_killable(&heap->lock))
		return -EINTR;
	if (heap->created) {
		ret = -EEXIST;
		goto unlock;
	}

	ret = -ENOMEM;
	regions = kvcalloc(arg->nr_regions, sizeof(*regions),
			   GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!regions)
		goto unlock;
	/*
	 * Charged to the creator's memcg like every allocation a user can
	 * make in bulk (vmalloc_user() is not). Zeroed whole pages: the
	 * table is mapped to user space (kgc_table_fault()).
	 */
	table = __vmalloc(table_size,
			  GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN);
	if (!table)
		goto free_regions;
	if (kgc_watch_alloc(heap, arg->nr_regions))
		goto free_table;
	if (mnt)
		shm = shmem_file_setup_with_mnt(mnt, "kgc-heap", size,
						VM_NORESERVE);
	else
		shm = shmem_file_setup("kgc-heap", size, VM_NORESERVE);
	if (IS_ERR(shm)) {
		ret = PTR_ERR(shm);
		goto free_watch;
	}

	heap->region_shift = shift;
	heap->nr_regions = arg->nr_regions;
	heap->region_pages = region_pages;
	heap->nr_pages = size >> PAGE_SHIFT;
	heap->heap_size = size;
	heap->huge = huge;
	heap->table_size = table_size;
	heap->table_pgoff = KGC_TABLE_OFFSET >> PAGE_SHIFT;
	heap->regions = regions;
	heap->table = table;
	heap->shm = shm;
	/* Publishes the geometry to mmap, stats and the page count. */
	smp_store_release(&heap->created, true);
	mutex_unlock(&heap->lock);

	spin_lock(&kgc_heaps_lock);
	list_add(&heap->node, &kgc_heaps);
	spin_unlock(&kgc_heaps_lock);
	kgc_debugfs_heap_add(heap);

	arg->heap_size = size;
	arg->table_offset = kgc_table_offset();
	arg->table_size = table_size;
	return 0;

free_watch:
	kgc_watch_free(heap);
free_table:
	vfree(table);
free_regions:
	kvfree(regions);
unlock:
	mutex_unlock(&heap->lock);
	return ret;
}

/* Mirrors the kernel-side region state into the shared table. */
static void kgc_table_sync(struct kgc_heap *heap, u32 r)
{
	struct kgc_region_rec *rec = &heap->table[r];
	struct kgc_region *reg = &heap->regions[r];

	lockdep_assert_held(&heap->slot_lock);
	WRITE_ONCE(rec->committed_pages, reg->nr_pages);
	WRITE_ONCE(rec->kernel_pins, reg->kernel_pins);
	WRITE_ONCE(rec->flags, reg->flags);
}

static int kgc_check_range(struct kgc_heap *heap, u32 first, u32 count)
{
	if (!count || first >= heap->nr_regions ||
	    count > heap->nr_regions - first)
		return -EINVAL;
	return 0;
}

/*
 * A reference on @folio, just loaded by @xas under RCU, if it is still the
 * page cache's folio at that index (the page cache's own lookups do the
 * same, see find_get_entry()); false when it was being freed or replaced.
 */
static bool kgc_folio_get(struct xa_state *xas, struct folio *folio)
{
	if (!folio_try_get(folio))
		return false;
	if (unlikely(folio != xas_reload(xas))) {
		folio_put(folio);
		return false;
	}
	return true;
}

/*
 * Walks the folios of region @r in the page cache: @pages resident pages,
 * @pins of them in folios the kernel holds pinned (folio_maybe_dma_pinned():
 * FOLL_PIN by io_uring, O_DIRECT, RDMA...), the first at @first_pin in the
 * region (set only if @pins). A pinned huge folio counts all its pages in
 * the region. Swapped-out entries are not resident.
 *
 * An RCU walk: a huge folio costs one step, an empty region one lookup.
 * Each folio is looked at under a reference taken with kgc_folio_get():
 * without one, a folio freed and reused under the walk (reclaim,
 * migration) could show a stranger's order and pin count, and a large
 * stranger's order made the walk skip slots, a pinned folio's among them.
 * Under the reference the folio can be neither freed nor split. A pinned
 * folio never leaves the page cache (migration, reclaim, collapse and
 * split all fail on the pin's references, and UNCOMMIT, the only
 * truncation, is excluded by heap->lock), so a pin taken before the
 * caller's check is always seen. The reference makes a folio with 1023
 * plain references look "maybe pinned", as folio_maybe_dma_pinned() says.
 */
static void kgc_region_scan(struct kgc_heap *heap, u32 r, u32 *pages,
			    u32 *pins, u32 *first_pin)
{
	struct address_space *mapping = heap->shm->f_mapping;
	pgoff_t start = (pgoff_t)r * heap->region_pages;
	pgoff_t end = start + heap->region_pages - 1;	/* inclusive */
	XA_STATE(xas, &mapping->i_pages, start);
	struct folio *folio;
	u32 np = 0, pp = 0;
	pgoff_t lo, hi;

	rcu_read_lock();
	xas_for_each(&xas, folio, end) {
		if (xas_retry(&xas, folio) || xa_is_value(folio))
			continue;
		if (!kgc_folio_get(&xas, folio)) {
			xas_reset(&xas);	/* look at this index again */
			continue;
		}
		lo = max(folio->index, start);
		hi = min(folio_next_index(folio) - 1, end);
		np += hi - lo + 1;
		if (folio_maybe_dma_pinned(folio)) {
			if (!pp)
				*first_pin = lo - start;
			pp += hi - lo + 1;
		}
		folio_put(folio);
		if (hi >= end)
			break;
		if (hi > xas.xa_index)
			xas_set(&xas, hi + 1);	/* past the folio's tail */
		if (need_resched()) {
			xas_pause(&xas);
			rcu_read_unlock();
			cond_resched();
			rcu_read_lock();
		}
	}
	rcu_read_unlock();
	*pages = np;
	*pins = pp;
}

/*
 * Refreshes region @r's page and pin counts in the table; returns its
 * kernel-pinned pages. Caller holds heap->lock.
 */
u32 kgc_region_refresh(struct kgc_heap *heap, u32 r)
{
	struct kgc_region *reg = &heap->regions[r];
	u32 pages, pins, first_pin = 0;

	kgc_region_scan(heap, r, &pages, &pins, &first_pin);
	spin_lock(&heap->slot_lock);
	reg->nr_pages = pages;
	reg->kernel_pins = pins;
	reg->pin_hint = first_pin;
	if (pages)
		reg->flags |= KGC_RF_COMMITTED;
	if (pins)
		reg->flags |= KGC_RF_KPINNED;
	else
		reg->flags &= ~KGC_RF_KPINNED;
	kgc_table_sync(heap, r);
	spin_unlock(&heap->slot_lock);
	return pins;
}

/*
 * Whether the folio at region @r's pin hint (its first pinned page at the
 * last refresh) is still pinned: one lookup, which spares the watch's
 * rechecks a walk of the region while its pin lasts. False says nothing
 * of the region's other pages. Caller holds heap->lock.
 */
bool kgc_region_hint_pinned(struct kgc_heap *heap, u32 r)
{
	pgoff_t index = (pgoff_t)r * heap->region_pages +
			heap->regions[r].pin_hint;
	XA_STATE(xas, &heap->shm->f_mapping->i_pages, index);
	struct folio *folio;
	bool pinned = false;

	lockdep_assert_held(&heap->lock);
	rcu_read_lock();
	do {
		folio = xas_load(&xas);
	} while (xas_retry(&xas, folio));
	if (folio && !xa_is_value(folio) && kgc_folio_get(&xas, folio)) {
		pinned = folio_maybe_dma_pinned(folio);
		folio_put(folio);
	}
	rcu_read_unlock();
	return pinned;
}

/* Kernel pins of region @r, for debugfs (heap->lock held). */
u32 kgc_region_kernel_pins(struct kgc_heap *heap, u32 r)
{
	lockdep_assert_held(&heap->lock);
	return kgc_region_refresh(heap, r);
}

/*
 * Allocates every missing page of region @r, charged to the caller's
 * memcg, without invoking the OOM killer (-ENOMEM instead).
 */
static int kgc_region_populate(struct kgc_heap *heap, u32 r)
{
	struct address_space *mapping = heap->shm->f_mapping;
	pgoff_t idx = (pgoff_t)r * heap->region_pages;
	pgoff_t end = idx + heap->region_pages;
	gfp_t gfp = mapping_gfp_mask(mapping) | __GFP_RETRY_MAYFAIL |
		    __GFP_NOWARN;
	struct folio *folio;

	while (idx < end) {
		if (fatal_signal_pending(current))
			return -EINTR;
		folio = shmem_read_folio_gfp(mapping, idx, gfp);
		if (IS_ERR(folio))
			return PTR_ERR(folio);
		idx = folio->index + folio_nr_pages(folio);
		folio_put(folio);
		cond_resched();
	}
	return 0;
}

/*
 * Records populated region @r's pages in the table. Not "all of them": an
 * UNCOMMIT may have punched the region while it was being populated. A
 * scan under heap->lock, after the populate: a racing UNCOMMIT's punch and
 * its clearing of the counts are then both before the scan or both after.
 */
static int kgc_commit_recount(struct kgc_heap *heap, u32 r)
{
	if (mutex_lock_killable(&heap->lock))
		return -EINTR;
	kgc_region_refresh(heap, r);
	mutex_unlock(&heap->lock);
	return 0;
}

/*
 * COMMIT marks the regions committed; with KGC_COMMIT_POPULATE it also
 * allocates every missing page. On -ENOMEM or -EINTR the pages allocated
 * so far stay committed (and accounted): nothing leaks, and UNCOMMIT or
 * close releases them.
 *
 * No heap->lock while populating: that is what a fault does, so a
 * populate of the whole heap never holds up the other ioctls. A racing
 * UNCOMMIT of the same regions behaves as it does against faults: what it
 * released is gone, what was added after stays committed. Each populated
 * region's count is then taken under heap->lock (kgc_commit_recount()).
 */
int kgc_heap_commit(struct kgc_heap *heap, struct kgc_region_range *arg)
{
	u32 r;
	int ret;

	if (arg->flags & ~KGC_COMMIT_POPULATE)
		return -EINVAL;
	if (memchr_inv(arg->reserved, 0, sizeof(arg->reserved)))
		return -EINVAL;
	ret = kgc_check_range(heap, arg->first, arg->count);
	if (ret)
		return ret;

	for (r = arg->first; r < arg->first + arg->count; r++) {
		spin_lock(&heap->slot_lock);
		heap->regions[r].flags |= KGC_RF_COMMITTED;
		kgc_table_sync(heap, r);
		spin_unlock(&heap->slot_lock);

		if (arg->flags & KGC_COMMIT_POPULATE) {
			ret = kgc_region_populate(heap, r);
			if (!ret)
				ret = kgc_commit_recount(heap, r);
			if (ret)
				return ret;
		}
	}
	atomic64_inc(&heap->commits);
	return 0;
}

static bool kgc_region_busy(struct kgc_heap *heap, u32 r)
{
	if (READ_ONCE(heap->table[r].user_pins))
		return true;
	return kgc_region_refresh(heap, r) != 0;
}

/*
 * UNCOMMIT checks every region of the range first; if any is pinned (user
 * count in the table, or a kernel pin on one of its pages) it fails with
 * -EBUSY, reports the first such region in busy_region (recording its
 * kernel pins in the table, as PIN_QUERY would) and releases nothing.
 * Otherwise it punches a hole over the whole range: every mapping loses
 * its PTEs there, and the next access faults in a zero page.
 *
 * A pin taken after the check (by a thread racing with its own uncommit)
 * cannot hurt the kernel: the pinned folio lives on, out of the file.
 *
 * -EINTR when a fatal signal arrives while waiting for heap->lock or
 * during the checks: nothing was released then either.
 */
int kgc_heap_uncommit(struct kgc_heap *heap, struct kgc_region_range *arg)
{
	unsigned long before, after;
	loff_t off, len;
	u32 r;
	int ret;

	if (arg->flags || memchr_inv(arg->reserved, 0, sizeof(arg->reserved)))
		return -EINVAL;
	ret = kgc_check_range(heap, arg->first, arg->count);
	if (ret)
		return ret;

	if (mutex_lock_killable(&heap->lock))
		return -EINTR;
	for (r = arg->first; r < arg->first + arg->count; r++) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto unlock;
		}
		if (kgc_region_busy(heap, r)) {
			trace_kgc_uncommit_busy(heap->id, r,
						READ_ONCE(heap->table[r].user_pins),
						heap->regions[r].kernel_pins);
			arg->busy_region = r;
			atomic64_inc(&heap->uncommit_busy);
			ret = -EBUSY;
			goto unlock;
		}
	}

	off = (loff_t)arg->first << heap->region_shift;
	len = (loff_t)arg->count << heap->region_shift;
	before = kgc_heap_nr_pages(heap);
	ret = vfs_fallocate(heap->shm, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			    off, len);
	after = kgc_heap_nr_pages(heap);
	if (before > after)
		atomic64_add(before - after, &heap->pages_freed);
	if (ret)
		goto unlock;

	spin_lock(&heap->slot_lock);
	for (r = arg->first; r < arg->first + arg->count; r++) {
		heap->regions[r].nr_pages = 0;
		heap->regions[r].kernel_pins = 0;
		heap->regions[r].flags = 0;
		kgc_table_sync(heap, r);
	}
	spin_unlock(&heap->slot_lock);
	atomic64_inc(&heap->uncommits);
unlock:
	mutex_unlock(&heap->lock);
	return ret;
}

/*
 * Sets bit (r - first) of @bitmap for each kernel-pinned region and records
 * the result in the region table (kernel_pins, KGC_RF_KPINNED). With
 * @select, only the regions whose bit (r - first) is set there are looked
 * at: the cost follows the selection, not the heap.
 */
int kgc_heap_pin_query(struct kgc_heap *heap, u32 first, u32 count,
		       const u64 *select, u64 *bitmap, u32 *nr_pinned)
{
	u32 w, words = DIV_ROUND_UP(count, 64), i, n = 0;
	u64 bits;
	int ret;

	ret = kgc_check_range(heap, first, count);
	if (ret)
		return ret;

	if (mutex_lock_killable(&heap->lock))
		return -EINTR;
	for (w = 0; w < words; w++) {
		if (select) {
			bits = select[w];
		} else {
			i = min(count - w * 64, 64U);
			bits = GENMASK_ULL(i - 1, 0);
		}
		while (bits) {
			i = __ffs64(bits);
			bits &= bits - 1;
			if (kgc_region_refresh(heap, first + w * 64 + i)) {
				bitmap[w] |= 1ULL << i;
				n++;
			}
		}
	}
	atomic64_inc(&heap->pin_queries);
	trace_kgc_pin_query(heap->id, first, count, select, n);
	mutex_unlock(&heap->lock);
	*nr_pinned = n;
	return 0;
}
