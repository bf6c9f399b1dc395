/* SPDX-License-Identifier: MIT */
/*
 * Tagged immediates (kgc_options.tag_mask = 1): values with bit 0 set kept
 * in instance fields, reference array elements and frame slots, next to
 * real references, come back bit for bit after young, full and concurrent
 * collections (with mixed ones), and no collection reads through them: a
 * third of them are a heap object's address with bit 0 set, which a
 * collector taking them for pointers would "evacuate" (a misaligned header
 * read), mark or adjust; the verifier (on throughout) would call them "not
 * an object start". The same again in checked mode (every store through
 * the checked barrier), with concurrent refinement always on (refine.c
 * logs slots of dirty cards: an immediate aliasing a young object must not
 * be one) and in stale-pointer mode (KGC_STALE_CHECK: a young GC every few
 * allocations). Seeded: KGC_TEST_SEED.
 */
#include <stdlib.h>
#include "tgc.h"
#include "../gc_internal.h"

enum { N = 1536, NFS = 8 };

static unsigned long long rng;
static kgc_type_id NODE;
static kgc_thread *t;
static kgc_obj fs[NFS];		/* frame: 0 table, 1 scratch, 2.. immediates */
static uintptr_t want_fs[NFS];
static uintptr_t want[N], want_l[N], want_r[N];	/* entry i: an immediate, or a node's fields */
static bool is_node[N];

/* A tagged immediate: a fixnum 2n+1, or a heap address with bit 0 set. */
static uintptr_t imm(kgc_obj alias)
{
	if (alias && t_rand(&rng) % 3 == 0)
		return (uintptr_t)alias | 1;
	return (uintptr_t)(t_rand(&rng) >> 1) << 1 | 1;
}

static kgc_obj table(void) { return fs[0]; }

/* Entry i becomes a node holding two immediates, or an immediate. */
static void set_entry(long i, bool node)
{
	if (node) {
		kgc_obj n = kgc_alloc(t, NODE);

		T_ASSERT(n);
		KGC_FIELD(n, N_VALUE, int64_t) = i;
		want_l[i] = imm(n);
		want_r[i] = imm(table());
		kgc_set_ref(t, n, N_LEFT, (kgc_obj)want_l[i]);
		kgc_set_ref(t, n, N_RIGHT, (kgc_obj)want_r[i]);
		kgc_array_set_ref(t, table(), i, n);
	} else {
		/* alias a young object where there is one: the barrier's trap */
		fs[1] = kgc_alloc(t, NODE);
		want[i] = imm(fs[1]);
		kgc_array_set_ref(t, table(), i, (kgc_obj)want[i]);
	}
	is_node[i] = node;
}

static void check(const char *when)
{
	for (long i = 0; i < N; i++) {
		kgc_obj e = kgc_array_get_ref(table(), i);

		if (!is_node[i]) {
			if ((uintptr_t)e != want[i])
				T_FAIL("%s: element %ld is %p, stored %#lx", when, i, (void *)e, (unsigned long)want[i]);
			continue;
		}
		if (((uintptr_t)e & 7) || KGC_FIELD(e, N_VALUE, int64_t) != i)
			T_FAIL("%s: element %ld: node %p lost (value %lld)", when, i, (void *)e,
			       ((uintptr_t)e & 7) ? -1ll : (long long)KGC_FIELD(e, N_VALUE, int64_t));
		if ((uintptr_t)kgc_get_ref(e, N_LEFT) != want_l[i] || (uintptr_t)kgc_get_ref(e, N_RIGHT) != want_r[i])
			T_FAIL("%s: node %ld fields %p %p, stored %#lx %#lx", when, i, (void *)kgc_get_ref(e, N_LEFT),
			       (void *)kgc_get_ref(e, N_RIGHT), (unsigned long)want_l[i], (unsigned long)want_r[i]);
	}
	for (int k = 2; k < NFS; k++)
		if ((uintptr_t)fs[k] != want_fs[k])
			T_FAIL("%s: frame slot %d is %p, stored %#lx", when, k, (void *)fs[k], (unsigned long)want_fs[k]);
}

/* Rewrite a few entries (immediates over immediates and nodes, nodes over
 * immediates): old objects take immediates aliasing young ones. */
static void mutate(int n)
{
	for (int k = 0; k < n; k++) {
		long i = (long)(t_rand(&rng) % N);

		if (is_node[i] && t_rand(&rng) % 2) {
			kgc_obj e;

			fs[1] = kgc_alloc(t, NODE);
			e = kgc_array_get_ref(table(), i);	/* after the allocation: it may move */
			want_l[i] = imm(fs[1]);
			kgc_set_ref(t, e, N_LEFT, (kgc_obj)want_l[i]);
		} else {
			set_entry(i, t_rand(&rng) % 4 == 0);
		}
	}
	for (int k = 2; k < NFS; k++)
		if (t_rand(&rng) % 4 == 0)
			fs[k] = (kgc_obj)(want_fs[k] = imm(table()));
}

/* rounds: of mutation and garbage, 0 = until two concurrent cycles ended */
static void run(const char *name, void (*tweak)(struct kgc_options *o), unsigned rounds_max)
{
	struct kgc_options o;
	struct kgc_frame f;
	kgc_heap *h;
	uint64_t c0;
	unsigned rounds = 0;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 64ul << 20;
	o.region_size = 1ul << 20;
	o.young_size = 4ul << 20;
	o.tenure_threshold = 1;
	o.ihop_percent = 2;
	o.mixed_live_percent = 60;
	o.verify = 1;
	o.tag_mask = 1;
	if (tweak)
		tweak(&o);
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, name, &t), 0);
	memset(fs, 0, sizeof(fs));
	kgc_frame_push(t, &f, fs, NFS, NULL);	/* every slot a reference slot */
	fs[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, N);
	T_ASSERT(fs[0]);
	for (int k = 2; k < NFS; k++)
		fs[k] = (kgc_obj)(want_fs[k] = imm(fs[0]));
	for (long i = 0; i < N; i++)
		set_entry(i, i % 3 == 0);
	check("built");
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* young: copied to survivor or old */
	check("after a young GC");
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	check("after a second young GC");
	mutate(N / 4);					/* old holders, young aliases */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	check("after old objects took immediates");
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* mark, forward, adjust, compact */
	check("after a full GC");
	mutate(N / 4);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	check("after a second full GC");
	c0 = t_stats(h).concurrent_cycles;
	while (rounds_max ? rounds < rounds_max : t_stats(h).concurrent_cycles < c0 + 2) {
		T_ASSERT(++rounds < 20000);
		mutate(64);	/* while marking: SATB with immediates overwritten */
		for (int k = 0; k < 2000; k++)
			T_ASSERT(kgc_alloc(t, NODE));
		if (rounds % 16 == 0) {
			check("during concurrent cycles");
			t_nap_native(t, 500);	/* the marker needs a CPU */
		}
	}
	check("after concurrent cycles");
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	check("at the end");
	printf("%s: %llu young (%llu mixed), %llu full, %llu concurrent cycles, %llu refined slots: "
	       "immediates intact\n", name, (unsigned long long)t_stats(h).young_gcs,
	       (unsigned long long)t_stats(h).mixed_gcs, (unsigned long long)t_stats(h).full_gcs,
	       (unsigned long long)t_stats(h).concurrent_cycles, (unsigned long long)t_stats(h).refined_slots);
	T_ASSERT(rounds_max || t_stats(h).concurrent_cycles >= c0 + 2);
	T_ASSERT(o.refine != KGC_REFINE_ALWAYS || t_stats(h).refined_cards > 0);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

static void checked(struct kgc_options *o) { o->check = 1; }
static void refine(struct kgc_options *o) { o->refine = KGC_REFINE_ALWAYS; o->ihop_percent = 100; }
static void stale(struct kgc_options *o) { o->stale_check = 256; o->verify = 0; }

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	rng = t_seed();
	run("plain", NULL, 0);
	run("checked", checked, 0);
	run("refine", refine, 400);
	run("stale", stale, 40);
	return 0;
}
