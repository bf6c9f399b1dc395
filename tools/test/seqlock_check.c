/* SPDX-License-Identifier: MIT */
/*
 * seqlock_check - kgcstat's copies of the page are never torn. A child
 * process collects over and over (KGC_STATS_PUBLISH=1), its humongous and
 * free region counts changing with every collection; the parent copies the
 * page with kgcs_page_snapshot as fast as it can and checks, in every copy,
 * that the stats' humongous and free counts equal the map's 'H' and '.'
 * counts (the writer writes the stats first, the map last: a copy mixing two
 * updates shows different ones) and that updates never go back.
 * Prints the number of copies and of distinct updates seen. (Probabilistic:
 * with the seq checks removed from statpage.c it caught a torn copy in 2 of
 * 5 runs on a loaded 2-core host.)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <kgc.h>
#include "../statpage.h"

#define UPDATES	1000

static int child(void)
{
	struct kgc_options o;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj arr[8] = { 0 };
	struct kgc_frame f;

	setenv("KGC_STATS_PUBLISH", "1", 1);
	if (kgc_options_init(&o))
		return 1;
	o.max_heap = 256 << 20;
	o.region_size = 1 << 20;
	if (kgc_heap_create(&o, &h) || kgc_thread_attach(h, "writer", &t))
		return 1;
	kgc_frame_push(t, &f, arr, 8, NULL);
	for (int i = 0; i < UPDATES; i++) {
		for (int k = 0; k < 8; k++)	/* (i % 8) humongous arrays of 2..3 regions live */
			arr[k] = k < i % 8 ? kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE),
							    (size_t)(1 + k % 2) << 20) : NULL;
		if (kgc_collect(t, i % 4 ? KGC_GC_YOUNG : KGC_GC_FULL))
			return 1;
	}
	kgc_frame_pop(t, &f);
	kgc_thread_detach(t);
	return kgc_heap_destroy(h) ? 1 : 0;
}

int main(void)
{
	pid_t pid = fork();
	struct kgcs_page p;
	struct kgcs_snap s;
	char err[256];
	unsigned long copies = 0, distinct = 0, last = 0;
	int st, opened = 0;

	if (pid == 0)
		_exit(child());
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (!opened) {
			opened = kgcs_page_open(pid, &p, err, sizeof(err)) == 0;
			continue;
		}
		if (kgcs_page_snapshot(&p, &s, err, sizeof(err)))
			break;
		copies++;
		if (s.st.regions_humongous != kgcs_snap_count(&s, KGC_MAP_HUMONGOUS) ||
		    s.st.regions_free != kgcs_snap_count(&s, KGC_MAP_FREE) || s.updates < last) {
			fprintf(stderr, "seqlock_check: torn copy at update %llu: humongous %u vs map %u, "
				"free %u vs map %u\n", (unsigned long long)s.updates, s.st.regions_humongous,
				kgcs_snap_count(&s, KGC_MAP_HUMONGOUS), s.st.regions_free,
				kgcs_snap_count(&s, KGC_MAP_FREE));
			kill(pid, SIGKILL);
			snprintf(err, sizeof(err), "/dev/shm" KGC_STATPUB_NAME, (long)pid);
			unlink(err);	/* the killed writer's page */
			return 1;
		}
		distinct += s.updates != last;
		last = s.updates;
		kgcs_snap_free(&s);
	}
	waitpid(pid, &st, 0);
	printf("seqlock_check: %lu copies, %lu distinct updates\n", copies, distinct);
	if (!WIFEXITED(st) || WEXITSTATUS(st) || distinct < 10)	/* the copies overlapped the updates */ {
		fprintf(stderr, "seqlock_check: writer status %d, %lu updates seen\n", st, distinct);
		return 1;
	}
	return 0;
}
