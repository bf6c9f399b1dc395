// SPDX-License-Identifier: GPL-2.0
/*
 * kgc mmap: the heap mapping (offset 0 .. heap_size) and the region table
 * mapping (exactly [KGC_TABLE_OFFSET, KGC_TABLE_OFFSET + table_size), or
 * the same at KGC_TABLE_OFFSET_COMPAT, in reach of 32-bit mmap2()).
 *
 * A heap mapping becomes a mapping of the heap's shmem file
 * (vma_set_file() + shmem's own mmap), so its faults, huge pages, swap,
 * migration, NUMA policy and memcg charging are shmem's. The table mapping
 * stays on the /dev/kgc file.
 *
 * Both kinds of VMA are VM_DONTCOPY (a fork child does not inherit them)
 * and VM_DONTDUMP, heap mappings of regions smaller than a PMD also
 * VM_NOHUGEPAGE (shmem's faults, khugepaged and MADV_COLLAPSE then leave
 * them small folios), and nothing else: no VM_SPECIAL flag and no .open or
 * .close op, so split VMAs merge back (mprotect round trips, partial
 * munmap + remap), mremap may grow them like a file mapping (past the heap
 * or the table an access raises SIGBUS) and mlock works.
 *
 * get_unmapped_area: heap mappings of PMD-sized regions get a PMD-aligned
 * address (thp_get_unmapped_area()), so huge folios can be PMD-mapped.
 */
#include <linux/compat.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/sched/mm.h>
#include <linux/vmalloc.h>

#include "kgc_internal.h"

#define KGC_TABLE_PGOFF_COMPAT	(KGC_TABLE_OFFSET_COMPAT >> PAGE_SHIFT)

/* The table's mmap offset for the calling process (uapi/kgc.h). */
u64 kgc_table_offset(void)
{
	return in_compat_syscall() ? KGC_TABLE_OFFSET_COMPAT : KGC_TABLE_OFFSET;
}

/* Page @pgoff of the file as a page of the table, -1 if it is none. */
static long kgc_table_page(struct kgc_heap *heap, pgoff_t pgoff)
{
	pgoff_t pages = heap->table_size >> PAGE_SHIFT;

	if (pgoff - heap->table_pgoff < pages)
		return pgoff - heap->table_pgoff;
	if (pgoff - KGC_TABLE_PGOFF_COMPAT < pages)
		return pgoff - KGC_TABLE_PGOFF_COMPAT;
	return -1;
}

/* The table is vmalloc memory; it lives until the heap is freed. */
static vm_fault_t kgc_table_fault(struct vm_fault *vmf)
{
	struct kgc_heap *heap = vmf->vma->vm_private_data;
	long off = kgc_table_page(heap, vmf->pgoff);
	struct page *page;

	if (off < 0)
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
	int ret;

	if (!kgc_heap_created(heap))
		return -ENODEV;
	/* MAP_SHARED of a read-only fd clears VM_SHARED but keeps VM_MAYSHARE. */
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;

	if (vma->vm_pgoff == heap->table_pgoff ||
	    vma->vm_pgoff == KGC_TABLE_PGOFF_COMPAT) {
		if (npages != heap->table_size >> PAGE_SHIFT)
			return -EINVAL;
		vma->vm_ops = &kgc_table_vm_ops;
		vma->vm_private_data = heap;
	} else if (vma->vm_pgoff < heap->nr_pages &&
		   npages <= heap->nr_pages - vma->vm_pgoff) {
		vma_set_file(vma, heap->shm);
		ret = heap->shm->f_op->mmap(heap->shm, vma);
		if (ret)
			return ret;
		/* Regions below a PMD: no huge folio from faults or collapse. */
		if (!heap->huge)
			vm_flags_set(vma, VM_NOHUGEPAGE);
	} else {
		return -EINVAL;
	}

	vm_flags_set(vma, VM_DONTCOPY | VM_DONTDUMP);
	return 0;
}

unsigned long kgc_get_unmapped_area(struct file *file, unsigned long addr,
				    unsigned long len, unsigned long pgoff,
				    unsigned long flags)
{
	struct kgc_heap *heap = file->private_data;

	if (kgc_heap_created(heap) && heap->huge && pgoff < heap->nr_pages)
		return thp_get_unmapped_area(file, addr, len, pgoff, flags);
	return mm_get_unmapped_area(current->mm, file, addr, len, pgoff, flags);
}
