// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: faulting, the region table, commit/uncommit, and what
 * mm does to the mappings (split, mremap, fork).
 */
#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kgc_util.h"

#define NR_REGIONS	4
#define REGION		MiB

FIXTURE(heap) {
	int fd;
	long pg;
	size_t size;
	char *mem;
	struct kgc_heap_create hc;
	struct kgc_region_rec *table;
};

FIXTURE_SETUP(heap)
{
	self->mem = MAP_FAILED;
	self->table = MAP_FAILED;
	self->pg = sysconf(_SC_PAGESIZE);
	self->fd = kgc_open();
	if (self->fd < 0)
		SKIP(return, "cannot open " KGC_DEV " (%s): kgc.ko not loaded?",
		     strerror(errno));
	ASSERT_EQ(0, kgc_create(self->fd, REGION, NR_REGIONS, &self->hc));
	self->size = self->hc.heap_size;
	self->mem = kgc_map(self->fd, self->size, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	self->table = kgc_map(self->fd, self->hc.table_size,
			      self->hc.table_offset);
	ASSERT_NE(MAP_FAILED, self->table);
}

FIXTURE_TEARDOWN(heap)
{
	if (self->mem != MAP_FAILED)
		munmap(self->mem, self->size);
	if (self->table != MAP_FAILED)
		munmap(self->table, self->hc.table_size);
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F(heap, fault_in_zero_filled)
{
	size_t off;

	ASSERT_EQ(0, kgc_heap_pages(self->fd));
	for (off = 0; off < self->size; off += self->pg)
		ASSERT_EQ(0, self->mem[off]);
	ASSERT_TRUE(all_zero(self->mem, self->size));
	ASSERT_EQ(self->size / self->pg, kgc_heap_pages(self->fd));
}

TEST_F(heap, data_round_trip_across_regions)
{
	uint32_t *w = (uint32_t *)self->mem;
	size_t i, n = self->size / sizeof(*w);
	char *again;

	for (i = 0; i < n; i++)
		w[i] = (uint32_t)(i * 2654435761u);
	for (i = 0; i < n; i++)
		ASSERT_EQ((uint32_t)(i * 2654435761u), w[i]);
	/* A second mapping of the same heap sees the same pages. */
	again = kgc_map(self->fd, self->size, 0);
	ASSERT_NE(MAP_FAILED, again);
	ASSERT_EQ(0, memcmp(again, self->mem, self->size));
	again[REGION + 5] = 0x5a;
	ASSERT_EQ(0x5a, self->mem[REGION + 5]);
	ASSERT_EQ(0, munmap(again, self->size));
}

/* committed_pages is refreshed by COMMIT, UNCOMMIT and PIN_QUERY. */
TEST_F(heap, table_tracks_committed_pages)
{
	self->mem[0] = 1;
	self->mem[2 * self->pg] = 1;
	self->mem[3 * REGION] = 1;
	ASSERT_EQ(0, kgc_pinned(self->fd, 0, NR_REGIONS));
	ASSERT_EQ(2, self->table[0].committed_pages);
	ASSERT_EQ(KGC_RF_COMMITTED, self->table[0].flags);
	ASSERT_EQ(0, self->table[1].committed_pages);
	ASSERT_EQ(0, self->table[1].flags);
	ASSERT_EQ(1, self->table[3].committed_pages);
	ASSERT_EQ(0, kgc_commit(self->fd, 1, 1, 0));
	ASSERT_EQ(KGC_RF_COMMITTED, self->table[1].flags);
	ASSERT_EQ(0, self->table[1].committed_pages);
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, 1, NULL));
	ASSERT_EQ(0, self->table[0].committed_pages);
	ASSERT_EQ(0, self->table[0].flags);
}

TEST_F(heap, commit_populate_allocates_region)
{
	long before = kgc_pages_held();

	ASSERT_EQ(0, kgc_commit(self->fd, 1, 2, KGC_COMMIT_POPULATE));
	ASSERT_EQ(2 * REGION / self->pg, kgc_heap_pages(self->fd));
	ASSERT_EQ(REGION / self->pg, self->table[1].committed_pages);
	ASSERT_EQ(REGION / self->pg, self->table[2].committed_pages);
	if (before >= 0)
		ASSERT_EQ(before + 2 * REGION / self->pg, kgc_pages_held());
	ASSERT_TRUE(all_zero(self->mem + REGION, 2 * REGION));
	/* Touching populated pages allocates nothing more. */
	ASSERT_EQ(2 * REGION / self->pg, kgc_heap_pages(self->fd));
}

TEST_F(heap, uncommit_frees_pages_refault_zero)
{
	struct kgc_dev_stats st;
	long held;

	memset(self->mem, 0xab, 2 * REGION);
	ASSERT_EQ(2 * REGION / self->pg, kgc_heap_pages(self->fd));
	held = kgc_pages_held();

	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, 1, NULL));
	ASSERT_EQ(REGION / self->pg, kgc_heap_pages(self->fd));
	if (held >= 0)
		ASSERT_EQ(held - REGION / self->pg, kgc_pages_held());
	ASSERT_EQ(0, kgc_ioctl(self->fd, KGC_IOC_STATS, &st));
	ASSERT_EQ(REGION / self->pg, st.pages_freed);
	ASSERT_EQ(1, st.uncommits);

	/* Region 0 refaults as fresh zero pages; region 1 kept its data. */
	ASSERT_TRUE(all_zero(self->mem, REGION));
	ASSERT_EQ((char)0xab, self->mem[REGION]);
	ASSERT_EQ((char)0xab, self->mem[2 * REGION - 1]);
}

TEST_F(heap, uncommit_twice_is_noop)
{
	self->mem[0] = 1;
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, NR_REGIONS, NULL));
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, NR_REGIONS, NULL));
	ASSERT_EQ(0, kgc_heap_pages(self->fd));
}

TEST_F(heap, user_pin_blocks_uncommit_ebusy)
{
	uint32_t busy = 0;

	memset(self->mem, 0x11, self->size);
	__atomic_fetch_add(&self->table[2].user_pins, 1, __ATOMIC_SEQ_CST);

	ASSERT_EQ(-EBUSY, kgc_uncommit(self->fd, 0, NR_REGIONS, &busy));
	ASSERT_EQ(2, busy);
	/* Nothing was released, not even the regions before the pinned one. */
	ASSERT_EQ(self->size / self->pg, kgc_heap_pages(self->fd));
	ASSERT_EQ(0x11, self->mem[0]);
	ASSERT_EQ(0x11, self->mem[2 * REGION]);
	/* Unpinned regions still uncommit on their own. */
	ASSERT_EQ(0, kgc_uncommit(self->fd, 3, 1, NULL));

	__atomic_fetch_sub(&self->table[2].user_pins, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, NR_REGIONS, NULL));
	ASSERT_EQ(0, kgc_heap_pages(self->fd));
}

TEST_F(heap, mappings_hold_no_kernel_pins)
{
	char *again = kgc_map(self->fd, self->size, 0);

	ASSERT_NE(MAP_FAILED, again);
	memset(self->mem, 1, self->size);
	ASSERT_EQ(1, again[0]);
	ASSERT_EQ(1, again[REGION]);
	ASSERT_EQ(0, kgc_pinned(self->fd, 0, NR_REGIONS));
	ASSERT_EQ(0, munmap(again, self->size));
	ASSERT_EQ(0, kgc_pinned(self->fd, 0, NR_REGIONS));
}

TEST_F(heap, vma_split_by_partial_munmap)
{
	char *hole = self->mem + REGION;

	memset(self->mem, 0x22, self->size);
	ASSERT_EQ(0, munmap(hole, REGION));
	ASSERT_EQ(0x22, self->mem[0]);
	ASSERT_EQ(0x22, self->mem[2 * REGION]);
	/* The unmapped part is still in the heap; remap it. */
	ASSERT_EQ(hole, mmap(hole, REGION, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED, self->fd, REGION));
	ASSERT_EQ(0x22, hole[123]);
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, NR_REGIONS, NULL));
	ASSERT_TRUE(all_zero(self->mem, self->size));
}

TEST_F(heap, vma_split_by_mprotect)
{
	char *mid = self->mem + REGION + 4 * self->pg;

	memset(self->mem, 0x33, self->size);
	ASSERT_EQ(0, mprotect(mid, 8 * self->pg, PROT_READ));
	ASSERT_EQ(0x33, mid[0]);
	ASSERT_EQ(0x33, self->mem[REGION]);
	self->mem[REGION] = 0x44;
	ASSERT_EQ(0, mprotect(mid, 8 * self->pg, PROT_READ | PROT_WRITE));
	mid[1] = 0x55;
	ASSERT_EQ(0, kgc_uncommit(self->fd, 1, 1, NULL));
	ASSERT_EQ(0, mid[1]);
	ASSERT_EQ(0, self->mem[REGION]);
	ASSERT_EQ(0x33, self->mem[0]);
}

TEST_F(heap, mremap_move_keeps_data)
{
	char *dst, *moved;

	memset(self->mem, 0x66, self->size);
	dst = mmap(NULL, self->size, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	moved = mremap(self->mem, self->size, self->size,
		       MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	ASSERT_EQ(dst, moved);
	self->mem = moved;
	ASSERT_EQ(0x66, moved[0]);
	ASSERT_EQ(0x66, moved[self->size - 1]);
	/* Uncommit still reaches the moved mapping. */
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, 1, NULL));
	ASSERT_EQ(0, moved[10]);
}

/* VMAs of /proc/self/maps that overlap [p, p + len). */
static int vmas_in(const void *p, size_t len)
{
	unsigned long lo = (unsigned long)p, hi = lo + len, s, e;
	char line[512];
	int n = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && s < hi && e > lo)
			n++;
	fclose(f);
	return n;
}

/*
 * Split VMAs merge back like those of any shared file mapping (v1's
 * VM_DONTEXPAND and .close op kept them apart: 128 VMAs after this), and
 * mremap of the whole range then works.
 */
TEST_F(heap, mprotect_round_trips_merge_back_to_one_vma)
{
	char *dst, *moved;
	int i;

	memset(self->mem, 0x5a, self->size);
	ASSERT_EQ(1, vmas_in(self->mem, self->size));
	for (i = 0; i < 64; i++) {
		char *p = self->mem + (size_t)(2 * i + 1) * self->pg;

		ASSERT_EQ(0, mprotect(p, self->pg, PROT_READ));
		ASSERT_EQ(0, mprotect(p, self->pg, PROT_READ | PROT_WRITE));
	}
	ASSERT_EQ(1, vmas_in(self->mem, self->size));
	ASSERT_EQ(0x5a, self->mem[self->pg]);

	dst = mmap(NULL, self->size, PROT_NONE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, dst);
	moved = mremap(self->mem, self->size, self->size,
		       MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	ASSERT_EQ(dst, moved);
	self->mem = moved;
	ASSERT_EQ(0x5a, moved[129 * self->pg]);
	ASSERT_EQ(1, vmas_in(moved, self->size));
}

static sigjmp_buf bus_jmp;

static void on_sigbus(int sig)
{
	siglongjmp(bus_jmp, 1);
}

/* 1 when reading *p raises SIGBUS, 0 when it reads fine. */
static int read_sigbus(volatile char *p)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	int bus = 0;

	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(bus_jmp, 1))
		bus = 1;
	else
		(void)*p;
	sigaction(SIGBUS, &old, NULL);
	return bus;
}

/*
 * mremap may shrink and grow the mapping like a file mapping; past the
 * heap's end there is nothing, so an access there gets SIGBUS (like past
 * a file's end).
 */
TEST_F(heap, mremap_grow_past_heap_end_sigbus)
{
	size_t size = self->size;
	char *p;

	memset(self->mem, 0x77, size);
	ASSERT_EQ(self->mem, mremap(self->mem, size, REGION, 0));
	self->size = REGION;
	p = mremap(self->mem, REGION, size, MREMAP_MAYMOVE);
	ASSERT_NE(MAP_FAILED, p);
	self->mem = p;
	self->size = size;
	ASSERT_EQ(0x77, p[size - 1]);
	p = mremap(self->mem, size, size + 2 * self->pg, MREMAP_MAYMOVE);
	ASSERT_NE(MAP_FAILED, p);
	self->mem = p;
	self->size = size + 2 * self->pg;
	ASSERT_EQ(0, read_sigbus(p + size - 1));
	ASSERT_EQ(1, read_sigbus(p + size));
	ASSERT_EQ(1, read_sigbus(p + size + self->pg));
	ASSERT_EQ(size / self->pg, kgc_heap_pages(self->fd));
}

/* mlock works on the heap (no VM_SPECIAL flag keeps it off) and uncommit
 * still releases locked pages. */
TEST_F(heap, mlock_then_uncommit)
{
	ASSERT_EQ(0, mlock(self->mem, 2 * REGION));
	ASSERT_EQ(2 * REGION / self->pg, kgc_heap_pages(self->fd));
	memset(self->mem, 0x12, 2 * REGION);
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, 1, NULL));
	ASSERT_EQ(REGION / self->pg, kgc_heap_pages(self->fd));
	ASSERT_EQ(0, self->mem[0]);
	ASSERT_EQ(0x12, self->mem[REGION]);
	ASSERT_EQ(0, munlock(self->mem, 2 * REGION));
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, NR_REGIONS, NULL));
	ASSERT_EQ(0, kgc_heap_pages(self->fd));
}

TEST_F(heap, fork_child_has_no_mapping)
{
	int status;
	pid_t pid;

	memset(self->mem, 0x77, REGION);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		unsigned char v;

		/* VM_DONTCOPY: the range is not mapped in the child. */
		_exit(mincore(self->mem, self->pg, &v) == -1 &&
		      errno == ENOMEM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0x77, self->mem[0]);
}

TEST_F(heap, heaps_are_independent)
{
	int fd2 = kgc_open();
	char *mem2;

	ASSERT_GE(fd2, 0);
	ASSERT_EQ(0, kgc_create(fd2, REGION, NR_REGIONS, NULL));
	mem2 = kgc_map(fd2, self->size, 0);
	ASSERT_NE(MAP_FAILED, mem2);
	memset(self->mem, 0x12, self->size);
	memset(mem2, 0x34, self->size);
	ASSERT_EQ(0, kgc_uncommit(self->fd, 0, NR_REGIONS, NULL));
	ASSERT_EQ(0x34, mem2[0]);
	ASSERT_EQ(0x34, mem2[self->size - 1]);
	ASSERT_EQ(self->size / self->pg, kgc_heap_pages(fd2));
	ASSERT_EQ(0, self->mem[0]);
	ASSERT_EQ(0, munmap(mem2, self->size));
	ASSERT_EQ(0, close(fd2));
}

TEST_F(heap, debugfs_lists_regions)
{
	char path[128], line[256];
	unsigned int id, best = 0;
	unsigned int r, cp, up, kp, fl;
	struct dirent *de;
	int seen = 0;
	FILE *f;
	DIR *d;

	d = opendir(KGC_DEBUGFS);
	if (!d)
		SKIP(return, "%s: %s (debugfs not mounted?)", KGC_DEBUGFS,
		     strerror(errno));
	/* Heap ids only grow: ours is the newest. */
	while ((de = readdir(d)))
		if (sscanf(de->d_name, "%u", &id) == 1 && id > best)
			best = id;
	closedir(d);
	ASSERT_NE(0, best);

	memset(self->mem + REGION, 1, 3 * self->pg);
	/* Heap and table are mapped. */
	self->table[1].user_pins = 5;
	snprintf(path, sizeof(path), KGC_DEBUGFS "/%u", best);
	f = fopen(path, "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f));
	ASSERT_NE(NULL, strstr(line, " mapped 1 "));
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%u %u %u %u %x", &r, &cp, &up, &kp, &fl) != 5)
			continue;
		if (r == 1) {
			ASSERT_EQ(3, cp);
			ASSERT_EQ(5, up);
			ASSERT_EQ(0, kp);
			ASSERT_EQ(KGC_RF_COMMITTED, fl);
		}
		seen++;
	}
	fclose(f);
	self->table[1].user_pins = 0;
	ASSERT_EQ(NR_REGIONS, seen);
}

TEST_F(heap, close_with_mapping_keeps_heap_alive)
{
	long held = kgc_pages_held();

	memset(self->mem, 0x5c, REGION);
	/* The mapping holds the file: the heap lives on after close(). */
	ASSERT_EQ(0, close(self->fd));
	self->fd = -1;
	ASSERT_EQ(0x5c, self->mem[REGION - 1]);
	self->mem[REGION] = 1;
	if (held >= 0)
		ASSERT_EQ(held + REGION / self->pg + 1, kgc_pages_held());
	ASSERT_EQ(0, munmap(self->mem, self->size));
	ASSERT_EQ(0, munmap(self->table, self->hc.table_size));
	self->mem = MAP_FAILED;
	self->table = MAP_FAILED;
	/* munmap dropped the last file reference: the heap is gone. */
	if (held >= 0)
		ASSERT_EQ(held, kgc_pages_held());
}

TEST_HARNESS_MAIN
