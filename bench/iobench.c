/* SPDX-License-Identifier: MIT */
/*
 * iobench - reading a file from the tmpfs page cache into managed byte
 * arrays while 2 threads allocate (issue 13), four ways in one run:
 *   zerocopy  kgc_io ring (queue depth QD) straight into ordinary arrays
 *             (pinned from submission to completion, collections go on)
 *   fixed     the same into arrays of the pinned-object space
 *             (kgc_alloc_array_pinned), which the ring registered as
 *             io_uring fixed buffers: READ_FIXED, no page pinning per read
 *   copy      the same ring into a malloc buffer, then memcpy into the
 *             array (the JDK's way for a heap ByteBuffer)
 *   gclocker  a critical section (KGC_PIN_MODE_GCLOCKER) around a blocking
 *             pread into the array (the GCLocker's way)
 *   inline    zerocopy with kgc_io_ring_set_inline(block size): reads the
 *             page cache has are done at prep on the calling thread
 *   pread     a blocking pread into a malloc buffer + memcpy into the
 *             array (issue 33's anchor)
 * and a row without I/O (the allocators alone). Per block size: GB/s and the
 * allocating threads' longest stall (the longest time one batch of 256
 * small allocations took). The JDK anchor (IoRead.java, FileChannel.read
 * into a heap vs a direct ByteBuffer, same file) runs in the same
 * invocation when a JDK is installed. Each block size runs IOBENCH_REPS
 * rounds (default 3), each round the ways in a rotated order, each way on a
 * new heap whose allocators run WARMUP_MS before the clock starts (their
 * eden faulted in: short rows had measured the heap's first touches); the
 * table gives medians and ranges and judges the targets from the
 * medians. A second table repeats it all with the heap on transparent huge
 * pages (KGC_THP=1; IOBENCH_THP=0 skips it): the kernel's copy into an
 * ordinary array then walks 2 MiB pages, as it does for fixed buffers.
 * IOBENCH_BLOCK_KB=1024 runs one block size (profiling). IOBENCH_RANDOM=1
 * reads the blocks at random offsets (a hash of the block's number, the
 * same for every way): no two consecutive reads are adjacent, so the
 * inline way's batches (one system call for consecutive reads) never form.
 * The allocators run at a fixed rate (IOBENCH_ALLOC_RATE batches per ms
 * each, default 40; 0 = as fast as they can), so every way competes with
 * the same load: flat out, the I/O thread and the allocators split the
 * CPUs, and a way that starves the allocators reads faster.
 * IOBENCH_ALLOC_THREADS=0 runs the ways without the allocating threads
 * (the I/O path's own cost; 2 by default). IOBENCH_WAYS=zerocopy,copy runs only those ways (keys zerocopy, fixed, copy, gclocker, inline, pread; for a profiler; the
 * others' rows then read 0). Sizes: IOBENCH_MB (default 1024 x BENCH_SCALE) read per configuration
 * from a file of IOBENCH_FILE_MB (default 256) MiB, IOBENCH_FILE (default
 * in /dev/shm: page cache). IOBENCH_ODIRECT=1 reads with O_DIRECT (in the
 * VM from /dev/ram0, which it must not unlink): every way then reads into
 * a 4 KiB-aligned place (arrays one page longer, the aligned offset taken
 * at each prep: an array moves between reads; an aligned bounce buffer).
 */
#define _GNU_SOURCE	/* O_DIRECT */
#include <stdbool.h>
#include <sys/stat.h>
#include "common.h"

#ifdef HAVE_KGC
#include <pthread.h>
#include <stdatomic.h>
#include <liburing.h>
#include <kgc.h>

#define FILE_MB 256u
#define QD 16
#define BATCH 256
#define WARMUP_MS 100	/* the allocators run this long before a row's clock starts */

enum mode { M_NONE, M_ZEROCOPY, M_FIXED, M_COPY, M_GCLOCKER, M_INLINE, M_PREAD, M_COUNT };
static const char *const mode_name[M_COUNT] = { "no I/O", "zerocopy", "fixed (pinned space)", "copy",
						 "gclocker", "zerocopy + inline", "pread+memcpy" };

static const char *path = "/dev/shm/kgc-iobench.dat";	/* IOBENCH_FILE */
static size_t file_bytes = (size_t)FILE_MB << 20;	/* IOBENCH_FILE_MB */
static int odirect;
static int random_off;				/* IOBENCH_RANDOM=1: blocks at random offsets */
static int alloc_threads = 2;			/* IOBENCH_ALLOC_THREADS: 0..2 */
static unsigned alloc_rate = 40;		/* IOBENCH_ALLOC_RATE: batches per ms and thread, 0 = flat out */				/* IOBENCH_ODIRECT=1: O_DIRECT, aligned targets */
#define PG 4096u
static kgc_heap *heap;
static kgc_type_id node_type;
static atomic_int stop;
static _Atomic uint64_t stall_max;
static _Atomic uint64_t batches;		/* the allocators' batches done */
static const char *backend = "?";		/* kgc_heap_backend of the last heap */

struct result { double gbps, allocs; uint64_t stall_ns, pause_ns, young, full, gclocker_stall_ns, fixed_ops; };
static int reps = 3;				/* IOBENCH_REPS: rounds per block size, 1..9 */
static int heap_thp = -1;			/* 1: the heap on THP (kgc_options.thp); -1: KGC_THP decides */

static void make_file(void)
{
	struct stat st;
	int fd = stat(path, &st) == 0 && S_ISBLK(st.st_mode) ? open(path, O_WRONLY) :
		 open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	uint64_t *b = malloc(1 << 20);

	if (fd < 0 || !b)
		die("cannot create %s: %s", path, strerror(errno));
	for (size_t off = 0; off < file_bytes; off += 1 << 20) {
		for (size_t i = 0; i < (1 << 20) / 8; i++)
			b[i] = off + i * 8;	/* each 8 bytes: their offset */
		if (write(fd, b, 1 << 20) != 1 << 20)
			die("write %s: %s", path, strerror(errno));
	}
	free(b);
	close(fd);
}

static void *allocator(void *arg)
{
	kgc_thread *t;
	kgc_obj keep[64] = { 0 };
	struct kgc_frame f;
	unsigned k = 0;

	if (kgc_thread_attach(heap, "alloc", &t))
		die("attach: %s", kgc_last_error());
	kgc_frame_push(t, &f, keep, 64, NULL);
	for (uint64_t next = now_ns(); !atomic_load(&stop);) {
		uint64_t t0 = now_ns(), d, m;

		/* a fixed rate: every way competes with the same allocating load
		 * (at full speed, a way that takes the allocators' CPU reads faster) */
		if (alloc_rate && next > t0 + 1000000) {
			struct timespec ts = { 0, (long)(next - t0) };

			kgc_enter_native(t);
			nanosleep(&ts, NULL);
			kgc_leave_native(t);
			t0 = now_ns();
		}
		if (alloc_rate) {
			next += 1000000 / alloc_rate;
			if (t0 > next + 20000000)
				next = t0;	/* 20 ms behind: no catching up in a burst */
		}

		for (int i = 0; i < BATCH; i++)
			if (!(keep[k++ % 64] = kgc_alloc(t, node_type)))
				die("alloc: %s", kgc_last_error());
		d = now_ns() - t0;
		atomic_fetch_add_explicit(&batches, 1, memory_order_relaxed);
		m = atomic_load(&stall_max);
		while (d > m && !atomic_compare_exchange_weak(&stall_max, &m, d))
			;
	}
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	return NULL;
}

/* The file offset of the block read at byte position pos of the row:
 * sequential, or (IOBENCH_RANDOM) a block picked by a hash of its number,
 * the same sequence for every way. */
static uint64_t block_off(uint64_t pos, size_t bs)
{
	uint64_t n = pos / bs, nblocks = file_bytes / bs;

	if (!random_off)
		return pos % file_bytes;
	n = (n + 1) * 0x9e3779b97f4a7c15ull;
	n ^= n >> 29;
	n *= 0xbf58476d1ce4e5b9ull;
	n ^= n >> 32;
	return (n % nblocks) * bs;
}

/* Where a block goes in array a: 0, or (O_DIRECT) the first 4 KiB-aligned byte. */
static size_t aligned_off(kgc_obj a)
{
	return odirect ? (PG - (uintptr_t)kgc_array_data(a) % PG) % PG : 0;
}

static enum mode cur_mode;			/* the way running (for messages) */

/* The first 8 bytes of a block read at off must say off. */
static void check_block(const void *p, uint64_t off)
{
	uint64_t v;

	memcpy(&v, p, 8);
	if (v != off)
		die("data check (%s): block at %llu holds %llu", mode_name[cur_mode], (unsigned long long)off,
		    (unsigned long long)v);
}

static void die_if(int err, const char *what)
{
	if (err < 0)
		die("%s: %s (%s)", what, strerror(-err), kgc_last_error());
}

/* zerocopy: QD arrays (roots a[0..QD)) read through a kgc_io ring; with
 * inline, reads the page cache has are done at prep (kgc_io_ring_set_inline). */
static void run_zerocopy(kgc_thread *t, kgc_obj *a, size_t bs, size_t total, int fd, bool inl)
{
	uint64_t off_of[QD], next = 0, done = 0;
	size_t at[QD];
	struct kgc_io_cqe c[QD];
	kgc_io_ring *r;

	die_if(kgc_io_ring_create(t, QD, 0, &r), "ring");
	if (inl)
		die_if(kgc_io_ring_set_inline(r, t, bs), "set_inline");
	for (int s = 0; s < QD && next < total; s++, next += bs) {
		off_of[s] = block_off(next, bs);
		at[s] = aligned_off(a[s]);
		die_if(kgc_io_prep_read(r, t, fd, &a[s], at[s], bs, off_of[s], (uint64_t)s), "prep");
	}
	while (done < total) {
		int n = kgc_io_reap(r, t, c, QD, 1);

		die_if(n, "reap");
		for (int i = 0; i < n; i++) {
			int s = (int)c[i].user_data;

			if (c[i].res != (int)bs)
				die("read: %d", c[i].res);
			check_block((char *)kgc_array_data(a[s]) + at[s], off_of[s]);
			done += bs;
			if (next < total) {
				off_of[s] = block_off(next, bs);
				next += bs;
				at[s] = aligned_off(a[s]);
				die_if(kgc_io_prep_read(r, t, fd, &a[s], at[s], bs, off_of[s], (uint64_t)s), "prep");
			}
		}
	}
	die_if(kgc_io_ring_destroy(r, t), "destroy");
}

static void copy_prep(struct io_uring *ur, int fd, char *buf, size_t bs, uint64_t off, int s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ur);

	io_uring_prep_read(sqe, fd, buf, bs, off);
	io_uring_sqe_set_data64(sqe, (uint64_t)s);
}

/* copy: the same queue depth with plain liburing into malloc buffers, each
 * completion copied into its array (managed state); waits in native state. */
static void run_copy(kgc_thread *t, kgc_obj *a, size_t bs, size_t total, int fd)
{
	uint64_t off_of[QD], next = 0, done = 0;
	char *bounce = aligned_alloc(PG, QD * bs);
	struct io_uring ur;

	if (!bounce)
		die("malloc");
	die_if(io_uring_queue_init(QD, &ur, 0), "io_uring_queue_init");
	for (int s = 0; s < QD && next < total; s++, next += bs) {
		off_of[s] = block_off(next, bs);
		copy_prep(&ur, fd, bounce + s * bs, bs, off_of[s], s);
	}
	while (done < total) {
		struct io_uring_cqe *cqe;
		int err, s;

		kgc_enter_native(t);
		err = io_uring_submit_and_wait(&ur, 1);
		kgc_leave_native(t);
		die_if(err, "io_uring_submit_and_wait");
		while (io_uring_peek_cqe(&ur, &cqe) == 0) {
			s = (int)cqe->user_data;
			if (cqe->res != (int)bs)
				die("read: %d", cqe->res);
			io_uring_cqe_seen(&ur, cqe);
			memcpy((char *)kgc_array_data(a[s]) + aligned_off(a[s]), bounce + s * bs, bs);
			check_block((char *)kgc_array_data(a[s]) + aligned_off(a[s]), off_of[s]);
			/* a runtime's copy loop polls (completions keep coming: without
			 * this the loop held every collection up for tens of ms) */
			kgc_safepoint_poll(t);
			done += bs;
			if (next < total) {
				off_of[s] = block_off(next, bs);
				next += bs;
				copy_prep(&ur, fd, bounce + s * bs, bs, off_of[s], s);
			}
		}
	}
	io_uring_queue_exit(&ur);
	free(bounce);
}

/* gclocker: a critical section (GCLocker mode: collections wait) around a
 * blocking pread into the array, one block at a time. */
static void run_gclocker(kgc_thread *t, kgc_obj *a, size_t bs, size_t total, int fd)
{
	for (uint64_t done = 0; done < total; done += bs) {
		uint64_t off = block_off(done, bs);
		char *p = kgc_critical_get(t, &a[0], NULL), *q;

		if (!p)
			die("critical_get: %s", kgc_last_error());
		q = p + aligned_off(a[0]);
		if (pread(fd, q, bs, (off_t)off) != (ssize_t)bs)
			die("pread: %s", strerror(errno));
		check_block(q, off);
		kgc_critical_release(t, &a[0], p, 0);
	}
}

/* pread+memcpy: a blocking pread into a malloc buffer (native state), then
 * memcpy into an array (managed), one block at a time: issue 33's anchor. */
static void run_pread(kgc_thread *t, kgc_obj *a, size_t bs, size_t total, int fd)
{
	char *buf = aligned_alloc(PG, bs);

	if (!buf)
		die("malloc");
	for (uint64_t done = 0; done < total; done += bs) {
		uint64_t off = block_off(done, bs);
		ssize_t n;

		kgc_enter_native(t);
		n = pread(fd, buf, bs, (off_t)off);
		kgc_leave_native(t);
		if (n != (ssize_t)bs)
			die("pread: %zd", n);
		/* the QD arrays in turn, like the ring ways (one hot array would
		 * stay in the cache: 1 MiB rows read 2x faster that way) */
		char *q = (char *)kgc_array_data(a[(done / bs) % QD]) + aligned_off(a[(done / bs) % QD]);

		memcpy(q, buf, bs);
		check_block(q, off);
	}
	free(buf);
}

static void *sleep_1s(void *arg)
{
	(void)arg;
	sleep(1);
	return NULL;
}

/* The longest pause between s0 and s1: exact when it is the heap's longest,
 * else the upper edge of the top histogram bucket that grew (a warm-up
 * pause was longer), 0 when none ran. */
static uint64_t row_pause_max(const struct kgc_stats *s0, const struct kgc_stats *s1)
{
	if (s1->pause_max_ns > s0->pause_max_ns)
		return s1->pause_max_ns;
	for (int i = KGC_PAUSE_HIST_BUCKETS - 1; i >= 0; i--)
		if (s1->pause_hist[i] > s0->pause_hist[i])
			return (2000ull << i) < s1->pause_max_ns ? 2000ull << i : s1->pause_max_ns;
	return 0;
}

static struct result run(enum mode m, size_t bs, size_t total)
{
	cur_mode = m;
	struct kgc_options o;
	kgc_thread *t;
	kgc_obj a[QD] = { 0 };
	struct kgc_frame f;
	struct kgc_stats s0, s1;
	pthread_t al[2];
	int nal = alloc_threads;
	struct result res = { 0 };
	uint64_t t0, t1;
	int fd = open(path, O_RDONLY | (odirect ? O_DIRECT : 0));
	static const uint32_t offs[1] = { 8 };
	struct kgc_type_desc d = { .name = "node", .payload_size = 24, .nrefs = 1, .ref_offsets = offs };

	kgc_options_init(&o);
	o.max_heap = 1024ul << 20;
	if (heap_thp >= 0)
		o.thp = heap_thp;
	o.young_size = 32ul << 20;
	o.pin_mode = m == M_GCLOCKER ? KGC_PIN_MODE_GCLOCKER : KGC_PIN_MODE_PIN;
	if (fd < 0 || kgc_heap_create(&o, &heap) || kgc_type_register(heap, &d, &node_type) ||
	    kgc_thread_attach(heap, "io", &t))
		die("setup: %s", kgc_last_error());
	backend = kgc_heap_backend(heap);
	kgc_frame_push(t, &f, a, QD, NULL);
	for (int i = 0; i < QD; i++)
		if (!(a[i] = (m == M_FIXED ? kgc_alloc_array_pinned : kgc_alloc_array)(
			      t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), bs + (odirect ? PG : 0))))
			die("alloc: %s", kgc_last_error());
	atomic_store(&stop, 0);
	atomic_store(&stall_max, 0);
	atomic_store(&batches, 0);
	kgc_enter_native(t);
	for (int i = 0; i < nal; i++)
		pthread_create(&al[i], NULL, allocator, NULL);
	/* steady state: the allocators attached, their eden faulted in, before the clock starts */
	if (nal) {
		struct timespec warm = { 0, WARMUP_MS * 1000000L };

		nanosleep(&warm, NULL);
	}
	kgc_leave_native(t);
	atomic_store(&stall_max, 0);
	atomic_store(&batches, 0);
	kgc_stats_get(heap, &s0, sizeof(s0));
	t0 = now_ns();
	if (m == M_ZEROCOPY || m == M_FIXED || m == M_INLINE)
		run_zerocopy(t, a, bs, total, fd, m == M_INLINE);
	else if (m == M_PREAD)
		run_pread(t, a, bs, total, fd);
	else if (m == M_COPY)
		run_copy(t, a, bs, total, fd);
	else if (m == M_GCLOCKER)
		run_gclocker(t, a, bs, total, fd);
	else
		kgc_do_blocking(t, sleep_1s, NULL);
	t1 = now_ns();
	kgc_stats_get(heap, &s1, sizeof(s1));
	atomic_store(&stop, 1);
	kgc_enter_native(t);
	for (int i = 0; i < nal; i++)
		pthread_join(al[i], NULL);
	kgc_leave_native(t);
	res.gbps = m == M_NONE ? 0 : (double)total / (double)(t1 - t0);
	res.stall_ns = atomic_load(&stall_max);
	/* the allocators' progress meanwhile: a way that takes their CPU reads faster */
	res.allocs = t1 > t0 ? (double)atomic_load(&batches) * BATCH / ((double)(t1 - t0) / 1e3) : 0;
	res.pause_ns = row_pause_max(&s0, &s1);
	res.young = s1.young_gcs - s0.young_gcs;
	res.full = s1.full_gcs - s0.full_gcs;
	res.gclocker_stall_ns = s1.gclocker_stall_ns - s0.gclocker_stall_ns;
	res.fixed_ops = s1.io_fixed - s0.io_fixed;
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	kgc_heap_destroy(heap);
	close(fd);
	return res;
}

/* The JDK anchor: java IoRead <file> <block> <total> prints "heap GB/s direct GB/s". */
static int jdk(size_t bs, size_t total, double *heap_gbps, double *direct_gbps)
{
	char cmd[1024];
	FILE *p;
	int n;

	if (access("out/IoRead.class", R_OK) != 0 || system("command -v java >/dev/null 2>&1"))
		return -1;
	snprintf(cmd, sizeof(cmd), "java -Xmx1g -XX:+UseG1GC -cp out IoRead %s %zu %zu", path, bs, total);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	n = fscanf(p, "%lf %lf", heap_gbps, direct_gbps);
	pclose(p);
	return n == 2 ? 0 : -1;
}

/* Row statistics over the rounds: F_* name a field of struct result. */
enum field { F_GBPS, F_STALL, F_PAUSE, F_YOUNG, F_FULL, F_GCLOCKER, F_FIXED, F_ALLOCS };

static double field_of(const struct result *r, enum field f)
{
	switch (f) {
	case F_GBPS: return r->gbps;
	case F_STALL: return ms(r->stall_ns);
	case F_PAUSE: return ms(r->pause_ns);
	case F_YOUNG: return (double)r->young;
	case F_FULL: return (double)r->full;
	case F_GCLOCKER: return ms(r->gclocker_stall_ns);
	case F_FIXED: return (double)r->fixed_ops;
	case F_ALLOCS: return r->allocs;
	}
	return 0;
}

/* which: 0 = median, -1 = min, 1 = max of field f over r[0..n) */
static double stat_of(const struct result *r, int n, enum field f, int which)
{
	double v[9];

	for (int i = 0; i < n; i++)
		v[i] = field_of(&r[i], f);
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return which < 0 ? v[0] : which > 0 ? v[n - 1] : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *verdict(bool met)
{
	return met ? "met" : "NOT MET";
}

static const size_t blocks[] = { 4096, 65536, 262144, 1 << 20 };
enum { NB = sizeof(blocks) / sizeof(blocks[0]) };
static const char *ways_only;	/* IOBENCH_WAYS, e.g. "zerocopy,copy": only these (profiling) */
static const char *const way_key[M_COUNT] = { "none", "zerocopy", "fixed", "copy", "gclocker", "inline",
					       "pread" };

/* Is way m in IOBENCH_WAYS (comma-separated keys, exact)? */
static bool way_selected(int m)
{
	size_t n = strlen(way_key[m]);

	if (!ways_only)
		return true;
	for (const char *p = ways_only; *p;) {
		size_t len = strcspn(p, ",");

		if (len == n && !strncmp(p, way_key[m], n))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}
static size_t only_kb;		/* IOBENCH_BLOCK_KB: that block size only (profiling; the targets then read 0) */
static size_t total;		/* bytes read per row */
static char rate_txt[128];

/*
 * One table: every block size and way, reps rounds each, the heap with
 * transparent huge pages (thp 1) or the library's default (thp -1: KGC_THP
 * decides); the JDK anchor with the first table only. Then the issue's
 * targets, judged from the medians.
 */
static void table(FILE *md, int thp, bool regular)
{
	char r1[32], r2[32], r3[32];
	struct result none[9], rs[NB][M_COUNT][9];
	double med[NB][M_COUNT] = { { 0 } };	/* median GB/s */
	double worst_stall[M_COUNT] = { 0 }, worst_pause[M_COUNT] = { 0 }, gcl_io = 0, none_stall, none_pause;
	uint64_t young_io = 0;

	heap_thp = thp;
	for (int k = 0; k < reps; k++)
		none[k] = run(M_NONE, 4096, 0);
	none_stall = stat_of(none, reps, F_STALL, 0);
	none_pause = stat_of(none, reps, F_PAUSE, 0);
	both(md, "\n## Zero-copy I/O into managed arrays (issue 13)%s%s\n\n",
	     thp > 0 ? ", the heap on transparent huge pages (KGC_THP=1)" : "",
	     random_off ? ", blocks at random offsets (IOBENCH_RANDOM=1)" : "");
	both(md, "`bench/iobench`: %zu MiB read per row from a %zu MiB %s %s (%s), "
	     "kgc heap on the %s backend%s, queue depth %d, while %d threads allocate (batches of %d small objects%s; "
	     "stall = the longest batch). "
	     "zerocopy = kgc_io ring into ordinary arrays; fixed = the same ring into arrays of the pinned-object "
	     "space (kgc_alloc_array_pinned), registered as io_uring fixed buffers (READ_FIXED; \"fixed ops\" "
	     "counts them, stats io_fixed); copy = the same depth on a plain io_uring into malloc "
	     "buffers + memcpy into the arrays, polling for a safepoint after each (the JDK's heap-buffer way); "
	     "gclocker = critical section (GCLocker mode) around a blocking pread. "
	     "Each block size runs %d rounds; each round runs the ways in a rotated order, each on a new heap whose "
	     "allocators run %d ms before the clock starts. Figures are medians over the rounds, with (min-max) "
	     "for GB/s and (max) for stall and pause; \"vs copy\" is the ratio of the medians; "
	     "\"longest pause\" is the longest collection pause of the row (an upper bound within 2x when a "
	     "warm-up pause was longer). \"allocations M/s\": the allocating threads' progress during the row "
	     "(small objects per us). Allocators alone (no I/O, %d x 1 s): longest stall %.2f ms median "
	     "(max %.2f), longest pause %.2f ms median, allocations %.1f M/s.\n\n",
	     total >> 20, file_bytes >> 20, regular ? "file" : "device", path,
	     odirect ? "O_DIRECT, 4 KiB-aligned targets" : "page cache", backend,
	     thp > 0 ? " with MADV_HUGEPAGE" : "", QD, alloc_threads, BATCH, rate_txt, reps, WARMUP_MS, reps,
	     none_stall, stat_of(none, reps, F_STALL, 1), none_pause, stat_of(none, reps, F_ALLOCS, 0));
	both(md, "| block | way | GB/s | vs copy | longest alloc stall ms | longest pause ms | young GCs | full GCs | "
		 "GCLocker stall ms | fixed ops | allocations M/s |\n");
	both(md, "|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (int b = 0; b < NB; b++) {
		double jh, jd;

		if (only_kb && blocks[b] >> 10 != only_kb)
			continue;
		for (int k = 0; k < reps; k++)
			for (int i = 0; i < M_COUNT - M_ZEROCOPY; i++) {
				int m = M_ZEROCOPY + (i + b + k) % (M_COUNT - M_ZEROCOPY);

				rs[b][m][k] = (struct result){ 0 };
				if (way_selected(m))
					rs[b][m][k] = run((enum mode)m, blocks[b], total);
			}
		for (int m = M_ZEROCOPY; m < M_COUNT; m++)
			med[b][m] = stat_of(rs[b][m], reps, F_GBPS, 0);
		for (int m = M_ZEROCOPY; m < M_COUNT; m++) {
			const struct result *r = rs[b][m];
			double stall = stat_of(r, reps, F_STALL, 0), pause = stat_of(r, reps, F_PAUSE, 0);

			both(md, "| %zu KiB | %s | %.2f (%.2f-%.2f) | %s | %.2f (%.2f) | %.2f (%.2f) | %.0f | %.0f | %.1f | %.0f | %.1f |\n",
			     blocks[b] >> 10, mode_name[m], med[b][m], stat_of(r, reps, F_GBPS, -1),
			     stat_of(r, reps, F_GBPS, 1), ratio_str(r1, sizeof(r1), med[b][m], med[b][M_COPY]),
			     stall, stat_of(r, reps, F_STALL, 1), pause, stat_of(r, reps, F_PAUSE, 1),
			     stat_of(r, reps, F_YOUNG, 0), stat_of(r, reps, F_FULL, 0),
			     stat_of(r, reps, F_GCLOCKER, 0), stat_of(r, reps, F_FIXED, 0),
			     stat_of(r, reps, F_ALLOCS, 0));
			worst_stall[m] = stall > worst_stall[m] ? stall : worst_stall[m];
			worst_pause[m] = pause > worst_pause[m] ? pause : worst_pause[m];
			if (m == M_ZEROCOPY || m == M_FIXED)
				for (int k = 0; k < reps; k++) {
					gcl_io += ms(r[k].gclocker_stall_ns);
					young_io += r[k].young + r[k].full;
				}
		}
		if (thp > 0)
			continue;	/* the JDK anchor once */
		if (random_off)
			both(md, "| %zu KiB | JDK | not run (IoRead reads sequentially) | | | | | | | | |\n",
			     blocks[b] >> 10);
		else if (odirect)
			both(md, "| %zu KiB | JDK | not run (O_DIRECT: FileChannel reads through the page cache) | | | | | | | | |\n",
			     blocks[b] >> 10);
		else if (jdk(blocks[b], total, &jh, &jd) == 0)
			both(md, "| %zu KiB | JDK FileChannel.read heap / direct ByteBuffer | %.2f / %.2f | %s | | | | | | | |\n",
			     blocks[b] >> 10, jh, jd, ratio_str(r2, sizeof(r2), jh, jd));
		else
			both(md, "| %zu KiB | JDK | not run (no JDK or out/IoRead.class) | | | | | | | | |\n", blocks[b] >> 10);
	}
	if (thp <= 0)
		both(md, "\nJDK row: \"vs copy\" there is heap/direct within the JDK (its own copy cost; one round).\n");
	both(md, "\nTargets (issue 13), from the medians of this table:\n\n");
	for (int m = M_ZEROCOPY; m <= M_FIXED; m++) {
		bool ahead = true;

		for (int b = 1; b < NB; b++)
			ahead = ahead && med[b][m] > med[b][M_COPY];
		ratio_str(r1, sizeof(r1), med[NB - 1][m], med[NB - 1][M_COPY]);	/* 1 MiB */
		both(md, "- %s at 1 MiB: %s copy (target >= 1.5x): %s; ahead of copy from 64 KiB up "
			 "(%s, %s, %s at 64 KiB, 256 KiB, 1 MiB): %s.\n", mode_name[m], r1,
		     verdict(med[NB - 1][m] >= 1.5 * med[NB - 1][M_COPY]),
		     ratio_str(r2, sizeof(r2), med[1][m], med[1][M_COPY]),
		     ratio_str(r3, sizeof(r3), med[2][m], med[2][M_COPY]), r1, verdict(ahead));
	}
	for (int m = M_ZEROCOPY; m < M_COUNT; m++) {	/* issue 33 */
		char r0[32];

		if (m == M_PREAD || m == M_COPY || m == M_GCLOCKER)
			continue;
		both(md, "- %s vs pread+memcpy (issue 33: >= 1.0x at 4 KiB, >= 1.1x at 64 KiB, >= 1.5x at 1 MiB): "
			 "%s, %s, %s: %s.\n", mode_name[m],
		     ratio_str(r0, sizeof(r0), med[0][m], med[0][M_PREAD]),
		     ratio_str(r2, sizeof(r2), med[1][m], med[1][M_PREAD]),
		     ratio_str(r1, sizeof(r1), med[NB - 1][m], med[NB - 1][M_PREAD]),
		     verdict(med[0][m] >= med[0][M_PREAD] && med[1][m] >= 1.1 * med[1][M_PREAD] &&
			     med[NB - 1][m] >= 1.5 * med[NB - 1][M_PREAD]));
	}
	both(md, "- The allocators' longest stall (target: no worse than without I/O, %.2f ms), the worst block size's "
		 "median: zerocopy %.2f ms, fixed %.2f ms (copy %.2f, gclocker %.2f): %s for zerocopy, %s for fixed.\n",
	     none_stall, worst_stall[M_ZEROCOPY], worst_stall[M_FIXED], worst_stall[M_COPY], worst_stall[M_GCLOCKER],
	     verdict(worst_stall[M_ZEROCOPY] <= none_stall), verdict(worst_stall[M_FIXED] <= none_stall));
	both(md, "- The collector's part of it, the longest pause (without I/O %.2f ms), the worst block size's median: "
		 "zerocopy %.2f ms, fixed %.2f ms (copy %.2f, gclocker %.2f).\n", none_pause, worst_pause[M_ZEROCOPY],
	     worst_pause[M_FIXED], worst_pause[M_COPY], worst_pause[M_GCLOCKER]);
	both(md, "- No collection waits for I/O: %llu collections ran during the zerocopy and fixed rows, which held them up "
		 "%.1f ms in all (GCLocker stall): %s.\n", (unsigned long long)young_io, gcl_io,
	     verdict(gcl_io == 0 && young_io > 0));
}

int main(void)
{
	const char *e = getenv("IOBENCH_MB");
	FILE *md = md_open("iobench");
	struct stat st;
	bool regular;

	total = (size_t)((e ? atof(e) : 1024.0 * bench_scale()) * (1 << 20));
	ways_only = getenv("IOBENCH_WAYS");
	if (getenv("IOBENCH_FILE"))
		path = getenv("IOBENCH_FILE");
	if (getenv("IOBENCH_FILE_MB"))
		file_bytes = (size_t)atoi(getenv("IOBENCH_FILE_MB")) << 20;
	odirect = getenv("IOBENCH_ODIRECT") && atoi(getenv("IOBENCH_ODIRECT"));
	random_off = getenv("IOBENCH_RANDOM") && atoi(getenv("IOBENCH_RANDOM"));
	if (getenv("IOBENCH_ALLOC_RATE"))
		alloc_rate = (unsigned)atoi(getenv("IOBENCH_ALLOC_RATE"));
	if (getenv("IOBENCH_ALLOC_THREADS"))
		alloc_threads = atoi(getenv("IOBENCH_ALLOC_THREADS")) < 0 ? 0 :
				atoi(getenv("IOBENCH_ALLOC_THREADS")) > 2 ? 2 : atoi(getenv("IOBENCH_ALLOC_THREADS"));
	if (getenv("IOBENCH_BLOCK_KB"))
		only_kb = (size_t)atoi(getenv("IOBENCH_BLOCK_KB"));
	if (getenv("IOBENCH_REPS"))
		reps = atoi(getenv("IOBENCH_REPS"));
	if (reps < 1 || reps > 9)
		die("IOBENCH_REPS: 1..9");
	if (file_bytes < (1u << 20))
		die("IOBENCH_FILE_MB: at least 1");
	make_file();
	if (alloc_rate)
		snprintf(rate_txt, sizeof(rate_txt), ", at a fixed rate of %u batches per ms each (%.1f M objects/s in all)",
			 alloc_rate, alloc_rate * BATCH * alloc_threads / 1e3);
	else
		snprintf(rate_txt, sizeof(rate_txt), ", as fast as they can");
	regular = stat(path, &st) == 0 && S_ISREG(st.st_mode);
	table(md, -1, regular);
	/* IOBENCH_THP=0: the default heap only */
	if (!getenv("IOBENCH_THP") || atoi(getenv("IOBENCH_THP")))
		table(md, 1, regular);
	fclose(md);
	if (regular)
		unlink(path);
	return 0;
}
#else
int main(void)
{
	FILE *md = md_open("iobench");

	both(md, "\n## Zero-copy I/O into managed arrays (issue 13)\n\nnot available: libkgc did not build/link\n");
	fclose(md);
	return 0;
}
#endif
