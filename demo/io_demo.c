/* SPDX-License-Identifier: MIT */
/*
 * kgc io demo: reads straight into ordinary, movable byte arrays while
 * other threads allocate and collect (issue 13).
 *
 * Two worker threads allocate and request young collections (and now and
 * then a full one) all the time. Into a fresh 1 MiB byte array each, the
 * main thread reads a file (from the page cache: quick) and a TCP
 * connection over loopback whose sender dribbles 64 KiB every 10 ms (slow:
 * collections run during the read), four ways:
 *   zerocopy  kgc_io ring: the kernel writes the array itself; its region is
 *             pinned until the completion, collections go on around it
 *   pinned    the same into an array of the pinned-object space
 *             (kgc_alloc_array_pinned), which the ring registered as an
 *             io_uring fixed buffer: the file read is a READ_FIXED
 *   copy      blocking read into a malloc buffer in native state, then a
 *             copy into the array (the JDK's way for heap buffers)
 *   gclocker  blocking read into the array inside a critical section with
 *             KGC_PIN_MODE_GCLOCKER (collections wait for it)
 * For each read: collections during the I/O, whether the array moved,
 * whether the bytes are right, and the workers' longest allocation stall.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <kgc.h>

#define LEN (1u << 20)
#define CHUNK (64u * 1024)
#define CHUNK_MS 10

enum way { ZEROCOPY, PINNED, COPY, GCLOCKER };
static const char *const way_name[] = { "zerocopy", "pinned", "copy", "gclocker" };

static kgc_heap *heap;
static kgc_type_id NODE;
static atomic_int stop;
static _Atomic uint64_t stall_max;
static const char *file_path = "/dev/shm/kgc-io-demo.dat";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "io_demo: %s failed: %s (%s)\n", what, strerror(errno), kgc_last_error());
	exit(1);
}

static uint8_t pat(size_t i) { return (uint8_t)(i * 131 + (i >> 12) * 7 + 1); }

static void *worker(void *arg)
{
	kgc_thread *t;
	kgc_obj keep[32] = { 0 };
	struct kgc_frame f;

	if (kgc_thread_attach(heap, "worker", &t))
		die("attach");
	kgc_frame_push(t, &f, keep, 32, NULL);
	for (unsigned n = 0; !atomic_load(&stop); n++) {
		uint64_t t0 = now_ns(), d, m;

		for (int i = 0; i < 2000; i++)
			keep[i % 32] = kgc_alloc(t, NODE);
		if (n % 8 == 0)
			kgc_collect(t, n % 256 == 0 ? KGC_GC_FULL : KGC_GC_YOUNG);
		d = now_ns() - t0;
		m = atomic_load(&stall_max);
		while (d > m && !atomic_compare_exchange_weak(&stall_max, &m, d))
			;
	}
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	return NULL;
}

/* The sender of the TCP connection: LEN bytes in CHUNKs, CHUNK_MS apart. */
static void *sender(void *arg)
{
	int fd = *(int *)arg;
	uint8_t *b = malloc(LEN);
	struct timespec gap = { 0, CHUNK_MS * 1000000L };

	for (size_t i = 0; i < LEN; i++)
		b[i] = pat(i);
	for (size_t off = 0; off < LEN; off += CHUNK) {
		if (write(fd, b + off, CHUNK) != CHUNK)
			die("send");
		nanosleep(&gap, NULL);
	}
	free(b);
	close(fd);
	return NULL;
}

/* A connected loopback TCP socket whose peer runs sender(). */
static int tcp_source(pthread_t *th, int *peer)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c = socket(AF_INET, SOCK_STREAM, 0);

	if (l < 0 || c < 0 || bind(l, (void *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (void *)&a, &al) || connect(c, (void *)&a, sizeof(a)) ||
	    (*peer = accept(l, NULL, NULL)) < 0)
		die("loopback TCP");
	close(l);
	pthread_create(th, NULL, sender, peer);
	return c;
}

/* Blocking read of LEN bytes (all of them: a socket delivers in pieces). */
static void read_all(int fd, uint8_t *p)
{
	for (size_t got = 0; got < LEN;) {
		ssize_t n = read(fd, p + got, LEN - got);

		if (n <= 0)
			die("read");
		got += (size_t)n;
	}
}

struct copy_arg { int fd; uint8_t *buf; };
static void *copy_read(void *arg)
{
	struct copy_arg *c = arg;

	read_all(c->fd, c->buf);
	return NULL;
}

/* Read LEN bytes from fd into the array roots[0] one way. */
static void read_way(kgc_thread *t, enum way w, int fd, bool tcp, kgc_obj *roots)
{
	if (w == ZEROCOPY || w == PINNED) {
		kgc_io_ring *r;
		struct kgc_io_cqe c;

		if (kgc_io_ring_create(t, 4, 0, &r) ||
		    (tcp ? kgc_io_prep_recv(r, t, fd, &roots[0], 0, LEN, MSG_WAITALL, 1)
			 : kgc_io_prep_read(r, t, fd, &roots[0], 0, LEN, 0, 1)) ||
		    kgc_io_reap(r, t, &c, 1, 1) != 1 || c.res != (int)LEN || kgc_io_ring_destroy(r, t) < 0)
			die("kgc_io read");
	} else if (w == COPY) {
		struct copy_arg c = { fd, malloc(LEN) };

		kgc_do_blocking(t, copy_read, &c);
		memcpy(kgc_array_data(roots[0]), c.buf, LEN);
		free(c.buf);
	} else {
		void *p = kgc_critical_get(t, &roots[0], NULL);

		if (!p)
			die("critical_get");
		read_all(fd, p);
		kgc_critical_release(t, &roots[0], p, 0);
	}
}

static void one_read(enum way w, bool tcp)
{
	struct kgc_options o;
	kgc_thread *t;
	kgc_obj roots[1] = { 0 };
	struct kgc_frame f;
	struct kgc_stats s0, s1;
	pthread_t wk[2], snd;
	int fd, peer = -1;
	uint64_t t0, t1;
	kgc_obj before;
	bool ok = true;
	static const uint32_t offs[1] = { 8 };
	struct kgc_type_desc d = { .name = "node", .payload_size = 16, .nrefs = 1, .ref_offsets = offs };

	kgc_options_init(&o);
	o.max_heap = 256ul << 20;
	o.young_size = 16ul << 20;
	o.region_size = 4ul << 20;	/* a 1 MiB array is not humongous: it may move */
	o.pin_mode = w == GCLOCKER ? KGC_PIN_MODE_GCLOCKER : KGC_PIN_MODE_PIN;
	if (kgc_heap_create(&o, &heap) || kgc_type_register(heap, &d, &NODE) ||
	    kgc_thread_attach(heap, "main", &t))
		die("heap");
	kgc_frame_push(t, &f, roots, 1, NULL);
	if (!(roots[0] = (w == PINNED ? kgc_alloc_array_pinned : kgc_alloc_array)(
		      t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN)))
		die("alloc");
	atomic_store(&stop, 0);
	kgc_enter_native(t);
	for (int i = 0; i < 2; i++)
		pthread_create(&wk[i], NULL, worker, NULL);
	usleep(50000);
	kgc_leave_native(t);
	fd = tcp ? tcp_source(&snd, &peer) : open(file_path, O_RDONLY);
	if (fd < 0)
		die("open");
	atomic_store(&stall_max, 0);
	before = roots[0];
	kgc_stats_get(heap, &s0, sizeof(s0));
	t0 = now_ns();
	read_way(t, w, fd, tcp, roots);
	t1 = now_ns();
	kgc_stats_get(heap, &s1, sizeof(s1));
	for (size_t i = 0; i < LEN && ok; i++)
		ok = ((uint8_t *)kgc_array_data(roots[0]))[i] == pat(i);
	atomic_store(&stop, 1);
	kgc_enter_native(t);
	for (int i = 0; i < 2; i++)
		pthread_join(wk[i], NULL);
	if (tcp)
		pthread_join(snd, NULL);
	kgc_leave_native(t);
	/* (after the join: a worker blocked by the GCLocker ends its batch late) */
	printf("  %-4s %-9s %7.1f ms  collections during the I/O: %3llu young %2llu full  "
	       "array moved: %-3s  bytes: %-5s  workers' longest stall: %6.1f ms%s\n",
	       tcp ? "tcp" : "file", way_name[w], (double)(t1 - t0) / 1e6,
	       (unsigned long long)(s1.young_gcs - s0.young_gcs), (unsigned long long)(s1.full_gcs - s0.full_gcs),
	       roots[0] == before ? "no" : "yes", ok ? "right" : "WRONG",
	       (double)atomic_load(&stall_max) / 1e6,
	       s1.io_fixed > s0.io_fixed ? "  (registered buffer: READ_FIXED)" : "");
	close(fd);
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	kgc_heap_destroy(heap);
	if (!ok)
		exit(1);
}

int main(void)
{
	int fd = open(file_path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	uint8_t *b = malloc(LEN);

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < LEN; i++)
		b[i] = pat(i);
	if (fd < 0 || write(fd, b, LEN) != LEN)
		die("writing the file");
	close(fd);
	free(b);
	printf("kgc io demo: 1 MiB reads into ordinary byte arrays while 2 threads allocate and collect\n"
	       "=========================================================================================\n"
	       "file = %s (page cache); tcp = loopback, the sender writes 64 KiB every %d ms.\n"
	       "zerocopy: kgc_io ring, the array's region pinned until the completion, collections go on;\n"
	       "pinned: the same into an array of the pinned-object space, registered with io_uring once;\n"
	       "copy: blocking read into a malloc buffer, then memcpy (the JDK's way);\n"
	       "gclocker: blocking read inside a GCLocker critical section (collections wait).\n\n",
	       file_path, CHUNK_MS);
	for (int tcp = 0; tcp < 2; tcp++)
		for (int w = ZEROCOPY; w <= GCLOCKER; w++)
			one_read((enum way)w, tcp);
	printf("\nzerocopy: the kernel wrote the array in place while collections ran (array moved: no);\n"
	       "pinned: the same without pinning pages per read (a fixed buffer; recv names it by address);\n"
	       "copy: collections ran too, but every byte was copied once more (the array may move: it\n"
	       "is only touched after the read); gclocker: no collection could run during the read, the\n"
	       "workers' longest stall is about the read's length.\n");
	unlink(file_path);
	return 0;
}
