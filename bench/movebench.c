/* SPDX-License-Identifier: MIT */
/*
 * movebench: moving one array of 1, 2, 16, 64 and 256 MiB by relocation
 * (kgci_backend_move_regions on the anon backend: mremap with
 * MREMAP_DONTUNMAP, page tables moved, no byte copied) against memcpy into
 * memory already backed (memcpy's best case: no page faults) and into
 * memory not backed (the collector's usual case: a destination region
 * released or never used, its faults paid by the copy), from memory
 * already written; best of REPS. Then the threshold below which
 * copying is cheaper: the same mremap call against memcpy for 4 KiB to
 * 1 MiB (a region is at least 1 MiB, so the collector's threshold only
 * matters if it is above that). The peer, on the same moves: userfaultfd's
 * UFFDIO_MOVE, Android ART's primitive. Writes bench/out/movebench.md (issue 32).
 */
#include "common.h"
#include <sys/mman.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/userfaultfd.h>
#ifndef UFFD_FEATURE_MOVE	/* Linux 6.8; Debian 12's headers predate it */
#define UFFD_FEATURE_MOVE (1 << 16)
struct uffdio_move {
	__u64 dst, src, len, mode;
	__s64 move;
};
#define UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES ((__u64)1 << 1)
#define UFFDIO_MOVE _IOWR(UFFDIO, 0x05, struct uffdio_move)
#endif
#ifdef HAVE_KGC
#include <kgc.h>
#include "gc_internal.h"
#endif

#define REPS 5

static void touch(char *p, size_t len, int v)
{
	memset(p, v, len);
}

/* best of REPS: memcpy of len bytes src -> dst (dst backed, or released
 * before each copy: cold, the page faults paid by the copy) */
static double time_memcpy(char *dst, char *src, size_t len, int cold)
{
	double best = 1e30;

	touch(dst, len, 1);
	for (int r = 0; r < REPS; r++) {
		uint64_t t0;

		if (cold)
			madvise(dst, len, MADV_DONTNEED);
		t0 = now_ns();

		memcpy(dst, src, len);
		__asm__ volatile("" ::: "memory");
		double ns = (double)(now_ns() - t0);

		best = ns < best ? ns : best;
	}
	return best;
}

/* AnonHugePages of the mapping holding p (smaps), as text; -1 if not found */
static int huge_kb(const void *p, char *out, size_t n)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, res = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && !strncmp(line, "AnonHugePages:", 14)) {
			snprintf(out, n, "%ld kB", strtol(line + 14, NULL, 10));
			res = 0;
			break;
		}
	}
	fclose(f);
	return res;
}

#ifdef HAVE_KGC
/* best of REPS: the move of n regions src -> dst; free_dst releases the
 * destination before each (untimed): a collector's destination is a free
 * region, released unless it was freed moments ago */
static double time_move(struct kgc_heap *h, uint32_t src, uint32_t dst, uint32_t n, int free_dst)
{
	double best = 1e30;
	size_t len = (size_t)n << h->region_shift;
	char *s = h->base + ((size_t)src << h->region_shift), *d = h->base + ((size_t)dst << h->region_shift);

	for (int r = 0; r < REPS; r++) {
		uint64_t t0;

		touch(s, len, 2 + r);
		if (free_dst && kgci_backend_uncommit(h, dst, n))
			die("release failed");
		t0 = now_ns();
		if (kgci_backend_move_regions(h, src, dst, n))
			die("move failed");
		double ns = (double)(now_ns() - t0);

		if (d[len - 1] != 2 + r || s[0] != 0)
			die("move: wrong bytes");
		best = ns < best ? ns : best;
	}
	return best;
}
#endif

/* the same mremap as backend.c's, for sizes under a region */
static double time_remap_raw(char *src, char *dst, size_t len)
{
	double best = 1e30;

	for (int r = 0; r < REPS; r++) {
		uint64_t t0;

		touch(src, len, 3);
		t0 = now_ns();
		if (mremap(src, len, len, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, dst) == MAP_FAILED)
			die("mremap: %s", strerror(errno));
		double ns = (double)(now_ns() - t0);

		best = ns < best ? ns : best;
	}
	return best;
}

#ifdef HAVE_KGC
/* thp: 2 MiB regions on MADV_HUGEPAGE memory (KGC_THP), huge PMDs moved whole */
static void heap_rows(FILE *md, unsigned thp)
{
	static const unsigned mib[] = { 1, 2, 16, 64, 256 };
	struct kgc_options o;
	kgc_heap *kh;
	struct kgc_heap *h;
	char r1[32], sm[64];

	kgc_options_init(&o);
	o.backend = KGC_BACKEND_ANON;
	o.region_size = (size_t)(thp ? 2 : 1) << 20;
	o.max_heap = (size_t)600 << 20;
	o.thp = thp;
	if (kgc_heap_create(&o, &kh))
		die("heap: %s", kgc_last_error());
	h = (struct kgc_heap *)kh;
	both(md, "%s regions, %s; move kind: %s\n\n", thp ? "2 MiB" : "1 MiB",
	     thp ? "transparent huge pages (KGC_THP=1)" : "small pages",
	     h->be.move_kind == MOVE_REMAP ? "mremap (page move)" : "copy (no DONTUNMAP here)");
	both(md, "| size | memcpy (dst backed) | memcpy (dst not backed) | relocation into backed | into free | into free, 1 region off | backed / memcpy backed | free / memcpy backed | 1 off / memcpy backed | dst AnonHugePages |\n"
		 "|---|---|---|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < sizeof(mib) / sizeof(mib[0]); i++) {
		uint32_t n = (uint32_t)(((size_t)mib[i] << 20) >> h->region_shift);
		uint32_t dr = (uint32_t)(((size_t)300 << 20) >> h->region_shift);
		char *s = h->base, *d = h->base + ((size_t)300 << 20);
		double mc, mcc, mv, mvf, mvo;
		char r2[32], r3[32];

		if (!n)
			continue;
		touch(s, (size_t)mib[i] << 20, 7);
		mc = time_memcpy(d, s, (size_t)mib[i] << 20, 0);
		mcc = time_memcpy(d, s, (size_t)mib[i] << 20, 1);
		mv = time_move(h, 0, dr, n, 0);
		mvf = time_move(h, 0, dr, n, 1);
		if (huge_kb(d, sm, sizeof(sm)))
			snprintf(sm, sizeof(sm), "?");
		/* 2 MiB-aligned ends only every other 1 MiB region: what the planner avoids */
		mvo = time_move(h, 0, dr + 1, n, 1);
		both(md, "| %u MiB | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %s | %s | %s | %s |\n", mib[i],
		     mc / 1e6, mcc / 1e6, mv / 1e6, mvf / 1e6, mvo / 1e6, ratio_str(r1, sizeof(r1), mv, mc),
		     ratio_str(r2, sizeof(r2), mvf, mc), ratio_str(r3, sizeof(r3), mvo, mc), sm);
		kgci_backend_uncommit(h, dr, n + 1);
	}
	both(md, "\n");
	kgc_heap_destroy(kh);
}
#endif


/*
 * The peer: userfaultfd's UFFDIO_MOVE (Linux 6.8), the page move Android's
 * ART collector uses, on the same work - one range of anonymous memory
 * moved into an empty, 2 MiB-aligned destination - against memcpy into
 * backed memory, both in this process; small pages, then THP.
 */
static int uffd_open(char *why, size_t n)
{
	struct uffdio_api api = { .api = UFFD_API, .features = UFFD_FEATURE_MOVE };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);

	if (fd < 0) {
		snprintf(why, n, "userfaultfd: %s", strerror(errno));
		return -1;
	}
	if (ioctl(fd, UFFDIO_API, &api) || !(api.features & UFFD_FEATURE_MOVE)) {
		snprintf(why, n, "UFFDIO_API without UFFD_FEATURE_MOVE (%s)", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static double time_uffd_move(int fd, char *s, char *d, size_t len)
{
	double best = 1e30;

	for (int r = 0; r < REPS; r++) {
		struct uffdio_move mv = { .dst = (uintptr_t)d, .src = (uintptr_t)s, .len = len,
					  .mode = UFFDIO_MOVE_MODE_ALLOW_SRC_HOLES };
		uint64_t t0;

		touch(s, len, 4 + r);
		madvise(d, len, MADV_DONTNEED);
		t0 = now_ns();
		if (ioctl(fd, UFFDIO_MOVE, &mv) || mv.move != (__s64)len)
			die("UFFDIO_MOVE: %s (moved %lld)", strerror(errno), (long long)mv.move);
		double ns = (double)(now_ns() - t0);

		if (d[len - 1] != 4 + r)
			die("UFFDIO_MOVE: wrong bytes");
		best = ns < best ? ns : best;
	}
	return best;
}

static void uffd_rows(FILE *md)
{
	static const unsigned mib[] = { 2, 16, 64, 256 };
	size_t M = (size_t)1 << 20, span = 900 * M;
	char why[128];

	both(md, "Peer: userfaultfd UFFDIO_MOVE (Android ART's page move), same process, into an empty "
		 "2 MiB-aligned destination\n\n");
	for (int thp = 0; thp < 2; thp++) {
		int fd = uffd_open(why, sizeof(why));
		char *raw, *b;

		if (fd < 0) {
			both(md, "skipped: %s\n\n", why);
			return;
		}
		raw = mmap(NULL, span + 2 * M, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (raw == MAP_FAILED)
			die("mmap");
		b = (char *)(((uintptr_t)raw + 2 * M - 1) & ~(2 * M - 1));
		madvise(b, span, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		{
			/* only the move's destination is registered: the source and
			 * memcpy's destination fault normally (nobody serves uffd faults) */
			struct uffdio_register reg = { .range = { (uintptr_t)b + 600 * M, 300 * M },
						       .mode = UFFDIO_REGISTER_MODE_MISSING };

			if (ioctl(fd, UFFDIO_REGISTER, &reg))
				die("UFFDIO_REGISTER: %s", strerror(errno));
		}
		both(md, "%s:\n\n| size | memcpy (dst backed) | UFFDIO_MOVE | / memcpy backed |\n|---|---|---|---|\n",
		     thp ? "transparent huge pages" : "small pages");
		for (size_t i = 0; i < sizeof(mib) / sizeof(mib[0]); i++) {
			size_t len = (size_t)mib[i] << 20;
			double mc, mv;
			char r1[32];

			touch(b, len, 7);
			mc = time_memcpy(b + 300 * M, b, len, 0);
			mv = time_uffd_move(fd, b, b + 600 * M, len);
			both(md, "| %u MiB | %.3f ms | %.3f ms | %s |\n", mib[i], mc / 1e6, mv / 1e6,
			     ratio_str(r1, sizeof(r1), mv, mc));
		}
		both(md, "\n");
		munmap(raw, span + 2 * M);
		close(fd);
	}
}

int main(void)
{
	FILE *md = md_open("movebench");
	char r1[32];
	double la[3] = { 0 };

	if (getloadavg(la, 3) < 0)
		la[0] = -1;
	both(md, "\n## Moving one array: relocation vs memcpy (issue 32)\n\n");
	both(md, "`bench/out/movebench`, anon backend, native; load average %.1f on %ld CPUs; best of %d.\n"
	     "memcpy into already-backed memory (its best case); the move is `kgci_backend_move_regions` "
	     "(mremap MREMAP_DONTUNMAP: page tables move, no byte is copied).\n\n",
	     la[0], sysconf(_SC_NPROCESSORS_ONLN), REPS);
#ifdef HAVE_KGC
	heap_rows(md, 0);
	heap_rows(md, 1);
#else
	both(md, "kgc: library not built\n");
#endif
	uffd_rows(md);
	{
		size_t max = (size_t)1 << 20;
		char *a = mmap(NULL, 4 * max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		size_t threshold = 0;

		if (a == MAP_FAILED)
			die("mmap");
		both(md, "\nUnder a region (the threshold: where a page move starts to beat a copy):\n\n");
		both(md, "| size | memcpy (dst backed) | memcpy (dst not backed) | mremap | mremap / memcpy backed | / memcpy not backed |\n|---|---|---|---|---|---|\n");
		for (size_t len = 4096; len <= max; len *= 4) {
			double mc, mcc, mv;
			char r2[32];

			touch(a, len, 5);
			mc = time_memcpy(a + 2 * max, a, len, 0);
			mcc = time_memcpy(a + 2 * max, a, len, 1);
			mv = time_remap_raw(a, a + 2 * max, len);
			if (!threshold && mv < mcc)
				threshold = len;
			both(md, "| %zu KiB | %.1f us | %.1f us | %.1f us | %s | %s |\n", len >> 10, mc / 1e3, mcc / 1e3,
			     mv / 1e3, ratio_str(r1, sizeof(r1), mv, mc), ratio_str(r2, sizeof(r2), mv, mcc));
		}
		both(md, "\nSmallest size where the page move beat a copy into memory not backed: %zu KiB (0: none up to 1 MiB).\n", threshold >> 10);
	}
	fclose(md);
	return 0;
}
