// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: many threads at once - faults racing uncommits, and
 * garbage ioctls interleaved with mmap/munmap/mremap/mprotect/fork/close.
 * Short on purpose: the suite runs under QEMU TCG.
 */
#include <pthread.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "kgc_util.h"

#define REGION		MiB
#define NR_REGIONS	6
/* Seconds per stress test; KGC_STRESS_SECONDS overrides (for soaking). */
static double run_seconds(void)
{
	const char *e = getenv("KGC_STRESS_SECONDS");

	return e ? atof(e) : 2;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct shared {
	int fd;
	int ramfd;		/* /dev/ram0 with O_DIRECT, or -1 */
	long pg;
	char *mem;
	volatile int stop;
	int errors;		/* unexpected results, by any thread */
	char what[160];
};

struct worker {
	pthread_t tid;
	struct shared *sh;
	int id;
	uint64_t seed;
	long iterations;
};

static void fail(struct shared *sh, const char *what, long v)
{
	if (__atomic_fetch_add(&sh->errors, 1, __ATOMIC_SEQ_CST) == 0)
		snprintf(sh->what, sizeof(sh->what), "%s (%ld)", what, v);
}

/* Owns region @id: writes a fresh pattern and checks it, over and over. */
static void *owner(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	uint32_t *p = (uint32_t *)(sh->mem + (size_t)w->id * REGION);
	size_t i, n = REGION / sizeof(*p), step = sh->pg / sizeof(*p);
	uint32_t gen = 0;

	while (!sh->stop) {
		gen++;
		for (i = 0; i < n; i += step / 4)
			p[i] = gen ^ (uint32_t)i;
		for (i = 0; i < n; i += step / 4)
			if (p[i] != (gen ^ (uint32_t)i)) {
				fail(sh, "owned region lost data", w->id);
				return NULL;
			}
		w->iterations++;
	}
	return NULL;
}

/* Touches random pages of the shared regions 2.. and drops some. */
static void *toucher(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	size_t shared_bytes = (NR_REGIONS - 2) * REGION;
	char *base = sh->mem + 2 * REGION;
	size_t off;

	while (!sh->stop) {
		off = rnd(&w->seed) % shared_bytes;
		if (rnd(&w->seed) & 1)
			base[off] = 1;
		else
			(void)*(volatile char *)(base + off);
		if ((rnd(&w->seed) & 63) == 0)
			madvise(base + (off & ~(sh->pg - 1)), sh->pg,
				MADV_DONTNEED);
		w->iterations++;
	}
	return NULL;
}

static int kgc_range_move(int fd, uint32_t src, uint32_t dst, uint32_t count)
{
	struct kgc_region_move mv = { .src = src, .dst = dst, .count = count };

	return kgc_ioctl(fd, KGC_IOC_REGION_MOVE, &mv);
}

/* Uncommits, commits, moves and queries the shared regions. */
static void *uncommitter(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	uint32_t first, count;
	int ret;

	while (!sh->stop) {
		first = 2 + rnd(&w->seed) % (NR_REGIONS - 2);
		count = 1 + rnd(&w->seed) % (NR_REGIONS - first);
		switch (rnd(&w->seed) % 5) {
		case 4:
			/* Pages move under the touchers' feet. */
			ret = kgc_range_move(sh->fd, first,
					     2 + rnd(&w->seed) % (NR_REGIONS - 2),
					     count);
			if (ret && ret != -EBUSY && ret != -EINVAL)
				fail(sh, "move", ret);
			break;
		case 0:
		case 1:
			/* A racing fault may hold a page for a moment. */
			ret = kgc_uncommit(sh->fd, first, count, NULL);
			if (ret && ret != -EBUSY)
				fail(sh, "uncommit", ret);
			break;
		case 2:
			ret = kgc_commit(sh->fd, first, 1,
					 KGC_COMMIT_POPULATE);
			if (ret)
				fail(sh, "commit populate", ret);
			break;
		default:
			ret = kgc_pinned(sh->fd, first, count);
			if (ret < 0)
				fail(sh, "pin query", ret);
			break;
		}
		w->iterations++;
	}
	return NULL;
}

/* Writes each page through sh->mem, reads it through a new mapping. */
static int coherent(struct shared *sh, size_t size)
{
	volatile char *fresh = kgc_map(sh->fd, size, 0);
	size_t off;
	int ok = 1;

	if (fresh == MAP_FAILED)
		return 0;
	for (off = 0; off < size; off += sh->pg) {
		sh->mem[off + 7] = (char)(off / sh->pg) | 1;
		if (fresh[off + 7] != sh->mem[off + 7]) {
			ok = 0;
			break;
		}
	}
	munmap((void *)fresh, size);
	return ok;
}

FIXTURE(stress) {
	struct shared sh;
	size_t size;
};

FIXTURE_SETUP(stress)
{
	memset(&self->sh, 0, sizeof(self->sh));
	self->sh.ramfd = -1;
	self->sh.mem = MAP_FAILED;
	self->sh.pg = sysconf(_SC_PAGESIZE);
	self->sh.fd = kgc_open();
	if (self->sh.fd < 0)
		SKIP(return, "cannot open " KGC_DEV " (%s): kgc.ko not loaded?",
		     strerror(errno));
	ASSERT_EQ(0, kgc_create(self->sh.fd, REGION, NR_REGIONS, NULL));
	self->size = NR_REGIONS * REGION;
	self->sh.mem = kgc_map(self->sh.fd, self->size, 0);
	ASSERT_NE(MAP_FAILED, self->sh.mem);
	self->sh.ramfd = open("/dev/ram0", O_RDWR | O_DIRECT);
}

FIXTURE_TEARDOWN(stress)
{
	if (self->sh.ramfd >= 0)
		close(self->sh.ramfd);
	if (self->sh.mem != MAP_FAILED)
		munmap(self->sh.mem, self->size);
	if (self->sh.fd >= 0)
		close(self->sh.fd);
}

TEST_F(stress, threads_fault_and_uncommit)
{
	void *(*fn[])(void *) = { owner, owner, toucher, toucher, toucher,
				  uncommitter, uncommitter };
	int n = sizeof(fn) / sizeof(fn[0]), i;
	struct worker w[8];
	double end;

	memset(w, 0, sizeof(w));
	for (i = 0; i < n; i++) {
		w[i].sh = &self->sh;
		w[i].id = i;
		w[i].seed = 0x9e3779b97f4a7c15ull * (i + 1);
		ASSERT_EQ(0, pthread_create(&w[i].tid, NULL, fn[i], &w[i]));
	}
	end = now() + run_seconds();
	while (now() < end && !self->sh.errors)
		usleep(50000);
	self->sh.stop = 1;
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, pthread_join(w[i].tid, NULL));
		TH_LOG("thread %d: %ld iterations", i, w[i].iterations);
	}
	if (self->sh.errors)
		TH_LOG("first error: %s", self->sh.what);
	ASSERT_EQ(0, self->sh.errors);
	for (i = 0; i < n; i++)
		ASSERT_GT(w[i].iterations, 0);

	/*
	 * Quiet now. A PTE left pointing at a released page would show up
	 * as a mapping that no longer sees what a fresh mapping sees.
	 */
	ASSERT_TRUE(coherent(&self->sh, self->size));

	/* Everything uncommits and refaults as zero. */
	ASSERT_EQ(0, kgc_uncommit(self->sh.fd, 0, NR_REGIONS, NULL));
	ASSERT_EQ(0, kgc_heap_pages(self->sh.fd));
	ASSERT_TRUE(all_zero(self->sh.mem, self->size));
}

/* Hammers region 0 only, with writes and reads of random pages. */
static void *hammer(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	size_t off;

	while (!sh->stop) {
		off = rnd(&w->seed) % REGION;
		if (rnd(&w->seed) & 1)
			sh->mem[off] = 1;
		else
			(void)*(volatile char *)(sh->mem + off);
		w->iterations++;
	}
	return NULL;
}

/* Uncommits region 0 as fast as it can. */
static void *region0_uncommitter(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	int ret;

	while (!sh->stop) {
		ret = kgc_uncommit(sh->fd, 0, 1, NULL);
		if (ret && ret != -EBUSY)
			fail(sh, "uncommit", ret);
		if (!ret)
			w->iterations++;
	}
	return NULL;
}

TEST_F(stress, uncommit_races_faults_on_one_region)
{
	void *(*fn[])(void *) = { hammer, hammer, hammer,
				  region0_uncommitter };
	int n = sizeof(fn) / sizeof(fn[0]), i;
	long held0 = kgc_pages_held();
	struct kgc_region_rec *table;
	struct worker w[4];
	double end;

	memset(w, 0, sizeof(w));
	for (i = 0; i < n; i++) {
		w[i].sh = &self->sh;
		w[i].seed = 0x2545f4914f6cdd1dull * (i + 3);
		ASSERT_EQ(0, pthread_create(&w[i].tid, NULL, fn[i], &w[i]));
	}
	end = now() + run_seconds();
	while (now() < end && !self->sh.errors)
		usleep(50000);
	self->sh.stop = 1;
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, pthread_join(w[i].tid, NULL));
	TH_LOG("%ld uncommits succeeded", w[n - 1].iterations);
	ASSERT_EQ(0, self->sh.errors);
	ASSERT_GT(w[n - 1].iterations, 0);

	ASSERT_TRUE(coherent(&self->sh, REGION));
	/* Accounting agrees: table, heap stats and the module counter. */
	table = kgc_map(self->sh.fd, sysconf(_SC_PAGESIZE), KGC_TABLE_OFFSET);
	ASSERT_NE(MAP_FAILED, table);
	/* The table's counts are refreshed by queries. */
	ASSERT_EQ(0, kgc_pinned(self->sh.fd, 0, 1));
	ASSERT_EQ(REGION / self->sh.pg, table[0].committed_pages);
	ASSERT_EQ(REGION / self->sh.pg, kgc_heap_pages(self->sh.fd));
	if (held0 >= 0)
		ASSERT_EQ(held0 + REGION / self->sh.pg, kgc_pages_held());
	munmap(table, sysconf(_SC_PAGESIZE));
}

/* ---- fuzz ------------------------------------------------------------- */

static const unsigned long cmds[] = {
	KGC_IOC_INFO, KGC_IOC_HEAP_CREATE, KGC_IOC_REGION_COMMIT,
	KGC_IOC_REGION_UNCOMMIT, KGC_IOC_PIN_QUERY, KGC_IOC_STATS,
	KGC_IOC_REGION_MOVE,
};

/* Random but mostly small numbers, so that some calls succeed. */
static uint64_t small(uint64_t *s)
{
	switch (rnd(s) % 4) {
	case 0:
		return rnd(s);
	case 1:
		return rnd(s) % 8;
	default:
		return rnd(s) % 3;
	}
}

static void fuzz_ioctl(struct shared *sh, uint64_t *s, int fd)
{
	uint64_t buf[32];
	unsigned long cmd;
	unsigned int i;

	for (i = 0; i < 32; i++)
		buf[i] = (rnd(s) % 3) ? 0 : small(s);
	cmd = cmds[rnd(s) % (sizeof(cmds) / sizeof(cmds[0]))];
	switch (rnd(s) % 8) {
	case 0:		/* garbage command */
		cmd = _IOC(rnd(s) % 4, (rnd(s) & 1) ? KGC_IOC_MAGIC : rnd(s) & 0xff,
			   rnd(s) & 0xff, rnd(s) % 200);
		break;
	case 1:		/* bad pointer */
		ioctl(fd, cmd, (void *)(uintptr_t)(rnd(s) % 4096));
		return;
	default:
		break;
	}
	if (cmd == KGC_IOC_HEAP_CREATE) {
		/* Never let a fuzzed heap get big: populate would eat the VM. */
		struct kgc_heap_create *hc = (void *)buf;

		hc->region_size = 1ULL << (19 + rnd(s) % 3);
		hc->nr_regions = rnd(s) % 4;
	}
	if (cmd == KGC_IOC_PIN_QUERY) {
		struct kgc_pin_query *pq = (void *)buf;

		pq->bitmap_ptr = (rnd(s) & 1) ? (uintptr_t)&buf[16] : small(s);
	}
	ioctl(fd, cmd, buf);
}

/* A random part of the heap: [*off, *off + *len) in bytes, page aligned. */
static void pick(struct shared *sh, uint64_t *s, size_t *off, size_t *len)
{
	size_t pages = NR_REGIONS * REGION / sh->pg;
	size_t first = rnd(s) % pages;

	*off = first * sh->pg;
	*len = (1 + rnd(s) % 16) * sh->pg;
	if (rnd(s) % 8 == 0)
		*len += rnd(s) % (4 * REGION);	/* sometimes too long */
	*len = (*len + sh->pg - 1) & ~(sh->pg - 1);
}

static const int advice[] = {
	MADV_DONTNEED, MADV_WILLNEED, MADV_COLD, MADV_PAGEOUT,
	MADV_POPULATE_WRITE, MADV_MERGEABLE,
};

static void *fuzzer(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	uint64_t *s = &w->seed;
	size_t off, len, cut;
	char *p, *q;
	int fd2, status;
	pid_t pid;

	while (!sh->stop) {
		switch (rnd(s) % 12) {
		case 0:
		case 1:
		case 2:
			fuzz_ioctl(sh, s, sh->fd);
			break;
		case 3:		/* map, touch, split, move, unmap */
			pick(sh, s, &off, &len);
			p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				 (rnd(s) % 8) ? MAP_SHARED : MAP_PRIVATE,
				 sh->fd, off);
			if (p == MAP_FAILED)
				break;
			p[0] = 1;
			p[len - 1] = 2;
			cut = (rnd(s) % (len / sh->pg)) * sh->pg;
			if (cut && rnd(s) & 1)
				mprotect(p + cut, len - cut, PROT_READ);
			q = mremap(p, len, len, MREMAP_MAYMOVE);
			if (q != MAP_FAILED)
				p = q;
			(void)*(volatile char *)p;
			if (cut) {
				munmap(p, cut);
				(void)*(volatile char *)(p + cut);
				munmap(p + cut, len - cut);
			} else {
				munmap(p, len);
			}
			break;
		case 4:		/* fork, sometimes after opting the heap in */
			if (rnd(s) % 4 == 0)
				madvise(sh->mem, NR_REGIONS * REGION,
					(rnd(s) & 1) ? MADV_DOFORK :
						       MADV_DONTFORK);
			pid = fork();
			if (pid == 0) {
				unsigned char v;

				if (mincore(sh->mem, sh->pg, &v) == 0)
					sh->mem[rnd(s) % (NR_REGIONS * REGION)] = 4;
				_exit(0);
			}
			if (pid > 0)
				waitpid(pid, &status, 0);
			break;
		case 5:		/* a short-lived second heap */
			fd2 = kgc_open();
			if (fd2 < 0)
				break;
			if (kgc_create(fd2, REGION, 1 + rnd(s) % 2, NULL) == 0) {
				p = kgc_map(fd2, REGION, 0);
				if (p != MAP_FAILED) {
					p[rnd(s) % REGION] = 1;
					if (rnd(s) & 1)
						close(fd2), fd2 = -1;
					munmap(p, REGION);
				}
			}
			fuzz_ioctl(sh, s, fd2 >= 0 ? fd2 : sh->fd);
			if (fd2 >= 0)
				close(fd2);
			break;
		case 6:
			kgc_uncommit(sh->fd, rnd(s) % NR_REGIONS, 1, NULL);
			break;
		case 8:		/* O_DIRECT (a short kernel pin) into the heap */
			if (sh->ramfd < 0)
				break;
			pick(sh, s, &off, &len);
			if (len > 4 * sh->pg)
				len = 4 * sh->pg;
			if (len > NR_REGIONS * REGION - off)
				len = NR_REGIONS * REGION - off;
			if (pread(sh->ramfd, sh->mem + off, len, 0) < 0)
				fail(sh, "O_DIRECT read into the heap", -errno);
			break;
		case 7:		/* madvise the core mm might try on any page */
			pick(sh, s, &off, &len);
			if (len > NR_REGIONS * REGION - off)
				len = NR_REGIONS * REGION - off;
			madvise(sh->mem + off, len, advice[rnd(s) % 6]);
			break;
		default:	/* touch the shared mapping */
			sh->mem[rnd(s) % (NR_REGIONS * REGION)] = 3;
			break;
		}
		w->iterations++;
	}
	return NULL;
}

TEST_F(stress, fuzz_ioctls_and_mm_from_threads)
{
	long held0 = kgc_pages_held();
	struct worker w[4];
	int i, n = 4;
	double end;

	memset(w, 0, sizeof(w));
	for (i = 0; i < n; i++) {
		w[i].sh = &self->sh;
		w[i].seed = 0xd1b54a32d192ed03ull * (i + 7);
		ASSERT_EQ(0, pthread_create(&w[i].tid, NULL, fuzzer, &w[i]));
	}
	end = now() + run_seconds();
	while (now() < end)
		usleep(50000);
	self->sh.stop = 1;
	for (i = 0; i < n; i++) {
		ASSERT_EQ(0, pthread_join(w[i].tid, NULL));
		TH_LOG("fuzzer %d: %ld iterations", i, w[i].iterations);
		ASSERT_GT(w[i].iterations, 0);
	}
	if (self->sh.errors)
		TH_LOG("first error: %s", self->sh.what);
	ASSERT_EQ(0, self->sh.errors);
	/* The device still works and nothing is left behind. */
	ASSERT_EQ(0, kgc_uncommit(self->sh.fd, 0, NR_REGIONS, NULL));
	ASSERT_EQ(0, kgc_heap_pages(self->sh.fd));
	if (held0 >= 0)
		ASSERT_EQ(held0, kgc_pages_held());
}

TEST_HARNESS_MAIN
