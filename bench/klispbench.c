/* SPDX-License-Identifier: MIT */
/*
 * klispbench - klisp (examples/klisp.c) on API v2 against klisp as it was
 * before issue 31, on four Scheme workloads in bench/klisp/: fib(30), tak,
 * a list workload and a string workload. Three builds of the same source
 * (bench/Makefile, statically against the rel libraries):
 *   out/klisp-v2      as it is: fixnums (tagged immediates), kgc.h's inline
 *                     frame push/pop and kgc_obj_type, kgc_alloc_init for
 *                     pairs, environments and closures (API v2), and binary
 *                     arithmetic/comparisons without an argument list
 *   out/klisp-boxfast -DKLISP_BOXED_INTS -DKGC_V1_CALLS: that interpreter
 *                     fast path on API v1 (integers boxed, frames and
 *                     kgc_obj_type library calls, kgc_alloc + kgc_set_ref)
 *   out/klisp-before  -DKLISP_BOXED_INTS -DKLISP_NO_FAST_PRIMS
 *                     -DKGC_V1_CALLS: klisp before issue 31 on API v1
 * v2 / boxfast is what the API alone gives (the same evaluator);
 * boxfast / before what the interpreter's fast path gives.
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
	static const char *label[NB] = { "v2: API v2 + fast path", "v1 + fast path", "before (v1)" };
	double scale = bench_scale(), ratio_sum = 0, user_ratio_sum = 0;
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
	both(md, "`examples/klisp.c` built three times into bench/out: **v2** as it is (API v2: integers in\n"
		 "[-2^62, 2^62) tagged immediates, `tag_mask` 1; kgc.h's inline `kgc_frame_push`/`_pop` and\n"
		 "`kgc_obj_type`; pairs, environments and closures by `kgc_alloc_init`; and calls of binary arithmetic\n"
		 "and comparisons evaluated without an argument list); **v1 + fast path** with `-DKLISP_BOXED_INTS\n"
		 "-DKGC_V1_CALLS` (that evaluator fast path on API v1: every integer a heap box, frames and\n"
		 "`kgc_obj_type` library calls, `kgc_alloc` + `kgc_set_ref`); **before** with `-DKLISP_BOXED_INTS\n"
		 "-DKLISP_NO_FAST_PRIMS -DKGC_V1_CALLS` (klisp as it was before issue 31). v2 / (v1 + fast path) is\n"
		 "what the API gives with the same evaluator.\n"
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
			     b ? "v1 + fast path" : "**v2**", b ? "" : "**", med[b]->wall_s / med[NB - 1]->wall_s,
			     b ? "" : "**", med[b]->user_s / med[NB - 1]->user_s,
			     (double)med[b]->objects / (double)med[NB - 1]->objects,
			     (double)med[b]->bytes / (double)med[NB - 1]->bytes);
		both(md, "| %s(%d) | v2 / (v1 + fast path): the API alone | %.2fx | %.2fx | %.2fx | %.2fx | | | |\n",
		     w->name, n, med[0]->wall_s / med[1]->wall_s, med[0]->user_s / med[1]->user_s,
		     (double)med[0]->objects / (double)med[1]->objects, (double)med[0]->bytes / (double)med[1]->bytes);
		ratio_sum += med[0]->wall_s / med[NB - 1]->wall_s;
		user_ratio_sum += med[0]->user_s / med[NB - 1]->user_s;
		nratio++;
	}
	if (nratio)
		both(md, "\nMean time ratio v2 / before over the %d workloads: %.2fx wall, %.2fx user (target <= 0.5x); "
			 "fib(30)'s integers boxed on v2 are in its row (target 0).\n", nratio, ratio_sum / nratio,
		     user_ratio_sum / nratio);
	fclose(md);
	return failed;
}
