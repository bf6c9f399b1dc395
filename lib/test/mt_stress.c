/* SPDX-License-Identifier: MIT */
/*
 * mt_stress: seeded multi-threaded stress of the collector (issue 3).
 *
 * NTHREADS mutator threads each own a random object graph (instances of two
 * user types with reference + primitive fields, primitive arrays of every
 * element type, reference arrays, humongous arrays >= half a region) rooted
 * in a frame (plus a nested frame and two global handles), and randomly
 * allocate, link, mutate and drop objects. All threads also point into one
 * shared, frozen graph built before they start.
 *
 * Every collection a thread forces itself (kgc_collect, young or full, and
 * "allocate garbage until some thread's allocation triggers a GC") is
 * bracketed by a structural hash of everything reachable from that thread's
 * roots: the hash covers types, lengths, primitive bytes and the shape of the
 * reference graph (references hashed as discovery indices, so it does not
 * depend on addresses). Only the owner mutates its graph and the shared graph
 * is immutable, so the two hashes must be equal whatever other threads do.
 * Non-reference frame slots (refmap bit clear) must survive untouched.
 *
 * The heap verifier runs around every collection (KGC_VERIFY=1 from the
 * runner; forced on here unless KGC_VERIFY=0). Runtime: KGC_STRESS_SECS
 * (default 12 s; sanitizer builds use the same wall time and do less work).
 * Replay a failure with the printed KGC_TEST_SEED (thread interleaving is not
 * reproducible, each thread's operation sequence is).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include "test.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

enum { NTHREADS = 4, NREFSLOTS = 24, NRAWSLOTS = 4, NSLOTS = NREFSLOTS + NRAWSLOTS, NHANDLES = 2 };

/* ---------------------------------------------------------------- types */

/* A: ref @8, i64 @16, ref @24, i32 @32, i32 @36            (payload 32) */
enum { A_R0 = 8, A_X = 16, A_R1 = 24, A_Y = 32, A_Z = 36, A_PAYLOAD = 32 };
/* B: ref @8, ref @16, i64 @24, ref @32, f64 @40, ref @48   (payload 48) */
enum { B_R0 = 8, B_R1 = 16, B_X = 24, B_R2 = 32, B_D = 40, B_R3 = 48, B_PAYLOAD = 48 };
/* F (frozen, shared): ref @8, ref @16, i64 @24             (payload 24) */
enum { F_R0 = 8, F_R1 = 16, F_X = 24, F_PAYLOAD = 24 };

static const uint32_t a_refs[] = { A_R0, A_R1 };
static const uint32_t b_refs[] = { B_R0, B_R1, B_R2, B_R3 };
static const uint32_t f_refs[] = { F_R0, F_R1 };
static kgc_type_id TA, TB, TF;

static const size_t prim_size[KGC_PRIM_COUNT] = { 1, 1, 2, 2, 4, 4, 8, 8 };

static kgc_heap *heap;
static size_t region_size;
static kgc_handle shared_root;
static uint64_t deadline_ns;
static atomic_int stop_all;

static uint64_t kgci_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* --------------------------------------------------------- thread state */

struct worker {
	int id;
	unsigned long long rng;
	kgc_thread *t;
	struct kgc_frame frame;
	kgc_obj slots[NSLOTS];
	kgc_handle handles[NHANDLES];
	/* hashing: visited map (pointer -> discovery index) with epochs */
	struct vent { uintptr_t key; uint32_t epoch, idx; } *vmap;
	size_t vcap, vcount;
	uint32_t epoch;
	kgc_obj *stack;
	size_t sp, stack_cap;
	size_t nobj, bytes;	/* of the last hash */
	/* counters */
	unsigned long ops, checked_young, checked_full, checked_pressure, humongous;
};

static inline unsigned long long rnd(struct worker *w) { return t_rand(&w->rng); }
static inline size_t rndn(struct worker *w, size_t n) { return n ? (size_t)(rnd(w) % n) : 0; }

static const uint64_t refmap_bits = (1ull << NREFSLOTS) - 1;

/* Non-reference slots hold tagged integers that the collector must not touch. */
static kgc_obj raw_slot_value(int id, int i)
{
	return (kgc_obj)(uintptr_t)(0x5a5a000000000001ull | ((uint64_t)id << 32) | ((uint64_t)i << 8));
}

/* --------------------------------------------------------------- hashing */

static inline uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 29);
}

static uint64_t mix_bytes(uint64_t h, const unsigned char *p, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, 8);
		h = mix(h, v);
	}
	for (; i < n; i++)
		h = mix(h, p[i]);
	return h;
}

static void vmap_grow(struct worker *w)
{
	struct vent *old = w->vmap;
	size_t oldcap = w->vcap;

	w->vcap = oldcap ? oldcap * 2 : 1 << 14;
	w->vmap = calloc(w->vcap, sizeof(*w->vmap));
	T_ASSERT(w->vmap);
	for (size_t i = 0; i < oldcap; i++) {
		if (old[i].epoch != w->epoch)
			continue;
		for (size_t j = (old[i].key >> 3) & (w->vcap - 1); ; j = (j + 1) & (w->vcap - 1))
			if (w->vmap[j].epoch != w->epoch) {
				w->vmap[j] = old[i];
				break;
			}
	}
	free(old);
}

/* Discovery index of o (1-based); a new object is pushed for hashing. */
static uint32_t index_of(struct worker *w, kgc_obj o)
{
	uintptr_t key = (uintptr_t)o;
	size_t j;

	if (!o)
		return 0;
	if (2 * (w->vcount + 1) > w->vcap)
		vmap_grow(w);
	for (j = (key >> 3) & (w->vcap - 1); ; j = (j + 1) & (w->vcap - 1)) {
		if (w->vmap[j].epoch != w->epoch)
			break;
		if (w->vmap[j].key == key)
			return w->vmap[j].idx;
	}
	w->vmap[j].key = key;
	w->vmap[j].epoch = w->epoch;
	w->vmap[j].idx = (uint32_t)++w->vcount;
	if (w->sp == w->stack_cap) {
		w->stack_cap = w->stack_cap ? 2 * w->stack_cap : 1 << 12;
		w->stack = realloc(w->stack, w->stack_cap * sizeof(kgc_obj));
		T_ASSERT(w->stack);
	}
	w->stack[w->sp++] = o;
	return w->vmap[j].idx;
}

static uint64_t hash_obj(struct worker *w, uint64_t h, kgc_obj o)
{
	kgc_type_id ty = kgc_obj_type(o);

	h = mix(h, ty);
	w->nobj++;
	w->bytes += kgc_obj_size(o);
	if (ty == TA) {
		h = mix(h, index_of(w, kgc_get_ref(o, A_R0)));
		h = mix(h, index_of(w, kgc_get_ref(o, A_R1)));
		h = mix(h, (uint64_t)KGC_FIELD(o, A_X, int64_t));
		h = mix(h, (uint32_t)KGC_FIELD(o, A_Y, int32_t));
		h = mix(h, (uint32_t)KGC_FIELD(o, A_Z, int32_t));
	} else if (ty == TB) {
		double d = KGC_FIELD(o, B_D, double);
		uint64_t dbits;

		memcpy(&dbits, &d, 8);
		h = mix(h, index_of(w, kgc_get_ref(o, B_R0)));
		h = mix(h, index_of(w, kgc_get_ref(o, B_R1)));
		h = mix(h, index_of(w, kgc_get_ref(o, B_R2)));
		h = mix(h, index_of(w, kgc_get_ref(o, B_R3)));
		h = mix(h, (uint64_t)KGC_FIELD(o, B_X, int64_t));
		h = mix(h, dbits);
	} else if (ty == TF) {
		h = mix(h, index_of(w, kgc_get_ref(o, F_R0)));
		h = mix(h, index_of(w, kgc_get_ref(o, F_R1)));
		h = mix(h, (uint64_t)KGC_FIELD(o, F_X, int64_t));
	} else if (ty == KGC_TYPE_REF_ARRAY) {
		size_t n = kgc_array_length(o);

		h = mix(h, n);
		for (size_t i = 0; i < n; i++)
			h = mix(h, index_of(w, kgc_array_get_ref(o, i)));
	} else if (ty >= KGC_TYPE_PRIM_ARRAY(0) && ty < KGC_TYPE_PRIM_ARRAY(KGC_PRIM_COUNT)) {
		size_t n = kgc_array_length(o);

		h = mix(h, n);
		h = mix_bytes(h, kgc_array_data(o), n * prim_size[ty - KGC_TYPE_PRIM_ARRAY(0)]);
	} else {
		T_FAIL("thread %d: object %p has unexpected type %u", w->id, (void *)o, ty);
	}
	return h;
}

/* Structural hash of everything reachable from this thread's roots. No
 * safepoint inside: the graph cannot move while it runs. */
static uint64_t hash_graph(struct worker *w)
{
	uint64_t h = 0x6b6763;

	w->epoch++;
	w->vcount = 0;
	w->sp = 0;
	w->nobj = w->bytes = 0;
	for (int i = 0; i < NREFSLOTS; i++)
		h = mix(h, index_of(w, w->slots[i]));
	for (int i = NREFSLOTS; i < NSLOTS; i++) {
		if (w->slots[i] != raw_slot_value(w->id, i))
			T_FAIL("thread %d: non-reference frame slot %d changed to %p", w->id, i,
			       (void *)w->slots[i]);
		h = mix(h, (uintptr_t)w->slots[i]);
	}
	for (int i = 0; i < NHANDLES; i++)
		h = mix(h, index_of(w, kgc_handle_get(w->handles[i])));
	while (w->sp)
		h = hash_obj(w, h, w->stack[--w->sp]);
	return h;
}

/* Structural hash of what one object reaches (used for the frozen graph). */
static uint64_t hash_from(struct worker *w, kgc_obj root)
{
	uint64_t h = 0x66726f7a;

	w->epoch++;
	w->vcount = 0;
	w->sp = 0;
	w->nobj = w->bytes = 0;
	h = mix(h, index_of(w, root));
	while (w->sp)
		h = hash_obj(w, h, w->stack[--w->sp]);
	return h;
}

/* ------------------------------------------------------- graph operations */

static int is_mutable_holder(kgc_obj o)
{
	kgc_type_id ty = kgc_obj_type(o);

	return ty == TA || ty == TB || (ty == KGC_TYPE_REF_ARRAY && kgc_array_length(o) > 0);
}

/* A random non-shared object reachable from this thread's roots (or NULL). */
static kgc_obj pick_own(struct worker *w)
{
	kgc_obj o = NULL;
	int steps;

	for (int tries = 0; tries < 4 && !o; tries++) {
		size_t r = rndn(w, NREFSLOTS + NHANDLES);

		o = r < NREFSLOTS ? w->slots[r] : kgc_handle_get(w->handles[r - NREFSLOTS]);
	}
	if (!o || kgc_obj_type(o) == TF)
		return NULL;
	steps = (int)rndn(w, 8);
	while (steps-- > 0) {
		kgc_type_id ty = kgc_obj_type(o);
		kgc_obj next = NULL;

		if (ty == TA)
			next = kgc_get_ref(o, rndn(w, 2) ? A_R1 : A_R0);
		else if (ty == TB)
			next = kgc_get_ref(o, b_refs[rndn(w, 4)]);
		else if (ty == KGC_TYPE_REF_ARRAY && kgc_array_length(o))
			next = kgc_array_get_ref(o, rndn(w, kgc_array_length(o)));
		if (!next || kgc_obj_type(next) == TF)
			break;
		o = next;
	}
	return o;
}

/* Something to store in a reference field: own object, shared, or NULL. */
static kgc_obj pick_target(struct worker *w)
{
	size_t r = rndn(w, 8);

	if (r == 0)
		return NULL;
	if (r == 1)
		return kgc_handle_get(shared_root);
	return pick_own(w);
}

static void set_ref_field(struct worker *w, kgc_obj holder, kgc_obj val)
{
	kgc_type_id ty = kgc_obj_type(holder);

	if (ty == TA)
		kgc_set_ref(w->t, holder, a_refs[rndn(w, 2)], val);
	else if (ty == TB)
		kgc_set_ref(w->t, holder, b_refs[rndn(w, 4)], val);
	else if (ty == KGC_TYPE_REF_ARRAY && kgc_array_length(holder))
		kgc_array_set_ref(w->t, holder, rndn(w, kgc_array_length(holder)), val);
}

/* Make o reachable: a root slot, a handle or a field of a reachable object. */
static void place(struct worker *w, kgc_obj o)
{
	size_t r = rndn(w, 16);
	kgc_obj holder;

	if (r < 7) {
		w->slots[rndn(w, NREFSLOTS)] = o;
	} else if (r == 7) {
		kgc_handle_set(w->handles[rndn(w, NHANDLES)], o);
	} else {
		holder = pick_own(w);
		if (holder && is_mutable_holder(holder))
			set_ref_field(w, holder, o);
		else
			w->slots[rndn(w, NREFSLOTS)] = o;
	}
}

static void fill_prim(struct worker *w, kgc_obj a)
{
	kgc_type_id ty = kgc_obj_type(a);
	int prim = (int)(ty - KGC_TYPE_PRIM_ARRAY(0));
	size_t bytes = kgc_array_length(a) * prim_size[prim];
	unsigned char *p = kgc_array_data(a);

	if (prim == KGC_PRIM_BOOLEAN) {
		for (size_t i = 0; i < bytes; i++)
			p[i] = rnd(w) & 1;
		return;
	}
	for (size_t i = 0; i < bytes; i += 8) {
		uint64_t v = rnd(w);

		memcpy(p + i, &v, bytes - i < 8 ? bytes - i : 8);
	}
}

static kgc_obj must(struct worker *w, kgc_obj o, const char *what)
{
	if (!o)
		T_FAIL("thread %d: %s failed after %lu ops", w->id, what, w->ops);
	return o;
}

static void op_alloc_instance(struct worker *w)
{
	/* a nested frame holds the new object across the second allocation */
	kgc_obj tmp[2] = { NULL, NULL };
	struct kgc_frame f;
	kgc_obj o;

	kgc_frame_push(w->t, &f, tmp, 2, NULL);
	tmp[0] = must(w, kgc_alloc(w->t, rndn(w, 2) ? TA : TB), "kgc_alloc");
	if (rndn(w, 2)) {
		tmp[1] = must(w, kgc_alloc_array(w->t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), rndn(w, 16)),
			      "kgc_alloc_array(int)");
		fill_prim(w, tmp[1]);
	}
	o = tmp[0];
	if (kgc_obj_type(o) == TA) {
		KGC_FIELD(o, A_X, int64_t) = (int64_t)rnd(w);
		KGC_FIELD(o, A_Y, int32_t) = (int32_t)rnd(w);
		KGC_FIELD(o, A_Z, int32_t) = (int32_t)rnd(w);
		kgc_set_ref(w->t, o, A_R0, tmp[1] ? tmp[1] : pick_target(w));
		kgc_set_ref(w->t, o, A_R1, pick_target(w));
	} else {
		KGC_FIELD(o, B_X, int64_t) = (int64_t)rnd(w);
		KGC_FIELD(o, B_D, double) = (double)rnd(w) / 7.0;
		for (int i = 0; i < 4; i++)
			kgc_set_ref(w->t, o, b_refs[i], i == 0 && tmp[1] ? tmp[1] : pick_target(w));
	}
	place(w, o);
	T_ASSERT_EQ(kgc_frame_pop(w->t, &f), 0);
}

static void op_alloc_prim(struct worker *w, int humongous)
{
	int prim = (int)rndn(w, KGC_PRIM_COUNT);
	size_t len;
	kgc_obj a;

	if (humongous)
		len = (region_size / 2 + rndn(w, region_size)) / prim_size[prim];
	else
		len = rndn(w, 8) ? rndn(w, 64) : rndn(w, 4096);
	a = must(w, kgc_alloc_array(w->t, KGC_TYPE_PRIM_ARRAY(prim), len), "kgc_alloc_array(prim)");
	T_ASSERT_EQ(kgc_array_length(a), len);
	fill_prim(w, a);
	if (humongous) {
		w->humongous++;
		w->slots[rndn(w, NREFSLOTS)] = a;	/* dropped again by later ops */
	} else {
		place(w, a);
	}
}

static void op_alloc_refarray(struct worker *w)
{
	size_t len = rndn(w, 8) ? rndn(w, 16) : rndn(w, 300);
	kgc_obj a = must(w, kgc_alloc_array(w->t, KGC_TYPE_REF_ARRAY, len), "kgc_alloc_array(ref)");

	for (size_t i = 0; i < len; i++)
		if (rndn(w, 2))
			kgc_array_set_ref(w->t, a, i, pick_target(w));
	place(w, a);
}

static void op_mutate(struct worker *w)
{
	kgc_obj o = pick_own(w);
	kgc_type_id ty;

	if (!o)
		return;
	ty = kgc_obj_type(o);
	if (ty == TA) {
		if (rndn(w, 2))
			KGC_FIELD(o, A_Y, int32_t) = (int32_t)rnd(w);
		else
			set_ref_field(w, o, pick_target(w));
	} else if (ty == TB) {
		if (rndn(w, 2))
			KGC_FIELD(o, B_X, int64_t) = (int64_t)rnd(w);
		else
			set_ref_field(w, o, pick_target(w));
	} else if (ty == KGC_TYPE_REF_ARRAY) {
		set_ref_field(w, o, pick_target(w));
	} else {
		size_t n = kgc_array_length(o);
		int prim = (int)(ty - KGC_TYPE_PRIM_ARRAY(0));

		if (n) {
			unsigned char *p = (unsigned char *)kgc_array_data(o) + rndn(w, n) * prim_size[prim];

			if (prim == KGC_PRIM_BOOLEAN)
				*p ^= 1;
			else
				*p = (unsigned char)rnd(w);
		}
	}
}

static void op_drop(struct worker *w)
{
	kgc_obj o;

	if (rndn(w, 2)) {
		w->slots[rndn(w, NREFSLOTS)] = NULL;
	} else if ((o = pick_own(w)) && is_mutable_holder(o)) {
		set_ref_field(w, o, NULL);
	}
}

static struct kgc_stats stats_now(void)
{
	struct kgc_stats st;

	T_ASSERT_EQ(kgc_stats_get(heap, &st, sizeof(st)), 0);
	return st;
}

static void checked_collect(struct worker *w, int kind)
{
	uint64_t h0 = hash_graph(w), h1;
	size_t n0 = w->nobj;

	T_ASSERT_EQ(kgc_collect(w->t, kind), 0);
	h1 = hash_graph(w);
	if (h0 != h1 || n0 != w->nobj)
		T_FAIL("thread %d: graph changed across %s collection after %lu ops: "
		       "hash %#llx -> %#llx, objects %zu -> %zu", w->id,
		       kind == KGC_GC_FULL ? "full" : "young", w->ops,
		       (unsigned long long)h0, (unsigned long long)h1, n0, w->nobj);
	if (kind == KGC_GC_FULL)
		w->checked_full++;
	else
		w->checked_young++;
}

/* Allocate unreachable garbage until a collection happens (any thread may
 * trigger it); the graph must hash the same before and after. */
static void checked_pressure(struct worker *w)
{
	struct kgc_stats st = stats_now();
	uint64_t g0 = st.young_gcs + st.full_gcs;
	uint64_t h0 = hash_graph(w), h1;
	size_t n0 = w->nobj;
	int i;

	for (i = 0; i < 20000; i++) {
		must(w, kgc_alloc_array(w->t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), 64 + rndn(w, 512)),
		     "garbage allocation");
		if ((i & 63) == 63) {
			st = stats_now();
			if (st.young_gcs + st.full_gcs != g0)
				break;
		}
	}
	h1 = hash_graph(w);
	if (h0 != h1 || n0 != w->nobj)
		T_FAIL("thread %d: graph changed across allocation-triggered collection after %lu ops: "
		       "hash %#llx -> %#llx, objects %zu -> %zu", w->id, w->ops,
		       (unsigned long long)h0, (unsigned long long)h1, n0, w->nobj);
	w->checked_pressure++;
}

static void op_native_nap(struct worker *w)
{
	kgc_enter_native(w->t);
	if (rndn(w, 4))
		sched_yield();
	else
		usleep((useconds_t)rndn(w, 300));
	kgc_leave_native(w->t);
}

/* Keep each thread's graph bounded: drop roots while it is too big. */
static void bound_size(struct worker *w)
{
	size_t limit = SANITIZED ? 2u << 20 : 6u << 20;

	hash_graph(w);
	while (w->bytes > limit || w->nobj > (SANITIZED ? 6000u : 20000u)) {
		for (int i = 0; i < NREFSLOTS; i++)
			if (rndn(w, 2))
				w->slots[i] = NULL;
		if (rndn(w, 2))
			kgc_handle_set(w->handles[rndn(w, NHANDLES)], NULL);
		hash_graph(w);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[32];

	snprintf(name, sizeof(name), "stress-%d", w->id);
	T_ASSERT_EQ(kgc_thread_attach(heap, name, &w->t), 0);
	for (int i = NREFSLOTS; i < NSLOTS; i++)
		w->slots[i] = raw_slot_value(w->id, i);
	kgc_frame_push(w->t, &w->frame, w->slots, NSLOTS, &refmap_bits);
	for (int i = 0; i < NHANDLES; i++)
		T_ASSERT((w->handles[i] = kgc_handle_new(w->t, NULL)) != NULL);

	while (!atomic_load_explicit(&stop_all, memory_order_relaxed)) {
		size_t r = rndn(w, 1000);

		if (r < 250)
			op_alloc_instance(w);
		else if (r < 440)
			op_alloc_prim(w, 0);
		else if (r < 444)
			op_alloc_prim(w, 1);
		else if (r < 540)
			op_alloc_refarray(w);
		else if (r < 790)
			op_mutate(w);
		else if (r < 900)
			op_drop(w);
		else if (r < 915)
			kgc_handle_set(w->handles[rndn(w, NHANDLES)], pick_own(w));
		else if (r < 925)
			op_native_nap(w);
		else if (r < 935)
			kgc_safepoint_poll(w->t);
		else if (r < 943)
			checked_collect(w, rndn(w, 5) ? KGC_GC_YOUNG : KGC_GC_FULL);
		else if (r < 946)
			checked_pressure(w);
		/* else: a no-op (pure reads are covered by the hashes) */
		if ((++w->ops & 127) == 0) {
			bound_size(w);
			if (kgci_now_ns() > deadline_ns)
				atomic_store(&stop_all, 1);
		}
	}
	/* every thread ends with one checked young and one checked full GC */
	checked_collect(w, KGC_GC_YOUNG);
	checked_collect(w, KGC_GC_FULL);

	for (int i = 0; i < NHANDLES; i++)
		kgc_handle_free(w->t, w->handles[i]);
	T_ASSERT_EQ(kgc_frame_pop(w->t, &w->frame), 0);
	T_ASSERT_EQ(kgc_thread_detach(w->t), 0);
	return NULL;
}

/* ------------------------------------------------------------------ main */

/* The frozen graph: a small binary tree of F nodes with int arrays hanging
 * off it; built before the workers start and never written again. */
static kgc_obj build_frozen(kgc_thread *t, kgc_obj *slot, int depth, unsigned long long *rng)
{
	kgc_obj tmp[3] = { NULL, NULL, NULL };
	struct kgc_frame f;
	kgc_obj o;

	kgc_frame_push(t, &f, tmp, 3, NULL);
	if (depth > 0) {
		build_frozen(t, &tmp[0], depth - 1, rng);
		build_frozen(t, &tmp[1], depth - 1, rng);
	} else {
		tmp[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 8);
		T_ASSERT(tmp[1]);
		for (int i = 0; i < 8; i++)
			((int32_t *)kgc_array_data(tmp[1]))[i] = (int32_t)t_rand(rng);
	}
	tmp[2] = kgc_alloc(t, TF);
	T_ASSERT(tmp[2]);
	o = tmp[2];
	KGC_FIELD(o, F_X, int64_t) = (int64_t)t_rand(rng);
	kgc_set_ref(t, o, F_R0, tmp[0]);
	kgc_set_ref(t, o, F_R1, tmp[1]);
	*slot = o;
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	return o;
}

static void register_types(void)
{
	struct kgc_type_desc a = { .name = "StressA", .payload_size = A_PAYLOAD, .nrefs = 2, .ref_offsets = a_refs };
	struct kgc_type_desc b = { .name = "StressB", .payload_size = B_PAYLOAD, .nrefs = 4, .ref_offsets = b_refs };
	struct kgc_type_desc f = { .name = "Frozen", .payload_size = F_PAYLOAD, .nrefs = 2, .ref_offsets = f_refs };

	T_ASSERT_EQ(kgc_type_register(heap, &a, &TA), 0);
	T_ASSERT_EQ(kgc_type_register(heap, &b, &TB), 0);
	T_ASSERT_EQ(kgc_type_register(heap, &f, &TF), 0);
}

int main(void)
{
	unsigned long long seed = t_seed(), rng = seed;
	const char *secs_env = getenv("KGC_STRESS_SECS");
	double secs = secs_env ? atof(secs_env) : 12.0;
	struct kgc_options opts;
	static struct worker w[NTHREADS];
	pthread_t th[NTHREADS];
	struct kgc_stats st;
	kgc_thread *mt;
	kgc_obj root = NULL;
	struct kgc_frame f;
	static struct worker mw = { .id = -1 };
	uint64_t frozen_hash;
	size_t frozen_nobj;
	unsigned long ops = 0, cy = 0, cf = 0, cp = 0, hum = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	T_ASSERT_EQ(kgc_options_init(&opts), 0);
	if (!getenv("KGC_VERIFY") || strcmp(getenv("KGC_VERIFY"), "0"))
		opts.verify = 1;
	if (!getenv("KGC_HEAP_MAX"))
		opts.max_heap = 256ul << 20;
	if (!getenv("KGC_REGION_SIZE"))
		opts.region_size = 1ul << 20;
	if (!getenv("KGC_IHOP"))
		opts.ihop_percent = 2;	/* concurrent mark cycles all the time */
	T_ASSERT_EQ(kgc_heap_create(&opts, &heap), 0);
	region_size = kgc_heap_region_size(heap);
	register_types();
	printf("backend %s, region %zu KiB, %d threads, %.1f s, verify %d%s\n",
	       kgc_heap_backend(heap), region_size >> 10, NTHREADS, secs, opts.verify,
	       SANITIZED ? ", sanitizer build" : "");

	/* build the shared frozen graph, then leave the heap to the workers */
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &mt), 0);
	kgc_frame_push(mt, &f, &root, 1, NULL);
	build_frozen(mt, &root, 6, &rng);
	shared_root = kgc_handle_new(mt, root);
	T_ASSERT(shared_root);
	frozen_hash = hash_from(&mw, root);
	frozen_nobj = mw.nobj;
	T_ASSERT_EQ(kgc_frame_pop(mt, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(mt), 0);

	deadline_ns = kgci_now_ns() + (uint64_t)(secs * 1e9);
	for (int i = 0; i < NTHREADS; i++) {
		w[i].id = i;
		w[i].rng = seed ^ (0x1000193ull * (unsigned long long)(i + 1));
		T_ASSERT_EQ(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	}
	for (int i = 0; i < NTHREADS; i++) {
		T_ASSERT_EQ(pthread_join(th[i], NULL), 0);
		ops += w[i].ops;
		cy += w[i].checked_young;
		cf += w[i].checked_full;
		cp += w[i].checked_pressure;
		hum += w[i].humongous;
		free(w[i].vmap);
		free(w[i].stack);
	}

	st = stats_now();
	printf("ops %lu, humongous allocations %lu; checked collections: young %lu, full %lu, "
	       "allocation-triggered %lu\n", ops, hum, cy, cf, cp);
	printf("heap: young GCs %llu (mixed %llu), full GCs %llu, concurrent cycles %llu, pause max %.3f ms, "
	       "total %.1f ms, allocated %llu MiB\n",
	       (unsigned long long)st.young_gcs, (unsigned long long)st.mixed_gcs,
	       (unsigned long long)st.full_gcs, (unsigned long long)st.concurrent_cycles,
	       st.pause_max_ns / 1e6, st.pause_total_ns / 1e6,
	       (unsigned long long)(st.bytes_allocated >> 20));
	T_ASSERT(st.young_gcs > 0);
	T_ASSERT(st.full_gcs > 0);
	if (opts.ihop_percent && opts.ihop_percent < 100)
		T_ASSERT(st.concurrent_cycles > 0);
	T_ASSERT(cy >= NTHREADS && cf >= NTHREADS);

	/* the shared graph is intact: hash it from a fresh thread */
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &mt), 0);
	T_ASSERT_EQ(kgc_collect(mt, KGC_GC_FULL), 0);
	if (hash_from(&mw, kgc_handle_get(shared_root)) != frozen_hash || mw.nobj != frozen_nobj)
		T_FAIL("shared frozen graph changed (%zu objects, expected %zu)", mw.nobj, frozen_nobj);
	kgc_handle_free(mt, shared_root);
	T_ASSERT_EQ(kgc_thread_detach(mt), 0);
	T_ASSERT_EQ(kgc_heap_destroy(heap), 0);
	printf("PASS\n");
	return 0;
}
