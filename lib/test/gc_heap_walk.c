/* SPDX-License-Identifier: MIT */
/*
 * kgc_heap_walk sees exactly the reachable objects after its collection:
 * a graph of nodes, scanned variants (tscan.h) and a reference array,
 * reachable from a frame, beside as much garbage of each type; each object
 * carries a unique number and the walk must report each reachable one once,
 * no garbage, with its type and size. kgc_walk_refs reports a variant's
 * references through its scan function. KGC_WALK_NO_COLLECT also sees the
 * garbage allocated since; a positive return stops the walk. Seeded.
 */
#include "tscan.h"

enum { NLIVE = 400, NDEAD = 400 };	/* variants */

static kgc_heap *h;
static kgc_thread *t;
static kgc_type_id NODE, VAR;
static unsigned long long seed;
static uint8_t want_node[2 * (NLIVE + NDEAD) * 3 + 8], seen_node[sizeof(want_node)];
static uint8_t want_var[NLIVE + NDEAD + 8], seen_var[sizeof(want_var)];
static int narrays, nother, nvisits;

static kgc_obj node(int64_t v)
{
	kgc_obj n = kgc_alloc(t, NODE);

	T_ASSERT(n);
	KGC_FIELD(n, N_VALUE, int64_t) = v;
	return n;
}

static int64_t next_node = 1;

/* variant number id (its raw word) with fresh nodes; live ones stored in arr[i] */
static void make_variant(kgc_obj *slot, int id, int live)
{
	uint64_t tag = t_rand(&seed) % 3;
	kgc_obj v = kgc_alloc(t, VAR);

	T_ASSERT(v);
	*slot = v;
	KGC_FIELD(v, V_RAW, int64_t) = id;
	if (tag != V_NUM) {
		want_node[next_node] = live;
		kgc_obj n = node(next_node++);

		kgc_set_ref(t, *slot, V_A, n);
	}
	if (tag == V_PAIR) {
		want_node[next_node] = live;
		kgc_obj n = node(next_node++);

		kgc_set_ref(t, *slot, V_B, n);
	}
	v_set_tag(*slot, tag);
	want_var[id] = live;
}

static int count(const struct kgc_walk_object *o, void *ctx)
{
	(void)ctx;
	T_ASSERT_EQ(o->size, sizeof(*o));
	nvisits++;
	if (o->type == NODE) {
		int64_t v = KGC_FIELD(o->obj, N_VALUE, int64_t);

		T_ASSERT(v > 0 && v < (int64_t)sizeof(seen_node));
		T_ASSERT_EQ(o->bytes, 32);
		seen_node[v]++;
	} else if (o->type == VAR) {
		int64_t id = KGC_FIELD(o->obj, V_RAW, int64_t);

		T_ASSERT(id > 0 && id < (int64_t)sizeof(seen_var));
		T_ASSERT_EQ(o->bytes, KGC_HEADER_SIZE + V_PAYLOAD);
		seen_var[id]++;
	} else if (o->type == KGC_TYPE_REF_ARRAY) {
		narrays++;
	} else {
		nother++;
	}
	return 0;
}

static void walk(unsigned flags)
{
	memset(seen_node, 0, sizeof(seen_node));
	memset(seen_var, 0, sizeof(seen_var));
	narrays = nother = nvisits = 0;
	T_ASSERT_EQ(kgc_heap_walk(t, flags, count, NULL), 0);
}

static int64_t refs_sum;
static int nrefs;

static void add_ref(kgc_obj r, void *ctx)
{
	(void)ctx;
	nrefs++;
	refs_sum += KGC_FIELD(r, N_VALUE, int64_t);
}

/* every variant's references through kgc_walk_refs: its a and b */
static int check_refs(const struct kgc_walk_object *o, void *ctx)
{
	int64_t want = 0;
	int n = 0;

	(void)ctx;
	if (o->type != VAR)
		return 0;
	if (v_tag(o->obj) != V_NUM) {
		want += KGC_FIELD(KGC_FIELD(o->obj, V_A, kgc_obj), N_VALUE, int64_t);
		n++;
	}
	if (v_tag(o->obj) == V_PAIR) {
		want += KGC_FIELD(KGC_FIELD(o->obj, V_B, kgc_obj), N_VALUE, int64_t);
		n++;
	}
	nrefs = 0;
	refs_sum = 0;
	T_ASSERT_EQ(kgc_walk_refs(o, add_ref, NULL), 0);
	T_ASSERT_EQ(nrefs, n);
	T_ASSERT_EQ(refs_sum, want);
	return 0;
}

static int stop_at_third(const struct kgc_walk_object *o, void *ctx)
{
	int *n = ctx;

	(void)o;
	return ++*n == 3 ? 42 : 0;
}

int main(void)
{
	kgc_obj s[2] = { 0 };
	struct kgc_frame f;
	struct kgc_options o;
	int stops = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = t_seed();
	t_opts_small(&o, 64, 4);
	o.verify = 1;
	h = t_heap_opts(&o, &NODE);
	VAR = t_register_scanned(h, "variant", V_PAYLOAD, variant_scan);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, s, 2, NULL);
	s[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NLIVE);
	/* variants 1, 3, 5, ... reachable (at index i / 2), 2, 4, ... garbage;
	 * loose nodes are garbage */
	for (int i = 0; i < NLIVE + NDEAD; i++) {
		int live = i % 2 == 0;

		make_variant(&s[1], i + 1, live);
		if (live)
			kgc_array_set_ref(t, s[0], i / 2, s[1]);
		if (t_rand(&seed) % 4 == 0) {
			want_node[next_node] = 0;
			s[1] = node(next_node++);
		}
	}
	s[1] = NULL;
	walk(0);
	for (int64_t v = 1; v < next_node; v++)
		if (seen_node[v] != want_node[v])
			T_FAIL("node %lld seen %d times, reachable: %d", (long long)v, seen_node[v], want_node[v]);
	for (int id = 1; id <= NLIVE + NDEAD; id++)
		if (seen_var[id] != want_var[id])
			T_FAIL("variant %d seen %d times, reachable: %d", id, seen_var[id], want_var[id]);
	T_ASSERT_EQ(narrays, 1);
	T_ASSERT_EQ(nother, 0);
	printf("walk after a full collection: %d objects, exactly the reachable ones\n", nvisits);

	T_ASSERT_EQ(kgc_heap_walk(t, 0, check_refs, NULL), 0);
	printf("kgc_walk_refs: every variant's references from its scan function\n");

	for (int i = 0; i < 100; i++)
		T_ASSERT(node(sizeof(seen_node) - 1));	/* garbage, all one number */
	walk(KGC_WALK_NO_COLLECT);
	T_ASSERT_EQ(seen_node[sizeof(seen_node) - 1], 100);
	printf("KGC_WALK_NO_COLLECT: the garbage allocated since is there too\n");
	walk(0);
	T_ASSERT_EQ(seen_node[sizeof(seen_node) - 1], 0);
	T_ASSERT_EQ(kgc_heap_walk(t, KGC_WALK_NO_COLLECT, stop_at_third, &stops), 42);
	T_ASSERT_EQ(stops, 3);
	printf("a positive return stops the walk and is returned\n");
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
