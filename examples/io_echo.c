/* SPDX-License-Identifier: MIT */
/*
 * io_echo - a TCP echo server on kgc_io, the way a runtime's event loop uses
 * it: one thread, one ring, no thread per connection. The loop sleeps in
 * epoll_wait on the ring's eventfd (kgc_io_ring_eventfd; a real runtime has
 * its timers and other descriptors in the same set) and, when it is
 * readable, reaps without blocking; a completion callback, run on the loop
 * thread with the operation's array still in place, queues the next step:
 * accept -> recv into the connection's managed byte array -> send the same
 * bytes out of it -> recv ... The send goes with KGC_IO_SKIP_SUCCESS and
 * the next recv linked after it (KGC_IO_LINK): the kernel starts the recv
 * when the send is done and posts no completion for a send that succeeds,
 * so an echo costs one completion, one wake-up and one submit (a send that
 * fails completes, and the linked recv goes with it). Nothing is copied
 * between the kernel and the array, and collections run whenever the loop
 * allocates or sleeps.
 *
 *   io_echo [-p PORT] [-t SECONDS]        serve on 127.0.0.1:PORT (0: any)
 *   io_echo --selftest [-c CLIENTS] [-n MSGS]
 *       serve on a free port while CLIENTS plain threads each send MSGS
 *       messages of 1..16 KiB of seeded bytes and check every echo; a
 *       thread forces young and full collections meanwhile. Prints
 *       requests/s; exits 0 when every byte came back.
 */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/io_uring.h>	/* IORING_SETUP_COOP_TASKRUN */
#include <kgc.h>

#define MAXCONN	256
#define BUFLEN	(64 * 1024)	/* each connection's array */
#define MAXMSG	(16 * 1024)

enum { OP_ACCEPT, OP_RECV, OP_SEND, OP_CLOSE };

struct conn {
	int fd;			/* -1: free */
	kgc_handle buf;		/* the connection's byte array (a root) */
};

struct server {
	kgc_heap *heap;
	kgc_thread *t;
	kgc_io_ring *ring;
	int lfd, port;
	struct conn conns[MAXCONN];
	unsigned long echoed;	/* sends queued, less those that failed */
	int errors;
};

static uint64_t ud(int conn, int op) { return (uint64_t)conn << 8 | (uint64_t)op; }

static void die(const char *what, int err)
{
	fprintf(stderr, "io_echo: %s: %s (%s)\n", what, strerror(err < 0 ? -err : err), kgc_last_error());
	exit(1);
}

static void check(const char *what, int err)
{
	if (err < 0)
		die(what, err);
}

static void prep_recv(struct server *s, int c)
{
	check("prep_recv", kgc_io_prep_recv(s->ring, s->t, s->conns[c].fd, (kgc_obj *)s->conns[c].buf,
					    0, BUFLEN, 0, ud(c, OP_RECV)));
}

static void accepted(struct server *s, int fd)
{
	int c;

	for (c = 0; c < MAXCONN && s->conns[c].fd >= 0; c++)
		;
	if (c == MAXCONN) {
		close(fd);
		return;
	}
	s->conns[c].fd = fd;
	if (!s->conns[c].buf) {
		kgc_obj a = kgc_alloc_array(s->t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), BUFLEN);

		if (!a)
			die("kgc_alloc_array", ENOMEM);
		s->conns[c].buf = kgc_handle_new(s->t, a);
	}
	prep_recv(s, c);
}

/* The completion callback: runs on the loop thread, the array in place. */
static void on_complete(kgc_thread *t, const struct kgc_io_cqe *cq, const kgc_obj *arrays,
			unsigned narrays, void *arg)
{
	struct server *s = arg;
	int c = (int)(cq->user_data >> 8), op = (int)(cq->user_data & 0xff);

	switch (op) {
	case OP_ACCEPT:
		if (cq->res >= 0)
			accepted(s, cq->res);
		check("prep_accept", kgc_io_prep_accept(s->ring, t, s->lfd, SOCK_CLOEXEC, ud(0, OP_ACCEPT)));
		break;
	case OP_RECV:
		if (cq->res <= 0) {	/* the peer closed (or an error): close ours */
			check("prep_close", kgc_io_prep_close(s->ring, t, s->conns[c].fd, ud(c, OP_CLOSE)));
			break;
		}
		/* echo what came, out of the same array (it has not moved), and the
		 * next recv into it once the send is done; no completion for the send */
		check("prep_send", kgc_io_prep_send(s->ring, t, s->conns[c].fd, (kgc_obj *)s->conns[c].buf,
						    0, (size_t)cq->res, MSG_WAITALL | MSG_NOSIGNAL,
						    ud(c, OP_SEND)));
		check("set_flags", kgc_io_set_flags(s->ring, t, KGC_IO_LINK | KGC_IO_SKIP_SUCCESS));
		s->echoed++;
		prep_recv(s, c);
		break;
	case OP_SEND:	/* only a failed one completes (the linked recv is gone with it) */
		if (cq->res < 0) {
			s->echoed--;
			s->errors++;
			check("prep_close", kgc_io_prep_close(s->ring, t, s->conns[c].fd, ud(c, OP_CLOSE)));
			break;
		}
		prep_recv(s, c);
		break;
	case OP_CLOSE:
		s->conns[c].fd = -1;
		break;
	}
	(void)arrays;
	(void)narrays;
}

static void server_init(struct server *s, int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	struct kgc_options o;
	int one = 1;

	check("kgc_options_init", kgc_options_init(&o));
	if (!o.max_heap)
		o.max_heap = 256u << 20;
	check("kgc_heap_create", kgc_heap_create(&o, &s->heap));
	check("kgc_thread_attach", kgc_thread_attach(s->heap, "loop", &s->t));
	/* IORING_SETUP_COOP_TASKRUN: the kernel finishes a completion when this
	 * thread next enters it (or wakes it from epoll_wait) instead of
	 * interrupting it - right for a loop that sleeps in epoll_wait (a loop
	 * that only polls kgc_io_reap(..., 0) adds IORING_SETUP_TASKRUN_FLAG).
	 * p99.9 185-278 us against 359-1355 without (bench/RESULTS-io.md). */
	check("kgc_io_ring_create", kgc_io_ring_create(s->t, 2 * MAXCONN + 8, IORING_SETUP_COOP_TASKRUN,
						       &s->ring));
	for (int c = 0; c < MAXCONN; c++)
		s->conns[c].fd = -1;
	s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->lfd < 0 || setsockopt(s->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) || listen(s->lfd, 128) ||
	    getsockname(s->lfd, (struct sockaddr *)&a, &alen))
		die("listen", errno);
	s->port = ntohs(a.sin_port);
	check("prep_accept", kgc_io_prep_accept(s->ring, s->t, s->lfd, SOCK_CLOEXEC, ud(0, OP_ACCEPT)));
	check("kgc_io_submit", kgc_io_submit(s->ring, s->t));
}

/* The event loop, until *stop (or seconds pass, if > 0). */
static void server_loop(struct server *s, atomic_int *stop, int seconds)
{
	struct kgc_io_wait w = { .size = sizeof(w), .wait_nr = 0, .timeout_ns = 0,
				 .complete = on_complete, .arg = s };
	struct epoll_event ev = { .events = EPOLLIN };
	time_t end = time(NULL) + seconds;
	int ep = epoll_create1(EPOLL_CLOEXEC), efd = kgc_io_ring_eventfd(s->ring, s->t);

	check("kgc_io_ring_eventfd", efd);
	ev.data.fd = efd;
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, efd, &ev))
		die("epoll", errno);
	while (!atomic_load(stop) && (seconds <= 0 || time(NULL) < end)) {
		int n;

		kgc_enter_native(s->t);		/* asleep: collections go on */
		n = epoll_wait(ep, &ev, 1, 100);
		kgc_leave_native(s->t);
		if (n < 0 && errno != EINTR)	/* EINTR: the ring's task work */
			die("epoll_wait", errno);
		if (n > 0)	/* reap what is there, each completion through on_complete */
			check("kgc_io_reap_wait", kgc_io_reap_wait(s->ring, s->t, NULL, 64, &w));
		check("kgc_io_submit", kgc_io_submit(s->ring, s->t));
	}
	epoll_ctl(ep, EPOLL_CTL_DEL, efd, NULL);
	close(ep);
}

static void server_end(struct server *s)
{
	check("kgc_io_ring_destroy", kgc_io_ring_destroy(s->ring, s->t));
	for (int c = 0; c < MAXCONN; c++) {
		if (s->conns[c].fd >= 0)
			close(s->conns[c].fd);
		if (s->conns[c].buf)
			kgc_handle_free(s->t, s->conns[c].buf);
	}
	close(s->lfd);
	check("kgc_thread_detach", kgc_thread_detach(s->t));
	check("kgc_heap_destroy", kgc_heap_destroy(s->heap));
}

/* ------------------------------------------------------------ self-test */

struct client {
	int port, msgs, id, bad;
	pthread_t th;
};

static unsigned long long rnd(unsigned long long *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	return *x ^= *x << 17;
}

static bool io_all(int fd, void *p, size_t n, bool out)
{
	for (size_t done = 0; done < n;) {
		ssize_t k = out ? send(fd, (char *)p + done, n - done, MSG_NOSIGNAL) :
				  recv(fd, (char *)p + done, n - done, 0);

		if (k <= 0)
			return false;
		done += (size_t)k;
	}
	return true;
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)c->port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	unsigned long long x = 0x9e3779b97f4a7c15ull * (unsigned long long)(c->id + 1);
	static __thread unsigned char out[MAXMSG], in[MAXMSG];
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		c->bad = 1;
		return NULL;
	}
	for (int m = 0; m < c->msgs && !c->bad; m++) {
		size_t n = 1 + rnd(&x) % MAXMSG;

		for (size_t i = 0; i < n; i++)
			out[i] = (unsigned char)rnd(&x);
		if (!io_all(fd, out, n, true) || !io_all(fd, in, n, false) || memcmp(in, out, n))
			c->bad = 1;
	}
	close(fd);
	return NULL;
}

static atomic_int stop_all, stop_gc;

static void *collector_main(void *arg)
{
	kgc_heap *h = arg;
	kgc_thread *t;
	unsigned k = 0;

	check("kgc_thread_attach", kgc_thread_attach(h, "collector", &t));
	while (!atomic_load(&stop_gc)) {
		check("kgc_collect", kgc_collect(t, k++ % 4 ? KGC_GC_YOUNG : KGC_GC_FULL));
		kgc_enter_native(t);
		usleep(2000);
		kgc_leave_native(t);
	}
	check("kgc_thread_detach", kgc_thread_detach(t));
	return NULL;
}

struct selftest {
	struct client *cl;
	int nclients;
};

static void *clients_main(void *arg)
{
	struct selftest *st = arg;

	for (int i = 0; i < st->nclients; i++)
		pthread_create(&st->cl[i].th, NULL, client_main, &st->cl[i]);
	for (int i = 0; i < st->nclients; i++)
		pthread_join(st->cl[i].th, NULL);
	atomic_store(&stop_all, 1);
	return NULL;
}

static int selftest(int nclients, int msgs)
{
	static struct server s;
	struct selftest st = { calloc((size_t)nclients, sizeof(struct client)), nclients };
	struct timespec t0, t1;
	pthread_t clients, gc;
	double secs;
	int bad = 0;

	server_init(&s, 0);
	for (int i = 0; i < nclients; i++)
		st.cl[i] = (struct client){ .port = s.port, .msgs = msgs, .id = i };
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_create(&gc, NULL, collector_main, s.heap);
	pthread_create(&clients, NULL, clients_main, &st);
	server_loop(&s, &stop_all, 60);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	atomic_store(&stop_gc, 1);
	kgc_enter_native(s.t);
	pthread_join(clients, NULL);
	pthread_join(gc, NULL);
	kgc_leave_native(s.t);
	for (int i = 0; i < nclients; i++)
		bad += st.cl[i].bad;
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("io_echo: %d clients x %d messages: %lu echoed in %.2f s (%.0f requests/s), "
	       "%d clients failed, %d send errors\n", nclients, msgs, s.echoed, secs,
	       (double)s.echoed / secs, bad, s.errors);
	server_end(&s);
	free(st.cl);
	return bad || s.errors || s.echoed < (unsigned long)nclients * (unsigned long)msgs;
}

int main(int argc, char **argv)
{
	int port = 0, seconds = 0, clients = 8, msgs = 2000;
	bool self = false;
	static struct server s;
	static atomic_int never;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--selftest"))
			self = true;
		else if (!strcmp(argv[i], "-p") && i + 1 < argc)
			port = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			seconds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			clients = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			msgs = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: io_echo [-p PORT] [-t SECONDS] | --selftest [-c CLIENTS] [-n MSGS]\n");
			return 2;
		}
	}
	if (self)
		return selftest(clients < 1 ? 1 : clients > MAXCONN ? MAXCONN : clients, msgs);
	server_init(&s, port);
	printf("io_echo: listening on 127.0.0.1:%d\n", s.port);
	fflush(stdout);
	server_loop(&s, &never, seconds);
	server_end(&s);
	return 0;
}
