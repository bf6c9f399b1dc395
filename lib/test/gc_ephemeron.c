/* SPDX-License-Identifier: MIT */
/*
 * Ephemerons (kgc_ephemeron_*): a value is kept alive by its cell only
 * while the key is alive otherwise, in young and full collections and
 * across concurrent cycles (no full GC there):
 *  - a rooted key keeps its value (a list reachable only through the cell)
 *    intact; the unrooted key clears key and value together;
 *  - a value that refers back to its key keeps nothing alive;
 *  - a chain E2(K2 -> V2) made before E1(K1 -> V1, V1 refers to K2) lives
 *    while K1 does: the fixed point needs a second round;
 *  - SATB: while a cycle marks, a get of a cell whose key nothing else
 *    reached at the snapshot hands out key and value; stored strongly, both
 *    survive that cycle (the verifier checks every reference);
 *  - a tagged immediate value survives bit for bit; a tagged key, NULL
 *    arguments are refused; checked mode aborts on a double free.
 */
#include "tgc.h"

void kgci_cm_test_hold(kgc_heap *h, _Bool on);
const char *kgci_cm_test_state(kgc_heap *h);

enum { LEN = 50 };

static kgc_type_id NODE;
static kgc_heap *h;
static kgc_thread *t;

/* A list of LEN nodes with values seed*1000 + k in *slot. */
static void mk_list(kgc_obj *slot, long seed)
{
	t_list(t, NODE, slot, LEN, seed * 1000);
}

static void check_list(kgc_obj l, long seed, const char *what)
{
	if (!l || KGC_FIELD(l, N_VALUE, int64_t) != seed * 1000 + LEN - 1)
		T_FAIL("%s: list %ld lost (head %p)", what, seed, (void *)l);
	t_list_check(l, LEN);
}

static int get(kgc_ephemeron e, kgc_obj *k, kgc_obj *v)
{
	int rc = kgc_ephemeron_get(t, e, k, v);

	T_ASSERT(rc == 0 || rc == -ENOENT);
	if (rc)
		T_ASSERT(*k == NULL && *v == NULL);
	return rc;
}

static void collect_kind(int kind)
{
	t_collect_kind(t, h, NODE, kind);
}

/* s: 0 key 1, 1 key 2, 2 scratch, 3 key of the self cycle */
static void scenario(int kind, const char *name)
{
	kgc_obj s[4] = { 0 }, k, v;
	struct kgc_frame f;
	kgc_ephemeron e1, e2, e3, e4;
	uint64_t full0 = t_stats(h).full_gcs;

	kgc_frame_push(t, &f, s, 4, NULL);
	s[0] = kgc_alloc(t, NODE);
	s[1] = kgc_alloc(t, NODE);
	s[3] = kgc_alloc(t, NODE);
	/* e2: K2 -> a list, made first */
	mk_list(&s[2], 2);
	T_ASSERT((e2 = kgc_ephemeron_new(t, s[1], s[2])));
	/* e1: K1 -> a list whose last node refers to K2 */
	mk_list(&s[2], 1);
	for (k = s[2]; kgc_get_ref(k, N_LEFT); k = kgc_get_ref(k, N_LEFT))
		;
	kgc_set_ref(t, k, N_RIGHT, s[1]);
	T_ASSERT((e1 = kgc_ephemeron_new(t, s[0], s[2])));
	/* e3: K3 -> a list that refers back to K3 */
	mk_list(&s[2], 3);
	kgc_set_ref(t, s[2], N_RIGHT, s[3]);
	T_ASSERT((e3 = kgc_ephemeron_new(t, s[3], s[2])));
	/* e4: K1 -> a tagged immediate */
	T_ASSERT((e4 = kgc_ephemeron_new(t, s[0], (kgc_obj)(uintptr_t)0x4321)));
	s[1] = s[2] = s[3] = NULL;	/* K1 is the only root left */
	if (kind == -1) {		/* old first: the cycles decide */
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
		full0++;
	}
	/* young: one GC, so that the keys are still young (tenure 3) below */
	for (int round = 0; round < (kind == KGC_GC_YOUNG ? 1 : 2); round++) {
		collect_kind(kind);
		T_ASSERT_EQ(get(e1, &k, &v), 0);
		T_ASSERT(k == s[0]);
		check_list(v, 1, name);
		T_ASSERT_EQ(get(e2, &k, &v), 0);	/* K2 alive through V1 only */
		check_list(v, 2, name);
		T_ASSERT_EQ(get(e3, &k, &v), -ENOENT);	/* only its own value kept K3 */
		T_ASSERT_EQ(get(e4, &k, &v), 0);
		T_ASSERT_EQ((uintptr_t)v, 0x4321);
	}
	s[0] = NULL;			/* K1 dies: everything goes */
	collect_kind(kind);
	T_ASSERT_EQ(get(e1, &k, &v), -ENOENT);
	T_ASSERT_EQ(get(e2, &k, &v), -ENOENT);
	T_ASSERT_EQ(get(e4, &k, &v), -ENOENT);
	if (kind == -1)
		T_ASSERT_EQ(t_stats(h).full_gcs, full0);
	printf("%s: values kept while their keys lived (chain, immediate), cycles and dead keys cleared\n", name);
	kgc_ephemeron_free(t, e1);
	kgc_ephemeron_free(t, e2);
	kgc_ephemeron_free(t, e3);
	kgc_ephemeron_free(t, e4);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
}

/* A get while a cycle marks hands out a key nothing reached at the
 * snapshot: stored strongly, key and value survive the cycle. */
static void satb_get(void)
{
	kgc_obj s[2] = { 0 }, k, v;
	struct kgc_frame f;
	kgc_ephemeron e;
	uint64_t c0, full0;

	kgc_frame_push(t, &f, s, 2, NULL);
	s[0] = kgc_alloc(t, NODE);
	mk_list(&s[1], 7);
	T_ASSERT((e = kgc_ephemeron_new(t, s[0], s[1])));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* both old */
	full0 = t_stats(h).full_gcs;
	s[0] = s[1] = NULL;				/* reachable through e only */
	kgci_cm_test_hold(h, 1);
	for (int i = 0; i < 20000 && strcmp(kgci_cm_test_state(h), "marking"); i++)
		t_churn(t, h, NODE, 1);
	T_ASSERT(strcmp(kgci_cm_test_state(h), "marking") == 0);
	T_ASSERT_EQ(get(e, &k, &v), 0);		/* the snapshot did not reach them */
	s[0] = k;
	s[1] = v;
	c0 = t_stats(h).concurrent_cycles;
	kgci_cm_test_hold(h, 0);
	while (t_stats(h).concurrent_cycles < c0 + 1) {
		t_churn(t, h, NODE, 1);
		t_nap_native(t, 300);
	}
	check_list(s[1], 7, "satb");
	T_ASSERT_EQ(get(e, &k, &v), 0);
	T_ASSERT(k == s[0] && v == s[1]);
	T_ASSERT_EQ(t_stats(h).full_gcs, full0);
	printf("satb: key and value handed out while marking survived the cycle\n");
	kgc_ephemeron_free(t, e);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
}

static void errors(void)
{
	KGC_ROOTS(t, s, 1);
	kgc_obj k, v;
	kgc_ephemeron e;

	s[0] = kgc_alloc(t, NODE);
	T_ASSERT(kgc_ephemeron_new(t, (kgc_obj)(uintptr_t)0x11, s[0]) == NULL);
	T_ASSERT(strstr(kgc_last_error(), "tagged immediate"));
	T_ASSERT(kgc_ephemeron_new(t, NULL, s[0]) == NULL);
	T_ASSERT(kgc_ephemeron_new(t, s[0], (kgc_obj)(uintptr_t)0x1000) == NULL);	/* no object */
	T_ASSERT((e = kgc_ephemeron_new(t, s[0], NULL)));
	T_ASSERT_EQ(kgc_ephemeron_get(t, e, NULL, &v), -EINVAL);
	T_ASSERT_EQ(kgc_ephemeron_get(t, e, &k, &v), 0);
	T_ASSERT(k == s[0] && v == NULL);
	kgc_ephemeron_free(t, e);
	printf("errors: tagged or NULL key, a value that is no object, NULL out-pointers refused\n");
}

static void double_free(void)
{
	struct kgc_options o;
	kgc_heap *hh;
	kgc_thread *tt;
	kgc_ephemeron e;

	t_opts_small(&o, 32, 4);
	hh = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(hh, "df", &tt), 0);
	{
		KGC_ROOTS(tt, s, 1);

		s[0] = kgc_alloc(tt, NODE);
		e = kgc_ephemeron_new(tt, s[0], s[0]);
		kgc_ephemeron_free(tt, e);
		kgc_ephemeron_free(tt, e);
	}
}

static void heap_up(unsigned ihop, int ballast)
{
	struct kgc_options o;

	t_opts_small(&o, 96, 4);
	o.tenure_threshold = 3;
	o.ihop_percent = ihop;
	o.verify = 1;
	o.tag_mask = 1;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	if (!ballast)
		return;
	t_ballast(t, NODE);
}

static void heap_down(void)
{
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	heap_up(100, 0);		/* no cycles: young keys stay young */
	errors();
	scenario(KGC_GC_YOUNG, "young");
	scenario(KGC_GC_FULL, "full");
	heap_down();
	heap_up(1, 1);
	scenario(-1, "concurrent");
	satb_get();
	heap_down();
	t_expect_death(double_free, "freed twice");
	return 0;
}
