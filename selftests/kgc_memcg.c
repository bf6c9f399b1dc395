// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: heap pages are charged to the faulting task's memory
 * cgroup (__GFP_ACCOUNT), and COMMIT_POPULATE over the cgroup's limit fails
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

TEST_HARNESS_MAIN
