/* SPDX-License-Identifier: MIT */
/*
 * KGC_LOG=gc+phases: every young pause is followed by one "phases:" line
 * that times its steps, and the steps add up to the pause (all but a few
 * microseconds of bookkeeping): with the verifier on (most of each pause)
 * and with a concurrent cycle's steps (initial mark, remark, cleanup) in
 * some pauses. "gc" alone logs no phases line. It fails when a step's time
 * is left out of the line (the sum falls short) or the tag is not parsed.
 */
#include <stdio.h>
#include "tgc.h"

static unsigned run(const char *spec, const char *path, unsigned *nphases, unsigned *ncycle)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_type_id node;
	kgc_obj keep[1] = { 0 };
	struct kgc_frame fr;
	struct kgc_stats s;
	char line[1024];
	FILE *f;

	t_opts_small(&o, 32, 2);
	o.log = spec;
	o.log_file = path;
	o.ihop_percent = 1;	/* cycles too */
	o.verify = 1;
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "phases", &t), 0);
	kgc_frame_push(t, &fr, keep, 1, NULL);
	for (int round = 0; round < 40; round++) {
		t_list(t, node, &keep[0], 2000, round);	/* some old space to mark */
		t_churn(t, h, node, 1);
		t_nap_native(t, 1000);			/* the marker needs a CPU */
	}
	kgc_frame_pop(t, &fr);
	s = t_stats(h);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);

	*nphases = *ncycle = 0;
	f = fopen(path, "r");
	T_ASSERT(f);
	while (fgets(line, sizeof(line), f)) {
		double pins, cset, evac, cards, copy, weak, regions, record, kpin, cyc, pol, ver, pause, sum;
		char step[64];
		unsigned nw;
		unsigned long long faults;
		const char *p = strstr(line, "phases: ");

		if (!p)
			continue;
		T_ASSERT_EQ(sscanf(p, "phases: pins %lfms, cset %lfms, evacuate %lfms (workers' cpu: cards %lfms, "
				   "copy %lfms, %u worker(s), %llu page faults), weak %lfms, regions %lfms, record %lfms, "
				   "kernel pins %lfms, cycle step (%63[^)]) %lfms, policy %lfms, verify %lfms; pause %lfms",
				   &pins, &cset, &evac, &cards, &copy, &nw, &faults, &weak, &regions, &record, &kpin, step,
				   &cyc, &pol, &ver, &pause), 16);
		sum = pins + cset + evac + weak + regions + record + kpin + cyc + pol + ver;
		if (sum > pause + 0.002 || sum < pause * 0.95 - 0.05)
			T_FAIL("steps add up to %.3f ms in a %.3f ms pause: %s", sum, pause, line);
		T_ASSERT(ver > 0);	/* the verifier ran in it */
		(*nphases)++;
		*ncycle += strcmp(step, "none") != 0;
	}
	fclose(f);
	unlink(path);
	return (unsigned)s.young_gcs;
}

int main(void)
{
	char path[] = "/tmp/kgc-phases-XXXXXX";
	int fd = mkstemp(path);
	unsigned young, nphases, ncycle;

	T_ASSERT(fd >= 0);
	close(fd);
	unsetenv("KGC_LOG");
	unsetenv("KGC_LOG_FILE");
	young = run("gc+phases", path, &nphases, &ncycle);
	printf("gc+phases: %u young pauses, %u phases lines, %u with a cycle step\n", young, nphases, ncycle);
	T_ASSERT(young >= 40);
	T_ASSERT_EQ(nphases, young);
	T_ASSERT(ncycle > 0);
	young = run("gc", path, &nphases, &ncycle);
	T_ASSERT(young >= 40);
	T_ASSERT_EQ(nphases, 0);
	printf("PASS\n");
	return 0;
}
