/* SPDX-License-Identifier: MIT */
/*
 * Runtime-defined layouts (kgc_type_register_scanned): objects whose
 * reference slots a scan function reports from their contents (tscan.h: a
 * tagged union and a hash table with a type byte per entry) keep what they
 * refer to alive, and their references are updated when it moves, in young
 * collections (old scanned objects through their dirty cards), full
 * collections and concurrent cycles, with the verifier on. Words the scan
 * function does not report hold raw data - object addresses here - and
 * stay bit for bit: no collector path reads them as references. Between
 * collections the objects change layout (a tag turns a number into a box, a
 * pair into a box) following kgc_scan.3's protocol. Random shapes, seeded.
 */
#include "tscan.h"

enum { N = 300, LEN = 1 };

static kgc_heap *h;
static kgc_thread *t;
static kgc_type_id NODE, VAR, TAB;
static unsigned long long seed;
static kgc_handle root;		/* ref[] of N scanned objects */
static kgc_handle anchor;	/* a node whose address the raw words hold */

struct model {
	int is_tab;
	uint64_t tag;			/* variant */
	int64_t va, vb, raw;		/* values of the nodes a and b, the raw word */
	unsigned kind[TB_NENT];		/* table */
	int64_t key[TB_NENT], val[TB_NENT];	/* node values or raw words */
};
static struct model m[N];
static int64_t next_val = 1;

static kgc_obj obj(int i)
{
	return kgc_array_get_ref(kgc_handle_get(root), i);
}

static kgc_obj node(int64_t v)
{
	kgc_obj n = kgc_alloc(t, NODE);

	T_ASSERT(n);
	KGC_FIELD(n, N_VALUE, int64_t) = v;
	return n;
}

/* a raw word: the anchor's address now (a collector that took it for a
 * reference would move or rewrite it) */
static int64_t raw_word(void)
{
	return (int64_t)(uintptr_t)kgc_handle_get(anchor);
}

static void set_variant(int i, uint64_t tag)
{
	kgc_obj o = obj(i);
	struct model *mm = &m[i];

	/* stop reporting first: store NULL (the old value is logged), then the tag */
	if (mm->tag == V_PAIR && tag != V_PAIR)
		kgc_set_ref(t, o, V_B, NULL);
	if (mm->tag != V_NUM && tag == V_NUM)
		kgc_set_ref(t, o, V_A, NULL);
	if (tag == V_NUM) {
		v_set_tag(o, tag);
		mm->raw = raw_word();
		KGC_FIELD(o, V_RAW, int64_t) = mm->raw;
	} else {
		/* report a slot only once it holds its value */
		mm->va = next_val++;
		kgc_obj n = node(mm->va);

		o = obj(i);
		kgc_set_ref(t, o, V_A, n);
		if (tag == V_PAIR) {
			mm->vb = next_val++;
			n = node(mm->vb);
			kgc_set_ref(t, obj(i), V_B, n);
		}
		v_set_tag(obj(i), tag);
		mm->raw = raw_word();
		KGC_FIELD(obj(i), V_RAW, int64_t) = mm->raw;
	}
	mm->tag = tag;
}

static void fill_table(int i)
{
	struct model *mm = &m[i];

	for (int e = 0; e < TB_NENT; e++) {
		unsigned kind = K_USED | (t_rand(&seed) & 1 ? K_KEYREF : 0) | (t_rand(&seed) & 1 ? K_VALREF : 0);
		kgc_obj n;

		if (t_rand(&seed) % 5 == 0)
			kind = 0;
		mm->kind[e] = kind;
		mm->key[e] = kind & K_KEYREF ? next_val++ : raw_word();
		mm->val[e] = kind & K_VALREF ? next_val++ : raw_word();
		if (kind & K_KEYREF) {
			n = node(mm->key[e]);
			kgc_set_ref(t, obj(i), TB_KEY(e), n);
		} else {
			KGC_FIELD(obj(i), TB_KEY(e), int64_t) = mm->key[e];
		}
		if (kind & K_VALREF) {
			n = node(mm->val[e]);
			kgc_set_ref(t, obj(i), TB_VAL(e), n);
		} else {
			KGC_FIELD(obj(i), TB_VAL(e), int64_t) = mm->val[e];
		}
		tb_set_kind(obj(i), e, kind);
	}
}

static void build(void)
{
	root = kgc_handle_new(t, kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, N));
	anchor = kgc_handle_new(t, node(-1));
	for (int i = 0; i < N; i++) {
		m[i].is_tab = t_rand(&seed) % 3 == 0;
		kgc_obj o = kgc_alloc(t, m[i].is_tab ? TAB : VAR);

		T_ASSERT(o);
		kgc_array_set_ref(t, kgc_handle_get(root), i, o);
		if (m[i].is_tab)
			fill_table(i);
		else
			set_variant(i, t_rand(&seed) % 3);
	}
}

static void expect_node(kgc_obj n, int64_t v, int i, const char *what)
{
	if (!n || KGC_FIELD(n, N_VALUE, int64_t) != v)
		T_FAIL("object %d: %s: node %p holds %lld, want %lld", i, what, (void *)n,
		       n ? (long long)KGC_FIELD(n, N_VALUE, int64_t) : -1LL, (long long)v);
}

static void expect_raw(int64_t got, int64_t want, int i, const char *what)
{
	if (got != want)
		T_FAIL("object %d: raw %s changed: %#llx, was %#llx", i, what, (unsigned long long)got,
		       (unsigned long long)want);
}

static void check(const char *when)
{
	for (int i = 0; i < N; i++) {
		kgc_obj o = obj(i);
		struct model *mm = &m[i];

		if (!mm->is_tab) {
			T_ASSERT_EQ(v_tag(o), mm->tag);
			if (mm->tag != V_NUM)
				expect_node(KGC_FIELD(o, V_A, kgc_obj), mm->va, i, "a");
			if (mm->tag == V_PAIR)
				expect_node(KGC_FIELD(o, V_B, kgc_obj), mm->vb, i, "b");
			expect_raw(KGC_FIELD(o, V_RAW, int64_t), mm->raw, i, "variant word");
			continue;
		}
		for (int e = 0; e < TB_NENT; e++) {
			T_ASSERT_EQ(tb_kind(o, e), mm->kind[e]);
			if (mm->kind[e] & K_KEYREF)
				expect_node(KGC_FIELD(o, TB_KEY(e), kgc_obj), mm->key[e], i, "key");
			else
				expect_raw(KGC_FIELD(o, TB_KEY(e), int64_t), mm->key[e], i, "key");
			if (mm->kind[e] & K_VALREF)
				expect_node(KGC_FIELD(o, TB_VAL(e), kgc_obj), mm->val[e], i, "value");
			else
				expect_raw(KGC_FIELD(o, TB_VAL(e), int64_t), mm->val[e], i, "value");
		}
	}
	printf("%s: %d scanned objects intact\n", when, N);
}

/* change a tenth of the objects: old ones get young referents (cards) */
static void mutate(void)
{
	for (int k = 0; k < N / 10; k++) {
		int i = (int)(t_rand(&seed) % N);

		if (m[i].is_tab)
			fill_table(i);
		else
			set_variant(i, t_rand(&seed) % 3);
	}
}

static void collect(int kind, const char *name)
{
	if (kind >= 0) {
		T_ASSERT_EQ(kgc_collect(t, kind), 0);
	} else {
		uint64_t c0 = t_stats(h).concurrent_cycles;

		for (int i = 0; t_stats(h).concurrent_cycles < c0 + 2; i++) {
			T_ASSERT(i < 100000);
			t_churn(t, h, NODE, 1);
			if (i % 3 == 0)
				mutate();
			if (i % 4 == 0)
				t_nap_native(t, 300);
		}
	}
	check(name);
}

static void heap_up(unsigned ihop)
{
	struct kgc_options o;

	t_opts_small(&o, 96, 4);
	o.ihop_percent = ihop;
	o.verify = 1;
	o.poison = 1;	/* a reference not updated reads poison */
	h = t_heap_opts(&o, &NODE);
	VAR = t_register_scanned(h, "variant", V_PAYLOAD, variant_scan);
	TAB = t_register_scanned(h, "table", TB_PAYLOAD, table_scan);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	build();
	check("built");
}

static void heap_down(void)
{
	kgc_handle_free(t, root);
	kgc_handle_free(t, anchor);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	seed = t_seed();
	heap_up(100);
	collect(KGC_GC_YOUNG, "young (promoted)");
	for (int r = 0; r < 3; r++) {
		mutate();
		collect(KGC_GC_YOUNG, "young (old objects' cards)");
	}
	mutate();
	collect(KGC_GC_FULL, "full");
	mutate();
	collect(KGC_GC_YOUNG, "young after full");
	heap_down();
	heap_up(1);
	collect(KGC_GC_YOUNG, "young (promoted)");
	collect(-1, "two concurrent cycles");
	mutate();
	collect(KGC_GC_FULL, "full after cycles");
	heap_down();
	return 0;
}
