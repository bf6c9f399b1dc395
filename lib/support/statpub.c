/* SPDX-License-Identifier: MIT */
/*
 * statpub.c - KGC_STATS_PUBLISH: the heap's statistics and region map in a
 * shared page for kgcstat (layout and seqlock: statpub.h). Created with the
 * heap (O_EXCL, mode 0600: only the process's user can open it), updated
 * after every collection by the collector (h->lock held), unlinked with the
 * heap. Off, it costs one pointer test per collection; on, one pass over the
 * regions per collection and nothing per allocation.
 *
 * This file is its own small OS boundary: shm_open, ftruncate, fchmod,
 * mmap/munmap, shm_unlink (backend.c stays the collector's heap memory).
 * One heap per process publishes; another one asking gets -EEXIST.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "gc_internal.h"
#include "support/statpub.h"

struct statpub {
	struct kgc_statpub_page *page;
	size_t size;
	char name[32];
};

static _Atomic int statpub_owner;	/* this process publishes (one heap) */

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* shm_open O_EXCL; a page left by a dead process with our pid is replaced. */
static int statpub_create(const char *name)
{
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd < 0 && errno == EEXIST) {
		shm_unlink(name);	/* not ours (statpub_owner): a previous process's */
		fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return -errno;
	if (fchmod(fd, 0600) < 0) {	/* whatever the umask */
		int err = -errno;

		close(fd);
		shm_unlink(name);
		return err;
	}
	return fd;
}

static int statpub_map(struct statpub *sp, int fd)
{
	void *p;

	if (ftruncate(fd, (off_t)sp->size) < 0)
		return -errno;
	p = mmap(NULL, sp->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	sp->page = p;
	return 0;
}

int kgci_statpub_open(struct kgc_heap *h)
{
	struct statpub *sp;
	int fd, err, expect = 0;

	if (!h->opt.stats_publish)
		return 0;
	if (!atomic_compare_exchange_strong(&statpub_owner, &expect, 1)) {
		kgci_err_set(EEXIST, "KGC_STATS_PUBLISH: another heap of this process publishes already");
		return -EEXIST;
	}
	sp = calloc(1, sizeof(*sp));
	if (!sp) {
		atomic_store(&statpub_owner, 0);
		return -ENOMEM;
	}
	snprintf(sp->name, sizeof(sp->name), KGC_STATPUB_NAME, (long)getpid());
	sp->size = sizeof(struct kgc_statpub_page) + h->nregions;
	fd = statpub_create(sp->name);
	err = fd < 0 ? fd : statpub_map(sp, fd);
	if (fd >= 0)
		close(fd);
	if (err) {
		kgci_err_set(-err, "KGC_STATS_PUBLISH: /dev/shm%s: %s", sp->name, strerror(-err));
		if (fd >= 0)
			shm_unlink(sp->name);
		free(sp);
		atomic_store(&statpub_owner, 0);
		return err;
	}
	sp->page->version = KGC_STATPUB_VERSION;
	sp->page->header_size = sizeof(struct kgc_statpub_page);
	sp->page->stats_size = sizeof(struct kgc_stats);
	sp->page->pid = getpid();
	sp->page->start_ns = realtime_ns();
	sp->page->nregions = h->nregions;
	snprintf(sp->page->backend, sizeof(sp->page->backend), "%s", kgci_backend_name(h));
	h->statpub = sp;
	kgci_statpub_update(h);	/* readers see the heap before its first collection */
	/* last: a reader that sees the magic sees the whole header (nregions!) */
	__atomic_store_n(&sp->page->magic, KGC_STATPUB_MAGIC, __ATOMIC_RELEASE);
	return 0;
}

void kgci_statpub_close(struct kgc_heap *h)
{
	struct statpub *sp = h->statpub;

	if (!sp)
		return;
	h->statpub = NULL;
	munmap(sp->page, sp->size);
	shm_unlink(sp->name);
	free(sp);
	atomic_store(&statpub_owner, 0);
}

static char region_char(struct kgc_heap *h, uint32_t i)
{
	static const char kind[RT_COUNT] = {
		[RT_FREE] = KGC_MAP_FREE, [RT_EDEN] = KGC_MAP_EDEN, [RT_SURVIVOR] = KGC_MAP_SURVIVOR,
		[RT_OLD] = KGC_MAP_OLD, [RT_HUM_START] = KGC_MAP_HUMONGOUS, [RT_HUM_CONT] = KGC_MAP_HUMONGOUS,
	};
	const struct region *r = &h->regions[i];

	if (r->type != RT_FREE && (r->flags & RF_KPINNED))
		return KGC_MAP_KPINNED;
	if (r->type != RT_FREE && (r->flags & RF_PINNED))
		return KGC_MAP_PINNED;
	return kind[r->type];
}

/* The seqlock's writer fence is what orders the page for its reader, another
 * process TSan cannot see: gcc's TSan build warns that it does not model fences. */
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wtsan"
#endif

/* After a collection (or at creation), h->lock held: a new version of the page. */
void kgci_statpub_update(struct kgc_heap *h)
{
	struct kgc_statpub_page *pg = h->statpub->page;
	uint64_t seq = __atomic_load_n(&pg->seq, __ATOMIC_RELAXED);

	__atomic_store_n(&pg->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);	/* odd before any data */
	kgci_stats_snapshot(h, &pg->stats);
	for (uint32_t i = 0; i < h->nregions; i++)
		pg->map[i] = region_char(h, i);
	pg->pace_permille = atomic_load_explicit(&h->alloc.pace_permille, memory_order_relaxed);
	pg->update_ns = realtime_ns();
	pg->updates++;
	__atomic_store_n(&pg->seq, seq + 2, __ATOMIC_RELEASE);	/* even after all data */
}
