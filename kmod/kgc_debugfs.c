// SPDX-License-Identifier: GPL-2.0
/*
 * kgc debugfs:
 *   /sys/kernel/debug/kgc/pages_held   pages all heaps hold now (0400)
 *   /sys/kernel/debug/kgc/<heap id>    one line per region of that heap:
 *                                      committed pages, user and kernel
 *                                      pins, flags, its pin-drop watch
 *                                      (armed, fired or -) (0400)
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "kgc_internal.h"

static struct dentry *kgc_debugfs_root;

static int kgc_pages_held_show(struct seq_file *m, void *unused)
{
	seq_printf(m, "%ld\n", kgc_pages_held());
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kgc_pages_held);

static int kgc_heap_show(struct seq_file *m, void *unused)
{
	struct kgc_heap *heap = m->private;
	u32 r, kpins;
	const char *watch;

	seq_printf(m, "heap %u region_size %llu regions %u pages %lu mapped %d huge %d\n",
		   heap->id, 1ULL << heap->region_shift, heap->nr_regions,
		   kgc_heap_nr_pages(heap),
		   mapping_mapped(heap->shm->f_mapping) ? 1 : 0, heap->huge);
	seq_puts(m, "region committed_pages user_pins kernel_pins flags watch\n");
	/* heap->lock one region at a time: ioctls get their turn between. */
	for (r = 0; r < heap->nr_regions; r++) {
		struct kgc_region *reg = &heap->regions[r];

		if (mutex_lock_killable(&heap->lock))
			return -EINTR;
		kpins = kgc_region_kernel_pins(heap, r);
		watch = heap->watch_armed && test_bit(r, heap->watch_armed) ? "armed" :
			heap->watch_fired && test_bit(r, heap->watch_fired) ? "fired" : "-";
		mutex_unlock(&heap->lock);
		seq_printf(m, "%u %u %u %u %#x %s\n", r, READ_ONCE(reg->nr_pages),
			   READ_ONCE(heap->table[r].user_pins), kpins,
			   READ_ONCE(reg->flags), watch);
		cond_resched();
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(kgc_heap);

void kgc_debugfs_init(void)
{
	kgc_debugfs_root = debugfs_create_dir(KGC_NAME, NULL);
	debugfs_create_file("pages_held", 0400, kgc_debugfs_root, NULL,
			    &kgc_pages_held_fops);
}

void kgc_debugfs_exit(void)
{
	debugfs_remove(kgc_debugfs_root);
}

/* Called once the heap geometry is published. */
void kgc_debugfs_heap_add(struct kgc_heap *heap)
{
	char name[16];

	snprintf(name, sizeof(name), "%u", heap->id);
	heap->dentry = debugfs_create_file(name, 0400, kgc_debugfs_root, heap,
					   &kgc_heap_fops);
}

/* Waits for readers in ->show; later reads of an open file get -EIO. */
void kgc_debugfs_heap_remove(struct kgc_heap *heap)
{
	debugfs_remove(heap->dentry);
	heap->dentry = NULL;
}
