// SPDX-License-Identifier: GPL-2.0
/*
 * KGC_IOC_REGION_MOVE: the pages of a region range become the pages of
 * another range of the same heap, without copying their bytes.
 *
 * The mechanism, and why (checked against 6.12's mm/shmem.c, filemap.c,
 * truncate.c and migrate.c, using only what they export to modules):
 *
 * A heap page is a folio of the heap's shmem file, found at its index in
 * the file's page cache (mapping->i_pages) and mapped by PTEs/PMDs whose
 * rmap is derived from folio->index. Moving a folio from index A to index
 * B of the same file is therefore three things, done together: the folio
 * leaves every page table (unmap), its xarray entry moves from A to B,
 * and folio->index becomes B. Everything else stays as it is: the same
 * file, the same node and memcg, so mapping->nrpages, NR_FILE_PAGES and
 * NR_SHMEM, the memcg charge, the LRU position and shmem's per-inode
 * accounting (info->alloced, derived from nrpages, and the inode's
 * blocks) are all unchanged. No page is allocated and no byte copied.
 *
 * The xarray step is the one page migration uses to replace a folio
 * (__folio_migrate_mapping()): under the xarray lock, the folio's
 * reference count is frozen at exactly what the page cache and this
 * code hold (folio_ref_freeze(), nr pages + 1). That succeeds only if no
 * page table maps it, no GUP holds or pins it, and no lookup has taken a
 * reference between its xarray load and its folio_lock(): shmem's fault
 * path rechecks only folio->mapping after locking, not the index, so a
 * lookup that began at A must not be able to lock the folio once it
 * lives at B. While frozen, every lookup's folio_try_get() fails and it
 * retries from the xarray, where it finds the folio at B or nothing at A.
 *
 * Faults racing the move: the folio is locked from before its unmap to
 * after its move. shmem's fault path (shmem_get_folio_gfp()) and
 * fault-around (filemap_map_pages(), a trylock) both need that lock to map
 * it, so a thread touching a source page waits and then sees it where it
 * now is: at B, or a fresh zero page at A. (shmem_fault() takes no
 * invalidate_lock in 6.12; the folio lock is what makes faults wait.)
 *
 * The destination: its old pages are released first, by a hole punch
 * (vfs_fallocate(), as UNCOMMIT does: shmem's own truncation, accounting
 * and unmap). A thread touching the destination during the call may
 * therefore see a zero page there before the moved one arrives, and what
 * it writes there during the call is lost (the move overwrites it): the
 * destination is being overwritten, nothing may use it meanwhile. Each
 * page is seen whole - old, zero or moved - never torn.
 *
 * Huge folios move whole when they lie inside the source range, which is
 * always the case on heaps of 2 MiB regions and up (a huge folio is
 * PMD-aligned, regions are aligned to their size, so the destination
 * index is PMD-aligned too). Heaps of smaller regions live on a
 * huge=never mount and get no huge folio (selftests/kgc_shmem.c); should
 * one straddle the range all the same, the part inside the range takes
 * the copy path below rather than moving a folio partly out of range.
 * (Large folios of other orders, mTHP, move whole alike.)
 *
 * Swapped-out source pages are read back in first (one swap-in each, by
 * shmem_read_folio_gfp()), then moved like the others.
 *
 * Pins: the call checks every region of both ranges under heap->lock
 * (user_pins in the table, folio_maybe_dma_pinned() by a reference-taking
 * walk) and refuses with -EBUSY before touching anything, as UNCOMMIT
 * does; heap->lock is held to the end, so no UNCOMMIT, PIN_QUERY or other
 * MOVE interleaves. A pin taken after the check (a thread racing its own
 * move) makes the freeze fail: that folio takes the copy path and leaves
 * the file, its pinner keeping it, as a pinned page does after UNCOMMIT.
 *
 * The copy path: when the freeze keeps failing (a reference the kernel
 * holds for longer: a racing pin, a splice, a folio waiting in a per-CPU
 * LRU batch - lru_add_drain_all() is not exported), or a folio straddles
 * the range, the folio's pages are copied into the destination's pages
 * (each locked and unmapped while written, so nobody sees it half
 * copied), then the folio leaves the file: removed under its lock by
 * generic_error_remove_folio() (truncate_inode_folio(), shmem's own
 * removal) when it lies inside the range, else the range's part punched.
 * shmem's lazy block accounting is then brought up to date through its
 * getattr. Still one call; STATS.move_copied_pages counts such pages.
 *
 * TLB flushes: the destination's punch and one unmap of the whole source
 * range, one flush per mapping each; a page is unmapped again only if a
 * racing fault mapped it in between.
 */
#include <linux/fs.h>
#include <linux/falloc.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched.h>
#include <linux/shmem_fs.h>
#include <linux/string.h>
#include <linux/xarray.h>

#include "kgc_internal.h"
#include "kgc_trace.h"

/* Freeze attempts on one folio before it takes the copy path. */
#define KGC_MOVE_TRIES	4
/* kgc_move_folio(): the folio left the file meanwhile, look again. */
#define KGC_MOVE_AGAIN	1

struct kgc_move {
	struct kgc_heap *heap;
	struct address_space *mapping;
	pgoff_t src;		/* first page of the source range */
	pgoff_t dst;		/* first page of the destination range */
	pgoff_t nr;		/* pages in each range */
	u32 moved;		/* pages moved (copied ones included) */
	u32 copied;		/* pages that took the copy path */
};

static gfp_t kgc_move_gfp(struct kgc_move *m)
{
	return mapping_gfp_mask(m->mapping) | __GFP_RETRY_MAYFAIL |
	       __GFP_NOWARN;
}

static int kgc_move_check(struct kgc_heap *heap, struct kgc_region_move *arg)
{
	u32 n = heap->nr_regions;

	if (arg->flags || memchr_inv(arg->reserved, 0, sizeof(arg->reserved)))
		return -EINVAL;
	if (!arg->count || arg->src >= n || arg->count > n - arg->src ||
	    arg->dst >= n || arg->count > n - arg->dst)
		return -EINVAL;
	/* Overlap, src == dst included. */
	if (arg->src < arg->dst + arg->count && arg->dst < arg->src + arg->count)
		return -EINVAL;
	return 0;
}

static bool kgc_move_range_busy(struct kgc_heap *heap, u32 first, u32 count,
				u32 *busy)
{
	u32 r;

	for (r = first; r < first + count; r++) {
		if (READ_ONCE(heap->table[r].user_pins) ||
		    kgc_region_refresh(heap, r)) {
			*busy = r;
			return true;
		}
	}
	return false;
}

/* Both ranges, the lower first: busy_region is the lowest busy region. */
static bool kgc_move_busy(struct kgc_heap *heap, struct kgc_region_move *arg)
{
	u32 lo = min(arg->src, arg->dst), hi = max(arg->src, arg->dst);

	return kgc_move_range_busy(heap, lo, arg->count, &arg->busy_region) ||
	       kgc_move_range_busy(heap, hi, arg->count, &arg->busy_region);
}

static int kgc_move_punch(struct kgc_move *m, pgoff_t index, pgoff_t nr)
{
	return vfs_fallocate(m->heap->shm,
			     FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			     (loff_t)index << PAGE_SHIFT, (loff_t)nr << PAGE_SHIFT);
}

/*
 * The next entry of the source range at or after *@index: a referenced
 * folio, or NULL at the end. A swapped-out page is read back in first.
 * *@index is set to the entry's index.
 */
static struct folio *kgc_move_next(struct kgc_move *m, pgoff_t *index)
{
	XA_STATE(xas, &m->mapping->i_pages, *index);
	struct folio *folio;

	rcu_read_lock();
	for (;;) {
		folio = xas_find(&xas, m->src + m->nr - 1);
		if (xas_retry(&xas, folio))
			continue;
		if (!folio || xa_is_value(folio))
			break;
		if (!folio_try_get(folio)) {
			xas_reset(&xas);
			continue;
		}
		if (unlikely(folio != xas_reload(&xas))) {
			folio_put(folio);
			xas_reset(&xas);
			continue;
		}
		break;
	}
	rcu_read_unlock();
	if (!folio)
		return NULL;
	*index = xas.xa_index;
	if (xa_is_value(folio))
		folio = shmem_read_folio_gfp(m->mapping, *index,
					     kgc_move_gfp(m));
	return folio;
}

/*
 * Moves @folio (locked, referenced by us, unmapped) to index @to in one
 * critical section of the xarray lock. -EEXIST: the destination is not
 * empty (a racing fault); -EAGAIN: another reference exists; -ENOMEM.
 */
static int kgc_move_store(struct kgc_move *m, struct folio *folio, pgoff_t to)
{
	unsigned int order = folio_order(folio);
	int refs = folio_nr_pages(folio) + 1;
	XA_STATE_ORDER(xto, &m->mapping->i_pages, to, order);
	XA_STATE_ORDER(xfrom, &m->mapping->i_pages, folio->index, order);
	int ret;

	do {
		ret = 0;
		xas_lock_irq(&xto);
		if (xas_find_conflict(&xto)) {
			ret = -EEXIST;
		} else if (!folio_ref_freeze(folio, refs)) {
			ret = -EAGAIN;
		} else {
			xas_store(&xto, folio);
			if (!xas_error(&xto)) {
				xas_store(&xfrom, NULL);
				folio->index = to;
			}
			folio_ref_unfreeze(folio, refs);
		}
		xas_unlock_irq(&xto);
	} while (!ret && xas_nomem(&xto, GFP_KERNEL));
	return ret ? ret : xas_error(&xto);
}

/* Copies page @from of the file into page @to, locked and unmapped. */
static int kgc_move_copy_page(struct kgc_move *m, struct folio *src,
			      pgoff_t from, pgoff_t to)
{
	struct folio *dst;
	void *d, *s;

	for (;;) {
		dst = shmem_read_folio_gfp(m->mapping, to, kgc_move_gfp(m));
		if (IS_ERR(dst))
			return PTR_ERR(dst);
		folio_lock(dst);
		if (dst->mapping == m->mapping && folio_contains(dst, to))
			break;
		folio_unlock(dst);
		folio_put(dst);
	}
	unmap_mapping_pages(m->mapping, to, 1, false);
	d = kmap_local_page(folio_page(dst, to - dst->index));
	s = kmap_local_page(folio_page(src, from - src->index));
	copy_page(d, s);
	kunmap_local(s);
	kunmap_local(d);
	folio_mark_dirty(dst);
	folio_unlock(dst);
	folio_put(dst);
	return 0;
}

/*
 * The copy path for pages [@lo, @hi] of @folio (locked): copies them to
 * the destination, then takes them out of the file. Unlocks @folio.
 */
static int kgc_move_copy(struct kgc_move *m, struct folio *folio,
			 pgoff_t lo, pgoff_t hi)
{
	bool whole = folio->index == lo && folio_next_index(folio) == hi + 1;
	pgoff_t i;
	int ret = 0;

	/* Under the folio lock no fault maps it again: no write races the copy. */
	unmap_mapping_pages(m->mapping, lo, hi - lo + 1, false);
	for (i = lo; i <= hi && !ret; i++) {
		ret = kgc_move_copy_page(m, folio, i, i - m->src + m->dst);
		cond_resched();
	}
	if (!ret && whole)
		generic_error_remove_folio(m->mapping, folio);
	folio_unlock(folio);
	if (ret)
		return ret;
	if (!whole)
		ret = kgc_move_punch(m, lo, hi - lo + 1);
	m->moved += hi - lo + 1;
	m->copied += hi - lo + 1;
	return ret;
}

/*
 * Moves the locked @folio, found at @index of the source range, to the
 * destination; unlocks it. The fast path retries a few times when
 * something holds a reference or a racing fault filled the destination.
 */
static int kgc_move_folio(struct kgc_move *m, struct folio *folio)
{
	pgoff_t lo = max(folio->index, m->src);
	pgoff_t hi = min(folio_next_index(folio), m->src + m->nr) - 1;
	pgoff_t nr = folio_nr_pages(folio);
	pgoff_t to = folio->index - m->src + m->dst;
	int tries, ret = -EAGAIN;

	if (lo != folio->index || hi + 1 != folio_next_index(folio))
		return kgc_move_copy(m, folio, lo, hi);

	for (tries = 0; tries < KGC_MOVE_TRIES; tries++) {
		if (folio_mapped(folio))
			unmap_mapping_pages(m->mapping, folio->index, nr, false);
		ret = kgc_move_store(m, folio, to);
		if (ret == -EEXIST) {
			/* A racing toucher of the destination: drop its page. */
			folio_unlock(folio);
			ret = kgc_move_punch(m, to, nr);
			folio_lock(folio);
			if (ret)
				break;
			if (folio->mapping != m->mapping ||
			    folio->index != lo) {
				/* Swapped out meanwhile (only we move it). */
				folio_unlock(folio);
				return KGC_MOVE_AGAIN;
			}
			ret = -EAGAIN;
		}
		if (ret != -EAGAIN)
			break;
		cond_resched();
	}
	if (ret == -EAGAIN || ret == -EEXIST)
		return kgc_move_copy(m, folio, lo, hi);
	folio_unlock(folio);
	if (!ret)
		m->moved += nr;
	return ret;
}

static int kgc_move_pages(struct kgc_move *m)
{
	pgoff_t index = m->src, next;
	struct folio *folio;
	int ret;

	while (index < m->src + m->nr) {
		folio = kgc_move_next(m, &index);
		if (!folio)
			return 0;
		if (IS_ERR(folio))
			return PTR_ERR(folio);
		folio_lock(folio);
		if (folio->mapping != m->mapping ||
		    !folio_contains(folio, index)) {
			/* Truncated or swapped out meanwhile: look again. */
			folio_unlock(folio);
			folio_put(folio);
			continue;
		}
		next = folio_next_index(folio);
		ret = kgc_move_folio(m, folio);
		folio_put(folio);
		if (ret < 0)
			return ret;
		if (!ret)
			index = next;
		cond_resched();
	}
	return 0;
}

/*
 * shmem accounts blocks lazily from mapping->nrpages; its getattr brings
 * the count up to date after the copy path removed folios.
 */
static void kgc_move_recalc(struct kgc_heap *heap)
{
	struct kstat stat;

	vfs_getattr(&heap->shm->f_path, &stat, STATX_BLOCKS,
		    AT_STATX_SYNC_AS_STAT);
}

/* The table follows: COMMITTED moves with the pages, counts refreshed. */
static void kgc_move_table(struct kgc_heap *heap, struct kgc_region_move *arg)
{
	u32 i, s, d;

	spin_lock(&heap->slot_lock);
	for (i = 0; i < arg->count; i++) {
		s = arg->src + i;
		d = arg->dst + i;
		heap->regions[d].flags = heap->regions[s].flags &
					 KGC_RF_COMMITTED;
		heap->regions[s].flags = 0;
	}
	spin_unlock(&heap->slot_lock);
	for (i = 0; i < arg->count; i++) {
		kgc_region_refresh(heap, arg->src + i);
		kgc_region_refresh(heap, arg->dst + i);
	}
}

int kgc_heap_move(struct kgc_heap *heap, struct kgc_region_move *arg)
{
	struct kgc_move m = {
		.heap = heap,
		.mapping = heap->shm->f_mapping,
		.src = (pgoff_t)arg->src * heap->region_pages,
		.dst = (pgoff_t)arg->dst * heap->region_pages,
		.nr = (pgoff_t)arg->count * heap->region_pages,
	};
	unsigned long before, after;
	int ret;

	ret = kgc_move_check(heap, arg);
	if (ret)
		return ret;
	if (mutex_lock_killable(&heap->lock))
		return -EINTR;
	if (kgc_move_busy(heap, arg)) {
		atomic64_inc(&heap->move_busy);
		ret = -EBUSY;
		goto out;
	}

	before = kgc_heap_nr_pages(heap);
	ret = kgc_move_punch(&m, m.dst, m.nr);
	after = kgc_heap_nr_pages(heap);
	if (before > after)
		atomic64_add(before - after, &heap->pages_freed);
	if (ret)
		goto out;
	unmap_mapping_pages(m.mapping, m.src, m.nr, false);
	ret = kgc_move_pages(&m);
	if (m.copied)
		kgc_move_recalc(heap);
	kgc_move_table(heap, arg);
	arg->moved_pages = m.moved;
	atomic64_inc(&heap->moves);
	atomic64_add(m.copied, &heap->move_copied);
out:
	trace_kgc_move(heap->id, arg->src, arg->dst, arg->count, m.moved,
		       m.copied, ret);
	mutex_unlock(&heap->lock);
	return ret;
}
