/* SPDX-License-Identifier: MIT */
/*
 * The library's own threads (spawn.c) leave signals to the program's: once
 * a young collection has started the gang (kgc-gc), allocation has woken
 * kgc-pretouch and a cycle has started kgc-marker, every such thread of
 * this process (/proc/self/task/<tid>/comm) blocks SIGINT, SIGTERM, SIGUSR1
 * and SIGCHLD (SigBlk in its status), while this thread blocks none of
 * them. It fails when one of them is started without the mask.
 */
#define _GNU_SOURCE	/* gettid */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "tgc.h"
#include "tcycle.h"

/* The thread tid's name and blocked-signal mask; false if it is gone. */
static bool task_info(const char *tid, char *comm, size_t len, unsigned long long *blk)
{
	char path[320], line[256];
	FILE *f;
	bool got = false;

	snprintf(path, sizeof(path), "/proc/self/task/%s/comm", tid);
	if (!(f = fopen(path, "r")))
		return false;
	if (!fgets(comm, (int)len, f))
		comm[0] = 0;
	comm[strcspn(comm, "\n")] = 0;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/self/task/%s/status", tid);
	if (!(f = fopen(path, "r")))
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "SigBlk:", 7))
			got = sscanf(line + 7, "%llx", blk) == 1;
	fclose(f);
	return got;
}

static bool blocks(unsigned long long blk, int sig)
{
	return blk >> (sig - 1) & 1;
}

int main(void)
{
	static const char *want[] = { "kgc-gc", "kgc-pretouch", "kgc-marker" };
	static const int sigs[] = { SIGINT, SIGTERM, SIGUSR1, SIGCHLD };
	unsigned found[3] = { 0 };
	bool self = false;
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[1] = { 0 };
	struct kgc_frame f;
	sigset_t none;
	DIR *d;
	struct dirent *e;

	sigemptyset(&none);
	T_ASSERT_EQ(pthread_sigmask(SIG_SETMASK, &none, NULL), 0);
	t_opts_small(&o, 64, 8);
	o.gc_threads = 2;
	o.ihop_percent = 1;
	o.young_size = 0;	/* the policy's: pretouch wants regions ahead */
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 1, NULL);
	t_list(t, node, &slots[0], 20000, 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* the gang; the list promoted (tenure 1) */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* old space above 1%: a cycle starts */
	for (int i = 0; i < 2000000 && !kgci_pretouch_regions((struct kgc_heap *)h); i++)
		T_ASSERT(kgc_alloc(t, node));
	T_ASSERT(kgci_pretouch_regions((struct kgc_heap *)h) > 0);
	T_ASSERT((d = opendir("/proc/self/task")));
	while ((e = readdir(d))) {
		char comm[32];
		unsigned long long blk = 0;

		if (e->d_name[0] == '.' || !task_info(e->d_name, comm, sizeof(comm), &blk))
			continue;
		for (int k = 0; k < 3; k++) {
			if (strcmp(comm, want[k]))
				continue;
			found[k]++;
			printf("%s (tid %s): SigBlk %016llx\n", comm, e->d_name, blk);
			for (size_t s = 0; s < sizeof(sigs) / sizeof(sigs[0]); s++)
				if (!blocks(blk, sigs[s]))
					T_FAIL("%s does not block signal %d", comm, sigs[s]);
		}
		if (atol(e->d_name) == (long)gettid()) {	/* this thread */
			self = true;
			for (size_t s = 0; s < sizeof(sigs) / sizeof(sigs[0]); s++)
				T_ASSERT(!blocks(blk, sigs[s]));
		}
	}
	closedir(d);
	T_ASSERT(self);
	for (int k = 0; k < 3; k++)
		if (!found[k])
			T_FAIL("no thread named %s", want[k]);
	t_cycle_finish(t, h);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
