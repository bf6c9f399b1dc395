/* SPDX-License-Identifier: MIT */
/*
 * statpage.c - opens /dev/shm/kgc-<pid> for kgcstat, refusing a page that
 * is not the caller's user's (even for root: the page is the process
 * owner's business) or not a valid kgc page, and copies it under its
 * seqlock (lib/support/statpub.h): a copy is kept only when seq was the same even
 * value before and after it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "statpage.h"

static int page_check(const struct kgcs_page *p, const struct stat *st, char *err, size_t n)
{
	const struct kgc_statpub_page *pg = p->pg;

	/* the writer stores the magic last (release): with it, the whole header */
	if (__atomic_load_n(&pg->magic, __ATOMIC_ACQUIRE) != KGC_STATPUB_MAGIC ||
	    pg->version != KGC_STATPUB_VERSION ||
	    pg->header_size < sizeof(*pg) - sizeof(pg->stats) || pg->pid != p->pid ||
	    (size_t)st->st_size < (size_t)pg->header_size + pg->nregions) {
		snprintf(err, n, "/dev/shm" KGC_STATPUB_NAME " is not a kgc statistics page (version %u) "
			 "of process %ld", p->pid, pg->version, p->pid);
		return -1;
	}
	return 0;
}

int kgcs_page_open(long pid, struct kgcs_page *p, char *err, size_t n)
{
	char path[64];
	struct stat st;
	int fd;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(path, sizeof(path), "/dev/shm" KGC_STATPUB_NAME, pid);
	if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
		if (access(path, F_OK) == 0)
			snprintf(err, n, "no process %ld (%s is left from a crash: remove it)", pid, path);
		else
			snprintf(err, n, "no process %ld", pid);
		return -1;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			snprintf(err, n, "process %ld has no kgc heap publishing statistics (%s: not using kgc, "
				 "or started without KGC_STATS_PUBLISH=1)", pid, path);
		else if (errno == EACCES)
			snprintf(err, n, "%s belongs to another user: refused", path);
		else
			snprintf(err, n, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, n, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, n, "%s belongs to uid %u, not to you (uid %u): refused", path,
			 (unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return -1;
	}
	if ((size_t)st.st_size < sizeof(*p->pg)) {
		snprintf(err, n, "%s: too short for a kgc statistics page", path);
		close(fd);
		return -1;
	}
	p->size = (size_t)st.st_size;
	p->pg = mmap(NULL, p->size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (p->pg == MAP_FAILED) {
		snprintf(err, n, "%s: mmap: %s", path, strerror(errno));
		p->pg = NULL;
		return -1;
	}
	if (page_check(p, &st, err, n)) {
		kgcs_page_close(p);
		return -1;
	}
	return 0;
}

void kgcs_page_close(struct kgcs_page *p)
{
	if (p->pg)
		munmap((void *)p->pg, p->size);
	p->pg = NULL;
}

/* One attempt: 0 if seq was even and unchanged around the copy. */
static int snap_try(const struct kgc_statpub_page *pg, struct kgcs_snap *s, size_t stsz)
{
	uint64_t seq = __atomic_load_n(&pg->seq, __ATOMIC_ACQUIRE);

	if (seq & 1)
		return -1;
	s->start_ns = pg->start_ns;
	s->update_ns = pg->update_ns;
	s->updates = pg->updates;
	s->pace_permille = pg->pace_permille;
	memcpy(s->backend, pg->backend, sizeof(s->backend));
	s->backend[sizeof(s->backend) - 1] = 0;
	memcpy(&s->st, &pg->stats, stsz);
	memcpy(s->map, (const char *)pg + pg->header_size, s->nregions);
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&pg->seq, __ATOMIC_RELAXED) == seq ? 0 : -1;
}

int kgcs_page_snapshot(const struct kgcs_page *p, struct kgcs_snap *s, char *err, size_t n)
{
	const struct kgc_statpub_page *pg = p->pg;
	size_t stsz = pg->stats_size < sizeof(s->st) ? pg->stats_size : sizeof(s->st);

	memset(s, 0, sizeof(*s));
	s->pid = p->pid;
	s->nregions = pg->nregions;
	s->map = malloc(s->nregions + 1);
	if (!s->map) {
		snprintf(err, n, "out of memory");
		return -1;
	}
	s->map[s->nregions] = 0;
	for (int i = 0; i < 100000; i++) {
		if (snap_try(pg, s, stsz) == 0)
			return 0;
		sched_yield();
	}
	snprintf(err, n, "process %ld: no stable copy of its page (updated without end?)", p->pid);
	kgcs_snap_free(s);
	return -1;
}

void kgcs_snap_free(struct kgcs_snap *s)
{
	free(s->map);
	s->map = NULL;
}

unsigned kgcs_snap_count(const struct kgcs_snap *s, char c)
{
	unsigned k = 0;

	for (uint32_t i = 0; i < s->nregions; i++)
		k += s->map[i] == c;
	return k;
}
