/* SPDX-License-Identifier: MIT */
/*
 * backend.c - the only file that talks to the OS: heap reservation (anon
 * mmap or /dev/kgc), commit/uncommit, kernel pin queries and pin-drop
 * watches, side-table memory, membarrier.
 */
#define _GNU_SOURCE	/* mremap */
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "gc_internal.h"
#include "uapi/kgc.h"

#define THP_SIZE ((size_t)2 << 20)

_Static_assert(sizeof(struct kgc_region_rec) == KGC_REGION_REC_SIZE, "uapi");
_Static_assert(sizeof(struct kgc_heap_create) == KGC_HEAP_CREATE_SIZE, "uapi");
_Static_assert(sizeof(struct kgc_pin_query) == KGC_PIN_QUERY_SIZE, "uapi");
_Static_assert(KGC_WATCH_ARM == KPW_ARM && KGC_WATCH_DISARM == KPW_DISARM &&
	       KGC_WATCH_FIRED == KPW_FIRED, "gc_internal.h's watch ops are the uapi's");

void *kgci_os_alloc(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void kgci_os_free(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}

size_t kgci_os_phys_mem(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	return pages > 0 && psz > 0 ? (size_t)pages * (size_t)psz : (size_t)1 << 30;
}

static void membarrier_register(struct backend *be)
{
	long r = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);

	be->membarrier = false;
	if (r < 0 || !(r & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
		be->membarrier = true;
}

/*
 * The GC side of the asymmetric Dekker handshake: after it returns, every
 * running thread of this process has executed a full barrier, so a mutator's
 * plain store of its state is visible (or the mutator sees the poll word).
 */
bool kgci_os_membarrier_ok(struct kgc_heap *h)
{
	return h->be.membarrier;
}

void kgci_os_membarrier(struct kgc_heap *h)
{
	/* without membarrier, mutators use a seq_cst RMW and the collector's
	 * seq_cst poll store / state loads complete the handshake */
	if (h->be.membarrier)
		syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
}

#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4	/* Linux 5.7 (private anonymous mappings) */
#endif

static long map_count_limit(void)
{
	char buf[32];
	int fd = open("/proc/sys/vm/max_map_count", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 65530;	/* the kernel's default */
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

/*
 * Page moves on anonymous memory: mremap(MREMAP_FIXED | MREMAP_DONTUNMAP)
 * takes the source's page tables (huge PMDs whole where both ends are
 * 2 MiB-aligned) to the destination and leaves the source mapped and
 * empty, so it reads zero. Each moved range becomes a VMA of its own (its
 * page offset is the source's: it does not merge with its neighbours), so
 * the heap's VMAs are bounded by one per region plus the pieces between:
 * usable when the kernel has DONTUNMAP (probed on a scratch mapping) and
 * 2 * nregions more VMAs fit under vm.max_map_count with room to spare
 * (half of it); otherwise moves copy. A move the kernel still refuses
 * (ENOMEM: the map count) is copied, counted in be.move_copies.
 */
static bool anon_remap_usable(uint32_t nregions)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *p = mmap(NULL, (size_t)psz * 3, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	bool ok;

	if (p == MAP_FAILED)
		return false;
	p[0] = 42;
	ok = mremap(p, (size_t)psz, (size_t)psz, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
		    p + 2 * psz) != MAP_FAILED && p[2 * psz] == 42 && p[0] == 0;
	munmap(p, (size_t)psz * 3);
	return ok && 2 * (long)nregions < map_count_limit() / 2;
}

static int anon_open(struct kgc_heap *h, size_t region_size, uint32_t nregions)
{
	size_t align = region_size > THP_SIZE ? region_size : THP_SIZE;
	size_t size = region_size * nregions, res = size + align;
	char *p = mmap(NULL, res, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	uintptr_t b;

	if (p == MAP_FAILED)
		return -errno;
	b = ALIGN_UP((uintptr_t)p, align);
	/*
	 * Transparent huge pages: far fewer page faults when regions are first
	 * used, but with the usual defrag=madvise setting each first touch of a
	 * 2 MiB extent may compact memory synchronously (4-16 ms per fault
	 * measured on a 2-CPU VM): the churn bench ran ~27% slower with them.
	 * Opt-in (KGC_THP=1), like HotSpot's UseTransparentHugePages.
	 */
	if (h->opt.thp)
		madvise((void *)b, size, MADV_HUGEPAGE);
	h->be.reserve = p;
	h->be.reserve_size = res;
	h->base = (char *)b;
	h->pin_base = calloc(nregions, sizeof(uint32_t));
	if (!h->pin_base) {
		munmap(p, res);
		return -ENOMEM;
	}
	h->pin_stride = 1;
	h->be.kind = KGC_BACKEND_ANON;
	h->be.fd = -1;
	h->be.move_kind = anon_remap_usable(nregions) ? MOVE_REMAP : MOVE_COPY;
	return 0;
}

/* The module's KGC_IOC_INFO: 0, -errno, or -EPROTO for a module the library
 * cannot use (without PIN_QUERY, regions the kernel pins could be moved under
 * its I/O). */
static int kmod_info(int fd, struct kgc_info *info)
{
	memset(info, 0, sizeof(*info));
	if (ioctl(fd, KGC_IOC_INFO, info) < 0)
		return -errno;
	if (info->api_version != KGC_API_VERSION || !(info->features & KGC_FEAT_REGION_TABLE) ||
	    !(info->features & KGC_FEAT_PIN_QUERY) || !(info->features & KGC_FEAT_PIN_SELECT) ||
	    info->region_rec_size != sizeof(struct kgc_region_rec))
		return -EPROTO;
	return 0;
}

static int kmod_open(struct kgc_heap *h, size_t region_size, uint32_t nregions)
{
	struct kgc_info info;
	struct kgc_heap_create hc;
	int fd = open("/dev/kgc", O_RDWR | O_CLOEXEC), err;
	void *heap, *table;

	if (fd < 0)
		return -errno;
	if ((err = kmod_info(fd, &info)))
		goto fail;
	/* default heap size: fit the module's limits */
	if (!h->opt.max_heap && info.max_heap_bytes &&
	    (uint64_t)region_size * nregions > info.max_heap_bytes)
		nregions = (uint32_t)(info.max_heap_bytes / region_size);
	if (!h->opt.max_heap && info.max_regions && nregions > info.max_regions)
		nregions = info.max_regions;
	if (nregions < 2) {
		err = -EINVAL;
		goto fail;
	}
	h->nregions = nregions;
	memset(&hc, 0, sizeof(hc));
	hc.region_size = region_size;
	hc.nr_regions = nregions;
	if (ioctl(fd, KGC_IOC_HEAP_CREATE, &hc) < 0) {
		err = -errno;
		goto fail;
	}
	/* reserve region-aligned address space, then map the device over it */
	h->be.reserve_size = hc.heap_size + region_size;
	h->be.reserve = mmap(NULL, h->be.reserve_size, PROT_NONE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (h->be.reserve == MAP_FAILED) {
		err = -errno;
		h->be.reserve = NULL;
		goto fail;
	}
	heap = mmap((void *)ALIGN_UP((uintptr_t)h->be.reserve, region_size), hc.heap_size,
		    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	if (heap == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	table = mmap(NULL, hc.table_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, hc.table_offset);
	if (table == MAP_FAILED) {
		err = -errno;
		goto fail;
	}
	h->be.pinq_bitmap = calloc((nregions + 63) / 64, sizeof(uint64_t));
	if (!h->be.pinq_bitmap) {
		munmap(table, hc.table_size);
		err = -ENOMEM;
		goto fail;
	}
	h->base = heap;
	h->be.table = table;
	h->be.table_size = hc.table_size;
	h->pin_base = (_Atomic uint32_t *)((char *)table + offsetof(struct kgc_region_rec, user_pins));
	h->pin_stride = sizeof(struct kgc_region_rec) / sizeof(uint32_t);
	h->be.fd = fd;
	h->be.kind = KGC_BACKEND_KMOD;
	/* optional: without it, retained regions wait for a collection to look */
	h->be.pin_watch = !!(info.features & KGC_FEAT_PIN_WATCH);
	/* optional: without it, kgci_backend_move_regions copies */
	h->be.move_kind = info.features & KGC_FEAT_REGION_MOVE ? MOVE_IOCTL : MOVE_COPY;
	return 0;
fail:
	if (h->be.reserve)
		munmap(h->be.reserve, h->be.reserve_size);
	h->be.reserve = NULL;
	h->be.fd = -1;
	close(fd);
	return err;
}

/*
 * The region size the backend serves best: on /dev/kgc the smallest that
 * gets huge folios (KGC_IOC_INFO's huge_region_shift, 0 where shmem hands
 * out none; the module gives smaller regions small pages only - a no-huge
 * mount, VM_NOHUGEPAGE - so a huge folio straddles two regions only if a
 * process forces one in itself, and then its pins count for both); 0 on anonymous
 * memory or when the module is absent or of another API version.
 */
size_t kgci_backend_region_hint(int kind)
{
	struct kgc_info info;
	int fd;

	if (kind == KGC_BACKEND_ANON || (fd = open("/dev/kgc", O_RDWR | O_CLOEXEC)) < 0)
		return 0;
	if (kmod_info(fd, &info))
		info.huge_region_shift = 0;
	close(fd);
	if (info.huge_region_shift < KGC_REGION_SHIFT_MIN || info.huge_region_shift > KGC_REGION_SHIFT_MAX)
		return 0;
	return (size_t)1 << info.huge_region_shift;
}

int kgci_backend_open(struct kgc_heap *h, int kind, size_t region_size, uint32_t nregions)
{
	int err = -ENODEV;

	if (kind == KGC_BACKEND_KMOD || kind == KGC_BACKEND_AUTO) {
		err = kmod_open(h, region_size, nregions);
		if (err == 0 || kind == KGC_BACKEND_KMOD) {
			if (err)
				kgci_err_set(-err, "kmod backend: /dev/kgc unusable: %s", strerror(-err));
			else
				h->be.kind = KGC_BACKEND_KMOD;
			goto out;
		}
	}
	err = anon_open(h, region_size, h->nregions);
	if (err)
		kgci_err_set(-err, "anon backend: cannot reserve %zu bytes: %s",
			region_size * nregions, strerror(-err));
out:
	if (!err)
		membarrier_register(&h->be);
	return err;
}

void kgci_backend_close(struct kgc_heap *h)
{
	if (h->be.kind == KGC_BACKEND_KMOD) {
		munmap(h->be.table, h->be.table_size);
		free(h->be.pinq_bitmap);
		munmap(h->be.reserve, h->be.reserve_size);
		close(h->be.fd);
	} else {
		munmap(h->be.reserve, h->be.reserve_size);
		free((void *)h->pin_base);
	}
}

int kgci_backend_commit(struct kgc_heap *h, uint32_t first, uint32_t count)
{
	/* anon memory and the module's heap both fault in on first touch */
	(void)h; (void)first; (void)count;
	return 0;
}

int kgci_backend_uncommit(struct kgc_heap *h, uint32_t first, uint32_t count)
{
	if (h->be.kind == KGC_BACKEND_KMOD) {
		struct kgc_region_range rr;

		memset(&rr, 0, sizeof(rr));
		rr.first = first;
		rr.count = count;
		if (ioctl(h->be.fd, KGC_IOC_REGION_UNCOMMIT, &rr) < 0) {
			if (errno == EBUSY)
				h->be.uncommit_busy++;
			return -errno;
		}
		return 0;
	}
	if (madvise(h->base + ((size_t)first << h->region_shift),
		    (size_t)count << h->region_shift, MADV_DONTNEED) < 0)
		return -errno;
	return 0;
}

static bool uncommit_wanted(const struct region *r, const struct uncommit_plan *plan, uint32_t *seen)
{
	if (r->type != RT_FREE || !(r->flags & RF_COMMITTED) || r->quarantined)
		return false;
	return ++*seen > plan->keep && r->free_gc < plan->gc && r->free_ns < plan->ns;
}

/* Regions [first, first + n) (wanted) back to the OS, the run at once, else
 * one by one (the module refuses kernel-pinned ones: -EBUSY). */
static uint32_t uncommit_run(struct kgc_heap *h, uint32_t first, uint32_t n)
{
	uint32_t done = 0;
	uint64_t busy = h->be.uncommit_busy;
	bool all = kgci_backend_uncommit(h, first, n) == 0;

	h->be.uncommit_busy = busy;	/* refusals are counted per region, below */
	for (uint32_t i = first; i < first + n; i++) {
		struct region *r = &h->regions[i];

		if (all || kgci_backend_uncommit(h, i, 1) == 0) {
			r->flags &= ~RF_COMMITTED;
			r->flags |= RF_ZEROED;
			done++;
		}
	}
	return done;
}

/* At a safepoint: carry out policy.c's plan; returns regions given back. */
uint32_t kgci_backend_uncommit_free(struct kgc_heap *h, const struct uncommit_plan *plan)
{
	uint32_t seen = 0, done = 0, run = 0;

	for (uint32_t i = 0; i <= h->nregions; i++) {
		if (i < h->nregions && uncommit_wanted(&h->regions[i], plan, &seen)) {
			run++;
			continue;
		}
		if (run)
			done += uncommit_run(h, i - run, run);
		run = 0;
	}
	return done;
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23	/* Linux 5.14 */
#endif

/*
 * Back [p, p + len) (page-aligned heap memory) with written pages: the
 * pre-touch of regions the next pause copies into (alloc.c). One
 * MADV_POPULATE_WRITE faults the range in without a trap per page, then
 * one store per page, which costs only what the first write still costs
 * (under a hypervisor that maps guest pages lazily, the larger part).
 * Where the kernel refuses it (before 5.14, or a mapping it does not
 * populate) the stores alone do the work, from then on. Measured on this
 * project's 2-CPU VM guest: 64 MiB backed in 95 ms against 171 ms by
 * stores alone (bench/RESULTS.md has what it changes per benchmark).
 */
void kgci_backend_back(struct kgc_heap *h, char *p, size_t len)
{
	if (!atomic_load_explicit(&h->be.no_populate, memory_order_relaxed) &&
	    madvise(p, len, MADV_POPULATE_WRITE) < 0 && (errno == EINVAL || errno == ENOSYS))
		atomic_store_explicit(&h->be.no_populate, true, memory_order_relaxed);
	for (size_t off = 0; off < len; off += 4096)
		*(volatile char *)(p + off) = 0;
}

/* KGC_STALE_CHECK: make heap memory inaccessible or accessible again. */
int kgci_backend_protect(struct kgc_heap *h, void *p, size_t len, bool accessible)
{
	(void)h;
	return mprotect(p, len, accessible ? PROT_READ | PROT_WRITE : PROT_NONE) < 0 ? -errno : 0;
}

/*
 * Regions the kernel holds pinned (kmod: PIN_QUERY into the backend's own
 * scratch bitmap, then copied to bitmap, nregions bits). Returns how many
 * (0 on anon: the kernel pins nothing there), or -errno if they cannot be
 * known: the caller must then assume every region in use is pinned.
 *
 * Only regions in use - and free ones the kernel pinned at the last look,
 * until it lets go - are asked about (KGC_PIN_QUERY_SELECT): the module's
 * work follows the used part of the heap, not its size. Free regions'
 * bits come back 0.
 */
int kgci_backend_kernel_pins(struct kgc_heap *h, uint64_t *bitmap)
{
	size_t words = ((size_t)h->nregions + 63) / 64;
	uint64_t *sel = h->be.pinq_bitmap;
	struct kgc_pin_query q;

	if (h->be.kind != KGC_BACKEND_KMOD)
		return 0;
	if (!sel || !bitmap)
		return -ENOMEM;
	memset(sel, 0, words * sizeof(uint64_t));
	for (uint32_t i = 0; i < h->nregions; i++)
		if (h->regions[i].type != RT_FREE || (h->regions[i].flags & RF_KPINNED))
			sel[i / 64] |= 1ULL << (i % 64);
	memset(&q, 0, sizeof(q));
	q.first = 0;
	q.count = h->nregions;
	q.flags = KGC_PIN_QUERY_SELECT;
	q.bitmap_ptr = (uintptr_t)sel;
	if (ioctl(h->be.fd, KGC_IOC_PIN_QUERY, &q) < 0)
		return -errno;
	if (q.nr_pinned > h->nregions)
		return -EPROTO;
	memcpy(bitmap, h->be.pinq_bitmap, words * sizeof(uint64_t));
	return (int)q.nr_pinned;
}

/*
 * Pin-drop watches (kmod with KGC_FEAT_PIN_WATCH): op KPW_ARM / KPW_DISARM
 * on the regions whose bit is set in bitmap (nregions bits), or KPW_FIRED:
 * bitmap (zeroed here first) gets the regions whose watch fired since the
 * last KPW_FIRED. Returns the heap's armed watches, or -errno (-EOPNOTSUPP
 * without watches: anon, or a module without them).
 */
int kgci_backend_pin_watch(struct kgc_heap *h, int op, uint64_t *bitmap)
{
	struct kgc_pin_watch w;

	if (h->be.kind != KGC_BACKEND_KMOD || !h->be.pin_watch)
		return -EOPNOTSUPP;
	if (op == KPW_FIRED)
		memset(bitmap, 0, ((size_t)h->nregions + 63) / 64 * sizeof(uint64_t));
	memset(&w, 0, sizeof(w));
	w.first = 0;
	w.count = h->nregions;
	w.bitmap_ptr = (uintptr_t)bitmap;
	w.op = (uint32_t)op;
	if (ioctl(h->be.fd, KGC_IOC_PIN_WATCH, &w) < 0)
		return -errno;
	return (int)w.nr_armed;
}

/* The watch thread's wake-up: an eventfd (-errno if none). */
int kgci_os_event_open(void)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);

	return fd < 0 ? -errno : fd;
}

void kgci_os_event_signal(int fd)
{
	uint64_t one = 1;

	while (write(fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

void kgci_os_event_close(int fd)
{
	if (fd >= 0)
		close(fd);
}

/*
 * Wait until a pin-drop watch fired (the device polls readable), event_fd
 * was signalled, or timeout_ms passed (-1: no timeout). Returns a mask of
 * KPW_WAKE_FIRED / KPW_WAKE_EVENT (0: timeout), or -errno.
 */
int kgci_backend_watch_wait(struct kgc_heap *h, int event_fd, int timeout_ms)
{
	struct pollfd p[2] = {
		{ .fd = h->be.fd, .events = POLLIN | POLLPRI },
		{ .fd = event_fd, .events = POLLIN },
	};
	int n = poll(p, 2, timeout_ms), ret = 0;

	if (n < 0)
		return -errno;
	if (p[0].revents & (POLLERR | POLLNVAL))
		return -EIO;
	if (p[0].revents & (POLLIN | POLLPRI))
		ret |= KPW_WAKE_FIRED;
	if (p[1].revents) {
		uint64_t v;

		while (read(event_fd, &v, sizeof(v)) < 0 && errno == EINTR)
			;
		ret |= KPW_WAKE_EVENT;
	}
	return ret;
}

/* Copy [src, src + count) to [dst, ...), then release src's regions outside dst. */
int kgci_backend_copy_regions(struct kgc_heap *h, uint32_t src, uint32_t dst, uint32_t count)
{
	uint32_t lo = src, hi = src + count;
	int err = 0;

	memmove(h->base + ((size_t)dst << h->region_shift), h->base + ((size_t)src << h->region_shift),
		(size_t)count << h->region_shift);
	/* the part of src that dst does not cover: [lo, hi) */
	if (dst > src && dst < src + count)
		hi = dst;
	else if (dst < src && dst + count > src)
		lo = dst + count;
	if (lo < hi)
		err = kgci_backend_uncommit(h, lo, hi - lo);
	h->be.move_copies++;
	return err;
}

/* One page move of disjoint ranges: 0, or -errno with nothing moved. */
static int move_pages(struct kgc_heap *h, uint32_t src, uint32_t dst, uint32_t count)
{
	size_t len = (size_t)count << h->region_shift;

	if (h->be.move_kind == MOVE_IOCTL) {
		struct kgc_region_move m;

		memset(&m, 0, sizeof(m));
		m.src = src;
		m.dst = dst;
		m.count = count;
		return ioctl(h->be.fd, KGC_IOC_REGION_MOVE, &m) < 0 ? -errno : 0;
	}
	if (mremap(h->base + ((size_t)src << h->region_shift), len, len,
		   MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP,
		   h->base + ((size_t)dst << h->region_shift)) == MAP_FAILED)
		return -errno;
	return 0;
}

/*
 * mremap moves a whole page table (512 PTEs) in one step where source and
 * destination are both 2 MiB-aligned and the destination has none (the
 * implicit unmap of the destination frees it): with 1 MiB regions only
 * moves by an even number of regions get it (bench/RESULTS-move.md: 64 MiB
 * of small pages into free regions in 0.10-0.20 ms, 0.54-0.59 ms when off
 * by one region).
 * Huge PMDs need the same alignment. The module moves folio by folio, so
 * the distance makes no difference there.
 */
uint32_t kgci_backend_move_granule(const struct kgc_heap *h)
{
	if (h->be.move_kind != MOVE_REMAP || h->region_size >= THP_SIZE)
		return 1;
	return (uint32_t)(THP_SIZE / h->region_size);
}

uint32_t kgci_backend_move_start(const struct kgc_heap *h, uint32_t src, uint32_t d, uint32_t n)
{
	uint32_t g = kgci_backend_move_granule(h);
	long off;

	if (g <= 1 || n < 2 * g)
		return d;
	off = ((long)d - (long)src) % (long)g;
	if (off < 0)
		off += g;
	return (uint32_t)off <= d ? d - (uint32_t)off : d;
}

/*
 * Overlapping ranges move in pieces of |dst - src| regions, each disjoint
 * from its destination (the module refuses overlapping ranges with EINVAL,
 * mremap too): front first when moving down, back first when moving up,
 * so a piece only lands where an earlier one left.
 */
int kgci_backend_move_regions(struct kgc_heap *h, uint32_t src, uint32_t dst, uint32_t count)
{
	uint32_t d = src > dst ? src - dst : dst - src, step = d < count ? d : count;
	int err = 0;

	if (!count || d == 0 || src + count > h->nregions || dst + count > h->nregions)
		return count && d == 0 ? 0 : -EINVAL;
	if (h->be.move_kind == MOVE_COPY)
		return kgci_backend_copy_regions(h, src, dst, count);
	for (uint32_t done = 0; done < count; done += step) {
		uint32_t n = count - done < step ? count - done : step;
		uint32_t off = dst < src ? done : count - done - n;
		int e = move_pages(h, src + off, dst + off, n);

		if (!e) {
			h->be.move_calls++;
			continue;
		}
		/* no page move (or it failed: nothing moved): copy, and say so */
		e = kgci_backend_copy_regions(h, src + off, dst + off, n);
		if (e && !err)
			err = e;
	}
	return err;
}
