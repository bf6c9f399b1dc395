// SPDX-License-Identifier: GPL-2.0
/*
 * kgc heap: geometry, the page array, commit/uncommit and pin detection.
 *
 * Every present page sits in heap->pages[] with exactly one reference owned
 * by the heap. Each PTE that maps it owns one more (the reference the fault
 * handler hands to the core). Anything beyond that is somebody else's: a
 * FOLL_PIN (io_uring fixed buffers, O_DIRECT) or a plain get_page().
 *
 * The page flags are left alone (no PG_private); page->private is unused.
 */
#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "kgc_internal.h"

/* Pages touched between two cond_resched() calls in long loops. */
#define KGC_RESCHED_BATCH	256

static atomic_t kgc_heap_ids = ATOMIC_INIT(0);

u64 kgc_max_heap_bytes(void)
{
	return (u64)READ_ONCE(kgc_max_heap_mb) << 20;
}

struct kgc_heap *kgc_heap_alloc(void)
{
	struct kgc_heap *heap;

	heap = kzalloc(sizeof(*heap), GFP_KERNEL_ACCOUNT);
	if (!heap)
		return NULL;
	mutex_init(&heap->lock);
	spin_lock_init(&heap->slot_lock);
	heap->id = atomic_inc_return(&kgc_heap_ids);
	return heap;
}

/*
 * Drops the heap's reference on every page. Only called once no mapping,
 * fault or ioctl can exist. A page still pinned by the kernel stays alive
 * on the pinner's reference and is freed when it is unpinned; the module
 * counter only tracks references the heap holds, so it drops here.
 */
void kgc_heap_free(struct kgc_heap *heap)
{
	unsigned long i, freed = 0;

	if (heap->pages) {
		for (i = 0; i < heap->nr_pages; i++) {
			if (heap->pages[i]) {
				put_page(heap->pages[i]);
				freed++;
			}
			if ((i % KGC_RESCHED_BATCH) == KGC_RESCHED_BATCH - 1)
				cond_resched();
		}
		atomic_long_sub(freed, &kgc_pages_held);
	}
	kvfree(heap->pages);
	kvfree(heap->regions);
	kvfree(heap->scratch);
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
	struct page **pages, **scratch;
	unsigned long region_pages, nr_pages;
	unsigned int shift;
	size_t table_size;
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
	nr_pages = size >> PAGE_SHIFT;
	table_size = PAGE_ALIGN((size_t)arg->nr_regions *
				sizeof(struct kgc_region_rec));

	if (mutex_lock_killable(&heap->lock))
		return -EINTR;
	if (heap->created) {
		ret = -EEXIST;
		goto unlock;
	}

	ret = -ENOMEM;
	pages = kvcalloc(nr_pages, sizeof(*pages),
			 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!pages)
		goto unlock;
	regions = kvcalloc(arg->nr_regions, sizeof(*regions),
			   GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!regions)
		goto free_pages;
	scratch = kvmalloc_array(region_pages, sizeof(*scratch),
				 GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!scratch)
		goto free_regions;
	table = vmalloc_user(table_size);
	if (!table)
		goto free_scratch;

	heap->region_shift = shift;
	heap->nr_regions = arg->nr_regions;
	heap->region_pages = region_pages;
	heap->nr_pages = nr_pages;
	heap->heap_size = size;
	heap->table_size = table_size;
	heap->table_pgoff = KGC_TABLE_OFFSET >> PAGE_SHIFT;
	heap->pages = pages;
	heap->regions = regions;
	heap->scratch = scratch;
	heap->table = table;
	/* Publishes the geometry to mmap and the fault path. */
	smp_store_release(&heap->created, true);
	mutex_unlock(&heap->lock);

	kgc_debugfs_heap_add(heap);

	arg->heap_size = size;
	arg->table_offset = KGC_TABLE_OFFSET;
	arg->table_size = table_size;
	return 0;

free_scratch:
	kvfree(scratch);
free_regions:
	kvfree(regions);
free_pages:
	kvfree(pages);
unlock:
	mutex_unlock(&heap->lock);
	return ret;
}

static inline u32 kgc_region_of(struct kgc_heap *heap, pgoff_t idx)
{
	return idx >> (heap->region_shift - PAGE_SHIFT);
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

/* Puts @page into the empty slot @idx, transferring the caller's ref. */
static void kgc_slot_install(struct kgc_heap *heap, pgoff_t idx,
			     struct page *page)
{
	u32 r = kgc_region_of(heap, idx);

	lockdep_assert_held(&heap->slot_lock);
	WRITE_ONCE(heap->pages[idx], page);
	heap->nr_present++;
	heap->regions[r].nr_pages++;
	heap->regions[r].flags |= KGC_RF_COMMITTED;
	kgc_table_sync(heap, r);
	atomic_long_inc(&kgc_pages_held);
}

/*
 * Returns the page at @idx with an extra reference for the caller,
 * allocating a zeroed page when the slot is empty; NULL when out of memory.
 */
struct page *kgc_heap_get_page(struct kgc_heap *heap, pgoff_t idx)
{
	struct page *page, *new;

	spin_lock(&heap->slot_lock);
	page = heap->pages[idx];
	if (page) {
		get_page(page);
		spin_unlock(&heap->slot_lock);
		return page;
	}
	spin_unlock(&heap->slot_lock);

	new = alloc_page(KGC_GFP);
	if (!new)
		return NULL;

	spin_lock(&heap->slot_lock);
	page = heap->pages[idx];
	if (!page) {
		kgc_slot_install(heap, idx, new);
		page = new;
		new = NULL;
	}
	get_page(page);
	spin_unlock(&heap->slot_lock);

	/* Lost the race against another fault or a populate. */
	if (new)
		__free_page(new);
	return page;
}

static int kgc_check_range(struct kgc_heap *heap, u32 first, u32 count)
{
	if (!count || first >= heap->nr_regions ||
	    count > heap->nr_regions - first)
		return -EINVAL;
	return 0;
}

static int kgc_region_populate(struct kgc_heap *heap, u32 r)
{
	pgoff_t idx = (pgoff_t)r * heap->region_pages;
	pgoff_t end = idx + heap->region_pages;
	struct page *new;

	for (; idx < end; idx++) {
		if ((idx % KGC_RESCHED_BATCH) == KGC_RESCHED_BATCH - 1)
			cond_resched();
		if (READ_ONCE(heap->pages[idx]))
			continue;
		if (fatal_signal_pending(current))
			return -EINTR;
		new = alloc_page(KGC_GFP | __GFP_RETRY_MAYFAIL | __GFP_NOWARN);
		if (!new)
			return -ENOMEM;
		spin_lock(&heap->slot_lock);
		if (!heap->pages[idx]) {
			kgc_slot_install(heap, idx, new);
			new = NULL;
		}
		spin_unlock(&heap->slot_lock);
		if (new)
			__free_page(new);
	}
	return 0;
}

/*
 * COMMIT marks the regions committed; with KGC_COMMIT_POPULATE it also
 * allocates every missing page. On -ENOMEM or -EINTR the pages allocated
 * so far stay committed (and accounted): nothing leaks, and UNCOMMIT or
 * close releases them.
 *
 * No heap->lock: COMMIT only adds pages and flags, each under slot_lock,
 * exactly like a fault, so a populate of the whole heap never holds up
 * the other ioctls. A racing UNCOMMIT of the same regions behaves as it
 * does against faults: what it released is gone, what was added after
 * stays committed.
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
			if (ret)
				return ret;
		}
	}
	atomic64_inc(&heap->commits);
	return 0;
}

/*
 * True when somebody other than the heap and its PTEs holds @page: a DMA
 * pin (folio_maybe_dma_pinned()) or a plain extra reference. A fault that
 * is about to install a PTE, or a zap whose TLB batch has not been flushed
 * yet, also shows up here for a moment, so callers get "maybe pinned".
 */
static bool kgc_page_kpinned(struct page *page)
{
	struct folio *folio = page_folio(page);

	if (folio_maybe_dma_pinned(folio))
		return true;
	return folio_ref_count(folio) > 1 + folio_mapcount(folio);
}

/*
 * Counts the kernel-pinned pages of region @r. Caller holds heap->lock, so
 * no page can leave the array (only uncommit and close remove pages). A
 * region without pages costs O(1).
 */
u32 kgc_region_kernel_pins(struct kgc_heap *heap, u32 r)
{
	pgoff_t idx = (pgoff_t)r * heap->region_pages;
	pgoff_t end = idx + heap->region_pages;
	struct page *page;
	u32 pins = 0;

	lockdep_assert_held(&heap->lock);
	if (!READ_ONCE(heap->regions[r].nr_pages))
		return 0;
	for (; idx < end; idx++) {
		page = READ_ONCE(heap->pages[idx]);
		if (page && kgc_page_kpinned(page))
			pins++;
		if ((idx % KGC_RESCHED_BATCH) == KGC_RESCHED_BATCH - 1)
			cond_resched();
	}
	return pins;
}

/* Records a fresh kernel pin count for region @r in the table. */
static void kgc_region_set_kpins(struct kgc_heap *heap, u32 r, u32 pins)
{
	struct kgc_region *reg = &heap->regions[r];

	spin_lock(&heap->slot_lock);
	reg->kernel_pins = pins;
	if (pins)
		reg->flags |= KGC_RF_KPINNED;
	else
		reg->flags &= ~KGC_RF_KPINNED;
	kgc_table_sync(heap, r);
	spin_unlock(&heap->slot_lock);
}

static bool kgc_region_busy(struct kgc_heap *heap, u32 r)
{
	u32 pins;

	if (READ_ONCE(heap->table[r].user_pins))
		return true;
	pins = kgc_region_kernel_pins(heap, r);
	if (pins)
		kgc_region_set_kpins(heap, r, pins);
	return pins != 0;
}

/*
 * Releases every page region @r holds. Caller holds heap->lock.
 *
 * Why a fault can never leave a released page mapped:
 *  1. The pages are taken out of heap->pages[] under slot_lock. From then
 *     on a fault can no longer find them.
 *  2. The fault handler looks a page up, locks it and re-checks, under the
 *     page lock, that the slot still holds it; it returns the page locked
 *     and the core only unlocks it after the PTE is installed. So taking
 *     and dropping each page lock here waits out every fault that found the
 *     page before step 1: its PTE is in place now. Any later fault fails
 *     the re-check and retries, finding an empty slot (a fresh zero page).
 *  3. unmap_mapping_pages() then zaps every PTE of the range, in every
 *     mapping of this heap (and only this heap: private address_space).
 *  4. Only then is the heap's reference dropped. A page pinned by the
 *     kernel meanwhile survives on the pinner's reference.
 * Faults racing with this simply fault in new pages, which stay committed.
 */
static void kgc_region_release(struct kgc_heap *heap, u32 r)
{
	pgoff_t start = (pgoff_t)r * heap->region_pages;
	struct kgc_region *reg = &heap->regions[r];
	struct page **scratch = heap->scratch;
	unsigned long i, n = 0;
	struct page *page;

	lockdep_assert_held(&heap->lock);

	spin_lock(&heap->slot_lock);
	for (i = 0; i < heap->region_pages; i++) {
		page = heap->pages[start + i];
		if (!page)
			continue;
		WRITE_ONCE(heap->pages[start + i], NULL);
		scratch[n++] = page;
	}
	heap->nr_present -= n;
	reg->nr_pages -= n;
	reg->flags &= ~(KGC_RF_COMMITTED | KGC_RF_KPINNED);
	reg->kernel_pins = 0;
	kgc_table_sync(heap, r);
	spin_unlock(&heap->slot_lock);

	/* No page, no PTE: every earlier release already unmapped its own. */
	if (!n)
		return;

	for (i = 0; i < n; i++) {
		folio_lock(page_folio(scratch[i]));
		folio_unlock(page_folio(scratch[i]));
	}

	unmap_mapping_pages(heap->inode->i_mapping, start, heap->region_pages,
			    true);

	for (i = 0; i < n; i++) {
		put_page(scratch[i]);
		if ((i % KGC_RESCHED_BATCH) == KGC_RESCHED_BATCH - 1)
			cond_resched();
	}
	atomic_long_sub(n, &kgc_pages_held);
	atomic64_add(n, &heap->pages_freed);
}

/*
 * UNCOMMIT checks every region of the range first; if any is pinned (user
 * count in the table, or a kernel pin on one of its pages) it fails with
 * -EBUSY, reports the first such region in busy_region (recording its
 * kernel pins in the table, as PIN_QUERY would) and releases nothing.
 * Otherwise all regions of the range are released.
 *
 * A pin taken after the check (by a thread racing with its own uncommit)
 * cannot hurt the kernel: the pinned page lives on, detached from the heap.
 *
 * -EINTR when a fatal signal arrives while waiting for heap->lock or
 * during the checks: nothing was released then either.
 */
int kgc_heap_uncommit(struct kgc_heap *heap, struct kgc_region_range *arg)
{
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
			arg->busy_region = r;
			atomic64_inc(&heap->uncommit_busy);
			ret = -EBUSY;
			goto unlock;
		}
	}
	for (r = arg->first; r < arg->first + arg->count; r++)
		kgc_region_release(heap, r);
	atomic64_inc(&heap->uncommits);
unlock:
	mutex_unlock(&heap->lock);
	return ret;
}

/* Queries region @r for kgc_heap_pin_query(); true when kernel-pinned. */
static bool kgc_region_query(struct kgc_heap *heap, u32 r)
{
	u32 pins = kgc_region_kernel_pins(heap, r);

	kgc_region_set_kpins(heap, r, pins);
	return pins != 0;
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
			if (kgc_region_query(heap, first + w * 64 + i)) {
				bitmap[w] |= 1ULL << i;
				n++;
			}
		}
	}
	atomic64_inc(&heap->pin_queries);
	mutex_unlock(&heap->lock);
	*nr_pinned = n;
	return 0;
}
