// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: pin-drop watches (KGC_IOC_PIN_WATCH + poll) with an
 * io_uring fixed buffer, and the module's trace events.
 */
#include <liburing.h>
#include <poll.h>
#include <pthread.h>
#include <dirent.h>
#include <sys/epoll.h>
#include <sys/mount.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "kselftest_harness.h"
#include "kgc_util.h"

#define NR_REGIONS	4
#define REGION		MiB
#define TRACING		"/sys/kernel/tracing"

static int watch(int fd, uint32_t op, uint32_t first, uint32_t count,
		 uint64_t *bm, uint32_t *armed)
{
	struct kgc_pin_watch w = {
		.first = first, .count = count, .op = op,
		.bitmap_ptr = (uintptr_t)bm, .nr_armed = UINT32_MAX,
	};
	int ret = kgc_ioctl(fd, KGC_IOC_PIN_WATCH, &w);

	if (armed)
		*armed = w.nr_armed;
	return ret;
}

static short poll_in(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLPRI };

	return poll(&p, 1, ms) == 1 ? p.revents : 0;
}

FIXTURE(watch) {
	int fd;
	char *mem;
	int ring_ok;
	struct io_uring ring;
};

FIXTURE_SETUP(watch)
{
	struct kgc_info info;

	self->mem = MAP_FAILED;
	self->ring_ok = 0;
	self->fd = kgc_open();
	if (self->fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	ASSERT_EQ(0, kgc_ioctl(self->fd, KGC_IOC_INFO, &info));
	ASSERT_TRUE(info.features & KGC_FEAT_PIN_WATCH);
	ASSERT_EQ(0, kgc_create(self->fd, REGION, NR_REGIONS, NULL));
	self->mem = kgc_map(self->fd, NR_REGIONS * REGION, 0);
	ASSERT_NE(MAP_FAILED, self->mem);
	memset(self->mem, 0x42, NR_REGIONS * REGION);
	if (io_uring_queue_init(4, &self->ring, 0) == 0)
		self->ring_ok = 1;
}

FIXTURE_TEARDOWN(watch)
{
	if (self->ring_ok)
		io_uring_queue_exit(&self->ring);
	if (self->mem != MAP_FAILED)
		munmap(self->mem, NR_REGIONS * REGION);
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * The watch column of region r in the newest heap's debugfs file into
 * state ("armed", "fired", "-"); 1 if read, 0 without debugfs.
 */
static int debugfs_watch(unsigned int r, char state[8])
{
	char path[128], line[256], w[8];
	unsigned int id, best = 0, rr, cp, up, kp, fl;
	struct dirent *de;
	int found = 0;
	DIR *d = opendir(KGC_DEBUGFS);
	FILE *f;

	if (!d)
		return 0;
	while ((de = readdir(d)))	/* heap ids only grow: ours is the newest */
		if (sscanf(de->d_name, "%u", &id) == 1 && id > best)
			best = id;
	closedir(d);
	snprintf(path, sizeof(path), KGC_DEBUGFS "/%u", best);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%u %u %u %u %x %7s", &rr, &cp, &up, &kp, &fl, w) == 6 && rr == r) {
			strcpy(state, w);
			found = 1;
		}
	fclose(f);
	return found;
}

TEST_F(watch, fires_after_io_uring_unregister_not_before)
{
	char state[8];
	int dbg;
	struct iovec iov = { .iov_base = self->mem + REGION + 8192,
			     .iov_len = 8192 };
	uint64_t bm;
	uint32_t armed;

	if (!self->ring_ok)
		SKIP(return, "io_uring unavailable");
	ASSERT_EQ(0, io_uring_register_buffers(&self->ring, &iov, 1));
	bm = 1 << 1;
	ASSERT_EQ(0, watch(self->fd, KGC_WATCH_ARM, 0, NR_REGIONS, &bm, &armed));
	ASSERT_EQ(1, armed);
	/* debugfs shows the watch (where debugfs is mounted) */
	dbg = debugfs_watch(1, state);
	if (dbg) {
		ASSERT_STREQ("armed", state);
		ASSERT_EQ(1, debugfs_watch(2, state));
		ASSERT_STREQ("-", state);
	}
	/* Registered: several rechecks go by, nothing fires. */
	ASSERT_EQ(0, poll_in(self->fd, 600));
	bm = ~0ULL;
	ASSERT_EQ(0, watch(self->fd, KGC_WATCH_FIRED, 0, NR_REGIONS, &bm, &armed));
	ASSERT_EQ(0, bm);
	ASSERT_EQ(1, armed);

	ASSERT_EQ(0, io_uring_unregister_buffers(&self->ring));
	ASSERT_EQ(POLLIN | POLLPRI, poll_in(self->fd, 10000));
	if (dbg) {
		ASSERT_EQ(1, debugfs_watch(1, state));
		ASSERT_STREQ("fired", state);
	}
	bm = 0;
	ASSERT_EQ(0, watch(self->fd, KGC_WATCH_FIRED, 0, NR_REGIONS, &bm, &armed));
	ASSERT_EQ(1 << 1, bm);
	ASSERT_EQ(0, armed);
	if (dbg) {	/* collected */
		ASSERT_EQ(1, debugfs_watch(1, state));
		ASSERT_STREQ("-", state);
	}
	/* Collected, none armed: quiet. */
	ASSERT_EQ(0, poll_in(self->fd, 300));
	ASSERT_EQ(0, kgc_uncommit(self->fd, 1, 1, NULL));
}

TEST_F(watch, unpinned_region_fires_at_once)
{
	uint64_t bm = 1 << 2 | 1 << 0;
	uint32_t armed;

	ASSERT_EQ(0, poll_in(self->fd, 0));
	ASSERT_EQ(0, watch(self->fd, KGC_WATCH_ARM, 0, NR_REGIONS, &bm, &armed));
	ASSERT_EQ(0, armed);
	ASSERT_EQ(POLLIN | POLLPRI, poll_in(self->fd, 0));
	/* Only part of the range: region 2 (bit 0 of first = 2). */
	bm = 0;
	ASSERT_EQ(0, watch(self->fd, KGC_WATCH_FIRED, 2, 2, &bm, NULL));
	ASSERT_EQ(1, bm);
	ASSERT_EQ(POLLIN | POLLPRI, poll_in(self->fd, 0));
	bm = 0;
	ASSERT_EQ(0, watch(self->fd, KGC_WATCH_FIRED, 0, NR_REGIONS, &bm, NULL));
	ASSERT_EQ(1, bm);
	ASSERT_EQ(0, poll_in(self->fd, 0));
}

TEST_F(watch, disarmed_watch_never_fires)
{
	struct iovec iov = { .iov_base = self->mem + 3 * REGION, .iov_len = 4096 };
	uint64_t bm;
	uint32_t armed;

	if (!self->ring_ok)
		SKIP(return, "io_uring unavailable");
	ASSERT_EQ(0, io_uring_register_buffers(&self->ring, &iov, 1));
	bm = 1 << 3;
	ASSERT_EQ(0, watch(self->fd, KGC_WATCH_ARM, 0, NR_REGIONS, &bm, &armed));
	ASSERT_EQ(1, armed);
	/* Arming twice counts once. */
	ASSERT_EQ(0, watch(self->fd, KGC_WATCH_ARM, 0, NR_REGIONS, &bm, &armed));
	ASSERT_EQ(1, armed);
	ASSERT_EQ(0, watch(self->fd, KGC_WATCH_DISARM, 0, NR_REGIONS, &bm, &armed));
	ASSERT_EQ(0, armed);
	ASSERT_EQ(0, io_uring_unregister_buffers(&self->ring));
	ASSERT_EQ(0, poll_in(self->fd, 400));
}

TEST_F(watch, validation)
{
	struct kgc_pin_watch w = { .first = 0, .count = 1, .op = KGC_WATCH_ARM };
	uint64_t bm = 0;
	int fd2;

	w.bitmap_ptr = (uintptr_t)&bm;
	w.op = 3;
	ASSERT_EQ(-EINVAL, kgc_ioctl(self->fd, KGC_IOC_PIN_WATCH, &w));
	w.op = KGC_WATCH_ARM;
	w.reserved[1] = 1;
	ASSERT_EQ(-EINVAL, kgc_ioctl(self->fd, KGC_IOC_PIN_WATCH, &w));
	w.reserved[1] = 0;
	bm = 1 << 4;
	ASSERT_EQ(-EINVAL, watch(self->fd, KGC_WATCH_ARM, 0, NR_REGIONS, &bm, NULL));
	ASSERT_EQ(-EINVAL, watch(self->fd, KGC_WATCH_ARM, NR_REGIONS, 1, &bm, NULL));
	ASSERT_EQ(-EINVAL, watch(self->fd, KGC_WATCH_FIRED, 0, 0, &bm, NULL));
	ASSERT_EQ(-EFAULT, watch(self->fd, KGC_WATCH_ARM, 0, 1, (uint64_t *)8, NULL));
	ASSERT_EQ(-EFAULT, watch(self->fd, KGC_WATCH_FIRED, 0, 1, (uint64_t *)8, NULL));
	fd2 = kgc_open();
	ASSERT_GE(fd2, 0);
	ASSERT_EQ(-ENODEV, watch(fd2, KGC_WATCH_FIRED, 0, 1, &bm, NULL));
	ASSERT_EQ(0, poll_in(fd2, 0));
	close(fd2);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/* Creates a heap on @fd and arms region 0, which has no pins: it fires. */
static int create_and_fire(int fd)
{
	uint64_t bm = 1;
	int ret = kgc_create(fd, REGION, NR_REGIONS, NULL);

	return ret ? ret : watch(fd, KGC_WATCH_ARM, 0, NR_REGIONS, &bm, NULL);
}

/*
 * An epoll set that holds the fd from before HEAP_CREATE learns of a watch
 * firing afterwards (v2's poll returned before poll_wait() without a heap:
 * epoll never queued on the fd and never woke).
 */
TEST(epoll_added_before_create_wakes)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLPRI };
	int fd = kgc_open(), ep;

	if (fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_GE(ep, 0);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	ASSERT_EQ(0, epoll_wait(ep, &ev, 1, 0));
	ASSERT_EQ(0, create_and_fire(fd));
	memset(&ev, 0, sizeof(ev));
	ASSERT_EQ(1, epoll_wait(ep, &ev, 1, 5000));
	ASSERT_EQ(EPOLLIN | EPOLLPRI, ev.events & (EPOLLIN | EPOLLPRI));
	close(ep);
	close(fd);
}

struct poller {
	int fd;
	short revents;
	long long ms;	/* how long poll() took */
};

static void *poll_thread(void *arg)
{
	struct poller *p = arg;
	long long t0 = now_ms();

	p->revents = poll_in(p->fd, 20000);
	p->ms = now_ms() - t0;
	return NULL;
}

/*
 * A poll() asleep since before HEAP_CREATE wakes when the watch fires, not
 * at its timeout (20 s; v2 returned only then).
 */
TEST(poll_started_before_create_wakes)
{
	struct poller p = { .fd = kgc_open() };
	pthread_t t;

	if (p.fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	ASSERT_EQ(0, pthread_create(&t, NULL, poll_thread, &p));
	usleep(300 * 1000);	/* let it go to sleep in poll() */
	ASSERT_EQ(0, create_and_fire(p.fd));
	ASSERT_EQ(0, pthread_join(t, NULL));
	TH_LOG("poll returned %#x after %lld ms", p.revents, p.ms);
	ASSERT_EQ(POLLIN | POLLPRI, p.revents);
	ASSERT_LT(p.ms, 10000);
	close(p.fd);
}

#define MAX_HEAP_MB	"/sys/module/kgc/parameters/max_heap_mb"

/* FIRED over [0, n): the number of regions collected, or -errno. */
static long collect(int fd, uint32_t n, uint64_t *bm)
{
	long c = 0;
	uint32_t i;
	int ret;

	memset(bm, 0, (n + 63) / 64 * 8);
	ret = watch(fd, KGC_WATCH_FIRED, 0, n, bm, NULL);
	if (ret)
		return ret;
	for (i = 0; i < (n + 63) / 64; i++)
		c += __builtin_popcountll(bm[i]);
	return c;
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

/*
 * A collector killed in the middle of FIRED loses nothing: the fired bits
 * it had taken go back (v2 stopped part-way and returned 0 to a dying task,
 * so the fd's other holders never saw those regions fire). Each trial arms
 * every region of a 65536-region heap (all fire at once: no pins), forks a
 * child that collects them, SIGKILLs it at a delay spread over the length
 * of a collection, then collects in the parent: all or nothing.
 */
TEST(fired_bits_survive_a_killed_collector)
{
	const uint32_t n = 65536;
	long long t0, t_fired, until;
	int fd, trials, all = 0, none = 0, sync[2], status;
	char old[32] = "", c;
	uint64_t *bm;
	long got;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root (max_heap_mb)");
	fd = open(MAX_HEAP_MB, O_RDONLY);
	if (fd < 0)
		SKIP(return, MAX_HEAP_MB ": %s", strerror(errno));
	ASSERT_LT(0, read(fd, old, sizeof(old) - 1));
	close(fd);
	ASSERT_EQ(0, kgc_write_file(MAX_HEAP_MB, "65536"));
	fd = kgc_open();
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, kgc_create(fd, MiB, n, NULL));
	ASSERT_EQ(0, kgc_write_file(MAX_HEAP_MB, old));
	bm = malloc(n / 8);
	ASSERT_NE(NULL, bm);

	memset(bm, 0xff, n / 8);
	ASSERT_EQ(0, watch(fd, KGC_WATCH_ARM, 0, n, bm, NULL));
	t0 = now_us();
	ASSERT_EQ(n, collect(fd, n, bm));
	t_fired = now_us() - t0;
	for (trials = 0; trials < 40; trials++) {
		memset(bm, 0xff, n / 8);
		ASSERT_EQ(0, watch(fd, KGC_WATCH_ARM, 0, n, bm, NULL));
		ASSERT_EQ(0, pipe(sync));
		pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			close(sync[0]);
			if (write(sync[1], "x", 1) != 1)
				_exit(1);
			collect(fd, n, bm);
			pause();
			_exit(0);
		}
		close(sync[1]);
		ASSERT_EQ(1, read(sync[0], &c, 1));
		until = now_us() + t_fired * (trials % 20) / 10;
		while (now_us() < until)
			;
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		close(sync[0]);
		got = collect(fd, n, bm);
		if (got != 0 && got != n)
			TH_LOG("trial %d: killed %lld us in, %ld of %u fired bits left",
			       trials, t_fired * (trials % 20) / 10, got, n);
		ASSERT_TRUE(got == 0 || got == n);
		if (got)
			all++;
		else
			none++;
	}
	TH_LOG("collection takes %lld us; %d trials: %d collectors killed before taking the bits (all left), %d after (none left)",
	       t_fired, trials, all, none);
	free(bm);
	close(fd);
}

static int tr_write(const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), TRACING "/%s", file);
	return kgc_write_file(path, val);
}

/* The trace events fire: pin query, busy uncommit, watch. */
TEST_F(watch, trace_events)
{
	struct iovec iov = { .iov_base = self->mem, .iov_len = 4096 };
	static char buf[65536];
	uint64_t bm;
	ssize_t n, tot = 0;
	int tfd;

	if (!self->ring_ok)
		SKIP(return, "io_uring unavailable");
	if (access(TRACING "/trace", F_OK) &&
	    mount("tracefs", TRACING, "tracefs", 0, NULL))
		SKIP(return, "no tracefs: %s", strerror(errno));
	if (access(TRACING "/events/kgc/enable", F_OK))
		SKIP(return, "no kgc trace events");
	tfd = open(TRACING "/trace", O_WRONLY | O_TRUNC);	/* clears it */
	ASSERT_GE(tfd, 0);
	close(tfd);
	ASSERT_EQ(0, tr_write("events/kgc/enable", "1"));

	ASSERT_EQ(0, io_uring_register_buffers(&self->ring, &iov, 1));
	ASSERT_EQ(1, kgc_pinned(self->fd, 0, NR_REGIONS));
	ASSERT_EQ(-EBUSY, kgc_uncommit(self->fd, 0, 1, NULL));
	bm = 1;
	ASSERT_EQ(0, watch(self->fd, KGC_WATCH_ARM, 0, NR_REGIONS, &bm, NULL));
	ASSERT_EQ(0, io_uring_unregister_buffers(&self->ring));
	ASSERT_EQ(POLLIN | POLLPRI, poll_in(self->fd, 10000));

	ASSERT_EQ(0, tr_write("events/kgc/enable", "0"));
	tfd = open(TRACING "/trace", O_RDONLY);
	ASSERT_GE(tfd, 0);
	while ((n = read(tfd, buf + tot, sizeof(buf) - 1 - tot)) > 0)
		tot += n;
	buf[tot] = 0;
	close(tfd);
	ASSERT_NE(NULL, strstr(buf, "kgc_pin_query: heap="));
	ASSERT_NE(NULL, strstr(buf, "first=0 count=4 selected=0 pinned=1"));
	ASSERT_NE(NULL, strstr(buf, "kgc_uncommit_busy: heap="));
	ASSERT_NE(NULL, strstr(buf, "region=0 user_pins=0 kernel_pins=1"));
	ASSERT_NE(NULL, strstr(buf, "kgc_watch_fire: heap="));
	ASSERT_NE(NULL, strstr(buf, "region=0 armed=0"));
}

TEST_HARNESS_MAIN
