// SPDX-License-Identifier: GPL-2.0
/*
 * kgc.ko - /dev/kgc: one mmap'able heap of fixed-size regions per open fd.
 *
 * This file holds the misc device, open/release, the module parameters and
 * the module-wide page counter. Each open fd gets a private inode from a
 * small internal pseudo filesystem; its address_space becomes the file's
 * f_mapping, so unmap_mapping_range() on one heap only ever walks that
 * heap's own mappings.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/init.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mount.h>
#include <linux/pseudo_fs.h>

#include "kgc_internal.h"

#define CREATE_TRACE_POINTS
#include "kgc_trace.h"

#define KGC_FS_MAGIC	0x6b676321	/* "kgc!" */

/* ---- module parameters ------------------------------------------------ */

unsigned int kgc_max_heap_mb = 4096;

static int kgc_max_heap_mb_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 1, KGC_MAX_HEAP_MB_LIMIT);
}

static const struct kernel_param_ops kgc_max_heap_mb_ops = {
	.set = kgc_max_heap_mb_set,
	.get = param_get_uint,
};

module_param_cb(max_heap_mb, &kgc_max_heap_mb_ops, &kgc_max_heap_mb, 0644);
MODULE_PARM_DESC(max_heap_mb,
		 "Largest heap one fd may create, in MiB (1..65536, default 4096); larger HEAP_CREATE fails with -E2BIG");

unsigned int kgc_watch_interval_ms = 100;

static int kgc_watch_interval_set(const char *val, const struct kernel_param *kp)
{
	return param_set_uint_minmax(val, kp, 10, 60000);
}

static const struct kernel_param_ops kgc_watch_interval_ops = {
	.set = kgc_watch_interval_set,
	.get = param_get_uint,
};

module_param_cb(watch_interval_ms, &kgc_watch_interval_ops,
		&kgc_watch_interval_ms, 0644);
MODULE_PARM_DESC(watch_interval_ms,
		 "How often armed pin-drop watches are rechecked, in ms (10..60000, default 100); no recheck runs while no watch is armed");

static ushort dev_mode = 0600;
module_param(dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode,
		 "Permission bits of /dev/kgc (default 0600; e.g. 0660 plus a udev GROUP= rule to open it to a group)");

/* Pages the heaps of all open fds hold right now. */
static int kgc_pages_held_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%ld\n", kgc_pages_held());
}

/*
 * parse_args() calls .set for "insmod kgc.ko pages_held=N" whatever the
 * sysfs mode says, so a read-only parameter needs a .set that refuses:
 * the load then fails with -EPERM.
 */
static int kgc_param_set_ro(const char *val, const struct kernel_param *kp)
{
	return -EPERM;
}

static const struct kernel_param_ops kgc_pages_held_ops = {
	.set = kgc_param_set_ro,
	.get = kgc_pages_held_get,
};

/* Module-wide usage: root only (also /sys/kernel/debug/kgc/pages_held). */
module_param_cb(pages_held, &kgc_pages_held_ops, NULL, 0400);
MODULE_PARM_DESC(pages_held, "Pages all heaps hold now (read-only, root only; setting it at load fails with -EPERM)");

/* ---- private inodes ---------------------------------------------------- */

static struct vfsmount *kgc_mnt;

/*
 * Private tmpfs mounts for the heaps' shmem files; both NULL without THP
 * (heaps then live on the kernel's shm mount, and no folio is huge):
 *
 * kgc_shm_mnt_huge, huge=within_size: heaps of PMD-sized regions and up,
 * which get huge folios whatever shmem_enabled says (unless "deny"). NULL
 * when it cannot be mounted: those heaps then use kgc_shm_mnt_small.
 *
 * kgc_shm_mnt_small, huge=never: smaller regions, where a huge folio would
 * straddle two regions. shmem_enabled=always, within_size or advise set
 * the kernel's shm mount, not this one, so neither faults (their mappings
 * are VM_NOHUGEPAGE as well) nor COMMIT_POPULATE, which allocates without
 * a mapping, get a huge folio.
 */
struct vfsmount *kgc_shm_mnt_huge;
struct vfsmount *kgc_shm_mnt_small;

static struct vfsmount *kgc_tmpfs_mount(struct file_system_type *type,
					const char *huge)
{
	char opts[32];	/* parsed in place: must be writable */

	snprintf(opts, sizeof(opts), "huge=%s", huge);
	return vfs_kern_mount(type, SB_KERNMOUNT, "kgc_heap_shm", opts);
}

static int kgc_shm_mount(void)
{
	struct file_system_type *type;
	struct vfsmount *mnt;

	if (!IS_ENABLED(CONFIG_TRANSPARENT_HUGEPAGE))
		return 0;
	type = get_fs_type("tmpfs");
	if (!type)
		return 0;
	mnt = kgc_tmpfs_mount(type, "never");
	if (IS_ERR(mnt))
		goto put;
	kgc_shm_mnt_small = mnt;
	mnt = kgc_tmpfs_mount(type, "within_size");
	if (IS_ERR(mnt)) {
		pr_warn("no huge tmpfs mount (%ld): heaps use small pages\n",
			PTR_ERR(mnt));
		mnt = NULL;
	}
	kgc_shm_mnt_huge = mnt;
put:
	/* put_filesystem(), which is not exported; a mount holds its own. */
	module_put(type->owner);
	return PTR_ERR_OR_ZERO(mnt);
}

static void kgc_shm_unmount(void)
{
	/* Files still mapped keep the mounts alive until they go. */
	if (kgc_shm_mnt_huge)
		kern_unmount(kgc_shm_mnt_huge);
	if (kgc_shm_mnt_small)
		kern_unmount(kgc_shm_mnt_small);
}

static int kgc_init_fs_context(struct fs_context *fc)
{
	return init_pseudo(fc, KGC_FS_MAGIC) ? 0 : -ENOMEM;
}

/*
 * No .owner: the internal mount lives as long as the module, and a module
 * reference from it would make the module impossible to unload.
 */
static struct file_system_type kgc_fs_type = {
	.name = "kgc_heap",
	.init_fs_context = kgc_init_fs_context,
	.kill_sb = kill_anon_super,
};

/* ---- file operations --------------------------------------------------- */

static int kgc_open(struct inode *inode, struct file *file)
{
	struct kgc_heap *heap;
	struct inode *hinode;
	int ret;

	heap = kgc_heap_alloc();
	if (!heap)
		return -ENOMEM;

	hinode = alloc_anon_inode(kgc_mnt->mnt_sb);
	if (IS_ERR(hinode)) {
		ret = PTR_ERR(hinode);
		goto free_heap;
	}
	hinode->i_private = heap;
	heap->inode = hinode;

	file->f_mapping = hinode->i_mapping;
	file->private_data = heap;
	return 0;

free_heap:
	kgc_heap_free(heap);
	return ret;
}

/*
 * Called once the last file reference is gone: no table mapping exists any
 * more. Heap mappings hold the shmem file, which keeps the memory until
 * they are unmapped; kernel pins (io_uring, O_DIRECT) hold references of
 * their own and keep their folios until unpinned.
 */
static int kgc_release(struct inode *inode, struct file *file)
{
	struct kgc_heap *heap = file->private_data;

	kgc_debugfs_heap_remove(heap);
	kgc_heap_free(heap);
	return 0;
}

static const struct file_operations kgc_fops = {
	.owner = THIS_MODULE,
	.open = kgc_open,
	.release = kgc_release,
	.mmap = kgc_mmap,
	.get_unmapped_area = kgc_get_unmapped_area,
	.poll = kgc_poll,
	.unlocked_ioctl = kgc_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice kgc_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = KGC_NAME,
	.fops = &kgc_fops,
};

static int __init kgc_init(void)
{
	int ret;

	BUILD_BUG_ON(sizeof(struct kgc_info) != KGC_INFO_SIZE);
	BUILD_BUG_ON(sizeof(struct kgc_heap_create) != KGC_HEAP_CREATE_SIZE);
	BUILD_BUG_ON(sizeof(struct kgc_region_rec) != KGC_REGION_REC_SIZE);
	BUILD_BUG_ON(sizeof(struct kgc_region_range) != KGC_REGION_RANGE_SIZE);
	BUILD_BUG_ON(sizeof(struct kgc_pin_query) != KGC_PIN_QUERY_SIZE);
	BUILD_BUG_ON(sizeof(struct kgc_dev_stats) != KGC_STATS_SIZE);
	BUILD_BUG_ON(sizeof(struct kgc_pin_watch) != KGC_PIN_WATCH_SIZE);
	BUILD_BUG_ON(sizeof(struct kgc_region_move) != KGC_REGION_MOVE_SIZE);
	BUILD_BUG_ON(KGC_TABLE_OFFSET & ~PAGE_MASK);
	BUILD_BUG_ON(((u64)KGC_MAX_HEAP_MB_LIMIT << 20) >= KGC_TABLE_OFFSET);
	BUILD_BUG_ON(((u64)KGC_MAX_HEAP_MB_LIMIT << 20) >=
		     KGC_TABLE_OFFSET_COMPAT);
	BUILD_BUG_ON(KGC_TABLE_OFFSET_COMPAT >= KGC_TABLE_OFFSET);
	/* 32-bit mmap2() takes the offset in 4 KiB units, 32 bits of them. */
	BUILD_BUG_ON((KGC_TABLE_OFFSET_COMPAT >> 12) > U32_MAX);

	if (dev_mode & ~0666) {
		pr_err("dev_mode %#o: only read/write bits allowed\n", dev_mode);
		return -EINVAL;
	}
	kgc_misc.mode = dev_mode;

	kgc_mnt = kern_mount(&kgc_fs_type);
	if (IS_ERR(kgc_mnt))
		return PTR_ERR(kgc_mnt);

	ret = kgc_shm_mount();
	if (ret)
		goto unmount;
	kgc_debugfs_init();

	ret = misc_register(&kgc_misc);
	if (ret)
		goto remove_debugfs;
	return 0;

remove_debugfs:
	kgc_debugfs_exit();
	kgc_shm_unmount();
unmount:
	kern_unmount(kgc_mnt);
	return ret;
}

static void __exit kgc_exit(void)
{
	misc_deregister(&kgc_misc);
	kgc_debugfs_exit();
	kgc_shm_unmount();
	kern_unmount(kgc_mnt);
}

module_init(kgc_init);
module_exit(kgc_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kgc: region heaps for a moving garbage collector");
