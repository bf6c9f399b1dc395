/* SPDX-License-Identifier: MIT */
/*
 * klispbench - klisp (examples/klisp.c) on API v2 against klisp as it was
 * before issue 31, on four Scheme workloads in bench/klisp/: fib(30), tak,
 * a list workload and a string workload. Three builds of the same source
 * (bench/Makefile, statically against the rel libraries):
 *   out/klisp-v2      as it is: fixnums (tagged immediates) and binary
 *                     arithmetic/comparisons without an argument list
 *   out/klisp-boxfast -DKLISP_BOXED_INTS: that fast path, integers boxed
 *   out/klisp-before  -DKLISP_BOXED_INTS -DKLISP_NO_FAST_PRIMS: klisp
 *                     before issue 31 (every integer boxed, tag_mask 0)
 * Each workload runs 3 times per build, alternating (v2, boxfast, before,
 * v2, ...), each in a fresh process with the same heap options; the table
 * shows the median wall time and, from klisp's --stats line, the objects
 * klisp allocated, the bytes kgc handed out (TLABs whole), the integers
 * boxed and the collections. All builds must print the same result.
 * BENCH_SCALE scales the tak, list and string rounds (fib stays at 30:
 * the target).
 */
#include "common.h"
#include <libgen.h>

#define REPS 3
#define NB 3		/* builds; the last is "before" */

struct workload {
	const char *name;
	int n;			/* -D N= */
	int scaled;
};

static const struct workload loads[] = {
	{ "fib", 30, 0 },
	{ "tak", 20, 1 },
	{ "list", 25, 1 },
	{ "string", 3000, 1 },
};

struct run {
	double wall_s, user_s;
	unsigned long long objects, bytes, int_boxes, young, full, pause_ns;
	char result[64];
};

static char dir[4096];			/* bench/out, where this binary is */

static unsigned long long kv(const char *line, const char *key)
{
	const char *p = strstr(line, key);

	return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* Reads the first line of path into buf (newline dropped). */
static void first_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");

	buf[0] = 0;
	if (f) {
		if (fgets(buf, (int)n, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

/* One klisp process: 0, or -1 (could not run, failed, no stats line). */
static int run_once(const char *klisp, const struct workload *w, int n, struct run *out)
{
	char bin[4200], scm[4200], nd[32], outp[4200], errp[4200], line[512];
	char *argv[] = { bin, "--stats", "-X", "heap_max=256m", "-D", nd, scm, NULL };
	struct rusage ru;
	uint64_t t0;
	pid_t pid;
	int st;
	FILE *f;

	snprintf(bin, sizeof(bin), "%s/%s", dir, klisp);
	snprintf(scm, sizeof(scm), "%s/../klisp/%s.scm", dir, w->name);
	snprintf(nd, sizeof(nd), "N=%d", n);
	snprintf(outp, sizeof(outp), "%s/klispbench.stdout.tmp", dir);
	snprintf(errp, sizeof(errp), "%s/klispbench.stderr.tmp", dir);
	fflush(stdout);
	t0 = now_ns();
	if ((pid = fork()) < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (!freopen(outp, "w", stdout) || !freopen(errp, "w", stderr))
			_exit(RUN_NOEXEC);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(bin, argv);
		_exit(RUN_NOEXEC);
	}
	if (wait4(pid, &st, 0, &ru) < 0)
		die("wait4: %s", strerror(errno));
	out->wall_s = (now_ns() - t0) / 1e9;
	out->user_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	first_line(outp, out->result, sizeof(out->result));
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench: %s %s.scm failed (status %#x)\n", klisp, w->name, st);
		return -1;
	}
	if (!(f = fopen(errp, "r")))
		return -1;
	line[0] = 0;
	while (fgets(line, sizeof(line), f) && strncmp(line, "klisp-stats ", 12))
		line[0] = 0;
	fclose(f);
	if (!line[0]) {
		fprintf(stderr, "bench: %s %s.scm printed no stats line\n", klisp, w->name);
		return -1;
	}
	out->objects = kv(line, " objects=");
	out->bytes = kv(line, " bytes=");
	out->int_boxes = kv(line, " int_boxes=");
	out->young = kv(line, " young=");
	out->full = kv(line, " full=");
	out->pause_ns = kv(line, " pause_ns=");
	return 0;
}

static int cmp_run(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	return (x->wall_s > y->wall_s) - (x->wall_s < y->wall_s);
}

int main(int argc, char **argv)
{
	static const char *bins[NB] = { "klisp-v2", "klisp-boxfast", "klisp-before" };
	static const char *label[NB] = { "v2: fixnums + fast path", "boxed + fast path", "before" };
	double scale = bench_scale(), ratio_sum = 0;
	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int nratio = 0, failed = 0;
	FILE *md;

	if (sl <= 0)
		die("readlink /proc/self/exe: %s", strerror(errno));
	self[sl] = 0;
	snprintf(dir, sizeof(dir), "%s", dirname(self));
	md = md_open("klispbench");
	both(md, "\n## klisp: fixnums (API v2) vs boxed integers (issue 31)\n\n");
	both(md, "`examples/klisp.c` built three times into bench/out: **v2** as it is (integers in [-2^62, 2^62)\n"
		 "tagged immediates, `tag_mask` 1, and calls of binary arithmetic and comparisons evaluated without\n"
		 "an argument list: `(+ a b)` on fixnums allocates nothing); **boxed + fast path** with\n"
		 "`-DKLISP_BOXED_INTS` (that fast path, but every integer a heap box); **before** with\n"
		 "`-DKLISP_BOXED_INTS -DKLISP_NO_FAST_PRIMS` (klisp as it was before issue 31).\n"
		 "Scheme sources in `bench/klisp/`; each runs %d times per build, alternating,\n"
		 "each in a fresh process (`-X heap_max=256m`); time is the median wall time, the other columns\n"
		 "come from that run's `--stats` (objects: what klisp allocated; MB: bytes kgc handed out, TLABs\n"
		 "whole). BENCH_SCALE=%.2f (fib is not scaled).\n\n", REPS, scale);
	both(md, "| workload | build | time (s) | user (s) | objects | MB allocated | integers boxed | young GCs | pause total (ms) |\n");
	both(md, "|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < sizeof(loads) / sizeof(loads[0]); i++) {
		const struct workload *w = &loads[i];
		int n = w->scaled ? (int)(w->n * scale + 0.5) : w->n;
		struct run runs[NB][REPS], *med[NB];
		int ok = 1;

		if (n < 1)
			n = 1;
		for (int r = 0; r < REPS && ok; r++)
			for (int b = 0; b < NB && ok; b++)
				ok = !run_once(bins[b], w, n, &runs[b][r]);
		if (!ok) {
			both(md, "| %s(%d) | - | failed (see stderr) | | | | | | |\n", w->name, n);
			failed = 1;
			continue;
		}
		for (int b = 0; b < NB; b++) {
			qsort(runs[b], REPS, sizeof(struct run), cmp_run);
			med[b] = &runs[b][REPS / 2];
			if (strcmp(med[b]->result, med[0]->result)) {
				both(md, "| %s(%d) | - | results differ: %s vs %s | | | | | | |\n", w->name, n,
				     med[b]->result, med[0]->result);
				ok = 0;
			}
		}
		if (!ok) {
			failed = 1;
			continue;
		}
		for (int b = 0; b < NB; b++)
			both(md, "| %s(%d) | %s | %.3f | %.3f | %llu | %.1f | %llu | %llu | %.1f |\n", w->name, n,
			     label[b], med[b]->wall_s, med[b]->user_s, med[b]->objects, med[b]->bytes / 1048576.0,
			     med[b]->int_boxes, med[b]->young, med[b]->pause_ns / 1e6);
		for (int b = 0; b < NB - 1; b++)
			both(md, "| %s(%d) | %s / before | %s%.2fx%s | %.2fx | %.2fx | %.2fx | | | |\n", w->name, n,
			     b ? "boxed + fast path" : "**v2**", b ? "" : "**", med[b]->wall_s / med[NB - 1]->wall_s,
			     b ? "" : "**", med[b]->user_s / med[NB - 1]->user_s,
			     (double)med[b]->objects / (double)med[NB - 1]->objects,
			     (double)med[b]->bytes / (double)med[NB - 1]->bytes);
		ratio_sum += med[0]->wall_s / med[NB - 1]->wall_s;
		nratio++;
	}
	if (nratio)
		both(md, "\nMean time ratio v2 / before over the %d workloads: %.2fx (target <= 0.5x); fib(30)'s "
			 "integers boxed on v2 are in its row (target 0).\n", nratio, ratio_sum / nratio);
	fclose(md);
	return failed;
}
