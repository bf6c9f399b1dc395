// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: heap pages are shmem pages, charged to the memory cgroup
 * of the task that maps (and faults) them; the module's own allocations a
 * user can cause in bulk - the region table above all - are charged to the
 * creator's cgroup too; COMMIT_POPULATE over the cgroup's limit fails
 * cleanly with -ENOMEM (no OOM kill, no leak).
 */
#include <sys/mount.h>
#include <sys/stat.h>

#include "kselftest_harness.h"
#include "kgc_util.h"

#define NR_REGIONS	4
#define REGION		MiB
#define CG_MNT		"/tmp/kgc_cgroup2"

static int cg_write(const char *dir, const char *file, const char *val)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

static long long cg_read(const char *dir, const char *file)
{
	char path[256], buf[64] = "";
	long long v = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) > 0)
		v = strtoll(buf, NULL, 10);
	close(fd);
	return v;
}

/* The value of @key in @dir/memory.stat, or -1 when it has none. */
static long long cg_stat(const char *dir, const char *key)
{
	char path[256], line[128];
	long long v = -1;
	size_t n = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ' ') {
			v = strtoll(line + n + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

static int has_memory_controller(const char *root)
{
	char path[256], buf[256] = "";
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(fd);
	return strstr(buf, "memory") != NULL;
}

FIXTURE(memcg) {
	char root[64];
	char dir[128];
	int mounted;
	int joined;
	int fd;
	long pg;
	char *mem;
};

FIXTURE_SETUP(memcg)
{
	char pid[32];
	struct stat st;

	self->fd = -1;
	self->mem = MAP_FAILED;
	self->mounted = 0;
	self->joined = 0;
	self->dir[0] = 0;
	self->pg = sysconf(_SC_PAGESIZE);

	if (stat("/sys/fs/cgroup/cgroup.controllers", &st) == 0) {
		strcpy(self->root, "/sys/fs/cgroup");
	} else {
		strcpy(self->root, CG_MNT);
		mkdir(CG_MNT, 0755);
		if (mount("none", CG_MNT, "cgroup2", 0, NULL))
			SKIP(return, "cannot mount cgroup2: %s", strerror(errno));
		self->mounted = 1;
	}
	if (!has_memory_controller(self->root))
		SKIP(return, "no memory controller in %s", self->root);
	cg_write(self->root, "cgroup.subtree_control", "+memory");
	snprintf(self->dir, sizeof(self->dir), "%s/kgc_test_%d", self->root,
		 getpid());
	ASSERT_EQ(0, mkdir(self->dir, 0755));
	if (cg_read(self->dir, "memory.current") < 0)
		SKIP(return, "memory controller not enabled for %s", self->dir);
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, cg_write(self->dir, "cgroup.procs", pid));
	self->joined = 1;

	self->fd = kgc_open();
	if (self->fd < 0)
		SKIP(return, "cannot open " KGC_DEV " (%s): kgc.ko not loaded?",
		     strerror(errno));
	ASSERT_EQ(0, kgc_create(self->fd, REGION, NR_REGIONS, NULL));
	self->mem = kgc_map(self->fd, NR_REGIONS * REGION, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
}

FIXTURE_TEARDOWN(memcg)
{
	char pid[32];

	if (self->mem != MAP_FAILED)
		munmap(self->mem, NR_REGIONS * REGION);
	if (self->fd >= 0)
		close(self->fd);
	if (self->joined) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		cg_write(self->root, "cgroup.procs", pid);
	}
	if (self->dir[0])
		rmdir(self->dir);
	if (self->mounted)
		umount2(CG_MNT, MNT_DETACH);
}

TEST_F(memcg, heap_pages_are_charged_to_the_faulting_cgroup)
{
	long long before, charged, after;

	before = cg_read(self->dir, "memory.current");
	ASSERT_GE(before, 0);
	memset(self->mem, 1, 2 * REGION);	/* faults */
	charged = cg_read(self->dir, "memory.current");
	ASSERT_GE(charged - before, (long long)(2 * REGION * 7 / 8));

	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, 2, NULL));
	after = cg_read(self->dir, "memory.current");
	ASSERT_GE(charged - after, (long long)(2 * REGION * 7 / 8));
}

TEST_F(memcg, populate_over_limit_fails_cleanly_enomem)
{
	long long cur = cg_read(self->dir, "memory.current");
	long held0 = kgc_pages_held();
	struct kgc_region_rec *table;
	int64_t pages;
	char lim[32];
	int ret, r;

	ASSERT_GE(cur, 0);
	table = kgc_map(self->fd, self->pg, KGC_TABLE_OFFSET);
	ASSERT_NE(MAP_FAILED, table);
	/* Room for about 1.5 of the 4 regions. */
	snprintf(lim, sizeof(lim), "%lld", cur + (long long)(3 * REGION / 2));
	ASSERT_EQ(0, cg_write(self->dir, "memory.max", lim));

	ret = kgc_commit(self->fd, 0, NR_REGIONS, KGC_COMMIT_POPULATE);
	pages = kgc_heap_pages(self->fd);
	/* Give the memory back before anything else needs to allocate. */
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, NR_REGIONS, NULL));
	ASSERT_EQ(0, cg_write(self->dir, "memory.max", "max"));

	ASSERT_EQ(-ENOMEM, ret);
	ASSERT_GT(pages, 0);
	ASSERT_LT(pages, NR_REGIONS * REGION / self->pg);
	ASSERT_EQ(0, kgc_heap_pages(self->fd));
	if (held0 >= 0)
		ASSERT_EQ(held0, kgc_pages_held());
	for (r = 0; r < NR_REGIONS; r++)
		ASSERT_EQ(0, table[r].committed_pages);
	/* Still usable. */
	self->mem[0] = 1;
	ASSERT_EQ(1, kgc_heap_pages(self->fd));
	munmap(table, self->pg);
}

/*
 * The region table (32 bytes a region, vmalloc'ed, mapped shared) is the
 * module's largest allocation per heap: 128 KiB for 4096 regions. Each
 * heap's table is charged to the creator's cgroup (v2 did not: 16 heaps
 * left 2 MiB of vmalloc uncharged) and uncharged when the heap goes.
 */
TEST_F(memcg, region_table_is_charged)
{
	enum { NR_HEAPS = 16 };
	long long cur0, cur1, cur2, vm0, vm1;
	struct kgc_heap_create hc;
	struct kgc_info info;
	int fds[NR_HEAPS], i;
	uint32_t nr;
	size_t table;

	ASSERT_EQ(0, kgc_ioctl(self->fd, KGC_IOC_INFO, &info));
	nr = info.max_heap_bytes / REGION < 4096 ? info.max_heap_bytes / REGION : 4096;
	table = (nr * sizeof(struct kgc_region_rec) + self->pg - 1) & ~(self->pg - 1);
	cur0 = cg_read(self->dir, "memory.current");
	vm0 = cg_stat(self->dir, "vmalloc");
	ASSERT_GE(cur0, 0);
	for (i = 0; i < NR_HEAPS; i++) {
		fds[i] = kgc_open();
		ASSERT_GE(fds[i], 0);
		ASSERT_EQ(0, kgc_create(fds[i], REGION, nr, &hc));
		ASSERT_EQ(table, hc.table_size);
	}
	cur1 = cg_read(self->dir, "memory.current");
	vm1 = cg_stat(self->dir, "vmalloc");
	for (i = 0; i < NR_HEAPS; i++)
		close(fds[i]);
	cur2 = cg_read(self->dir, "memory.current");
	TH_LOG("%d heaps of %u regions (table %zu KiB): memory.current +%lld KiB, vmalloc +%lld KiB; after close -%lld KiB",
	       NR_HEAPS, nr, table >> 10, (cur1 - cur0) >> 10,
	       vm0 < 0 ? -1 : (vm1 - vm0) >> 10, (cur1 - cur2) >> 10);
	ASSERT_GE(cur1 - cur0, (long long)(NR_HEAPS * table));
	if (vm0 >= 0)
		ASSERT_GE(vm1 - vm0, (long long)(NR_HEAPS * table));
	ASSERT_GE(cur1 - cur2, (long long)(NR_HEAPS * table));
}

TEST_HARNESS_MAIN
