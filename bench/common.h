/* SPDX-License-Identifier: MIT */
/*
 * Shared helpers for the kgc benchmarks: clocks, peak RSS, percentiles,
 * log2 pause histograms, a driver/worker process split (the driver re-runs
 * its own binary once per configuration so every heap starts cold and peak
 * RSS is per configuration) and the markdown fragment each bench writes for
 * bench/RESULTS.md ($BENCH_OUT/<name>.md, assembled by bench/run.sh).
 */
#ifndef KGC_BENCH_COMMON_H
#define KGC_BENCH_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <poll.h>
#include <signal.h>
#include <fcntl.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "bench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

/* Peak resident set (VmHWM) of this process in KiB. */
static inline long peak_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Scale factor for iteration counts: BENCH_SCALE (default 1.0). */
/* Time the hypervisor ran something else on this VM's CPUs (/proc/stat steal), ns. */
static inline uint64_t host_steal_ns(void)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		return 0;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) != 8)
		v[7] = 0;
	fclose(f);
	return (uint64_t)(v[7] * (1e9 / (double)sysconf(_SC_CLK_TCK)));
}

static inline double bench_scale(void)
{
	const char *s = getenv("BENCH_SCALE");
	double v = s ? atof(s) : 1.0;

	return v > 0 ? v : 1.0;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* p in [0,100] over a sorted array (nearest-rank). */
static inline uint64_t pct_sorted(const uint64_t *v, size_t n, double p)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

/*
 * log2 histogram with the same buckets as struct kgc_stats.pause_hist:
 * bucket i counts values in [2^i, 2^(i+1)) microseconds (bucket 0 also
 * holds everything below 1 us).
 */
#define HIST_BUCKETS 24
static inline void hist_add_ns(uint64_t *hist, uint64_t ns)
{
	uint64_t us = ns / 1000;
	int b = 0;

	while (us > 1 && b < HIST_BUCKETS - 1) {
		us >>= 1;
		b++;
	}
	hist[b]++;
}

/* Upper bound (ns) of the bucket holding the p-th percentile. */
static inline uint64_t hist_pct_upper_ns(const uint64_t *hist, double p)
{
	uint64_t total = 0, seen = 0, rank;

	for (int i = 0; i < HIST_BUCKETS; i++)
		total += hist[i];
	if (!total)
		return 0;
	rank = (uint64_t)(p / 100.0 * (double)total + 0.999999);
	if (rank < 1)
		rank = 1;
	for (int i = 0; i < HIST_BUCKETS; i++) {
		seen += hist[i];
		if (seen >= rank)
			return (2ull << i) * 1000;
	}
	return (2ull << (HIST_BUCKETS - 1)) * 1000;
}

static inline double ms(uint64_t ns) { return (double)ns / 1e6; }

/* ------------------------------------------------------ driver / worker */

/*
 * Run prog (a path, or a name looked up in PATH) with argv and capture the
 * last line of its stdout that starts with "RESULT ". Returns 0 on success,
 * -3 if prog could not be run, -2 if it hung (killed after
 * BENCH_WORKER_TIMEOUT s), -1 if it failed; its stderr passes through, and
 * it is killed if this process dies. out gets the text after "RESULT ".
 */
#define RUN_NOEXEC 127	/* exit status of a child that could not exec */

static inline int run_prog(const char *prog, char *const argv[], const char *env_kv, char *out,
			   size_t outsz)
{
	int pfd[2];
	pid_t pid;
	char buf[1 << 16];
	size_t len = 0;
	ssize_t r;
	int st;

	out[0] = 0;
	if (pipe(pfd))
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		if (env_kv) {
			char *kv = strdup(env_kv);
			char *eq = strchr(kv, '=');

			if (eq) {
				*eq = 0;
				setenv(kv, eq + 1, 1);
			}
		}
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execvp(prog, argv);
		_exit(RUN_NOEXEC);
	}
	close(pfd[1]);
	{
		const char *to = getenv("BENCH_WORKER_TIMEOUT");
		uint64_t deadline = now_ns() + (uint64_t)((to ? atof(to) : 120) * 1e9);
		int timed_out = 0;

		for (;;) {
			struct pollfd p = { pfd[0], POLLIN, 0 };
			uint64_t now = now_ns();
			int pr;

			if (now >= deadline) {
				timed_out = 1;
				break;
			}
			pr = poll(&p, 1, (int)((deadline - now) / 1000000 + 1));
			if (pr < 0 && errno == EINTR)
				continue;
			if (pr <= 0)
				continue;
			r = read(pfd[0], buf + len, sizeof(buf) - 1 - len);
			if (r <= 0)
				break;
			len += (size_t)r;
			if (len >= sizeof(buf) - 1) {	/* keep the tail */
				memmove(buf, buf + len / 2, len - len / 2);
				len -= len / 2;
			}
		}
		if (timed_out) {
			kill(pid, SIGKILL);
			close(pfd[0]);
			waitpid(pid, &st, 0);
			fprintf(stderr, "bench: worker %s %s %s HUNG: killed after %s s\n", argv[1] ? argv[1] : "",
				argv[1] && argv[2] ? argv[2] : "", argv[1] && argv[2] && argv[3] ? argv[3] : "",
				to ? to : "120");
			snprintf(out, outsz, "timeout=1");
			return -2;
		}
	}
	buf[len] = 0;
	close(pfd[0]);
	waitpid(pid, &st, 0);
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (!strncmp(line, "RESULT ", 7))
			snprintf(out, outsz, "%s", line + 7);
	if (WIFEXITED(st) && WEXITSTATUS(st) == RUN_NOEXEC) {
		fprintf(stderr, "bench: cannot run %s\n", prog);
		return -3;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		fprintf(stderr, "bench: worker %s %s failed (status %#x)\n",
			argv[1] ? argv[1] : "", argv[2] ? argv[2] : "", st);
		return -1;
	}
	return out[0] ? 0 : -1;
}

/* Run this binary again as a worker with argv (argv[0] ignored): run_prog. */
static inline int run_worker(char *const argv[], const char *env_kv, char *out, size_t outsz)
{
	return run_prog("/proc/self/exe", argv, env_kv, out, outsz);
}

/* Value of key=... in a RESULT line (NAN-free: returns -1 when absent). */
static inline double res_get(const char *res, const char *key)
{
	size_t kl = strlen(key);

	for (const char *p = res; p && *p; ) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, kl) && p[kl] == '=')
			return atof(p + kl + 1);
		p = strchr(p, ' ');
	}
	return -1;
}

/* Runs this program's worker `variant` reps times (at most 16), each in a
 * fresh process, until one fails; res holds the last RESULT line. The
 * median time_ms of the runs before a failure, -1 if there were none. */
static inline double run_median(const char *argv0, const char *variant, int reps, char *res, size_t n)
{
	double t[16];
	int ok = 0;

	for (int r = 0; r < reps && r < 16; r++) {
		char *args[] = { (char *)argv0, (char *)variant, NULL };

		if (run_worker(args, NULL, res, n) || res_get(res, "time_ms") < 0)
			break;
		t[ok++] = res_get(res, "time_ms");
	}
	if (!ok)
		return -1;
	qsort(t, ok, sizeof(double), cmp_double);
	return t[ok / 2];
}

/* String value of key=... (no spaces) into buf. */
static inline const char *res_str(const char *res, const char *key, char *buf, size_t n)
{
	size_t kl = strlen(key);

	buf[0] = 0;
	for (const char *p = res; p && *p; ) {
		while (*p == ' ')
			p++;
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			size_t i = 0;

			p += kl + 1;
			while (p[i] && p[i] != ' ' && i + 1 < n) {
				buf[i] = p[i];
				i++;
			}
			buf[i] = 0;
			return buf;
		}
		p = strchr(p, ' ');
	}
	return buf;
}

/*
 * Pause times are read from the library's own gc log (KGC_LOG=gc lines
 * "GC(n) Pause Young|Full ... <t>ms"), which a worker sends to a file: this
 * gives every pause with its kind, so windows and young-only figures are
 * exact (kgc_stats only has totals, a max over the whole run and a log2
 * histogram).
 */
static char logpath[4096];

__attribute__((unused)) static void log_to_file(const char *name)
{
	const char *dir = getenv("BENCH_OUT");
	int fd;

	snprintf(logpath, sizeof(logpath), "%s/%s.log", dir ? dir : "out", name);
	fflush(stderr);
	fd = open(logpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		die("open %s", logpath);
	dup2(fd, 2);
	close(fd);
	setenv("KGC_LOG", "gc", 0);	/* more detail if the caller asked (KGC_LOG=gc*) */
}

#define MAX_PAUSES (1 << 16)
static uint64_t pause_ns[MAX_PAUSES];
static uint64_t pause_sync_ns[MAX_PAUSES];	/* time to safepoint before it (KGC_LOG=gc+safepoint), else 0 */
static char pause_young[MAX_PAUSES];
static size_t pause_full_n;		/* "Pause Full" lines among them */
static uint64_t pause_cpu_ns[MAX_PAUSES];	/* kgc, KGC_LOG=gc+heap: CPU of the requesting thread */

/* All pauses in log order; returns how many. kgc logs young and full
 * pauses; HotSpot's -Xlog:gc also remark and cleanup pauses. */
__attribute__((unused)) static size_t parse_pauses(void)
{
	FILE *f;
	char line[1024];
	size_t n = 0;

	fflush(stderr);
	if (!(f = fopen(logpath, "r")))
		return 0;
	uint64_t sync = 0;

	pause_full_n = 0;
	while (fgets(line, sizeof(line), f) && n < MAX_PAUSES) {
		char *tok, *save;
		int young = !!strstr(line, "Pause Young");
		const char *sp = strstr(line, "all threads stopped after ");
		const char *cp = strstr(line, "young: cpu ");

		if (cp && n) {	/* follows its "Pause Young" line */
			pause_cpu_ns[n - 1] = (uint64_t)(atof(cp + strlen("young: cpu ")) * 1e6);
			continue;
		}
		if (sp) {
			sync = (uint64_t)(atof(sp + strlen("all threads stopped after ")) * 1e6);
			continue;
		}
		int full = !!strstr(line, "Pause Full");

		/* ZGC (-Xlog:gc+phases): its three pauses per collection */
		if (!young && !full && !strstr(line, "Pause Remark") && !strstr(line, "Pause Cleanup") &&
		    !strstr(line, "Pause Mark Start") && !strstr(line, "Pause Mark End") &&
		    !strstr(line, "Pause Relocate Start"))
			continue;
		pause_full_n += (size_t)full;
		pause_sync_ns[n] = sync;
		pause_cpu_ns[n] = 0;
		sync = 0;
		for (tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
			size_t l = strlen(tok);

			if (l > 2 && !strcmp(tok + l - 2, "ms") && tok[0] >= '0' && tok[0] <= '9') {
				pause_ns[n] = (uint64_t)(atof(tok) * 1e6);
				pause_young[n++] = (char)young;
				break;
			}
		}
	}
	fclose(f);
	return n;
}

/* The largest, the 99th percentile and the sum of pauses [0, np). */
__attribute__((unused)) static void pause_summary(size_t np, uint64_t *max, uint64_t *p99, uint64_t *total)
{
	static uint64_t sorted[MAX_PAUSES];

	*max = *p99 = *total = 0;
	for (size_t i = 0; i < np; i++) {
		sorted[i] = pause_ns[i];
		*total += pause_ns[i];
		*max = pause_ns[i] > *max ? pause_ns[i] : *max;
	}
	if (!np)
		return;
	qsort(sorted, np, sizeof(sorted[0]), cmp_u64);
	*p99 = pct_sorted(sorted, np, 99);
}

/*
 * Pause i had more than 2 ms of its wall time off the requesting thread's
 * CPU (waiting for the other GC worker, or preempted: host steal, other
 * processes); needs its CPU time (kgc's KGC_LOG=gc+heap), else 0.
 */
static inline int pause_off_cpu(size_t i)
{
	return pause_cpu_ns[i] && pause_ns[i] > pause_cpu_ns[i] + 2000000;
}

#define JDK25_HOME "/usr/lib/jvm/temurin-25-jdk-amd64"	/* jdk_select */

/* Why a worker produced no numbers, for the tables. */
static inline const char *fail_reason(const char *res)
{
	if (res_get(res, "unavailable") > 0)
		return "library not built";
	if (res_get(res, "timeout") > 0)
		return "HUNG: killed by the bench timeout";
	if (res_get(res, "nojdk25") > 0)
		return "no JDK 25 on this machine (" JDK25_HOME ")";
	if (res_get(res, "nojava") > 0)
		return "no JDK: openjdk-17-jdk-headless, see scripts/deps.sh --bench";
	return "run failed (see bench/out/*.stderr)";
}

/* The directory of this binary (where make puts the Java classes too). */
static inline void exe_dir(char *dir, size_t n)
{
	ssize_t len = readlink("/proc/self/exe", dir, n - 1);
	char *slash;

	if (len <= 0)
		die("readlink /proc/self/exe: %s", strerror(errno));
	dir[len] = 0;
	if ((slash = strrchr(dir, '/')))
		*slash = 0;
}

/*
 * The JDK a HotSpot variant runs on: "java" on PATH (JDK 17, from
 * scripts/deps.sh --bench), or JDK 25 where the machine has it (its G1
 * implements JEP 423 region pinning, its ZGC is generational): a variant
 * named "<name>@25" (jdk_select). The classes are built by JDK 17's javac
 * and run on both.
 */
static const char *java_bin = "java";

/* "<name>@25": JDK 25's java for this worker, returns <name>; any other
 * variant is returned as it is (JDK 17). */
__attribute__((unused)) static const char *jdk_select(const char *v)
{
	static char base[64];
	const char *at = strchr(v, '@');

	if (!at || strcmp(at, "@25") || (size_t)(at - v) >= sizeof(base))
		return v;
	memcpy(base, v, (size_t)(at - v));
	base[at - v] = 0;
	java_bin = JDK25_HOME "/bin/java";
	return base;
}

/* The collector flag of a HotSpot variant name, NULL if it is none. */
__attribute__((unused)) static const char *hotspot_gc_flag(const char *v)
{
	if (!strcmp(v, "g1"))
		return "-XX:+UseG1GC";
	if (!strcmp(v, "parallel"))
		return "-XX:+UseParallelGC";
	if (!strcmp(v, "zgc"))
		return "-XX:+UseZGC";	/* generational on JDK 25 (the only one it has) */
	return NULL;
}

/*
 * Run `java ... <name>` (args, the class in dir, built next to this binary)
 * into res. 1 (and "RESULT nojava=1" printed) without a JDK or the class;
 * a failing JVM ends this worker.
 */
static inline int run_java_class(const char *dir, const char *name, char *const args[], char *res,
				 size_t n)
{
	char cls[4200];
	int rc;

	snprintf(cls, sizeof(cls), "%s/%s.class", dir, name);
	if (strcmp(java_bin, "java") && access(java_bin, X_OK)) {
		printf("RESULT nojdk25=1\n");
		return 1;
	}
	if (access(cls, R_OK) || (rc = run_prog(java_bin, args, NULL, res, n)) == -3) {
		printf("RESULT nojava=1\n");
		return 1;
	}
	if (rc)
		die("java %s failed (%d)", name, rc);
	return 0;
}

/*
 * Run the class name (next to this binary) on HotSpot with maximum heap xmx
 * ("-Xmx1g") and collector flag gc, its -Xlog:gc in $BENCH_OUT/<log>.log;
 * prints "RESULT <the program's own> rss_kb= gcs= full= pause_max_ms=
 * pause_total_ms=" (the JVM's peak RSS; every pause of the log).
 */
__attribute__((unused)) static int run_java_logged(const char *name, const char *log, const char *xmx,
						    const char *gc)
{
	char dir[4096], xlog[4200], res[1024];
	char *args[] = { "java", (char *)xmx, (char *)gc, xlog, "-cp", dir, (char *)name, NULL };
	struct rusage ru;
	uint64_t total, max, p99;
	size_t np;

	exe_dir(dir, sizeof(dir));
	snprintf(logpath, sizeof(logpath), "%.4000s/%s.log", getenv("BENCH_OUT") ? getenv("BENCH_OUT") : dir,
		 log);
	/* no rotation; ZGC logs its pauses under gc+phases only */
	snprintf(xlog, sizeof(xlog), "-Xlog:gc%s:file=%s::filecount=0",
		 strstr(gc, "ZGC") ? ",gc+phases" : "", logpath);
	if (run_java_class(dir, name, args, res, sizeof(res)))
		return 0;
	getrusage(RUSAGE_CHILDREN, &ru);
	np = parse_pauses();
	pause_summary(np, &max, &p99, &total);
	printf("RESULT %s rss_kb=%ld gcs=%zu full=%zu pause_max_ms=%.3f pause_p99_ms=%.3f pause_total_ms=%.3f\n",
	       res, ru.ru_maxrss, np, pause_full_n, ms(max), ms(p99), ms(total));
	return 0;
}

/*
 * A HotSpot variant ("g1", "parallel", "zgc", each "@25" for JDK 25) of
 * bench prog: class cls with heap xmx, its log $BENCH_OUT/<prog>_<variant>.log;
 * the worker's exit code, or -1 if variant is not HotSpot's.
 */
__attribute__((unused)) static int hotspot_worker(const char *cls, const char *prog, const char *variant,
					       const char *xmx)
{
	const char *v = jdk_select(variant), *gc = hotspot_gc_flag(v);
	char log[256];

	if (!gc)
		return -1;
	snprintf(log, sizeof(log), "%s_%s%s", prog, v, v != variant ? "25" : "");
	return run_java_logged(cls, log, xmx, gc);
}

/* ------------------------------------------------------- markdown output */

/* Opens $BENCH_OUT/<name>.md (or a scratch file) for this bench's section. */
static inline FILE *md_open(const char *name)
{
	const char *dir = getenv("BENCH_OUT");
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.md", dir ? dir : "out", name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "bench: cannot write %s (%s); section goes to stdout only\n",
			path, strerror(errno));
		f = fopen("/dev/null", "w");
	}
	return f;
}

/* printf to both stdout and the markdown fragment. */
static inline void both(FILE *md, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vfprintf(md, fmt, ap);
	va_end(ap);
}

static inline const char *ratio_str(char *buf, size_t n, double num, double den)
{
	if (num < 0 || den <= 0)
		snprintf(buf, n, "n/a");
	else
		snprintf(buf, n, "%.3fx", num / den);
	return buf;
}

#endif
