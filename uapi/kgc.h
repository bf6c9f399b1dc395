/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kgc.h - the contract between kgc.ko (/dev/kgc) and its users (libkgc, tests).
 *
 * One open fd of /dev/kgc is one heap. KGC_IOC_HEAP_CREATE sizes it once; then
 *   mmap(NULL, heap_size, PROT_READ|PROT_WRITE, MAP_SHARED, fd, 0)
 * maps the heap (pages fault in zero-filled on first touch) and
 *   mmap(NULL, table_size, PROT_READ|PROT_WRITE, MAP_SHARED, fd, table_offset)
 * (KGC_TABLE_OFFSET; KGC_TABLE_OFFSET_COMPAT for a 32-bit process) maps the
 * region table: one struct kgc_region_rec per region, shared with the
 * module. Userspace owns user_pins (atomic add/sub, no syscall); every other
 * field is written by the module only.
 *
 * All structs: fixed-width fields, explicit padding, reserved fields must be
 * zero on input (-EINVAL otherwise). User pointers are __u64.
 */
#ifndef _UAPI_KGC_H
#define _UAPI_KGC_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * 2: ioctl magic 0xBC (v1 used 0xB7, registered to remoteproc and nsfs);
 *    mutating ioctls need a writable fd (EBADF); kgc_dev_stats (was kgc_stats) no longer
 *    reports module-wide pages (root-only in debugfs/sysfs now); heap
 *    mappings may be split, merged and grown like any file mapping.
 */
#define KGC_API_VERSION		2

/* Feature bits reported by KGC_IOC_INFO. */
#define KGC_FEAT_REGION_TABLE	(1ULL << 0)	/* mmap at KGC_TABLE_OFFSET */
#define KGC_FEAT_PIN_QUERY	(1ULL << 1)	/* KGC_IOC_PIN_QUERY */
#define KGC_FEAT_STATS		(1ULL << 2)	/* KGC_IOC_STATS */
#define KGC_FEAT_DEBUGFS	(1ULL << 3)	/* /sys/kernel/debug/kgc/<heap> */
#define KGC_FEAT_POPULATE	(1ULL << 4)	/* KGC_COMMIT_POPULATE */
#define KGC_FEAT_PIN_SELECT	(1ULL << 5)	/* KGC_PIN_QUERY_SELECT */
/*
 * The heap is a shmem file mm manages: huge folios for regions of 2 MiB
 * and up (mmap(NULL, ...) returns a 2 MiB-aligned address), never for
 * smaller regions (their mappings are VM_NOHUGEPAGE: MADV_COLLAPSE fails
 * with EINVAL; a process that undoes that with MADV_HUGEPAGE may get a
 * huge folio over two regions, and a kernel pin in it then pins both),
 * swap and reclaim, migration, mbind, memcg charging to the mapping's
 * owner. The table's committed_pages/kernel_pins are refreshed by
 * COMMIT, UNCOMMIT, PIN_QUERY (its regions) and the debugfs dump, not at
 * each fault, and kgc_dev_stats.faults stays 0 (faults are shmem's).
 */
#define KGC_FEAT_SHMEM		(1ULL << 6)
#define KGC_FEAT_PIN_WATCH	(1ULL << 7)	/* KGC_IOC_PIN_WATCH, poll */
#define KGC_FEAT_REGION_MOVE	(1ULL << 8)	/* KGC_IOC_REGION_MOVE */

/* Region sizes: power of two from 1 MiB to 32 MiB. */
#define KGC_REGION_SHIFT_MIN	20
#define KGC_REGION_SHIFT_MAX	25

/* mmap offset of the region table (page aligned, far above any heap). */
#define KGC_TABLE_OFFSET	(1ULL << 46)
/*
 * The same table for 32-bit processes, whose mmap2() cannot reach offsets
 * of 2^44 and up: INFO and HEAP_CREATE report it as table_offset to a
 * 32-bit caller. mmap accepts the table at either offset, from anyone.
 */
#define KGC_TABLE_OFFSET_COMPAT	(1ULL << 40)

struct kgc_info {
	__u32 api_version;	/* KGC_API_VERSION */
	__u32 page_size;
	__u64 features;		/* KGC_FEAT_* */
	__u32 region_shift_min;
	__u32 region_shift_max;
	__u64 max_heap_bytes;	/* module parameter max_heap_mb */
	__u32 max_regions;
	__u32 region_rec_size;	/* sizeof(struct kgc_region_rec) */
	__u64 table_offset;	/* KGC_TABLE_OFFSET (_COMPAT: 32-bit) */
	/*
	 * log2 of the smallest region size whose heaps get huge folios
	 * (21 on x86-64: PMD-sized regions and up; smaller regions never
	 * get one, see KGC_FEAT_SHMEM), 0 when heaps get small pages only
	 * (shmem_enabled=deny, no THP): the module asks shmem at each INFO
	 * whether a file on its huge mount gets a huge folio, so 0 also
	 * when no huge page could be had for the caller just then.
	 */
	__u32 huge_region_shift;
	__u32 reserved0;	/* output: zero */
	__u64 reserved[3];	/* output: zero */
};

/* KGC_IOC_HEAP_CREATE: in region_size, nr_regions, flags (0); out the rest. */
struct kgc_heap_create {
	__u64 region_size;
	__u32 nr_regions;
	__u32 flags;		/* must be 0 */
	__u64 heap_size;	/* out: region_size * nr_regions */
	__u64 table_offset;	/* out: as kgc_info.table_offset */
	__u64 table_size;	/* out: page-rounded nr_regions * rec size */
	__u64 reserved[3];	/* must be 0 */
};

/* Region table record, one per region, mapped shared at KGC_TABLE_OFFSET. */
#define KGC_RF_COMMITTED	(1U << 0)	/* committed (ioctl, or pages seen) */
#define KGC_RF_KPINNED		(1U << 1)	/* kernel pins seen at last query */

struct kgc_region_rec {
	__u32 user_pins;	/* owned by userspace: library pin count */
	__u32 flags;		/* module: KGC_RF_* */
	__u32 committed_pages;	/* module: resident pages at last refresh */
	__u32 kernel_pins;	/* module: pinned pages seen at last query */
	__u64 reserved[2];
};

/* KGC_IOC_REGION_COMMIT / KGC_IOC_REGION_UNCOMMIT on [first, first+count). */
#define KGC_COMMIT_POPULATE	(1U << 0)	/* commit: allocate all pages now */

struct kgc_region_range {
	__u32 first;
	__u32 count;
	__u32 flags;		/* commit: KGC_COMMIT_*; uncommit: 0 */
	__u32 busy_region;	/* out: on -EBUSY, the first pinned region */
	__u64 reserved[2];	/* must be 0 */
};

/*
 * KGC_IOC_PIN_QUERY: for regions [first, first+count), set bit (i - first) of
 * the __u64 array at bitmap_ptr (count bits, rounded up to 64) when the kernel
 * holds region i pinned: a page of it is in a folio with DMA pins
 * (folio_maybe_dma_pinned(): FOLL_PIN by io_uring fixed buffers, O_DIRECT,
 * RDMA...). A huge folio is pinned as a whole. Plain page references
 * (FOLL_GET, splice) are not pins: they keep their page alive, out of the
 * heap, after an UNCOMMIT.
 *
 * With KGC_PIN_QUERY_SELECT the bitmap is also the input: only the regions
 * whose bit is set are examined (a young collection passes its collection
 * set), the others are neither looked at nor updated in the table, and
 * their bits come back 0. Bits past count in the last word must be 0.
 * Cost: O(count / 64) to scan the selection, plus per selected region O(1)
 * when it holds no page, else one look at each page slot of the region.
 */
#define KGC_PIN_QUERY_SELECT	(1U << 0)

struct kgc_pin_query {
	__u32 first;
	__u32 count;
	__u64 bitmap_ptr;	/* user pointer to __u64[(count + 63) / 64] */
	__u32 nr_pinned;	/* out: regions with kernel pins */
	__u32 flags;		/* KGC_PIN_QUERY_SELECT or 0 */
	__u64 reserved[2];	/* must be 0 */
};

/*
 * KGC_IOC_PIN_WATCH: pin-drop notification. The bitmap at bitmap_ptr holds
 * bit (i - first) for region i of [first, first + count), as in PIN_QUERY.
 *
 *   op KGC_WATCH_ARM     arm a watch on the regions whose bit is set. A
 *                        region without kernel pins now fires at once.
 *   op KGC_WATCH_DISARM  disarm them (fired bits are kept).
 *   op KGC_WATCH_FIRED   bitmap is output only: the regions of the range
 *                        whose watch fired since the last FIRED; their
 *                        fired bits are cleared (a fired watch is disarmed,
 *                        arm it again to keep watching).
 * Every op returns nr_armed, the heap's armed watches after it.
 *
 * While any watch is armed, the module rechecks the armed regions' kernel
 * pins every watch_interval_ms (module parameter, 10..60000, default 100),
 * at most KGC_WATCH_BATCH regions per recheck; a region whose kernel pins
 * are gone fires: the fd polls readable (EPOLLIN | EPOLLPRI) until FIRED
 * has collected every fired region. Nothing runs and nothing wakes with no
 * watch armed.
 */
#define KGC_WATCH_ARM		0
#define KGC_WATCH_DISARM	1
#define KGC_WATCH_FIRED		2
#define KGC_WATCH_BATCH		4096

struct kgc_pin_watch {
	__u32 first;
	__u32 count;
	__u64 bitmap_ptr;	/* user pointer to __u64[(count + 63) / 64] */
	__u32 op;		/* KGC_WATCH_* */
	__u32 nr_armed;		/* out: armed watches of the heap */
	__u64 reserved[2];	/* must be 0 */
};

/*
 * KGC_IOC_REGION_MOVE: the memory of regions [src, src + count) becomes the
 * memory of [dst, dst + count) without copying its bytes: each page of the
 * source moves to the same offset of the destination, in the heap's file
 * and in every mapping of the heap at once (the page itself changes its
 * file offset; mappings lose both ranges and fault the pages in again
 * where they now are). Afterwards dst reads what src held when the call
 * began, and src reads zeros, as after UNCOMMIT; the destination's old
 * pages are released first (counted in STATS.pages_freed). Holes of the
 * source (pages never touched) become holes of the destination.
 *
 * Huge folios move whole: on heaps of 2 MiB regions and up every huge
 * folio lies inside one region and lands aligned (heaps of smaller
 * regions get no huge folio, see KGC_FEAT_SHMEM; one straddling the range
 * all the same would have its part inside the range copied). Swapped-out
 * source pages are swapped in first (not tested: the VM rig has no swap
 * device for kgc_move), then moved.
 *
 * Racing accesses, per page: a thread touching a source page during the
 * call waits for that page's move and sees it whole, before or after (its
 * old contents, or zeros once moved); a thread touching a destination
 * page may see its old contents, zeros, or the moved page, never a torn
 * page, and what it writes to the destination during the call is lost.
 * The call as a whole is not atomic: a toucher may see some pages moved
 * and others not yet.
 *
 * A page the module cannot move without copying is copied instead, in the
 * same call (STATS.move_copied_pages counts them): one still referenced by
 * the kernel after a few tries (a pin taken after the call's pin check, a
 * splice, a page waiting in a per-CPU LRU batch after a recent fault) or
 * a straddling huge folio's part. A pinned page copied so leaves the file
 * and stays its pinner's, as after UNCOMMIT.
 *
 * The table follows: KGC_RF_COMMITTED moves from each source region to
 * its destination (the source's flags clear), committed_pages and the
 * kernel-pin fields of both ranges are refreshed. Pin-drop watches armed
 * on either range stay armed on the same region numbers.
 *
 * Nothing moves while pinned: a region of either range with user_pins != 0
 * or a kernel-pinned page refuses the whole call (EBUSY, busy_region: the
 * lowest such region). moved_pages counts base pages moved or copied.
 * Cost: one hole punch of the destination, one unmap of the source, one
 * xarray update per folio (a huge folio is one step).
 */
struct kgc_region_move {
	__u32 src;		/* first source region */
	__u32 dst;		/* first destination region */
	__u32 count;		/* regions in each range */
	__u32 flags;		/* must be 0 */
	__u32 busy_region;	/* out: on -EBUSY, the first pinned region */
	__u32 moved_pages;	/* out: base pages moved (holes not counted) */
	__u64 reserved[2];	/* must be 0 */
};

struct kgc_dev_stats {
	__u64 heap_pages;	/* pages this heap holds now */
	__u64 reserved0;	/* output: zero (v1: module-wide pages) */
	__u64 faults;		/* 0: faults are shmem's (KGC_FEAT_SHMEM) */
	__u64 commits;
	__u64 uncommits;
	__u64 uncommit_busy;	/* uncommits refused with -EBUSY */
	__u64 pin_queries;
	__u64 pages_freed;	/* by UNCOMMIT, and MOVE's destination */
	__u64 moves;		/* REGION_MOVE calls that moved */
	__u64 move_busy;	/* REGION_MOVE calls refused with -EBUSY */
	__u64 move_copied_pages; /* pages MOVE had to copy (see above) */
	__u64 reserved[5];	/* output: zero */
};

/*
 * Error returns (ioctl() returns -1 with errno set), as implemented.
 *
 * Every command:
 *   ENOTTY  unknown command: the number, size or direction of cmd does not
 *           match one of the KGC_IOC_* below exactly.
 *   EFAULT  the argument pointer cannot be read (input commands) or written
 *           (the result is copied out last: the command's effect - a created
 *           heap, committed or released regions, table updates - stays).
 *   EBADF   HEAP_CREATE, REGION_COMMIT, REGION_UNCOMMIT, REGION_MOVE (the
 *           commands that change the heap) on an fd not open for
 *           writing; checked before anything else, the argument is not read.
 *   EINTR   HEAP_CREATE, REGION_UNCOMMIT, PIN_QUERY: a fatal signal arrived
 *           while waiting for the heap's lock (the wait is killable; the
 *           task dies, nothing was changed).
 *
 * KGC_IOC_INFO    works with or without a heap; only EFAULT.
 * KGC_IOC_STATS   works with or without a heap (heap_pages is 0 before
 *                 HEAP_CREATE); only EFAULT. Per heap only: the pages all
 *                 heaps hold are root's (/sys/module/kgc/parameters/
 *                 pages_held and /sys/kernel/debug/kgc/pages_held, 0400).
 * KGC_IOC_HEAP_CREATE
 *   EINVAL  flags or reserved[] nonzero; region_size not a power of two in
 *           [1 << KGC_REGION_SHIFT_MIN, 1 << KGC_REGION_SHIFT_MAX];
 *           nr_regions == 0.
 *   E2BIG   region_size * nr_regions overflows or exceeds the module
 *           parameter max_heap_mb (kgc_info.max_heap_bytes).
 *   EEXIST  this fd already has a heap (checked after the argument checks,
 *           so a bad argument gives EINVAL/E2BIG even then).
 *   ENOMEM  no memory for the page array, region state or table.
 * KGC_IOC_REGION_COMMIT
 *   ENODEV  before HEAP_CREATE.
 *   EINVAL  flags other than KGC_COMMIT_POPULATE; reserved[] nonzero;
 *           count == 0 or [first, first + count) not inside the heap.
 *   ENOMEM, EINTR  (POPULATE) out of memory / fatal signal: the pages
 *           allocated so far stay committed (UNCOMMIT or close frees them).
 *           COMMIT holds no heap lock while it allocates: a long POPULATE
 *           does not delay the heap's other ioctls, nor they it (it
 *           waits for them only to count each populated region's pages).
 *           With POPULATE, EINTR also when the wait for that count is
 *           ended by a fatal signal.
 * KGC_IOC_REGION_UNCOMMIT
 *   ENODEV  before HEAP_CREATE.
 *   EINVAL  flags or reserved[] nonzero; count == 0 or range not inside
 *           the heap.
 *   EBUSY   a region of the range has user_pins != 0 or a kernel-pinned
 *           page: busy_region is the first such region (the struct is
 *           copied out; EFAULT instead if that fails), its kernel pins are
 *           recorded in the table, and nothing in the range was released.
 *   EINTR   also when a fatal signal arrives while the range's pins are
 *           being checked: nothing was released.
 * KGC_IOC_PIN_QUERY
 *   ENODEV  before HEAP_CREATE.
 *   EINVAL  flags other than KGC_PIN_QUERY_SELECT or reserved[] nonzero;
 *           count == 0, count > nr_regions or [first, first + count) not
 *           inside the heap; SELECT with a bit set past count.
 *   ENOMEM  no memory for the kernel-side bitmap.
 *   EFAULT  also when bitmap_ptr cannot take (count + 63) / 64 __u64s (the
 *           table's kernel_pins/KGC_RF_KPINNED are updated all the same),
 *           or with SELECT cannot be read (nothing examined).
 * KGC_IOC_PIN_WATCH
 *   ENODEV  before HEAP_CREATE.
 *   EINVAL  op unknown; reserved[] nonzero; count == 0 or [first, first +
 *           count) not inside the heap; ARM/DISARM with a bit set past
 *           count.
 *   ENOMEM  no memory for the kernel-side bitmap.
 *   EFAULT  bitmap_ptr cannot be read (ARM, DISARM: nothing changed) or
 *           written (FIRED: the fired bits were collected all the same).
 *   EINTR   fatal signal while waiting for the heap's lock, or during the
 *           walk of a large range: ARM and DISARM keep what they did to a
 *           first part of the range; FIRED gives back every fired bit it
 *           had taken (the fd's other holders still collect them).
 * KGC_IOC_REGION_MOVE
 *   ENODEV  before HEAP_CREATE.
 *   EINVAL  flags or reserved[] nonzero; count == 0; either range not
 *           inside the heap; the ranges overlap (src == dst included).
 *   EBUSY   a region of either range has user_pins != 0 or a kernel-pinned
 *           page: busy_region is the lowest such region (the struct is
 *           copied out; EFAULT instead if that fails), its kernel pins are
 *           recorded in the table, nothing moved.
 *   EINTR   a fatal signal while waiting for the heap's lock: nothing moved.
 *           Once the pages start moving the call completes.
 *   ENOMEM  out of memory for a page-cache node, a swap-in or a page of
 *           the copy path: the pages moved so far stay moved (at dst; src
 *           reads zero there), the rest stays at src, the destination's
 *           old pages are gone, and the table is refreshed.
 * poll (not an ioctl): EPOLLIN | EPOLLPRI | EPOLLRDNORM while fired
 * watches wait to be collected; 0 otherwise (also before HEAP_CREATE: a
 * poll() or an epoll set that waits on the fd from then on wakes when
 * the first watch fires).
 * mmap (not an ioctl): ENODEV before HEAP_CREATE; EINVAL for a private
 * mapping, a heap range not inside [0, heap_size) or a table mapping other
 * than exactly [table_offset, table_offset + table_size). The mappings
 * behave like shared file mappings: they split, merge back and may be
 * grown by mremap; an access past the heap's or the table's end raises
 * SIGBUS.
 */
/*
 * 0xBC: unused in Documentation/userspace-api/ioctl/ioctl-number.rst (6.12
 * and mainline: 0xB7 remoteproc/nsfs, 0xB8 mshv/mrvl_cn10k_dpi, 0xBA
 * liveupdate, 0xC0 iowarrior), numbers 0x00-0x1F used by kgc.
 */
#define KGC_IOC_MAGIC		0xBC

#define KGC_IOC_INFO		_IOR(KGC_IOC_MAGIC, 0x00, struct kgc_info)
#define KGC_IOC_HEAP_CREATE	_IOWR(KGC_IOC_MAGIC, 0x01, struct kgc_heap_create)
#define KGC_IOC_REGION_COMMIT	_IOWR(KGC_IOC_MAGIC, 0x02, struct kgc_region_range)
#define KGC_IOC_REGION_UNCOMMIT	_IOWR(KGC_IOC_MAGIC, 0x03, struct kgc_region_range)
#define KGC_IOC_PIN_QUERY	_IOWR(KGC_IOC_MAGIC, 0x04, struct kgc_pin_query)
#define KGC_IOC_STATS		_IOR(KGC_IOC_MAGIC, 0x05, struct kgc_dev_stats)
#define KGC_IOC_PIN_WATCH	_IOWR(KGC_IOC_MAGIC, 0x06, struct kgc_pin_watch)
#define KGC_IOC_REGION_MOVE	_IOWR(KGC_IOC_MAGIC, 0x07, struct kgc_region_move)

/* Sizes are part of the ABI; both sides assert them. */
#define KGC_INFO_SIZE		80
#define KGC_HEAP_CREATE_SIZE	64
#define KGC_REGION_REC_SIZE	32
#define KGC_REGION_RANGE_SIZE	32
#define KGC_PIN_QUERY_SIZE	40
#define KGC_STATS_SIZE		128
#define KGC_PIN_WATCH_SIZE	40
#define KGC_REGION_MOVE_SIZE	40

#endif /* _UAPI_KGC_H */
