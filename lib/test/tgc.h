/* SPDX-License-Identifier: MIT */
/* tgc.h - helpers for the collector's unit tests (heap setup, a node type). */
#ifndef KGC_TGC_H
#define KGC_TGC_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "test.h"

/* struct node { header; node *left; node *right; int64 value; } */
#define N_LEFT 8
#define N_RIGHT 16
#define N_VALUE 24

static inline kgc_heap *t_heap(size_t heap_mb, size_t young_mb, kgc_type_id *node_type)
{
	struct kgc_options o;
	kgc_heap *h;
	static const uint32_t offs[2] = { N_LEFT, N_RIGHT };
	struct kgc_type_desc d = { .name = "node", .payload_size = 24, .nrefs = 2, .ref_offsets = offs };

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = heap_mb << 20;
	o.region_size = 1 << 20;
	o.young_size = young_mb << 20;
	T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
	if (node_type)
		T_ASSERT_EQ(kgc_type_register(h, &d, node_type), 0);
	return h;
}

/* A heap with options o (already initialized and set) and the node type. */
static inline kgc_heap *t_heap_opts(const struct kgc_options *o, kgc_type_id *node_type)
{
	static const uint32_t offs[2] = { N_LEFT, N_RIGHT };
	struct kgc_type_desc d = { .name = "node", .payload_size = 24, .nrefs = 2, .ref_offsets = offs };
	kgc_heap *h;

	T_ASSERT_EQ(kgc_heap_create(o, &h), 0);
	T_ASSERT_EQ(kgc_type_register(h, &d, node_type), 0);
	return h;
}

/* A heap from o on the kmod backend; SKIP (exit 77) where there is none. */
static inline kgc_heap *t_kmod_heap(const struct kgc_options *o)
{
	kgc_heap *h;
	int err = kgc_heap_create(o, &h);

	if (err) {
		T_SKIP_IF(access("/dev/kgc", F_OK) != 0, "needs the kmod backend (/dev/kgc absent)");
		T_FAIL("kgc_heap_create: %d", err);
	}
	if (strcmp(kgc_heap_backend(h), "kmod") != 0) {
		T_ASSERT_EQ(kgc_heap_destroy(h), 0);
		T_SKIP_IF(1, "needs the kmod backend (heap backend is not kmod)");
	}
	return h;
}

/* The text after "key:" in the /proc/self/smaps entry of the mapping
 * holding addr, in out (0), or -1 when there is no such line. */
static inline int t_smaps_value(const void *addr, const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, res = -1;

	T_ASSERT(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
			continue;
		}
		if (in && !strncmp(line, key, strlen(key)) && line[strlen(key)] == ':') {
			const char *v = line + strlen(key) + 1;
			size_t n = strlen(v) < len ? strlen(v) : len - 1;

			memcpy(out, v, n);	/* cut to len - 1 bytes */
			out[n] = '\0';
			res = 0;
			break;
		}
	}
	fclose(f);
	return res;
}

/* Options for a small heap of 1 MiB regions that promotes at the first young GC. */
static inline void t_opts_small(struct kgc_options *o, size_t heap_mb, size_t young_mb)
{
	T_ASSERT_EQ(kgc_options_init(o), 0);
	o->max_heap = heap_mb << 20;
	o->region_size = 1ul << 20;
	o->young_size = young_mb << 20;
	o->tenure_threshold = 1;
}

/* A list of len nodes linked by N_LEFT, built in *slot (a root) and
 * returned: values first .. first+len-1, the head holding the last. */
static inline kgc_obj t_list(kgc_thread *t, kgc_type_id node, kgc_obj *slot, int len, int64_t first)
{
	*slot = NULL;
	for (int k = 0; k < len; k++) {
		kgc_obj n = kgc_alloc(t, node);

		T_ASSERT(n);
		KGC_FIELD(n, N_VALUE, int64_t) = first + k;
		kgc_set_ref(t, n, N_LEFT, *slot);
		*slot = n;
	}
	return *slot;
}

/* Check a t_list list: len nodes, values descending by one from the head. */
static inline void t_list_check(kgc_obj n, int len)
{
	int64_t v;

	T_ASSERT(n);
	v = KGC_FIELD(n, N_VALUE, int64_t);
	for (int k = 0; k < len; k++) {
		T_ASSERT(n);
		T_ASSERT_EQ(KGC_FIELD(n, N_VALUE, int64_t), v - k);
		n = kgc_get_ref(n, N_LEFT);
	}
	T_ASSERT(n == NULL);
}

/* Sleep us microseconds in native state: a collection may run meanwhile, and
 * the marker thread gets the CPU (on a loaded 2-CPU host a churning test
 * thread would starve it). */
static inline void t_nap_native(kgc_thread *t, long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	kgc_enter_native(t);
	nanosleep(&ts, NULL);
	kgc_leave_native(t);
}

static inline struct kgc_stats t_stats(kgc_heap *h)
{
	struct kgc_stats s;

	T_ASSERT_EQ(kgc_stats_get(h, &s, sizeof(s)), 0);
	return s;
}

/* Allocate garbage until at least n young collections happened. */
static inline void t_churn(kgc_thread *t, kgc_heap *h, kgc_type_id node, uint64_t ngcs)
{
	uint64_t start = t_stats(h).young_gcs + t_stats(h).full_gcs;

	while (t_stats(h).young_gcs + t_stats(h).full_gcs < start + ngcs)
		for (int i = 0; i < 1000; i++)
			T_ASSERT(kgc_alloc(t, node) != NULL);
}

/* 2.4 MB of live old objects, rooted by a handle: over the 1% ihop that
 * starts a cycle at every young GC. */
static inline void t_ballast(kgc_thread *t, kgc_type_id node)
{
	kgc_handle b = kgc_handle_new(t, kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 60000));

	for (int i = 0; i < 60000; i++)
		kgc_array_set_ref(t, kgc_handle_get(b), i, kgc_alloc(t, node));
}

/* kind >= 0: that collection; -1: two concurrent cycles (their remarks
 * decide old referents), driven by churn and naps for the marker. */
static inline void t_collect_kind(kgc_thread *t, kgc_heap *h, kgc_type_id node, int kind)
{
	uint64_t c0 = t_stats(h).concurrent_cycles;

	if (kind >= 0) {
		T_ASSERT_EQ(kgc_collect(t, kind), 0);
		return;
	}
	for (int i = 0; t_stats(h).concurrent_cycles < c0 + 2; i++) {
		T_ASSERT(i < 100000);
		t_churn(t, h, node, 1);
		if (i % 4 == 0)
			t_nap_native(t, 300);
	}
}

/* Run fn in a child; assert it dies by a signal (abort), stderr contains
 * want and (unwanted not NULL) does not contain unwanted. */
static inline void t_expect_death_without(void (*fn)(void), const char *want, const char *unwanted)
{
	int pfd[2], st;
	pid_t pid;
	char buf[4096];
	ssize_t n, tot = 0;

	T_ASSERT_EQ(pipe(pfd), 0);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], 2);
		close(pfd[0]);
		setenv("KGC_CHECK", "1", 1);
		fn();
		_exit(0);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], buf + tot, sizeof(buf) - 1 - tot)) > 0)
		tot += n;
	buf[tot] = 0;
	close(pfd[0]);
	T_ASSERT(waitpid(pid, &st, 0) == pid);
	if (!WIFSIGNALED(st) || !strstr(buf, want))
		T_FAIL("child did not die with '%s' (status %#x), stderr:\n%s", want, st, buf);
	if (unwanted && strstr(buf, unwanted))
		T_FAIL("child's stderr has '%s':\n%s", unwanted, buf);
	printf("died as expected: %s", buf);
}

/* Run fn in a child; assert it dies by a signal (abort) and stderr contains want. */
static inline void t_expect_death(void (*fn)(void), const char *want)
{
	t_expect_death_without(fn, want, NULL);
}

#include <pthread.h>

struct t_gcreq { kgc_heap *h; int kind; int n; kgc_type_id churn_type; };

static inline void *t_gc_thread(void *arg)
{
	struct t_gcreq *r = arg;
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(r->h, "gc-helper", &t), 0);
	for (int i = 0; i < r->n; i++) {
		if (r->churn_type)
			for (int k = 0; k < 20000; k++)
				T_ASSERT(kgc_alloc(t, r->churn_type));
		T_ASSERT_EQ(kgc_collect(t, r->kind), 0);
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

/* Another attached thread runs n collections of kind (allocating garbage of churn_type first). */
static inline void t_collect_elsewhere(kgc_heap *h, int kind, int n, kgc_type_id churn_type)
{
	struct t_gcreq r = { h, kind, n, churn_type };
	pthread_t th;

	T_ASSERT_EQ(pthread_create(&th, NULL, t_gc_thread, &r), 0);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
}

#endif
