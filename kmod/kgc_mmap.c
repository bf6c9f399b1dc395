// SPDX-License-Identifier: GPL-2.0
/*
 * kgc mmap: the heap mapping (offset 0 .. heap_size) and the region table
 * mapping (exactly [KGC_TABLE_OFFSET, KGC_TABLE_OFFSET + table_size)).
 *
 * Heap pages are ordinary module-allocated pages handed to the core from
 * .fault through vmf->page (no VM_PFNMAP/VM_MIXEDMAP), so GUP, O_DIRECT
 * and io_uring fixed buffers work on them like on any page.
 *
 * Both kinds of VMA are VM_DONTCOPY (a fork child does not inherit them)
 * and VM_DONTDUMP, and nothing else: no VM_SPECIAL flag and no .open or
 * .close op, so split VMAs merge back (mprotect round trips, partial
 * munmap + remap), mremap may grow them like a file mapping (the fault
 * handlers answer SIGBUS past the heap or the table) and mlock works.
 */
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/vmalloc.h>

#include "kgc_internal.h"

/*
 * Returns the page locked (VM_FAULT_LOCKED) after checking, under the page
 * lock, that it is still the heap's page for this index. The core keeps it
 * locked until the PTE is installed, which is what lets uncommit wait out
 * in-flight faults (see kgc_region_release()). If uncommit took the page
 * away in between, drop it and let the access fault again.
 */
static vm_fault_t kgc_heap_fault(struct vm_fault *vmf)
{
	struct kgc_heap *heap = vmf->vma->vm_private_data;
	pgoff_t idx = vmf->pgoff;
	struct folio *folio;
	struct page *page;

	if (idx >= heap->nr_pages)
		return VM_FAULT_SIGBUS;

	page = kgc_heap_get_page(heap, idx);
	if (!page)
		return VM_FAULT_OOM;
	atomic64_inc(&heap->faults);

	folio = page_folio(page);
	folio_lock(folio);
	if (READ_ONCE(heap->pages[idx]) != page) {
		folio_unlock(folio);
		folio_put(folio);
		return VM_FAULT_NOPAGE;
	}
	vmf->page = page;
	return VM_FAULT_LOCKED;
}

static const struct vm_operations_struct kgc_heap_vm_ops = {
	.fault = kgc_heap_fault,
};

/* The table is vmalloc_user() memory; it lives until the heap is freed. */
static vm_fault_t kgc_table_fault(struct vm_fault *vmf)
{
	struct kgc_heap *heap = vmf->vma->vm_private_data;
	unsigned long off;
	struct page *page;

	if (vmf->pgoff < heap->table_pgoff)
		return VM_FAULT_SIGBUS;
	off = vmf->pgoff - heap->table_pgoff;
	if (off >= heap->table_size >> PAGE_SHIFT)
		return VM_FAULT_SIGBUS;

	page = vmalloc_to_page((char *)heap->table + (off << PAGE_SHIFT));
	if (!page)
		return VM_FAULT_SIGBUS;
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct kgc_table_vm_ops = {
	.fault = kgc_table_fault,
};

/*
 * -ENODEV before HEAP_CREATE; -EINVAL for a private mapping, a range not
 * inside the heap, or a table mapping that is not exactly the table.
 */
int kgc_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct kgc_heap *heap = file->private_data;
	unsigned long npages = vma_pages(vma);

	if (!kgc_heap_created(heap))
		return -ENODEV;
	/* MAP_SHARED of a read-only fd clears VM_SHARED but keeps VM_MAYSHARE. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;

	if (vma->vm_pgoff == heap->table_pgoff) {
		if (npages != heap->table_size >> PAGE_SHIFT)
			return -EINVAL;
		vma->vm_ops = &kgc_table_vm_ops;
	} else if (vma->vm_pgoff < heap->nr_pages &&
		   npages <= heap->nr_pages - vma->vm_pgoff) {
		vma->vm_ops = &kgc_heap_vm_ops;
	} else {
		return -EINVAL;
	}

	vm_flags_set(vma, VM_DONTCOPY | VM_DONTDUMP);
	vma->vm_private_data = heap;
	return 0;
}
