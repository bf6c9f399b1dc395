// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: a long COMMIT_POPULATE does not hold up the heap's other
 * ioctls (v1 held heap->lock, unkillably, across the whole populate), a
 * fatal signal ends a populate promptly, and a populate racing an UNCOMMIT
 * of the same region leaves the table's page count true.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "kgc_util.h"

#define REGION		(4 * MiB)
#define NR_REGIONS	64		/* 256 MiB */

struct populate {
	int fd;
	int ret;
	int done;
};

static void *populate_all(void *arg)
{
	struct populate *p = arg;

	p->ret = kgc_commit(p->fd, 0, NR_REGIONS - 1, KGC_COMMIT_POPULATE);
	__atomic_store_n(&p->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

TEST(other_ioctls_do_not_wait_for_populate)
{
	struct populate p = { .fd = kgc_open() };
	long total = (NR_REGIONS - 1) * (REGION / sysconf(_SC_PAGESIZE));
	int64_t pages = 0;
	pthread_t th;
	uint32_t busy;

	if (p.fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	ASSERT_EQ(0, kgc_create(p.fd, REGION, NR_REGIONS, NULL));
	ASSERT_EQ(0, pthread_create(&th, NULL, populate_all, &p));
	/* STATS takes no heap lock: wait until the populate is under way. */
	while (!__atomic_load_n(&p.done, __ATOMIC_SEQ_CST) && pages < 256)
		pages = kgc_heap_pages(p.fd);
	if (pages >= total / 2) {
		pthread_join(th, NULL);
		SKIP(return, "populate finished too fast to overlap");
	}
	/* Region NR_REGIONS - 1 is not being populated. */
	ASSERT_EQ(0, kgc_pinned(p.fd, NR_REGIONS - 1, 1));
	ASSERT_EQ(0, kgc_uncommit(p.fd, NR_REGIONS - 1, 1, &busy));
	ASSERT_EQ(0, kgc_commit(p.fd, NR_REGIONS - 1, 1, 0));
	pages = kgc_heap_pages(p.fd);
	ASSERT_EQ(0, __atomic_load_n(&p.done, __ATOMIC_SEQ_CST));
	ASSERT_LT(pages, total);
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, p.ret);
	ASSERT_EQ(total, kgc_heap_pages(p.fd));
	ASSERT_EQ(0, kgc_uncommit(p.fd, 0, NR_REGIONS, NULL));
	ASSERT_EQ(0, close(p.fd));
}

/* SIGKILL during a long populate ends the process; nothing leaks. */
TEST(populate_is_killable)
{
	long held0 = kgc_pages_held();
	int fd = kgc_open(), status;
	int64_t pages = 0;
	pid_t pid;

	if (fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	ASSERT_EQ(0, kgc_create(fd, REGION, NR_REGIONS, NULL));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		kgc_commit(fd, 0, NR_REGIONS, KGC_COMMIT_POPULATE);
		pause();
		_exit(0);
	}
	while (pages < 256)
		pages = kgc_heap_pages(fd);
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status));
	ASSERT_EQ(SIGKILL, WTERMSIG(status));
	ASSERT_EQ(0, close(fd));
	if (held0 >= 0)
		ASSERT_EQ(held0, kgc_pages_held());
}

struct racer {
	int fd;
	int go;		/* both threads spin on it, then race */
	int ret;
};

static void *uncommit_racer(void *arg)
{
	struct racer *r = arg;

	while (!__atomic_load_n(&r->go, __ATOMIC_ACQUIRE))
		;
	r->ret = kgc_uncommit(r->fd, 0, 1, NULL);
	return NULL;
}

/*
 * COMMIT_POPULATE and UNCOMMIT of one region, started together, 100 times:
 * afterwards the table's committed_pages equals the region's pages (the
 * heap's, STATS). v2 stored "all pages" after populating, without a lock:
 * an UNCOMMIT that punched the region in the middle left it wrong.
 */
TEST(populate_racing_uncommit_keeps_table_true)
{
	struct racer r = { .fd = kgc_open() };
	struct kgc_region_rec *table;
	struct kgc_heap_create hc;
	int i, wrong = 0, ret;
	int64_t pages;
	pthread_t th;

	if (r.fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	ASSERT_EQ(0, kgc_create(r.fd, MiB, 1, &hc));
	table = kgc_map(r.fd, hc.table_size, hc.table_offset);
	ASSERT_NE(MAP_FAILED, table);
	for (i = 0; i < 100; i++) {
		r.go = 0;
		ASSERT_EQ(0, pthread_create(&th, NULL, uncommit_racer, &r));
		__atomic_store_n(&r.go, 1, __ATOMIC_RELEASE);
		ret = kgc_commit(r.fd, 0, 1, KGC_COMMIT_POPULATE);
		ASSERT_EQ(0, pthread_join(th, NULL));
		ASSERT_EQ(0, ret);
		ASSERT_EQ(0, r.ret);
		pages = kgc_heap_pages(r.fd);
		if (table[0].committed_pages != pages) {
			if (!wrong++)
				TH_LOG("round %d: table says %u pages, the region has %lld",
				       i, table[0].committed_pages, (long long)pages);
		}
	}
	TH_LOG("%d of 100 rounds left the table wrong", wrong);
	ASSERT_EQ(0, wrong);
	munmap(table, hc.table_size);
	ASSERT_EQ(0, close(r.fd));
}

TEST_HARNESS_MAIN
