// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: heap memory is a shmem file mm manages as its own -
 * PMD-aligned mappings and huge folios, memcg charging to the mapping's
 * owner (not to a process_vm_readv reader), swap under a memcg limit with
 * data intact while kernel-pinned pages stay resident and correct; heaps
 * of regions smaller than a PMD never get a huge folio (one would straddle
 * regions), whatever shmem_enabled says or MADV_COLLAPSE asks; INFO's
 * huge_region_shift tells the truth under shmem_enabled=deny.
 */
#include <liburing.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/swap.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kgc_util.h"

#define PMD		(2 * MiB)
#define CG_MNT		"/tmp/kgc_shmem_cg"
#define RAMDISK		"/dev/ram0"
#define SHMEM_ENABLED	"/sys/kernel/mm/transparent_hugepage/shmem_enabled"
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

static int file_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

static int file_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* "Key:   N kB" of the smaps entry containing @addr, in kB; -1 if none. */
static long smaps_kb(const void *addr, const char *key)
{
	unsigned long a = (unsigned long)addr, s, e;
	char line[256];
	int in = 0;
	long v = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2) {
			in = a >= s && a < e;
			continue;
		}
		if (in && !strncmp(line, key, strlen(key)) &&
		    line[strlen(key)] == ':') {
			v = strtol(line + strlen(key) + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

static int thp_shmem_usable(char *why, size_t len)
{
	char buf[128];

	if (file_read("/sys/kernel/mm/transparent_hugepage/shmem_enabled",
		      buf, sizeof(buf))) {
		snprintf(why, len, "no THP in this kernel");
		return 0;
	}
	if (strstr(buf, "[deny]")) {
		snprintf(why, len, "shmem_enabled is deny");
		return 0;
	}
	return 1;
}

/*
 * mmap(NULL, ...) of a heap of PMD-sized regions returns a PMD-aligned
 * address even when the free gap the allocator picks is not aligned: a
 * 12 MiB + 4 KiB hole punched at an aligned address + 4 KiB into a
 * PROT_NONE reservation would put a plain 8 MiB file mapping at
 * aligned + 4 MiB + 8 KiB (top-down); kgc must align it.
 */
TEST(heap_mmap_is_pmd_aligned)
{
	size_t len = 4 * PMD, hole = 6 * PMD + 4096;
	char *res, *x, *p;
	int fd = kgc_open(), i;

	if (fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	ASSERT_EQ(0, kgc_create(fd, PMD, 4, NULL));
	res = mmap(NULL, 64 * MiB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	x = (char *)(((unsigned long)res + PMD - 1) & ~(PMD - 1)) + 16 * MiB;
	ASSERT_EQ(0, munmap(x + 4096, hole));
	p = kgc_map(fd, len, 0);
	ASSERT_NE(MAP_FAILED, p);
	TH_LOG("hole %p-%p, heap at %p", x + 4096, x + 4096 + hole, p);
	ASSERT_EQ(0, (unsigned long)p % PMD);
	ASSERT_EQ(0, munmap(p, len));
	munmap(res, 64 * MiB);
	for (i = 0; i < 4; i++) {
		p = kgc_map(fd, 2 * PMD, PMD);	/* at a PMD-aligned offset */
		ASSERT_NE(MAP_FAILED, p);
		ASSERT_EQ(0, (unsigned long)p % PMD);
		ASSERT_EQ(0, munmap(p, 2 * PMD));
	}
	close(fd);
}

/* PMD-sized regions fault in huge folios, PMD-mapped; no opt-in needed. */
TEST(huge_folios_pmd_mapped)
{
	long pmd_kb, shmem_pmd, file_pmd;
	char why[64];
	int fd = kgc_open();
	char *p;

	if (fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	if (!thp_shmem_usable(why, sizeof(why)))
		SKIP(return, "%s", why);
	ASSERT_EQ(0, kgc_create(fd, PMD, 8, NULL));
	p = kgc_map(fd, 8 * PMD, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x3c, 8 * PMD);
	shmem_pmd = smaps_kb(p, "ShmemPmdMapped");
	file_pmd = smaps_kb(p, "FilePmdMapped");
	pmd_kb = shmem_pmd > file_pmd ? shmem_pmd : file_pmd;
	TH_LOG("ShmemPmdMapped %ld kB, FilePmdMapped %ld kB of %lu kB",
	       shmem_pmd, file_pmd, 8 * PMD >> 10);
	/* Memory may be too fragmented for some; at least half are huge. */
	ASSERT_GE(pmd_kb, (long)(4 * PMD >> 10));
	ASSERT_EQ(8 * PMD / 4096, kgc_heap_pages(fd));
	ASSERT_EQ(0x3c, p[8 * PMD - 1]);
	/* Uncommit frees whole huge folios; the range reads zero again. */
	ASSERT_EQ(0, kgc_uncommit(fd, 0, 8, NULL));
	ASSERT_EQ(0, kgc_heap_pages(fd));
	ASSERT_TRUE(all_zero(p, PMD));
	munmap(p, 8 * PMD);
	close(fd);
}

/*
 * INFO tells which region sizes get huge folios, so a client (the library
 * picks its default region size from it) need not guess: PMD-sized and up
 * where THP serves shmem, 0 where it cannot.
 */
TEST(info_huge_region_shift)
{
	struct kgc_info info;
	char why[64];
	int fd = kgc_open();

	if (fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	memset(&info, 0xff, sizeof(info));
	ASSERT_EQ(0, ioctl(fd, KGC_IOC_INFO, &info));
	if (thp_shmem_usable(why, sizeof(why))) {
		ASSERT_EQ(__builtin_ctzl(PMD), info.huge_region_shift);
	} else {
		TH_LOG("%s: huge_region_shift %u", why, info.huge_region_shift);
	}
	ASSERT_EQ(0, info.reserved0);
	close(fd);
}

/* 1 MiB regions: a huge folio would straddle two regions, so none. */
TEST(small_regions_stay_small)
{
	int fd = kgc_open();
	char *p;

	if (fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	ASSERT_EQ(0, kgc_create(fd, MiB, 8, NULL));
	p = kgc_map(fd, 8 * MiB, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 1, 8 * MiB);
	ASSERT_EQ(0, smaps_kb(p, "ShmemPmdMapped") > 0 ? 1 : 0);
	munmap(p, 8 * MiB);
	close(fd);
}

/*
 * Maps @len of heap @fd at a PMD-aligned address (heaps of small regions
 * get no alignment from mmap(NULL, ...)), the way a process that wants
 * huge folios would.
 */
static char *map_pmd_aligned(int fd, size_t len)
{
	char *res, *a, *p;

	res = mmap(NULL, len + PMD, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return MAP_FAILED;
	a = (char *)(((unsigned long)res + PMD - 1) & ~(PMD - 1));
	p = mmap(a, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
	if (a > res)
		munmap(res, a - res);
	munmap(a + len, res + PMD - a);
	return p;
}

/* NULL when MADV_COLLAPSE gives a PMD-aligned memfd mapping a huge folio. */
static const char *collapse_usable(void)
{
	static char why[96];
	int fd = memfd_create("kgc-probe", MFD_CLOEXEC);
	long pmd_kb;
	char *p;

	if (fd < 0 || ftruncate(fd, PMD))
		return "no memfd";
	p = map_pmd_aligned(fd, PMD);
	close(fd);
	if (p == MAP_FAILED)
		return "cannot map a memfd";
	memset(p, 1, PMD);
	if (madvise(p, PMD, MADV_COLLAPSE)) {
		snprintf(why, sizeof(why), "MADV_COLLAPSE of a memfd: %s",
			 strerror(errno));
		munmap(p, PMD);
		return why;
	}
	p[0] = 2;
	pmd_kb = smaps_kb(p, "ShmemPmdMapped");
	munmap(p, PMD);
	return pmd_kb > 0 ? NULL : "MADV_COLLAPSE of a memfd gave no PMD mapping";
}

/* Registers one page at @addr (and one at @addr2 unless NULL) with io_uring. */
static int pin_pages(struct io_uring *ring, void *addr, void *addr2)
{
	struct iovec iov[2] = {
		{ .iov_base = addr, .iov_len = 4096 },
		{ .iov_base = addr2, .iov_len = 4096 },
	};
	int ret = io_uring_queue_init(4, ring, 0);

	if (ret)
		return ret;
	ret = io_uring_register_buffers(ring, iov, addr2 ? 2 : 1);
	if (ret)
		io_uring_queue_exit(ring);
	return ret;
}

static void unpin_pages(struct io_uring *ring)
{
	io_uring_unregister_buffers(ring);
	io_uring_queue_exit(ring);
}

/*
 * A heap of four 1 MiB regions mapped PMD-aligned, filled with 0x5a, where
 * MADV_COLLAPSE works for a memfd; unpinned and unmapped at the end.
 */
FIXTURE(small_heap) {
	int fd;
	char *p;
	int pinned;
	struct io_uring ring;
};

FIXTURE_SETUP(small_heap)
{
	const char *why;

	self->p = MAP_FAILED;
	self->pinned = 0;
	self->fd = kgc_open();
	if (self->fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	why = collapse_usable();
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, kgc_create(self->fd, MiB, 4, NULL));
	self->p = map_pmd_aligned(self->fd, 4 * MiB);
	ASSERT_NE(MAP_FAILED, self->p);
	memset(self->p, 0x5a, 4 * MiB);
}

FIXTURE_TEARDOWN(small_heap)
{
	if (self->pinned)
		unpin_pages(&self->ring);
	if (self->p != MAP_FAILED)
		munmap(self->p, 4 * MiB);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * MADV_COLLAPSE is refused (the mappings are VM_NOHUGEPAGE), so a pin of
 * a page of region 1 pins region 1 only and region 0 can be released. v2
 * collapsed regions 0 and 1 into one huge folio: PIN_QUERY reported both,
 * UNCOMMIT of region 0 -EBUSY.
 */
TEST_F(small_heap, small_regions_refuse_collapse)
{
	char *p = self->p;
	uint32_t busy;
	int ret;

	ret = madvise(p, 4 * MiB, MADV_COLLAPSE) ? -errno : 0;
	memset(p, 0x5b, 4 * MiB);
	TH_LOG("MADV_COLLAPSE: %d, ShmemPmdMapped %ld kB", ret,
	       smaps_kb(p, "ShmemPmdMapped"));
	ASSERT_EQ(0, smaps_kb(p, "ShmemPmdMapped"));
	ASSERT_EQ(0, pin_pages(&self->ring, p + MiB + 4096, NULL));
	self->pinned = 1;
	ASSERT_EQ(1 << 1, kgc_pinned(self->fd, 0, 4));
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, 1, NULL));
	ASSERT_EQ(-EBUSY, kgc_uncommit(self->fd, 1, 1, &busy));
	ASSERT_EQ(1, busy);
	ASSERT_EQ(0x5b, p[MiB + 4096]);
	ASSERT_EQ(-EINVAL, ret);
}

/*
 * What is left, as documented: a process that lifts VM_NOHUGEPAGE itself
 * (MADV_HUGEPAGE) can collapse two 1 MiB regions into one huge folio. Its
 * pins then count for both regions (PIN_QUERY, UNCOMMIT's EBUSY), so no
 * pinned page is released; unpinned, UNCOMMIT of one region releases that
 * region only (the folio is split) and the other keeps its data.
 */
TEST_F(small_heap, lifted_by_the_process_pins_conservatively)
{
	char *p = self->p;
	uint32_t busy;

	ASSERT_EQ(0, madvise(p, 4 * MiB, MADV_HUGEPAGE));
	if (madvise(p, 2 * MiB, MADV_COLLAPSE))
		SKIP(return, "MADV_COLLAPSE after MADV_HUGEPAGE: %s",
		     strerror(errno));
	p[0] = 0x5b;
	TH_LOG("ShmemPmdMapped %ld kB", smaps_kb(p, "ShmemPmdMapped"));
	ASSERT_EQ(0, pin_pages(&self->ring, p + MiB + 4096, NULL));
	self->pinned = 1;
	ASSERT_EQ(1 << 0 | 1 << 1, kgc_pinned(self->fd, 0, 4));
	ASSERT_EQ(-EBUSY, kgc_uncommit(self->fd, 0, 1, &busy));
	ASSERT_EQ(0, busy);
	unpin_pages(&self->ring);
	self->pinned = 0;
	ASSERT_EQ(0, kgc_pinned(self->fd, 0, 4));
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, 1, NULL));
	ASSERT_TRUE(all_zero(p, MiB));
	ASSERT_EQ(0x5a, p[MiB]);
	ASSERT_EQ(0x5a, p[2 * MiB - 1]);
}

/* Saves shmem_enabled and puts it back: tests that change it. */
FIXTURE(thp_knob) {
	char saved[32];
};

FIXTURE_SETUP(thp_knob)
{
	char buf[128], *a, *b;

	self->saved[0] = 0;
	if (access(KGC_DEV, R_OK | W_OK))
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	if (geteuid())
		SKIP(return, "needs root (shmem_enabled)");
	if (file_read(SHMEM_ENABLED, buf, sizeof(buf)))
		SKIP(return, "no THP in this kernel");
	a = strchr(buf, '[');
	b = a ? strchr(a, ']') : NULL;
	ASSERT_NE(NULL, b);
	*b = 0;
	snprintf(self->saved, sizeof(self->saved), "%s", a + 1);
}

FIXTURE_TEARDOWN(thp_knob)
{
	if (self->saved[0])
		file_write(SHMEM_ENABLED, self->saved);
}

/*
 * shmem_enabled=always: a heap of 1 MiB regions mapped PMD-aligned still
 * gets small folios, from faults (regions 0-3) and from COMMIT_POPULATE
 * (regions 4-7, no mapping involved); a pinned page pins its region only.
 */
TEST_F(thp_knob, small_regions_stay_small_under_always)
{
	struct io_uring ring;
	uint32_t busy;
	char *p;
	int fd;

	ASSERT_EQ(0, file_write(SHMEM_ENABLED, "always"));
	fd = kgc_open();
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, kgc_create(fd, MiB, 8, NULL));
	ASSERT_EQ(0, kgc_commit(fd, 4, 4, KGC_COMMIT_POPULATE));
	p = map_pmd_aligned(fd, 8 * MiB);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 0x6c, 8 * MiB);
	TH_LOG("ShmemPmdMapped %ld kB", smaps_kb(p, "ShmemPmdMapped"));
	ASSERT_EQ(0, smaps_kb(p, "ShmemPmdMapped"));
	ASSERT_EQ(0, pin_pages(&ring, p + MiB + 8192, p + 5 * MiB));
	ASSERT_EQ(1 << 1 | 1 << 5, kgc_pinned(fd, 0, 8));
	ASSERT_EQ(0, kgc_uncommit(fd, 0, 1, NULL));
	ASSERT_EQ(0, kgc_uncommit(fd, 4, 1, NULL));
	ASSERT_EQ(-EBUSY, kgc_uncommit(fd, 5, 3, &busy));
	ASSERT_EQ(5, busy);
	ASSERT_EQ(0x6c, p[5 * MiB]);
	unpin_pages(&ring);
	munmap(p, 8 * MiB);
	close(fd);
}

/*
 * shmem_enabled=deny: no heap gets huge folios, and INFO says so
 * (huge_region_shift 0; v2 said 21). Back to the saved setting, INFO
 * reports PMD-sized regions again (unless that setting was deny).
 */
TEST_F(thp_knob, info_huge_region_shift_under_deny)
{
	struct kgc_info info;
	char why[64];
	char *p;
	int fd = kgc_open();

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, file_write(SHMEM_ENABLED, "deny"));
	ASSERT_EQ(0, kgc_ioctl(fd, KGC_IOC_INFO, &info));
	ASSERT_EQ(0, info.huge_region_shift);
	ASSERT_EQ(0, kgc_create(fd, PMD, 4, NULL));
	p = kgc_map(fd, 4 * PMD, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 1, 4 * PMD);
	ASSERT_EQ(0, smaps_kb(p, "ShmemPmdMapped"));
	munmap(p, 4 * PMD);

	ASSERT_EQ(0, file_write(SHMEM_ENABLED, self->saved));
	ASSERT_EQ(0, kgc_ioctl(fd, KGC_IOC_INFO, &info));
	if (thp_shmem_usable(why, sizeof(why))) {
		ASSERT_EQ(__builtin_ctzl(PMD), info.huge_region_shift);
	} else {
		ASSERT_EQ(0, info.huge_region_shift);
	}
	close(fd);
}

struct cg {
	char root[64];
	int mounted;
};

static const char *cg_setup(struct cg *cg)
{
	static char why[96];
	char buf[256];
	struct stat st;

	cg->mounted = 0;
	if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0) {
		strcpy(cg->root, "/sys/fs/cgroup");
	} else {
		strcpy(cg->root, CG_MNT);
		mkdir(CG_MNT, 0755);
		if (stat(CG_MNT "/cgroup.controllers", &st) == 0) {
			/* Left mounted by an earlier test of this file. */
		} else if (mount("none", CG_MNT, "cgroup2", 0, NULL)) {
			snprintf(why, sizeof(why), "cannot mount cgroup2: %s",
				 strerror(errno));
			return why;
		}
		cg->mounted = 1;
	}
	snprintf(buf, sizeof(buf), "%s/cgroup.controllers", cg->root);
	if (file_read(buf, buf, sizeof(buf)) || !strstr(buf, "memory"))
		return "no memory controller";
	snprintf(buf, sizeof(buf), "%s/cgroup.subtree_control", cg->root);
	file_write(buf, "+memory");
	return NULL;
}

static void cg_teardown(struct cg *cg)
{
	if (cg->mounted)
		umount2(CG_MNT, MNT_DETACH);
}

static int cg_make(struct cg *cg, const char *name, char *dir, size_t len)
{
	snprintf(dir, len, "%s/%s_%d", cg->root, name, getpid());
	return mkdir(dir, 0755) ? -errno : 0;
}

static int cg_join(const char *dir, pid_t pid)
{
	char path[256], v[32];

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	snprintf(v, sizeof(v), "%d", pid);
	return file_write(path, v);
}

static long long cg_get(const char *dir, const char *file)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (file_read(path, buf, sizeof(buf)))
		return -1;
	return strtoll(buf, NULL, 10);
}

static int cg_set(const char *dir, const char *file, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return file_write(path, val);
}

/*
 * A (cgroup A) owns and maps an untouched 16 MiB heap; B (cgroup B) reads
 * all of it with process_vm_readv. The pages it faults in are A's: A's
 * memcg is charged, B's is not (v1 charged B, the faulting task).
 */
TEST(owner_charged_not_remote_reader)
{
	char dira[160], dirb[160], rootcg[200];
	size_t len = 16 * MiB;
	long long a0, b0, a1, b1;
	int tochild[2], toparent[2], status;
	struct iovec local, remote;
	const char *why;
	struct cg cg;
	char *buf, c;
	void *addr;
	pid_t pid;

	if (access(KGC_DEV, R_OK | W_OK))
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	why = cg_setup(&cg);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, cg_make(&cg, "kgc_owner", dira, sizeof(dira)));
	ASSERT_EQ(0, cg_make(&cg, "kgc_reader", dirb, sizeof(dirb)));
	ASSERT_EQ(0, pipe(tochild));
	ASSERT_EQ(0, pipe(toparent));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int fd;
		void *p;

		if (cg_join(dira, getpid()))
			_exit(2);
		fd = kgc_open();
		if (fd < 0 || kgc_create(fd, MiB, 16, NULL))
			_exit(3);
		p = kgc_map(fd, len, 0);
		if (p == MAP_FAILED)
			_exit(4);
		if (write(toparent[1], &p, sizeof(p)) != sizeof(p))
			_exit(5);
		/* Wait until the reader is done. */
		if (read(tochild[0], &c, 1) != 1)
			_exit(6);
		_exit(0);
	}
	ASSERT_EQ(0, cg_join(dirb, getpid()));
	/* The reader's own buffer, faulted in (and charged) before. */
	buf = malloc(len);
	ASSERT_NE(NULL, buf);
	memset(buf, 0xff, len);
	ASSERT_EQ(sizeof(addr), read(toparent[0], &addr, sizeof(addr)));
	a0 = cg_get(dira, "memory.current");
	b0 = cg_get(dirb, "memory.current");
	local.iov_base = buf;
	local.iov_len = len;
	remote.iov_base = addr;
	remote.iov_len = len;
	ASSERT_EQ((ssize_t)len, process_vm_readv(pid, &local, 1, &remote, 1, 0));
	a1 = cg_get(dira, "memory.current");
	b1 = cg_get(dirb, "memory.current");
	TH_LOG("owner +%lld kB, reader +%lld kB", (a1 - a0) >> 10, (b1 - b0) >> 10);
	c = 1;
	ASSERT_EQ(1, write(tochild[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	snprintf(rootcg, sizeof(rootcg), "%s", cg.root);
	cg_join(rootcg, getpid());
	ASSERT_GE(a1 - a0, (long long)(len * 15 / 16));
	ASSERT_LT(b1 - b0, (long long)(len / 16));
	ASSERT_TRUE(all_zero(buf, len));
	free(buf);
	rmdir(dira);
	rmdir(dirb);
	cg_teardown(&cg);
}

/*
 * Under a 8 MiB memcg limit a 32 MiB heap goes partly to swap (a ramdisk),
 * and reads back intact; pages the kernel pins (io_uring fixed buffer)
 * stay resident, and I/O into them lands in the heap.
 */
TEST(swap_under_memcg_limit_keeps_data_and_pins)
{
	size_t len = 32 * MiB, i, pins = 4 * 4096;
	struct iovec iov;
	struct io_uring ring;
	unsigned char vec[4];
	long long swapped;
	char dir[160], lim[32];
	const char *why;
	struct cg cg;
	int fd, rfd, ret, ok = 1;
	uint32_t *p;

	if (geteuid())
		SKIP(return, "needs root");
	rfd = open(RAMDISK, O_RDWR);
	if (rfd < 0)
		SKIP(return, RAMDISK ": %s (no ramdisk for swap)", strerror(errno));
	why = cg_setup(&cg);
	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, make_swap(rfd, 64 * MiB / 4096));
	fsync(rfd);
	close(rfd);
	if (swapon(RAMDISK, 0))
		SKIP(return, "swapon " RAMDISK ": %s", strerror(errno));
	ASSERT_EQ(0, cg_make(&cg, "kgc_swap", dir, sizeof(dir)));
	if (cg_get(dir, "memory.swap.current") < 0) {
		swapoff(RAMDISK);
		SKIP(return, "no memory.swap.current (swap accounting off)");
	}
	ASSERT_EQ(0, cg_join(dir, getpid()));

	fd = kgc_open();
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, kgc_create(fd, MiB, 32, NULL));
	p = kgc_map(fd, len, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	memset(p, 0xee, pins);
	iov.iov_base = p;
	iov.iov_len = pins;
	ASSERT_EQ(0, io_uring_register_buffers(&ring, &iov, 1));

	snprintf(lim, sizeof(lim), "%lu", 8 * MiB);
	ASSERT_EQ(0, cg_set(dir, "memory.max", lim));
	for (i = pins / 4; i < len / 4; i++)
		p[i] = i * 2654435761u;
	swapped = cg_get(dir, "memory.swap.current");
	TH_LOG("swapped %lld kB, resident %lld kB", swapped >> 10,
	       cg_get(dir, "memory.current") >> 10);

	/* Pinned pages: resident, intact. */
	ASSERT_EQ(0, mincore(p, pins, vec));
	for (i = 0; i < 4; i++)
		ASSERT_EQ(1, vec[i] & 1);
	for (i = 0; i < pins / 4; i++)
		if (p[i] != 0xeeeeeeee)
			ok = 0;
	ASSERT_TRUE(ok);
	ASSERT_EQ(1, kgc_pinned(fd, 0, 1));
	/* Everything else reads back. */
	for (i = pins / 4; i < len / 4; i++)
		if (p[i] != (uint32_t)(i * 2654435761u))
			ok = 0;
	ASSERT_TRUE(ok);

	ret = io_uring_unregister_buffers(&ring);
	io_uring_queue_exit(&ring);
	munmap(p, len);
	close(fd);
	cg_join(cg.root, getpid());
	cg_set(dir, "memory.max", "max");
	rmdir(dir);
	ASSERT_EQ(0, swapoff(RAMDISK));
	cg_teardown(&cg);
	ASSERT_EQ(0, ret);
	ASSERT_GE(swapped, (long long)(8 * MiB));
}

TEST_HARNESS_MAIN
