/* SPDX-License-Identifier: MIT */
/*
 * mt_shadow: randomized, seeded, multi-threaded shadow-model stress test
 * (issue 14).
 *
 * Each mutator thread builds a random object graph - lists of nodes, wide
 * objects with 16 reference fields, reference arrays (some humongous),
 * primitive arrays of every element kind (some humongous) - rooted in a frame,
 * in nested frames and in global handles, and keeps a model of it in malloc'd
 * memory: per object an id, its type, its length, every reference field (as
 * a pointer to the target's model), every primitive field and a shadow copy
 * of every primitive array with a checksum. A shared table of global handles
 * (locked) hands whole subgraphs from one thread to another. Critical
 * sections hold 1-3 primitive arrays (nested, released in random order,
 * sometimes a fresh array reachable only from the section) while the other
 * threads allocate and collect; the holder checks and writes the pinned
 * elements and the writes are checked again later. Collections of every kind
 * the API has: young and full kgc_collect, allocation-triggered young GCs,
 * and concurrent cycles (the modes lower KGC_IHOP), mixed GCs (KGC_MIXED_LIVE).
 *
 * After its collections (and every few hundred operations) a thread walks
 * everything reachable from its roots in the heap and in the model side by
 * side and compares object identity (one model object = one address), type,
 * length, id field, reference fields and primitive contents. Any difference
 * prints the seed, mode, object id and what differed, and exits 1.
 *
 * Usage (lib/build/rel/test/mt_shadow):
 *   mt_shadow                         driver: every mode x a few seeds, each a
 *                                     child process (what `make check` runs)
 *   SHADOW_MODE=pins SHADOW_SEED=7 mt_shadow      one run of one mode
 *   SHADOW_SOAK_SECS=600 mt_shadow    soak: seeds x every mode for 600 s,
 *                                     summary with the failing seed+mode
 * Other knobs: SHADOW_MODES=a,b (driver: only these modes), SHADOW_SEEDS
 * (driver: seeds per mode), SHADOW_SECS (seconds per run), SHADOW_OPS (max
 * operations per thread), SHADOW_THREADS (mutators, default 3), SOAK_JOBS
 * (parallel runs), SOAK_DIR (logs of failed runs), SHADOW_GCLOCKER_LOCAL=1
 * (also in GCLocker mode, hold a section on an array whose only root is a
 * local variable - issue 14 defect 3; on by default, 0 = off), SHADOW_DISABLE=
 * critical,deposit,take,nested,churn,collect,humref,humprim,pinned,vmbits
 * (operations or object shapes left out, to narrow a failure down; pinned: 1
 * in 10 primitive arrays comes from the pinned-object space, and must never
 * move; vmbits: every object gets random VM header bits, kgc_obj_vm_bits_*,
 * checked with its contents). Modes tagged and tagged-refine store tagged
 * immediates (fixnums, addresses with bit 0 set) in fields and frame slots;
 * mode ephemeron keeps ephemerons too (values often reachable only through
 * their cells), walked to a fixed point with the graph: a reached key's
 * cell must hold it and its value, an unreached key's cell must be cleared
 * by the thread's next full collection.
 * The driver sorts failed runs into classes by their output: "shadow: live
 * object became a filler" (a reachable object swept), other shadow
 * mismatches, verifier aborts ("not an object start", "reachable below TAMS
 * not marked", other), sanitizer reports, crashes and timeouts. With
 * KGC_VERIFY=1 (the default) the verifier usually stops a run before the
 * model sees the damage; KGC_VERIFY=0 leaves the finding to the model.
 * A mode's KGC_* settings never override ones already in the environment.
 * Thread interleaving is not reproducible; each thread's operation sequence
 * is (a seed that failed fails again with some probability: rerun it a few
 * times).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* ------------------------------------------------------------------ modes */

enum { F_PINHEAVY = 1, F_TAGGED = 2, F_EPHEMERON = 4, F_INPLACE = 8, F_LARGE = 16, F_REFQ = 32, F_PINH = 64,
       F_ABI5 = 128 };

/* young.c's test hook: the next ngcs young pauses' evacuation budget */
void kgci_young_test_budget(kgc_heap *h, int64_t budget_ns, int ngcs);

struct mode {
	const char *name;
	const char *env;	/* KGC_* settings, space separated */
	unsigned flags;
};

static const struct mode modes[] = {
	{ "default", "", 0 },
	{ "small", "KGC_HEAP_MAX=40m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=3m KGC_TENURE=2", 0 },
	{ "mark", "KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_IHOP=5", 0 },
	{ "mixed", "KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_IHOP=10 KGC_MIXED_LIVE=30", 0 },
	{ "gclocker", "KGC_PIN_MODE=gclocker KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_IHOP=10", 0 },
	{ "r1", "KGC_HEAP_MAX=96m KGC_REGION_SIZE=1m KGC_IHOP=20", 0 },
	{ "r4", "KGC_HEAP_MAX=256m KGC_REGION_SIZE=4m KGC_IHOP=20", 0 },
	{ "poison", "KGC_POISON=1 KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_IHOP=10", 0 },
	{ "checked", "KGC_CHECK=1 KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_IHOP=10", 0 },
	{ "gc1", "KGC_GC_THREADS=1 KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_IHOP=10", 0 },
	/* concurrent refinement between every pause (refine.c: not while a
	 * cycle runs, so marking is rare here) */
	{ "refine", "KGC_REFINE=always KGC_HEAP_MAX=96m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_IHOP=60", 0 },
	{ "refine-pins", "KGC_REFINE=always KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=4m KGC_TENURE=1 "
			 "KGC_IHOP=30 KGC_MIXED_LIVE=30", F_PINHEAVY },
	/* the issue-14 shape: pins held across young GCs during marking */
	{ "pins", "KGC_HEAP_MAX=48m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=4m KGC_TENURE=1 KGC_IHOP=3", F_PINHEAVY },
	{ "pins-mixed", "KGC_HEAP_MAX=48m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=4m KGC_TENURE=1 KGC_IHOP=3 "
			"KGC_MIXED_LIVE=30", F_PINHEAVY },
	{ "pins-r4", "KGC_HEAP_MAX=160m KGC_REGION_SIZE=4m KGC_YOUNG_SIZE=16m KGC_TENURE=1 KGC_IHOP=3 "
			"KGC_POISON=1", F_PINHEAVY },
	/* tagged immediates (kgc_options.tag_mask = 1) in fields, array
	 * elements and frame slots: fixnums and addresses with bit 0 set,
	 * through marking and mixed GCs; then refinement and checked mode */
	{ "tagged", "KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_TENURE=2 KGC_IHOP=5 "
		    "KGC_MIXED_LIVE=40", F_TAGGED },
	{ "tagged-refine", "KGC_REFINE=always KGC_CHECK=1 KGC_HEAP_MAX=96m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m "
			   "KGC_IHOP=60", F_TAGGED },
	/* ephemerons whose values are often reachable through them only,
	 * through marking, mixed and full GCs (tagged immediates too) */
	{ "ephemeron", "KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_TENURE=2 KGC_IHOP=5 "
		       "KGC_MIXED_LIVE=40", F_EPHEMERON | F_TAGGED },
	/* young pauses that run over a short evacuation budget: the rest of
	 * the young objects promoted in place, while marking and with pins */
	{ "inplace", "KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_IHOP=10 KGC_MIXED_LIVE=30",
	  F_INPLACE },
	{ "inplace-pins", "KGC_HEAP_MAX=48m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=4m KGC_TENURE=1 KGC_IHOP=3 "
			  "KGC_POISON=1", F_INPLACE | F_PINHEAVY },
	/* issue 32: many humongous arrays of random sizes (half a region to 6
	 * regions) and lifetimes in a small heap, full collections often:
	 * humongous objects relocated by pages by full collections
	 * (compact_humongous.c) and by young ones for a humongous allocation
	 * that finds no run (humreloc.c), freed eagerly through their
	 * remembered sets, under pins and critical sections, the verifier
	 * after every pause */
	{ "large", "KGC_VERIFY=1 KGC_HEAP_MAX=48m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_IHOP=20 "
		   "KGC_POISON=1", F_LARGE },
	/* reference queues: weak references, ephemerons (fixnum values: F_TAGGED)
	 * and cleaners enqueued exactly when
	 * the model finds their referents dead (mt_shadow_refs.h) */
	{ "refqueue", "KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_TENURE=2 KGC_IHOP=5 "
		      "KGC_MIXED_LIVE=40", F_REFQ | F_TAGGED },
	/* pinned handles: their objects never move (mt_shadow_refs.h) */
	{ "pinhandle", "KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_TENURE=1 KGC_IHOP=5 "
		       "KGC_MIXED_LIVE=40", F_PINH },
	/* the card table's summary (kgc.h, ABI 6) given up mid-run: mutator 1
	 * attaches 100 ms late as a program built against ABI 5, whose
	 * barrier dirties the card only (abi5_store); from then on every pause
	 * reads the whole card table, with refinement and marking */
	{ "abi5", "KGC_REFINE=always KGC_HEAP_MAX=64m KGC_REGION_SIZE=1m KGC_YOUNG_SIZE=6m KGC_TENURE=2 "
		  "KGC_IHOP=10 KGC_MIXED_LIVE=40", F_ABI5 },
};
#define NMODES (sizeof(modes) / sizeof(modes[0]))

static const struct mode *find_mode(const char *name)
{
	for (size_t i = 0; i < NMODES; i++)
		if (!strcmp(modes[i].name, name))
			return &modes[i];
	return NULL;
}

/* ------------------------------------------------------------------ types */

/* node: id @8, ref @16, val @24, ref @32 */
enum { N_ID = 8, N_R0 = 16, N_VAL = 24, N_R1 = 32, N_PAYLOAD = 32 };
/* wide: id @8, 16 refs @16.., i32 @144, f64 @152 */
enum { W_ID = 8, W_R = 16, W_NREFS = 16, W_I = 144, W_D = 152, W_PAYLOAD = 152 };

static const uint32_t node_refs[2] = { N_R0, N_R1 };
static uint32_t wide_refs[W_NREFS];
static kgc_type_id TNODE, TWIDE;
static const size_t esize[KGC_PRIM_COUNT] = { 1, 1, 2, 2, 4, 4, 8, 8 };
static const char *const prim_name[KGC_PRIM_COUNT] = { "boolean", "byte", "char", "short",
						       "int", "float", "long", "double" };

/* ------------------------------------------------------------------ model */

enum mkind { MK_NODE, MK_WIDE, MK_REFARR, MK_PRIM };
static const char *const kind_name[] = { "node", "wide", "ref[]", "prim[]" };

struct mobj {
	uint64_t id;
	uint64_t mark;		/* walk epoch */
	kgc_obj seen;		/* its address in the walk of epoch mark */
	kgc_type_id type;
	uint8_t kind, prim;
	uint32_t nrefs;
	size_t len;		/* arrays */
	size_t bytes;		/* heap size */
	struct mobj **refs;
	uint64_t val[2];	/* node: val; wide: i32, f64 bits */
	uint64_t *data;		/* primitive array shadow, zero-padded to 8 bytes */
	uint64_t sum;		/* checksum of data */
	kgc_obj pinned_at;	/* kgc_alloc_array_pinned: its address for good */
	uint8_t vmbits;		/* its VM header bits (kgc_obj_vm_bits_*) */
};

struct vec { struct mobj **v; size_t n, cap; };

/*
 * Tagged modes: a model reference (a field's, a frame slot's) with bit 0
 * set is no model object but the tagged immediate itself, stored in the
 * heap slot bit for bit. mo() is the object, NULL for an immediate.
 */
static inline bool is_imm(const struct mobj *m) { return (uintptr_t)m & 1; }
static inline struct mobj *mo(struct mobj *m) { return is_imm(m) ? NULL : m; }

static void vec_push(struct vec *v, struct mobj *m)
{
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		v->v = realloc(v->v, v->cap * sizeof(*v->v));
		if (!v->v)
			abort();
	}
	v->v[v->n++] = m;
}

static inline uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint64_t word_sum(size_t i, uint64_t w)
{
	return mix64(w ^ (i * 0x9e3779b97f4a7c15ULL));
}

/* Checksum of n bytes at p (the tail word zero-padded). */
static uint64_t data_sum(const void *p, size_t n)
{
	uint64_t s = 0, w;
	size_t i, nw = n / 8;

	for (i = 0; i < nw; i++) {
		memcpy(&w, (const char *)p + 8 * i, 8);
		s += word_sum(i, w);
	}
	if (n % 8) {
		w = 0;
		memcpy(&w, (const char *)p + 8 * nw, n % 8);
		s += word_sum(nw, w);
	}
	return s;
}

/* ------------------------------------------------------------ global state */

enum { NSLOTS = 24, NHANDLES = 6, NNEST = 6, NTAB = 8, MAXTHREADS = 8, NEPH = 32 };

/* An ephemeron of a mutator and its model: key mk (an object), value mv (an
 * object, NULL or an immediate). dead: the model found mk unreachable - the
 * thread's next full collection must have cleared the cell. */
struct eph {
	kgc_ephemeron e;
	struct mobj *mk, *mv;
	bool dead, seen;
};

static kgc_heap *heap;
static const struct mode *cur_mode;
static unsigned long long seed;
static unsigned nthreads = 3;
static double run_secs = 2.0;
static unsigned long long max_ops;
static size_t region_size;
static int gclocker, gclocker_local, checked_mode;
static unsigned flags;
static size_t budget;		/* model bytes per thread */
static uint64_t deadline_ns;
static atomic_ullong next_id = 1, next_epoch = 1;
static atomic_int failing;
static const char *disabled = "";	/* SHADOW_DISABLE: operations not to run */

static int off(const char *op)
{
	return strstr(disabled, op) != NULL;
}

struct tab_entry {
	kgc_handle h;
	struct mobj *m;
	struct vec objs;	/* the closure of m, owned by the table */
};
static struct tab_entry tab[NTAB];
static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;

struct mut {
	int idx;
	bool abi5;		/* F_ABI5: attached as ABI 5, stores through abi5_store */
	kgc_thread *t;
	unsigned long long rng;
	struct kgc_frame f;
	kgc_obj slots[NSLOTS];
	struct mobj *mroots[NSLOTS];
	kgc_handle h[NHANDLES];
	struct mobj *mh[NHANDLES];
	/* a nested frame while an operation has it pushed */
	int nest_on;
	kgc_obj nslots[NNEST + 1];	/* the last one a raw (non-reference) slot */
	struct mobj *mn[NNEST];
	kgc_obj tmp[2];			/* frame slots 0,1 of op temporaries (in slots[]) */
	struct vec objs;		/* every model object this thread owns */
	size_t bytes;
	struct vec stack;		/* walk stack */
	struct eph eph[NEPH];		/* F_EPHEMERON; e NULL: unused */
	/* stats */
	uint64_t ops, checks, collects, fulls, crits, crit_arrays, deposits, takes, ooms, hum;
	const char *what;		/* current operation (for crash reports) */
};

static __thread struct mut *cur_mut;

/* modes refqueue and pinhandle (mt_shadow_refs.h) */
static void refs_push_roots(struct mut *T, const char *why);
static void refs_settle(struct mut *T, uint64_t e, const char *why);
static void refs_check_cleared(struct mut *T);
static void refs_forget_unreached(struct mut *T, uint64_t e);
static void refs_drop_pins(struct mut *T, int keep_one_in);

static struct kgc_stats t_stats(kgc_heap *h)
{
	struct kgc_stats s;

	if (kgc_stats_get(h, &s, sizeof(s)))
		abort();
	return s;
}

static uint64_t kgci_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void repro_line(FILE *f)
{
	fprintf(f, "shadow: reproduce: SHADOW_MODE=%s SHADOW_SEED=%llu SHADOW_THREADS=%u SHADOW_SECS=%g%s "
		"lib/build/rel/test/mt_shadow\n", cur_mode ? cur_mode->name : "?", seed, nthreads, run_secs,
		gclocker_local ? " SHADOW_GCLOCKER_LOCAL=1" : "");
}

__attribute__((format(printf, 2, 3), noreturn))
static void fail(struct mut *T, const char *fmt, ...)
{
	va_list ap;

	if (atomic_exchange(&failing, 1)) {
		for (;;)
			pause();
	}
	fflush(stdout);
	fprintf(stderr, "SHADOW MISMATCH mode=%s seed=%llu thread=%d op=%llu (%s): ", cur_mode->name, seed,
		T ? T->idx : -1, T ? (unsigned long long)T->ops : 0ull, T && T->what ? T->what : "-");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (kgc_last_error: %s)\n", kgc_last_error());
	repro_line(stderr);
	fflush(stderr);
	_exit(1);
}

static void crash_handler(int sig)
{
	char buf[512];
	struct mut *T = cur_mut;
	int n = snprintf(buf, sizeof(buf), "SHADOW CRASH signal %d mode=%s seed=%llu thread=%d op=%llu (%s)\n",
			 sig, cur_mode ? cur_mode->name : "?", seed, T ? T->idx : -1,
			 T ? (unsigned long long)T->ops : 0ull, T && T->what ? T->what : "-");

	if (n > 0)
		(void)!write(2, buf, (size_t)n);
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline uint64_t rnd(struct mut *T, uint64_t n)
{
	return n ? t_rand(&T->rng) % n : 0;
}

static uint64_t new_epoch(void)
{
	return atomic_fetch_add(&next_epoch, 1);
}

/* ------------------------------------------------------- heap/model access */

static size_t ref_off(const struct mobj *m, uint32_t k)
{
	switch (m->kind) {
	case MK_NODE: return node_refs[k];
	case MK_WIDE: return wide_refs[k];
	default: return KGC_ARRAY_DATA_OFFSET + 8 * (size_t)k;
	}
}

static inline kgc_obj href(const struct mobj *m, kgc_obj o, uint32_t k)
{
	return kgc_get_ref(o, ref_off(m, k));
}

/* F_ABI5: a reference store as ABI 5's kgc.h inlined it (its post-write
 * barrier dirties the card, not the summary ABI 6 added) */
static void abi5_store(kgc_thread *t, kgc_obj o, size_t off, kgc_obj v)
{
	const struct kgc_thread_pub *p = (const struct kgc_thread_pub *)t;
	kgc_obj *slot = (kgc_obj *)((char *)o + off);

	kgc__pre_barrier(t, slot);
	__atomic_store_n(slot, v, __ATOMIC_RELAXED);
	if (kgc__is_ref(p, v) && (((uintptr_t)slot ^ (uintptr_t)v) >> p->region_shift) &&
	    __atomic_load_n(&p->region_track[((uintptr_t)v - (uintptr_t)p->heap_base) >> p->region_shift],
			    __ATOMIC_RELAXED)) {
		uint8_t *card = p->card_biased + ((uintptr_t)slot >> KGC_CARD_SHIFT);

		if (__atomic_load_n(card, __ATOMIC_RELAXED))
			__atomic_store_n(card, 0, __ATOMIC_RELAXED);
	}
}

static inline void hset(struct mut *T, struct mobj *m, kgc_obj o, uint32_t k, struct mobj *vm, kgc_obj v)
{
	if (T->abi5 && !((const struct kgc_thread_pub *)T->t)->checked)
		abi5_store(T->t, o, ref_off(m, k), v);
	else if (m->kind == MK_REFARR)
		kgc_array_set_ref(T->t, o, k, v);
	else
		kgc_set_ref(T->t, o, ref_off(m, k), v);
	m->refs[k] = vm;
}

static void mobj_free(struct mut *T, struct mobj *m)
{
	T->bytes -= m->bytes;
	free(m->refs);
	free(m->data);
	free(m);
}

static struct mobj *mobj_new(struct mut *T, enum mkind kind, kgc_type_id type, unsigned prim, size_t len)
{
	struct mobj *m = calloc(1, sizeof(*m));

	if (!m)
		abort();
	m->id = atomic_fetch_add(&next_id, 1);
	m->kind = (uint8_t)kind;
	m->type = type;
	m->prim = (uint8_t)prim;
	m->len = len;
	switch (kind) {
	case MK_NODE: m->nrefs = 2; m->bytes = 8 + N_PAYLOAD; break;
	case MK_WIDE: m->nrefs = W_NREFS; m->bytes = 8 + W_PAYLOAD; break;
	case MK_REFARR: m->nrefs = (uint32_t)len; m->bytes = 16 + 8 * len; break;
	case MK_PRIM:
		m->bytes = (16 + len * esize[prim] + 7) & ~(size_t)7;
		m->data = calloc((len * esize[prim] + 7) / 8 + 1, 8);
		if (!m->data)
			abort();
		m->sum = data_sum(m->data, len * esize[prim]);
		break;
	}
	if (m->nrefs) {
		m->refs = calloc(m->nrefs, sizeof(*m->refs));
		if (!m->refs)
			abort();
	}
	vec_push(&T->objs, m);
	T->bytes += m->bytes;
	return m;
}

/* Write n bytes at byte offset off of primitive array m (heap elements at
 * elems, or NULL for the model only), keeping the checksum. */
static void prim_write(struct mobj *m, void *elems, size_t off, const void *src, size_t n)
{
	size_t w0 = off / 8, w1 = (off + n + 7) / 8;

	for (size_t w = w0; w < w1; w++)
		m->sum -= word_sum(w, m->data[w]);
	memcpy((char *)m->data + off, src, n);
	for (size_t w = w0; w < w1; w++)
		m->sum += word_sum(w, m->data[w]);
	if (elems)
		memcpy((char *)elems + off, src, n);
}

/* A random span of random bytes into primitive array m. */
static void prim_scribble(struct mut *T, struct mobj *m, void *elems)
{
	size_t nb = m->len * esize[m->prim], off, n;
	unsigned char buf[256];

	if (!nb)
		return;
	n = 1 + rnd(T, nb < sizeof(buf) ? nb : sizeof(buf));
	off = rnd(T, nb - n + 1);
	for (size_t i = 0; i < n; i++)
		buf[i] = (unsigned char)t_rand(&T->rng);
	if (m->prim == KGC_PRIM_BOOLEAN)
		for (size_t i = 0; i < n; i++)
			buf[i] &= 1;
	prim_write(m, elems, off, buf, n);
}

/* ------------------------------------------------------------------ checks */

static const char *tname(kgc_type_id ty)
{
	const char *s = kgc_type_name(heap, ty);

	return s ? s : "?";
}

static void describe(const struct mobj *m, char *buf, size_t n)
{
	if (m->kind == MK_PRIM)
		snprintf(buf, n, "id %llu (%s[] len %zu)", (unsigned long long)m->id, prim_name[m->prim], m->len);
	else if (m->kind == MK_REFARR)
		snprintf(buf, n, "id %llu (ref[] len %zu)", (unsigned long long)m->id, m->len);
	else
		snprintf(buf, n, "id %llu (%s)", (unsigned long long)m->id, kind_name[m->kind]);
}

struct wentry { struct mobj *m; kgc_obj o; uint64_t from; uint32_t field; };

static __thread struct { struct wentry *v; size_t n, cap; } ws;

static void walk_push(struct mobj *m, kgc_obj o, uint64_t from, uint32_t field)
{
	if (ws.n == ws.cap) {
		ws.cap = ws.cap ? 2 * ws.cap : 1024;
		ws.v = realloc(ws.v, ws.cap * sizeof(*ws.v));
		if (!ws.v)
			abort();
	}
	ws.v[ws.n++] = (struct wentry){ m, o, from, field };
}

/* Contents of a primitive array (elements at p) against the model. */
static void check_prim_data(struct mut *T, const struct mobj *m, const void *p, const char *where)
{
	size_t nb = m->len * esize[m->prim];
	uint64_t s = data_sum(p, nb);
	char d[96];

	if (s == m->sum)
		return;
	describe(m, d, sizeof(d));
	for (size_t i = 0; i < nb; i++) {
		unsigned char a = ((const unsigned char *)m->data)[i], b = ((const unsigned char *)p)[i];

		if (a != b)
			fail(T, "%s: object %s at %p: primitive contents differ at byte %zu (element %zu): "
			     "model %#x heap %#x (checksum model %#llx heap %#llx)", where, d, (void *)p, i,
			     i / esize[m->prim], a, b, (unsigned long long)m->sum, (unsigned long long)s);
	}
	fail(T, "%s: object %s: checksum model %#llx heap %#llx but bytes equal (model corrupt?)", where, d,
	     (unsigned long long)m->sum, (unsigned long long)s);
}

static void check_obj(struct mut *T, struct mobj *m, kgc_obj o, uint64_t from, uint32_t field, const char *why)
{
	char d[96];
	kgc_type_id ty;

	describe(m, d, sizeof(d));
	if (T && !off("vmbits")) {
		uint32_t b = 0x100;

		if (kgc_obj_vm_bits_get(T->t, o, &b) || b != m->vmbits)
			fail(T, "%s: object %s at %p (from id %llu field %u): VM header bits %#x, set %#x", why, d,
			     (void *)o, (unsigned long long)from, field, b, m->vmbits);
	}
	if (m->pinned_at && o != m->pinned_at)
		fail(T, "%s: pinned-space array %s (from id %llu field %u) moved: %p, allocated at %p", why, d,
		     (unsigned long long)from, field, (void *)o, (void *)m->pinned_at);
	if (((uintptr_t)o & 7) != 0)
		fail(T, "%s: object %s (from id %llu field %u): misaligned address %p", why, d,
		     (unsigned long long)from, field, (void *)o);
	ty = kgc_obj_type(o);
	if (ty != m->type)
		fail(T, "%s: object %s at %p (from id %llu field %u): type %u (%s), model %u (%s); header %#llx",
		     why, d, (void *)o, (unsigned long long)from, field, ty, tname(ty), m->type, tname(m->type),
		     (unsigned long long)*(uint64_t *)o);
	switch (m->kind) {
	case MK_NODE:
		if (KGC_FIELD(o, N_ID, uint64_t) != m->id || KGC_FIELD(o, N_VAL, uint64_t) != m->val[0])
			fail(T, "%s: object %s at %p (from id %llu field %u): heap id %llu val %#llx, model val %#llx",
			     why, d, (void *)o, (unsigned long long)from, field,
			     (unsigned long long)KGC_FIELD(o, N_ID, uint64_t),
			     (unsigned long long)KGC_FIELD(o, N_VAL, uint64_t), (unsigned long long)m->val[0]);
		break;
	case MK_WIDE:
		if (KGC_FIELD(o, W_ID, uint64_t) != m->id || (uint32_t)KGC_FIELD(o, W_I, int32_t) != (uint32_t)m->val[0] ||
		    KGC_FIELD(o, W_D, uint64_t) != m->val[1])
			fail(T, "%s: object %s at %p (from id %llu field %u): heap id %llu i32 %#x f64 %#llx, "
			     "model i32 %#x f64 %#llx", why, d, (void *)o, (unsigned long long)from, field,
			     (unsigned long long)KGC_FIELD(o, W_ID, uint64_t), (unsigned)KGC_FIELD(o, W_I, int32_t),
			     (unsigned long long)KGC_FIELD(o, W_D, uint64_t), (unsigned)m->val[0],
			     (unsigned long long)m->val[1]);
		break;
	case MK_REFARR:
	case MK_PRIM:
		if (kgc_array_length(o) != m->len)
			fail(T, "%s: object %s at %p (from id %llu field %u): length %zu, model %zu", why, d,
			     (void *)o, (unsigned long long)from, field, kgc_array_length(o), m->len);
		if (m->kind == MK_PRIM)
			check_prim_data(T, m, kgc_array_data(o), why);
		break;
	}
}

__attribute__((noreturn))
static void fail_identity(struct mut *T, struct mobj *m, kgc_obj o, uint64_t from, uint32_t field, const char *why)
{
	char d[96];
	kgc_type_id ty = kgc_obj_type(o);
	unsigned long long hid = (ty == TNODE || ty == TWIDE) ? (unsigned long long)KGC_FIELD(o, N_ID, uint64_t) : 0;

	describe(m, d, sizeof(d));
	fail(T, "%s: object %s reached at %p and at %p (from id %llu field %u); the second: type %u (%s) "
	     "id field %llu", why, d, (void *)m->seen, (void *)o, (unsigned long long)from, field, ty, tname(ty),
	     hid);
}

/* Push one root pair, checking null-ness agrees. */
static void root_push(struct mut *T, struct mobj *m, kgc_obj o, const char *what, int i, const char *why)
{
	if (is_imm(m)) {
		if ((uintptr_t)o != (uintptr_t)m)
			fail(T, "%s: root %s[%d]: immediate %#lx became %p", why, what, i, (unsigned long)m, (void *)o);
		return;
	}
	if (!m != !o)
		fail(T, "%s: root %s[%d]: model %llu, heap %p", why, what, i,
		     m ? (unsigned long long)m->id : 0ull, (void *)o);
	if (m)
		walk_push(m, o, 0, (uint32_t)i);
}

static void push_roots(struct mut *T, const char *why)
{
	for (int i = 0; i < NSLOTS; i++)
		root_push(T, T->mroots[i], T->slots[i], "frame", i, why);
	for (int i = 0; i < NHANDLES; i++)
		if (T->h[i])
			root_push(T, T->mh[i], kgc_handle_get(T->h[i]), "handle", i, why);
	if (T->nest_on)
		for (int i = 0; i < NNEST; i++)
			root_push(T, T->mn[i], T->nslots[i], "nested", i, why);
	if (flags & F_PINH)
		refs_push_roots(T, why);
}

/* Walk everything pushed, heap and model side by side, marking epoch e. */
static size_t walk(struct mut *T, uint64_t e, const char *why)
{
	size_t n = 0;

	while (ws.n) {
		struct wentry w = ws.v[--ws.n];
		struct mobj *m = w.m;

		if (m->mark == e) {
			if (m->seen != w.o)
				fail_identity(T, m, w.o, w.from, w.field, why);
			continue;
		}
		m->mark = e;
		m->seen = w.o;
		n++;
		check_obj(T, m, w.o, w.from, w.field, why);
		for (uint32_t k = 0; k < m->nrefs; k++) {
			struct mobj *mt = m->refs[k];
			kgc_obj ot = href(m, w.o, k);

			if (is_imm(mt)) {
				if ((uintptr_t)ot != (uintptr_t)mt) {
					char d[96];

					describe(m, d, sizeof(d));
					fail(T, "%s: object %s at %p (from id %llu field %u): ref field %u holds %p, "
					     "stored the immediate %#lx", why, d, (void *)w.o, (unsigned long long)w.from,
					     w.field, k, (void *)ot, (unsigned long)mt);
				}
				continue;
			}
			if (!mt != !ot) {
				char d[96];

				describe(m, d, sizeof(d));
				fail(T, "%s: object %s at %p (from id %llu field %u): ref field %u is %p, model %llu",
				     why, d, (void *)w.o, (unsigned long long)w.from, w.field, k, (void *)ot,
				     mt ? (unsigned long long)mt->id : 0ull);
			}
			if (mt && mt->mark != e)
				walk_push(mt, ot, m->id, k);
			else if (mt && mt->seen != ot)
				fail_identity(T, mt, ot, m->id, k, why);
		}
	}
	return n;
}

/*
 * After walk(): the ephemerons' fixed point in the model and the heap side
 * by side. A cell whose key the walk reached holds that key's address and
 * its value (walked on, which may reach more keys); a key never reached
 * from all the roots (settle) is dead for the model: the cell is cleared by
 * the next full collection.
 */
static void eph_walk(struct mut *T, uint64_t e, const char *why, bool settle)
{
	bool more = true;

	for (int i = 0; i < NEPH; i++)
		T->eph[i].seen = false;
	while (more) {
		more = false;
		for (int i = 0; i < NEPH; i++) {
			struct eph *x = &T->eph[i];
			kgc_obj k, v;
			int rc;

			if (!x->e || x->dead || x->seen || x->mk->mark != e)
				continue;
			x->seen = more = true;
			rc = kgc_ephemeron_get(T->t, x->e, &k, &v);
			if (rc || k != x->mk->seen)
				fail(T, "%s: ephemeron %d: key id %llu reached at %p, the cell holds %p (rc %d)", why, i,
				     (unsigned long long)x->mk->id, (void *)x->mk->seen, (void *)k, rc);
			if (is_imm(x->mv) || !x->mv) {
				if ((uintptr_t)v != (uintptr_t)x->mv)
					fail(T, "%s: ephemeron %d: value %p, stored %#lx", why, i, (void *)v,
					     (unsigned long)x->mv);
				continue;
			}
			if (!v)
				fail(T, "%s: ephemeron %d: value id %llu lost while key id %llu lives", why, i,
				     (unsigned long long)x->mv->id, (unsigned long long)x->mk->id);
			if (x->mv->mark == e) {
				if (x->mv->seen != v)
					fail_identity(T, x->mv, v, x->mk->id, (uint32_t)i, why);
				continue;
			}
			walk_push(x->mv, v, x->mk->id, (uint32_t)i);
		}
		if (more)
			walk(T, e, why);
	}
	for (int i = 0; settle && i < NEPH; i++)
		if (T->eph[i].e && !T->eph[i].seen)
			T->eph[i].dead = true;	/* its models may be freed now: never read again */
}

/* After this thread's full collection: every dead cell is cleared. */
static void eph_check_cleared(struct mut *T)
{
	for (int i = 0; i < NEPH; i++) {
		struct eph *x = &T->eph[i];
		kgc_obj k, v;
		int rc;

		if (!x->e || !x->dead)
			continue;
		rc = kgc_ephemeron_get(T->t, x->e, &k, &v);
		if (rc != -ENOENT || k || v)
			fail(T, "ephemeron %d: its key became unreachable, but after a full GC the cell holds %p, %p "
			     "(rc %d)", i, (void *)k, (void *)v, rc);
		kgc_ephemeron_free(T->t, x->e);
		memset(x, 0, sizeof(*x));
	}
}

/* Check the whole graph of T against the model; free unreachable models. */
static void check_all(struct mut *T, const char *why)
{
	uint64_t e = new_epoch();
	size_t j = 0;
	const char *saved = T->what;

	T->what = why;
	push_roots(T, why);
	walk(T, e, why);
	eph_walk(T, e, why, true);
	if (flags & F_REFQ)
		refs_settle(T, e, why);
	for (size_t i = 0; i < T->objs.n; i++) {
		struct mobj *m = T->objs.v[i];

		if (m->mark == e)
			T->objs.v[j++] = m;
		else
			mobj_free(T, m);
	}
	T->objs.n = j;
	T->checks++;
	T->what = saved;
}

/* ------------------------------------------------------------- allocation */

static void drop_roots(struct mut *T, int keep_one_in)
{
	for (int i = 2; i < NSLOTS; i++)
		if (rnd(T, (uint64_t)keep_one_in) != 0) {
			T->slots[i] = NULL;
			T->mroots[i] = NULL;
		}
	for (int i = 0; i < NHANDLES; i++)
		if (T->h[i] && rnd(T, (uint64_t)keep_one_in) != 0) {
			kgc_handle_set(T->h[i], NULL);
			T->mh[i] = NULL;
		}
	if (flags & F_PINH)
		refs_drop_pins(T, keep_one_in);
}

/* Allocate into frame slot T->slots[tmp] (0 or 1). NULL on ENOMEM after a retry. */
static kgc_obj xalloc(struct mut *T, int tmp, kgc_type_id type, size_t len, int array)
{
	for (int tries = 0; tries < 3; tries++) {
		kgc_obj o = array == 2 ? kgc_alloc_array_pinned(T->t, type, len) :
			    array ? kgc_alloc_array(T->t, type, len) : kgc_alloc(T->t, type);

		if (o) {
			T->slots[tmp] = o;
			return o;
		}
		if (!strstr(kgc_last_error(), "memory") && !strstr(kgc_last_error(), "ENOMEM") &&
		    !strstr(kgc_last_error(), "full"))
			fail(T, "allocation of type %u len %zu failed", type, len);
		T->ooms++;
		if (T->ooms > 200)
			fail(T, "allocation of type %u len %zu: ENOMEM %llu times (model bytes %zu)", type, len,
			     (unsigned long long)T->ooms, T->bytes);
		drop_roots(T, 2);
		check_all(T, "after ENOMEM");
		if (kgc_collect(T->t, KGC_GC_FULL))
			fail(T, "kgc_collect(FULL) after ENOMEM failed");
	}
	return NULL;
}

static size_t hum_bytes(struct mut *T)
{
	if (flags & F_LARGE)	/* up to 6 regions */
		return region_size / 2 + 8 * rnd(T, region_size * 11 / 16);
	return region_size / 2 + 8 * rnd(T, region_size / 16);
}

/* 1 in n: a new array is humongous (F_LARGE: far more often) */
static unsigned hum_odds(void)
{
	return flags & F_LARGE ? 6 : 40;
}

/* A random new object in T->slots[tmp] with its model (NULL: ENOMEM). */
static struct mobj *new_obj_shape(struct mut *T, int tmp, int kind)
{
	struct mobj *m;
	kgc_obj o;

	switch (kind) {
	case MK_NODE:
		if (!(o = xalloc(T, tmp, TNODE, 0, 0)))
			return NULL;
		m = mobj_new(T, MK_NODE, TNODE, 0, 0);
		m->val[0] = t_rand(&T->rng);
		KGC_FIELD(o, N_ID, uint64_t) = m->id;
		KGC_FIELD(o, N_VAL, uint64_t) = m->val[0];
		return m;
	case MK_WIDE:
		if (!(o = xalloc(T, tmp, TWIDE, 0, 0)))
			return NULL;
		m = mobj_new(T, MK_WIDE, TWIDE, 0, 0);
		m->val[0] = (uint32_t)t_rand(&T->rng);
		m->val[1] = t_rand(&T->rng);
		KGC_FIELD(o, W_ID, uint64_t) = m->id;
		KGC_FIELD(o, W_I, int32_t) = (int32_t)(uint32_t)m->val[0];
		KGC_FIELD(o, W_D, uint64_t) = m->val[1];
		return m;
	case MK_REFARR: {
		size_t len = rnd(T, hum_odds()) == 0 && !off("humref") ? hum_bytes(T) / 8 : rnd(T, 100);

		if (len * 8 >= region_size / 2)
			T->hum++;
		if (!(o = xalloc(T, tmp, KGC_TYPE_REF_ARRAY, len, 1)))
			return NULL;
		return mobj_new(T, MK_REFARR, KGC_TYPE_REF_ARRAY, 0, len);
	}
	default: {
		unsigned p = (unsigned)rnd(T, KGC_PRIM_COUNT);
		size_t nb = rnd(T, hum_odds()) == 0 && !off("humprim") ? hum_bytes(T) : rnd(T, 3000);
		size_t len = nb / esize[p];
		int nw;

		if (nb >= region_size / 2)
			T->hum++;
		bool pinned = !off("pinned") && rnd(T, 10) == 0;

		if (!(o = xalloc(T, tmp, KGC_TYPE_PRIM_ARRAY(p), len, pinned ? 2 : 1)))
			return NULL;
		m = mobj_new(T, MK_PRIM, KGC_TYPE_PRIM_ARRAY(p), p, len);
		if (pinned)
			m->pinned_at = o;
		check_prim_data(T, m, kgc_array_data(o), "fresh array not zeroed");
		nw = (int)rnd(T, 4);
		for (int i = 0; i < nw; i++)
			prim_scribble(T, m, kgc_array_data(o));
		return m;
	}
	}
}

/* Give m (in T->slots[tmp]) random VM header bits: they must stay with it. */
static void set_vmbits(struct mut *T, struct mobj *m, kgc_obj o)
{
	uint32_t old = 0x100, b = (uint32_t)rnd(T, 256);

	if (off("vmbits"))
		return;
	if (kgc_obj_vm_bits_update(T->t, o, 0xff, b, &old) || old != m->vmbits)
		fail(T, "VM header bits of id %llu: update failed or found %#x, set %#x",
		     (unsigned long long)m->id, old, m->vmbits);
	m->vmbits = (uint8_t)b;
}

static struct mobj *new_obj(struct mut *T, int tmp, int kind)
{
	struct mobj *m = new_obj_shape(T, tmp, kind);

	if (m)
		set_vmbits(T, m, T->slots[tmp]);
	return m;
}

static int rnd_kind(struct mut *T)
{
	uint64_t r = rnd(T, 100);

	return r < 40 ? MK_NODE : r < 55 ? MK_WIDE : r < 70 ? MK_REFARR : MK_PRIM;
}

/* ----------------------------------------------------------------- picking */

enum { WANT_ANY, WANT_HOLDER, WANT_PRIM };

static int wants(const struct mobj *m, int want)
{
	return want == WANT_ANY || (want == WANT_PRIM && m->kind == MK_PRIM) ||
	       (want == WANT_HOLDER && m->nrefs > 0);
}

/* A random reachable object (a short random walk from a random root). No
 * safepoint: the address is valid until the caller's next one. */
static int pick(struct mut *T, int want, struct mobj **mp, kgc_obj *op)
{
	for (int tries = 0; tries < 8; tries++) {
		struct mobj *m = NULL;
		kgc_obj o = NULL;
		uint64_t r = rnd(T, NSLOTS + NHANDLES + (T->nest_on ? NNEST : 0));
		int steps;

		if (r < NSLOTS) {
			m = mo(T->mroots[r]);
			o = T->slots[r];
		} else if (r < NSLOTS + NHANDLES) {
			r -= NSLOTS;
			if (!T->h[r])
				continue;
			m = T->mh[r];
			o = kgc_handle_get(T->h[r]);
		} else {
			r -= NSLOTS + NHANDLES;
			m = T->mn[r];
			o = T->nslots[r];
		}
		if (!m)
			continue;
		steps = (int)rnd(T, 6);
		for (int s = 0; s <= steps + 4; s++) {
			if (s >= steps && wants(m, want)) {
				*mp = m;
				*op = o;
				return 1;
			}
			if (!m->nrefs)
				break;
			uint32_t k = (uint32_t)rnd(T, m->nrefs);

			if (!mo(m->refs[k])) {
				/* a sparse array (or immediates): probe a few */
				for (int q = 0; q < 4 && !mo(m->refs[k]); q++)
					k = (uint32_t)rnd(T, m->nrefs);
				if (!mo(m->refs[k]))
					break;
			}
			kgc_obj ot = href(m, o, k);

			if (!ot)
				fail(T, "pick: ref field %u of id %llu is null, model %llu", k,
				     (unsigned long long)m->id, (unsigned long long)m->refs[k]->id);
			m = m->refs[k];
			o = ot;
			if (kgc_obj_type(o) != m->type)
				fail(T, "pick: object id %llu at %p has type %u (%s), model %u (%s)",
				     (unsigned long long)m->id, (void *)o, kgc_obj_type(o),
				     tname(kgc_obj_type(o)), m->type, tname(m->type));
		}
	}
	return 0;
}

/* Store (vm, v) somewhere: a root slot, a handle, or a field of a holder. */
static void place(struct mut *T, struct mobj *vm, kgc_obj v)
{
	struct mobj *hm;
	kgc_obj ho;
	uint64_t r = rnd(T, 10);

	if (r < 4 || !pick(T, WANT_HOLDER, &hm, &ho)) {
		int i = 2 + (int)rnd(T, NSLOTS - 2);

		if (r == 0) {
			int k = (int)rnd(T, NHANDLES);

			if (T->h[k]) {
				kgc_handle_set(T->h[k], v);
				T->mh[k] = vm;
				return;
			}
		}
		T->slots[i] = v;
		T->mroots[i] = vm;
		return;
	}
	hset(T, hm, ho, (uint32_t)rnd(T, hm->nrefs), vm, v);
}

/* ------------------------------------------------------------- operations */

static void maybe_shrink(struct mut *T)
{
	if (T->bytes <= budget)
		return;
	check_all(T, "before shrink");
	while (T->bytes > budget) {
		drop_roots(T, 3);
		check_all(T, "shrink");
	}
}

static void op_alloc(struct mut *T)
{
	struct mobj *m, *tm;
	kgc_obj o, to;
	int kind = rnd_kind(T);

	maybe_shrink(T);
	if (!(m = new_obj(T, 0, kind)))
		return;
	o = T->slots[0];
	/* some fields to existing objects */
	if (m->nrefs) {
		uint32_t nf = m->kind == MK_NODE ? 2 : (uint32_t)rnd(T, 17);

		for (uint32_t i = 0; i < nf; i++)
			if (pick(T, WANT_ANY, &tm, &to))
				hset(T, m, o, m->kind == MK_NODE ? i : (uint32_t)rnd(T, m->nrefs), tm, to);
	}
	place(T, m, o);
	T->slots[0] = NULL;
}

static void op_set_ref(struct mut *T)
{
	struct mobj *hm, *vm = NULL;
	kgc_obj ho, v = NULL;

	if (!pick(T, WANT_HOLDER, &hm, &ho))
		return;
	if (rnd(T, 5) && !pick(T, WANT_ANY, &vm, &v))
		return;
	hset(T, hm, ho, (uint32_t)rnd(T, hm->nrefs), vm, v);
}

static void op_write_prim(struct mut *T)
{
	struct mobj *m;
	kgc_obj o;

	if (!pick(T, rnd(T, 3) ? WANT_PRIM : WANT_ANY, &m, &o))
		return;
	if (rnd(T, 4) == 0)
		set_vmbits(T, m, o);
	switch (m->kind) {
	case MK_PRIM:
		prim_scribble(T, m, kgc_array_data(o));
		break;
	case MK_NODE:
		m->val[0] = t_rand(&T->rng);
		KGC_FIELD(o, N_VAL, uint64_t) = m->val[0];
		break;
	case MK_WIDE:
		m->val[0] = (uint32_t)t_rand(&T->rng);
		m->val[1] = t_rand(&T->rng);
		KGC_FIELD(o, W_I, int32_t) = (int32_t)(uint32_t)m->val[0];
		KGC_FIELD(o, W_D, uint64_t) = m->val[1];
		break;
	}
}

static void op_roots(struct mut *T)
{
	int i = 2 + (int)rnd(T, NSLOTS - 2), j = 2 + (int)rnd(T, NSLOTS - 2), k = (int)rnd(T, NHANDLES);

	switch (rnd(T, 6)) {
	case 0:
		T->slots[i] = NULL;
		T->mroots[i] = NULL;
		break;
	case 1:
		T->slots[i] = T->slots[j];
		T->mroots[i] = T->mroots[j];
		break;
	case 2:	/* a new handle, or free one (a handle holds no immediate) */
		if (!T->h[k] && !is_imm(T->mroots[i])) {
			T->h[k] = kgc_handle_new(T->t, T->slots[i]);
			if (!T->h[k])
				fail(T, "kgc_handle_new failed");
			T->mh[k] = T->mroots[i];
		} else if (T->h[k]) {
			kgc_handle_free(T->t, T->h[k]);
			T->h[k] = NULL;
			T->mh[k] = NULL;
		}
		break;
	case 3:	/* swap handle and slot */
		if (T->h[k] && !is_imm(T->mroots[i])) {
			kgc_obj o = kgc_handle_get(T->h[k]);
			struct mobj *m = T->mh[k];

			kgc_handle_set(T->h[k], T->slots[i]);
			T->mh[k] = T->mroots[i];
			T->slots[i] = o;
			T->mroots[i] = m;
		}
		break;
	default: {	/* a root to something deeper */
		struct mobj *m;
		kgc_obj o;

		if (pick(T, WANT_ANY, &m, &o)) {
			T->slots[i] = o;
			T->mroots[i] = m;
		}
	}
	}
}

static void do_collect(struct mut *T, int kind)
{
	/* a budget of 0 (nothing copied), 20 us, 100 us or 500 us for the next
	 * 1-3 young pauses, this one or allocation-triggered ones */
	static const int64_t budget_ns[] = { 0, 20000, 100000, 500000 };

	if ((flags & F_INPLACE) && rnd(T, 2))
		kgci_young_test_budget(heap, budget_ns[rnd(T, 4)], 1 + (int)rnd(T, 3));
	if (kgc_collect(T->t, kind))
		fail(T, "kgc_collect(%d) failed", kind);
	if (kind == KGC_GC_FULL) {
		eph_check_cleared(T);
		refs_check_cleared(T);
	}
	T->collects++;
	T->fulls += kind == KGC_GC_FULL;
}

static void op_collect(struct mut *T)
{
	check_all(T, "before kgc_collect");
	do_collect(T, rnd(T, (flags & F_LARGE) ? 5 : 6) == 0 ? KGC_GC_FULL : KGC_GC_YOUNG);
	check_all(T, "after kgc_collect");
}

static void op_churn(struct mut *T)
{
	int n = 200 + (int)rnd(T, 3000);

	for (int i = 0; i < n; i++) {
		kgc_obj o;

		if (i % 64 == 63 && rnd(T, 4) == 0)
			o = kgc_alloc_array(T->t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE),
					    rnd(T, 30) == 0 ? hum_bytes(T) : rnd(T, 2000));
		else
			o = kgc_alloc(T->t, rnd(T, 3) ? TNODE : TWIDE);
		if (!o) {
			T->ooms++;
			break;
		}
	}
	kgc_safepoint_poll(T->t);
}

static void op_nested(struct mut *T)
{
	struct kgc_frame nf;
	uint64_t refmap = (1ull << NNEST) - 1;	/* the last slot is raw */
	uintptr_t magic = 0x5ad0000000000000ull | (uintptr_t)T->ops;
	int n = 1 + (int)rnd(T, NNEST);

	memset(T->nslots, 0, sizeof(T->nslots));
	memset(T->mn, 0, sizeof(T->mn));
	T->nslots[NNEST] = (kgc_obj)magic;
	kgc_frame_push(T->t, &nf, T->nslots, NNEST + 1, &refmap);
	T->nest_on = 1;
	for (int i = 0; i < n; i++) {
		struct mobj *m = new_obj(T, 0, rnd_kind(T));

		if (!m)
			break;
		T->nslots[i] = T->slots[0];
		T->mn[i] = m;
		T->slots[0] = NULL;
		if (i && m->nrefs)
			hset(T, m, T->nslots[i], 0, T->mn[i - 1], T->nslots[i - 1]);
	}
	if (rnd(T, 3) == 0) {
		check_all(T, "nested, before kgc_collect");
		do_collect(T, rnd(T, 5) == 0 ? KGC_GC_FULL : KGC_GC_YOUNG);
		check_all(T, "nested, after kgc_collect");
	}
	if ((uintptr_t)T->nslots[NNEST] != magic)
		fail(T, "raw frame slot changed: %p, was %#lx", (void *)T->nslots[NNEST], (unsigned long)magic);
	for (int i = 0; i < n; i++)
		if (T->mn[i] && rnd(T, 2))
			place(T, T->mn[i], T->nslots[i]);
	T->nest_on = 0;
	memset(T->mn, 0, sizeof(T->mn));
	if (kgc_frame_pop(T->t, &nf))
		fail(T, "kgc_frame_pop(nested) failed");
}

static void crit_sleep(struct mut *T)
{
	struct timespec ts = { 0, 0 };

	if (flags & F_PINHEAVY)
		ts.tv_nsec = (long)(200000 + rnd(T, 3000000));
	else if (gclocker)
		ts.tv_nsec = (long)rnd(T, 100000);
	else
		ts.tv_nsec = (long)rnd(T, 400000);
	nanosleep(&ts, NULL);
}

/* Collect up to max distinct primitive arrays reachable from the roots. */
static size_t prim_candidates(struct mut *T, struct mobj **cm, kgc_obj *co, size_t max, size_t have)
{
	uint64_t e = new_epoch();
	struct mobj *all[64];
	kgc_obj allo[64];
	size_t n = 0;

	for (size_t i = 0; i < have; i++)
		cm[i]->mark = e;	/* not twice */
	push_roots(T, "critical candidates");
	while (ws.n && n < 64) {
		struct wentry w = ws.v[--ws.n];
		struct mobj *m = w.m;

		if (m->mark == e)
			continue;
		m->mark = e;
		if (m->kind == MK_PRIM) {
			all[n] = m;
			allo[n++] = w.o;
		}
		for (uint32_t k = 0; k < m->nrefs && k < 64; k++) {
			uint32_t kk = m->nrefs > 64 ? (uint32_t)rnd(T, m->nrefs) : k;

			if (mo(m->refs[kk]) && m->refs[kk]->mark != e)
				walk_push(m->refs[kk], href(m, w.o, kk), m->id, kk);
		}
	}
	ws.n = 0;
	/* a random choice of them */
	for (size_t i = 0; i < n && have < max; i++) {
		size_t j = i + rnd(T, n - i);
		struct mobj *tm = all[i];
		kgc_obj to = allo[i];

		all[i] = all[j]; allo[i] = allo[j]; all[j] = tm; allo[j] = to;
		cm[have] = all[i];
		co[have++] = allo[i];
	}
	return have;
}

static void op_crit(struct mut *T)
{
	struct kgc_frame cf;
	kgc_obj cs[3] = { 0 }, loc = NULL, cand[3];
	struct mobj *cm[3] = { 0 };
	void *p[3] = { 0 };
	size_t n = 1 + rnd(T, 3), have = 0, len;
	int fresh = rnd(T, 3) == 0, nfresh = 0, local_only = 0, from_native, perm[3] = { 0, 1, 2 };

	kgc_frame_push(T->t, &cf, cs, 3, NULL);
	if (fresh) {
		/* a new array, rooted only by the section's frame slot (or, in pin
		 * mode, only by the section itself) */
		struct mobj *m;

		maybe_shrink(T);
		m = new_obj(T, 0, MK_PRIM);
		if (m) {
			cs[0] = T->slots[0];
			T->slots[0] = NULL;
			cm[0] = m;
			have = nfresh = 1;
			local_only = (!gclocker || gclocker_local) && rnd(T, 2);
		}
	}
	have = prim_candidates(T, cm, cand, n, have);
	for (size_t k = (size_t)nfresh; k < have; k++)
		cs[k] = cand[k];
	n = have;
	if (!n) {
		kgc_frame_pop(T->t, &cf);
		return;
	}
	T->crits++;
	T->crit_arrays += n;
	from_native = !local_only && rnd(T, 4) == 0;
	if (from_native)
		kgc_enter_native(T->t);
	for (size_t k = 0; k < n; k++) {
		if (k == 0 && local_only) {
			loc = cs[0];
			cs[0] = NULL;
			p[0] = kgc_critical_get(T->t, &loc, &len);
		} else {
			p[k] = kgc_critical_get(T->t, &cs[k], &len);
		}
		if (!p[k])
			fail(T, "kgc_critical_get (array %zu of %zu, id %llu) returned NULL", k, n,
			     (unsigned long long)cm[k]->id);
		if (len != cm[k]->len)
			fail(T, "kgc_critical_get: id %llu length %zu, model %zu", (unsigned long long)cm[k]->id,
			     len, cm[k]->len);
		check_prim_data(T, cm[k], p[k], "critical section, at get");
		for (int w = (int)rnd(T, 4); w >= 0; w--)
			prim_scribble(T, cm[k], p[k]);
		if (rnd(T, 2))
			crit_sleep(T);
	}
	if (flags & F_PINHEAVY)
		crit_sleep(T);
	for (int i = (int)n - 1; i > 0; i--) {
		int j = (int)rnd(T, (uint64_t)i + 1), x = perm[i];

		perm[i] = perm[j];
		perm[j] = x;
	}
	for (size_t i = 0; i < n; i++) {
		int k = perm[i], rc;
		kgc_obj *ref;

		check_prim_data(T, cm[k], p[k], "critical section, held while others ran");
		for (int w = (int)rnd(T, 3); w > 0; w--)
			prim_scribble(T, cm[k], p[k]);
		if (k == 0 && local_only)
			ref = rnd(T, 2) ? &loc : NULL;
		else
			ref = rnd(T, 5) == 0 ? NULL : &cs[k];
		rc = kgc_critical_release(T->t, ref, p[k], rnd(T, 2) ? KGC_CRITICAL_COMMIT : KGC_CRITICAL_ABORT);
		if (rc)
			fail(T, "kgc_critical_release (id %llu) = %d", (unsigned long long)cm[k]->id, rc);
		if (i + 1 < n && rnd(T, 3) == 0)
			crit_sleep(T);
	}
	if (from_native)
		kgc_leave_native(T->t);
	/* the fresh array: into the graph (its pinned writes checked later),
	 * unless its only root was the section */
	if (nfresh && !local_only)
		place(T, cm[0], cs[0]);
	if (kgc_frame_pop(T->t, &cf))
		fail(T, "kgc_frame_pop(critical) failed");
}

/* Hand the subgraph of a root slot to the shared table if nothing else of
 * this thread reaches into it. */
static void op_deposit(struct mut *T)
{
	int i = 2 + (int)rnd(T, NSLOTS - 2), k;
	uint64_t e1, e2;
	struct mobj *saved = T->mroots[i];
	struct vec clos = { 0 };
	size_t j = 0;

	if (!mo(saved))
		return;
	/* everything else this thread reaches, epoch e1 (a full check) */
	e1 = new_epoch();
	T->mroots[i] = NULL;
	{
		kgc_obj so = T->slots[i];

		T->slots[i] = NULL;
		push_roots(T, "deposit");
		walk(T, e1, "deposit");
		eph_walk(T, e1, "deposit", false);	/* what live keys' values reach is the rest's too */
		if (flags & F_REFQ)
			refs_forget_unreached(T, e1);
		T->slots[i] = so;
		T->mroots[i] = saved;
	}
	/* the closure, epoch e2; give up if it shares anything */
	e2 = new_epoch();
	walk_push(saved, NULL, 0, 0);
	while (ws.n) {
		struct mobj *m = ws.v[--ws.n].m;

		if (m->mark == e2)
			continue;
		if (m->mark == e1) {
			ws.n = 0;
			free(clos.v);
			return;
		}
		m->mark = e2;
		vec_push(&clos, m);
		for (uint32_t r = 0; r < m->nrefs; r++)
			if (mo(m->refs[r]) && m->refs[r]->mark != e2)
				walk_push(m->refs[r], NULL, 0, 0);
	}
	for (int q = 0; q < NEPH; q++) {	/* its keys and values stay this thread's */
		struct eph *x = &T->eph[q];

		if (x->e && !x->dead && (x->mk->mark == e2 || (mo(x->mv) && x->mv->mark == e2))) {
			free(clos.v);
			return;
		}
	}
	kgc_enter_native(T->t);
	pthread_mutex_lock(&tab_lock);
	kgc_leave_native(T->t);
	for (k = 0; k < NTAB && tab[k].m; k++)
		;
	if (k == NTAB) {
		pthread_mutex_unlock(&tab_lock);
		free(clos.v);
		return;
	}
	kgc_handle_set(tab[k].h, T->slots[i]);
	tab[k].m = saved;
	tab[k].objs = clos;
	T->slots[i] = NULL;
	T->mroots[i] = NULL;
	for (size_t q = 0; q < clos.n; q++)
		T->bytes -= clos.v[q]->bytes;
	/* before the unlock: a taker may walk (re-mark) the closure at once */
	for (size_t q = 0; q < T->objs.n; q++)
		if (T->objs.v[q]->mark != e2)
			T->objs.v[j++] = T->objs.v[q];
	T->objs.n = j;
	pthread_mutex_unlock(&tab_lock);
	T->deposits++;
}

static void take_entry(struct mut *T, int k, int i)
{
	T->slots[i] = kgc_handle_get(tab[k].h);
	T->mroots[i] = tab[k].m;
	kgc_handle_set(tab[k].h, NULL);
	for (size_t q = 0; q < tab[k].objs.n; q++) {
		vec_push(&T->objs, tab[k].objs.v[q]);
		T->bytes += tab[k].objs.v[q]->bytes;
	}
	free(tab[k].objs.v);
	memset(&tab[k].objs, 0, sizeof(tab[k].objs));
	tab[k].m = NULL;
}

static void op_take(struct mut *T)
{
	int i = 2 + (int)rnd(T, NSLOTS - 2), k0 = (int)rnd(T, NTAB);

	kgc_enter_native(T->t);
	pthread_mutex_lock(&tab_lock);
	kgc_leave_native(T->t);
	for (int d = 0; d < NTAB; d++) {
		int k = (k0 + d) % NTAB;

		if (tab[k].m) {
			take_entry(T, k, i);
			T->takes++;
			break;
		}
	}
	pthread_mutex_unlock(&tab_lock);
	check_all(T, "after taking from the shared table");
}

/* Tagged modes: a random immediate into a field or a frame slot - a fixnum
 * (2n+1), or the address of an object reachable now with bit 0 set (a
 * collector reading through it would find a misaligned header). */
static void op_tagged(struct mut *T)
{
	struct mobj *hm, *am;
	kgc_obj ho, ao;
	uintptr_t v = (uintptr_t)t_rand(&T->rng) << 1 | 1;

	if (rnd(T, 3) == 0 && pick(T, WANT_ANY, &am, &ao))
		v = (uintptr_t)ao | 1;
	if (rnd(T, 4) == 0 || !pick(T, WANT_HOLDER, &hm, &ho)) {
		int i = 2 + (int)rnd(T, NSLOTS - 2);

		T->slots[i] = (kgc_obj)v;
		T->mroots[i] = (struct mobj *)v;
		return;
	}
	hset(T, hm, ho, (uint32_t)rnd(T, hm->nrefs), (struct mobj *)v, (kgc_obj)v);
}

/* Ephemeron mode: a new cell (key: a reachable object; value: often a new
 * object reachable only through the cell, else a reachable one, an
 * immediate or NULL), or one freed. */
static void op_ephemeron(struct mut *T)
{
	int i = (int)rnd(T, NEPH);
	struct eph *x = &T->eph[i];
	struct mobj *mk, *mv = NULL;
	kgc_obj k, v = NULL;
	uint64_t r = rnd(T, 10);

	if (x->e) {
		if (rnd(T, 3) == 0) {
			kgc_ephemeron_free(T->t, x->e);
			memset(x, 0, sizeof(*x));
		}
		return;
	}
	if (r < 5) {			/* fresh: the cell is its only root */
		maybe_shrink(T);
		if (!(mv = new_obj(T, 0, rnd_kind(T))))
			return;
	}
	if (!pick(T, WANT_ANY, &mk, &k)) {
		T->slots[0] = NULL;
		return;
	}
	if (r < 5) {
		v = T->slots[0];
	} else if (r < 8) {
		if (!pick(T, WANT_ANY, &mv, &v))
			mv = NULL;
	} else if (r < 9) {
		mv = (struct mobj *)(uintptr_t)(t_rand(&T->rng) << 1 | 1);
		v = (kgc_obj)mv;
	}
	if (!(x->e = kgc_ephemeron_new(T->t, k, v)))
		fail(T, "kgc_ephemeron_new failed");
	x->mk = mk;
	x->mv = mv;
	x->dead = false;
	T->slots[0] = NULL;
}

static void op_native(struct mut *T)
{
	struct timespec ts = { 0, (long)rnd(T, 200000) };

	kgc_enter_native(T->t);
	nanosleep(&ts, NULL);
	kgc_leave_native(T->t);
}

/* -------------------------------------------------------------- a mutator */

#include "mt_shadow_refs.h"

static void *mutator(void *arg)
{
	struct mut *T = arg;
	char name[16];

	cur_mut = T;
	snprintf(name, sizeof(name), "shadow-%d", T->idx);
	T->abi5 = (cur_mode->flags & F_ABI5) && T->idx == 1;
	if (T->abi5) {
		struct timespec late = { 0, 100 * 1000 * 1000 };

		nanosleep(&late, NULL);	/* after some pauses with the summary on */
	}
	if (kgc_thread_attach_abi(heap, name, &T->t, T->abi5 ? 5 : KGC_ABI_VERSION))
		fail(T, "kgc_thread_attach failed");
	kgc_frame_push(T->t, &T->f, T->slots, NSLOTS, NULL);
	refs_init(T);
	while (!atomic_load(&failing)) {
		uint64_t r;

		if ((T->ops & 31) == 0 && kgci_now_ns() > deadline_ns)
			break;
		if (max_ops && T->ops >= max_ops)
			break;
		T->ops++;
		r = rnd(T, 1000);
		if (r < 250) {
			T->what = "alloc";
			op_alloc(T);
		} else if (r < 450) {
			T->what = "set ref";
			op_set_ref(T);
		} else if (r < 570) {
			T->what = "write primitive";
			op_write_prim(T);
		} else if (r < 670) {
			T->what = "roots";
			op_roots(T);
		} else if (r < 700) {
			T->what = "nested frame";
			if (!off("nested"))
				op_nested(T);
		} else if (r < 715) {
			T->what = "collect";
			if (!off("collect"))
				op_collect(T);
		} else if (r < 760) {
			T->what = "churn";
			if (!off("churn"))
				op_churn(T);
		} else if (r < ((flags & F_PINHEAVY) ? 880 : 800)) {
			T->what = "critical";
			if (!off("crit"))
				op_crit(T);
		} else if (r < 900) {
			T->what = "deposit";
			if (!off("deposit"))
				op_deposit(T);
		} else if (r < 920) {
			T->what = "take";
			if (!off("take"))
				op_take(T);
		} else if (r < 930) {
			T->what = "native";
			op_native(T);
		} else if (r < 945) {
			T->what = "check";
			check_all(T, "periodic check");
		} else if ((flags & F_EPHEMERON) && r < 970) {
			T->what = "ephemeron";
			op_ephemeron(T);
		} else if ((flags & F_REFQ) && r < 970) {
			T->what = "refqueue";
			op_refq(T);
		} else if ((flags & F_PINH) && r < 970) {
			T->what = "pinned handle";
			op_pinh(T);
		} else if ((flags & F_TAGGED) && r < 985) {
			T->what = "tagged";
			op_tagged(T);
		} else {
			T->what = "alloc";
			op_alloc(T);
		}
	}
	T->what = "final check";
	check_all(T, "final check");
	/* release everything */
	memset(T->slots, 0, sizeof(T->slots));
	memset(T->mroots, 0, sizeof(T->mroots));
	for (int i = 0; i < NHANDLES; i++)
		if (T->h[i]) {
			kgc_handle_free(T->t, T->h[i]);
			T->h[i] = NULL;
			T->mh[i] = NULL;
		}
	refs_teardown(T);
	check_all(T, "teardown");
	for (int i = 0; i < NEPH; i++)
		if (T->eph[i].e)
			kgc_ephemeron_free(T->t, T->eph[i].e);
	if (kgc_frame_pop(T->t, &T->f))
		fail(T, "kgc_frame_pop failed");
	if (kgc_thread_detach(T->t))
		fail(T, "kgc_thread_detach failed");
	free(T->objs.v);
	free(ws.v);
	ws.v = NULL;
	ws.cap = ws.n = 0;
	return NULL;
}

/* ------------------------------------------------------------- one run */

static void apply_mode_env(const struct mode *m)
{
	char buf[512], *save, *tok;

	snprintf(buf, sizeof(buf), "%s", m->env);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			continue;
		*eq = 0;
		setenv(tok, eq + 1, 0);
	}
	setenv("KGC_VERIFY", "1", 0);
}

static const char *env_or(const char *name, const char *def)
{
	const char *v = getenv(name);

	return v && *v ? v : def;
}

static int run_one(const char *mode_name)
{
	struct kgc_options o;
	struct kgc_stats st;
	struct mut *T, M;
	pthread_t th[MAXTHREADS];
	uint64_t t0 = kgci_now_ns();
	kgc_type_id ids[2];
	struct kgc_type_desc dn = { .name = "shadow_node", .payload_size = N_PAYLOAD, .nrefs = 2,
				    .ref_offsets = node_refs };
	struct kgc_type_desc dw = { .name = "shadow_wide", .payload_size = W_PAYLOAD, .nrefs = W_NREFS,
				    .ref_offsets = wide_refs };
	unsigned long long tot[10] = { 0 };

	cur_mode = find_mode(mode_name);
	if (!cur_mode) {
		fprintf(stderr, "unknown SHADOW_MODE '%s'; modes:", mode_name);
		for (size_t i = 0; i < NMODES; i++)
			fprintf(stderr, " %s", modes[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	flags = cur_mode->flags;
	apply_mode_env(cur_mode);
	seed = strtoull(env_or("SHADOW_SEED", "1"), NULL, 0);
	nthreads = (unsigned)atoi(env_or("SHADOW_THREADS", "3"));
	if (nthreads < 1 || nthreads > MAXTHREADS)
		nthreads = 3;
	run_secs = atof(env_or("SHADOW_SECS", SANITIZED ? "1" : "2"));
	max_ops = strtoull(env_or("SHADOW_OPS", "0"), NULL, 0);
	gclocker_local = atoi(env_or("SHADOW_GCLOCKER_LOCAL", "1"));
	disabled = env_or("SHADOW_DISABLE", "");
	for (int i = 0; i < W_NREFS; i++)
		wide_refs[i] = W_R + 8 * i;

	if (!SANITIZED) {
		signal(SIGSEGV, crash_handler);
		signal(SIGBUS, crash_handler);
		signal(SIGABRT, crash_handler);
	}
	if (kgc_options_init(&o)) {
		fprintf(stderr, "kgc_options_init: %s\n", kgc_last_error());
		return 2;
	}
	gclocker = o.pin_mode == KGC_PIN_MODE_GCLOCKER;
	if (flags & F_TAGGED)
		o.tag_mask = 1;
	checked_mode = o.check;
	printf("shadow: mode=%s seed=%llu threads=%u secs=%g env='%s' pin_mode=%s\n", cur_mode->name, seed,
	       nthreads, run_secs, cur_mode->env, gclocker ? "gclocker" : "pin");
	if (kgc_heap_create(&o, &heap)) {
		fprintf(stderr, "kgc_heap_create: %s\n", kgc_last_error());
		return 2;
	}
	if (kgc_type_register(heap, &dn, &ids[0]) || kgc_type_register(heap, &dw, &ids[1]))
		fail(NULL, "kgc_type_register failed");
	TNODE = ids[0];
	TWIDE = ids[1];
	region_size = kgc_heap_region_size(heap);
	st = t_stats(heap);
	budget = st.heap_capacity / (5 * nthreads);
	if (budget > (24u << 20))
		budget = 24u << 20;

	/* main: owns the shared table's handles */
	memset(&M, 0, sizeof(M));
	M.idx = -1;
	M.rng = seed ^ 0xabcdef;
	cur_mut = &M;
	if (kgc_thread_attach(heap, "shadow-main", &M.t))
		fail(NULL, "kgc_thread_attach(main) failed");
	kgc_frame_push(M.t, &M.f, M.slots, NSLOTS, NULL);
	for (int k = 0; k < NTAB; k++)
		if (!(tab[k].h = kgc_handle_new(M.t, NULL)))
			fail(NULL, "kgc_handle_new(table) failed");

	deadline_ns = kgci_now_ns() + (uint64_t)(run_secs * 1e9);
	T = calloc(nthreads, sizeof(*T));
	for (unsigned i = 0; i < nthreads; i++) {
		T[i].idx = (int)i;
		T[i].rng = seed * 0x100000001b3ull + i * 0x9e3779b97f4a7c15ull + 1;
		if (pthread_create(&th[i], NULL, mutator, &T[i]))
			abort();
	}
	kgc_enter_native(M.t);
	for (unsigned i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	kgc_leave_native(M.t);

	/* the table's contents: into main's roots, checked, then dropped */
	M.what = "table check";
	for (int k = 0; k < NTAB; k++)
		if (tab[k].m)
			take_entry(&M, k, k);
	check_all(&M, "shared table at the end");
	do_collect(&M, KGC_GC_FULL);
	check_all(&M, "shared table after a full GC");
	memset(M.slots, 0, sizeof(M.slots));
	memset(M.mroots, 0, sizeof(M.mroots));
	check_all(&M, "teardown");
	for (int k = 0; k < NTAB; k++)
		kgc_handle_free(M.t, tab[k].h);
	kgc_frame_pop(M.t, &M.f);
	st = t_stats(heap);
	if (kgc_thread_detach(M.t))
		fail(NULL, "kgc_thread_detach(main) failed");
	free(M.objs.v);
	free(ws.v);

	for (unsigned i = 0; i < nthreads; i++) {
		tot[0] += T[i].ops; tot[1] += T[i].checks; tot[2] += T[i].collects; tot[3] += T[i].fulls;
		tot[4] += T[i].crits; tot[5] += T[i].crit_arrays; tot[6] += T[i].deposits; tot[7] += T[i].takes;
		tot[8] += T[i].ooms; tot[9] += T[i].hum;
	}
	/* the mode's point, asked of a run long enough to have it: 0.6 s of a
	 * plain build makes ~50 humongous arrays and ~15 full GCs and relocates
	 * 10-25; a TSan build (10x slower) may make 5 and 2, and none moves */
	if ((flags & F_LARGE) && !st.humongous_moved && tot[9] >= 30 && st.full_gcs >= 8)
		fail(NULL, "mode %s: no humongous object was relocated in %llu humongous arrays and %llu full GCs "
		     "(the mode's point)", cur_mode->name, tot[9], (unsigned long long)st.full_gcs);
	printf("shadow: PASS mode=%s seed=%llu %.2fs: ops %llu checks %llu collects %llu (full %llu) "
	       "critical %llu (%llu arrays) handoffs %llu/%llu humongous %llu (relocated %llu, by young "
	       "pauses %llu in %llu) enomem %llu | "
	       "gc young %llu full %llu "
	       "cycles %llu mixed %llu degenerated %llu pinned-fail %llu in-place %llu mark-assists %llu (%lluK)\n",
	       cur_mode->name, seed, (kgci_now_ns() - t0) / 1e9, tot[0], tot[1], tot[2], tot[3], tot[4], tot[5],
	       tot[6], tot[7], tot[9], (unsigned long long)st.humongous_moved,
	       (unsigned long long)st.humongous_moved_young, (unsigned long long)st.humongous_reloc_pauses, tot[8], (unsigned long long)st.young_gcs, (unsigned long long)st.full_gcs,
	       (unsigned long long)st.concurrent_cycles, (unsigned long long)st.mixed_gcs,
	       (unsigned long long)st.degenerated_cycles, (unsigned long long)st.evac_fail_pinned,
	       (unsigned long long)st.evac_fail_budget, (unsigned long long)st.mark_assists, (unsigned long long)(st.mark_assist_bytes >> 10));
	free(T);
	if (kgc_heap_destroy(heap))
		fail(NULL, "kgc_heap_destroy failed");
	return 0;
}

/* ------------------------------------------------------------------ driver */

struct job {
	pid_t pid;
	const struct mode *m;
	unsigned long long seed;
	uint64_t start;
	char log[PATH_MAX];
};

/* Failure classes, by the first matching line of a failed run's output. */
enum { C_FILLER, C_MISMATCH, C_NOTSTART, C_UNMARKED, C_VERIFY, C_SAN, C_CRASH, C_TIMEOUT, C_OTHER, NCLASS };
static const char *const class_name[NCLASS] = {
	"shadow: live object became a filler", "shadow: other mismatch", "verify: not an object start",
	"verify: reachable below TAMS not marked", "kgc: other fatal", "sanitizer report", "crash",
	"timeout", "other",
};

struct mstat { unsigned runs, fails, cls[NCLASS]; };

static char self[PATH_MAX];
static double drv_secs;
static int soak;
static char log_dir[PATH_MAX - 128];
static char extra[512];

static pid_t spawn(struct job *j)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		char s[32], secs[32];
		int fd = open(j->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		snprintf(s, sizeof(s), "%llu", j->seed);
		snprintf(secs, sizeof(secs), "%g", drv_secs);
		setenv("SHADOW_MODE", j->m->name, 1);
		setenv("SHADOW_SEED", s, 1);
		setenv("SHADOW_SECS", secs, 1);
		unsetenv("SHADOW_SOAK_SECS");
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execl(self, self, (char *)NULL);
		perror("exec");
		_exit(2);
	}
	j->pid = pid;
	j->start = kgci_now_ns();
	return pid;
}

/* Classify a failed run by its log; the line that says why into out. */
static int classify(const char *log, int timed_out, char *out, size_t n)
{
	static const struct { const char *key, *key2; int cls; } keys[] = {
		{ "SHADOW MISMATCH", "<filler>", C_FILLER },
		{ "SHADOW MISMATCH", NULL, C_MISMATCH },
		{ "not an object start", NULL, C_NOTSTART },
		{ "below TAMS is not marked", NULL, C_UNMARKED },
		{ "kgc: fatal", NULL, C_VERIFY },
		{ "Sanitizer", NULL, C_SAN },
		{ "SHADOW CRASH", NULL, C_CRASH },
		{ "FAIL", NULL, C_OTHER },
	};
	FILE *f = fopen(log, "r");
	char line[1024];

	snprintf(out, n, "(no message)");
	if (timed_out)
		return C_TIMEOUT;
	if (!f)
		return C_OTHER;
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		rewind(f);
		while (fgets(line, sizeof(line), f))
			if (strstr(line, keys[k].key) && (!keys[k].key2 || strstr(line, keys[k].key2))) {
				line[strcspn(line, "\n")] = 0;
				snprintf(out, n, "%s", line);
				fclose(f);
				return keys[k].cls;
			}
	}
	fclose(f);
	return C_OTHER;
}

/* Print the lines of log that contain key (or its last lines if key NULL). */
static void print_log(const char *log, const char *key, int tail)
{
	FILE *f = fopen(log, "r");
	char line[1024], ring[48][1024];
	int nl = 0;

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (key && strstr(line, key))
			printf("  %s", line);
		snprintf(ring[nl % 48], sizeof(ring[0]), "%s", line);
		nl++;
	}
	fclose(f);
	if (!key)
		for (int i = nl > tail ? nl - tail : 0; i < nl; i++)
			printf("    %s", ring[i % 48]);
}

static int driver(void)
{
	const char *only = getenv("SHADOW_MODES");
	const struct mode *sel[NMODES];
	size_t nsel = 0;
	struct mstat ms[NMODES], all;
	unsigned seeds = (unsigned)atoi(env_or("SHADOW_SEEDS", SANITIZED ? "1" : "2"));
	unsigned long long base = strtoull(env_or("SHADOW_SEED", "1"), NULL, 0);
	double soak_secs = atof(env_or("SHADOW_SOAK_SECS", "0"));
	unsigned jobs = (unsigned)atoi(env_or("SOAK_JOBS", "1"));
	uint64_t t0 = kgci_now_ns(), tend;
	struct job run[16];
	unsigned nrun = 0;
	unsigned long long next = 0;
	FILE *fl = NULL;
	char fl_path[PATH_MAX + 32];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (sl <= 0) {
		perror("readlink");
		return 2;
	}
	self[sl] = 0;
	/* settings a rerun needs besides mode and seed */
	{
		static const char *const keep[] = { "KGC_VERIFY", "SHADOW_DISABLE", "SHADOW_THREADS",
						     "SHADOW_GCLOCKER_LOCAL", "SHADOW_OPS" };
		size_t o = 0;

		for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++) {
			const char *v = getenv(keep[k]);

			if (v && *v && o < sizeof(extra) - 64)
				o += (size_t)snprintf(extra + o, sizeof(extra) - o, "%s=%s ", keep[k], v);
		}
	}
	for (size_t i = 0; i < NMODES; i++) {
		if (only && *only) {
			char buf[256], *save, *tok;
			int hit = 0;

			snprintf(buf, sizeof(buf), "%s", only);
			for (tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
				hit |= !strcmp(tok, modes[i].name);
			if (!hit)
				continue;
		}
		sel[nsel++] = &modes[i];
	}
	if (!nsel) {
		fprintf(stderr, "SHADOW_MODES selects no mode\n");
		return 2;
	}
	memset(ms, 0, sizeof(ms));
	memset(&all, 0, sizeof(all));
	soak = soak_secs > 0;
	drv_secs = atof(env_or("SHADOW_SECS", soak ? "4" : SANITIZED ? "0.6" : "1.2"));
	if (jobs < 1 || jobs > 16)
		jobs = 1;
	if (!soak)
		jobs = 1;
	tend = t0 + (uint64_t)(soak_secs * 1e9);
	if (soak) {
		snprintf(log_dir, sizeof(log_dir), "%s", env_or("SOAK_DIR", "/tmp/kgc-soak"));
		mkdir(log_dir, 0755);
		snprintf(fl_path, sizeof(fl_path), "%s/failures.txt", log_dir);
		fl = fopen(fl_path, "a");
		printf("soak: %g s, %zu modes, %g s per run, %u parallel, seeds from %llu, KGC_VERIFY=%s; "
		       "failed-run logs in %s\n", soak_secs, nsel, drv_secs, jobs, base, env_or("KGC_VERIFY", "1"),
		       log_dir);
	} else {
		snprintf(log_dir, sizeof(log_dir), "/tmp/mt_shadow.XXXXXX");
		if (!mkdtemp(log_dir)) {
			perror("mkdtemp");
			return 2;
		}
		printf("mt_shadow: %zu modes x %u seeds (from %llu), %g s per run\n", nsel, seeds, base, drv_secs);
	}
	fflush(stdout);

	for (;;) {
		int more = soak ? kgci_now_ns() < tend : next < (unsigned long long)seeds * nsel;

		while (more && nrun < jobs) {
			struct job *j = &run[nrun];

			j->m = sel[next % nsel];
			j->seed = base + next / nsel;
			snprintf(j->log, sizeof(j->log), "%s/%s-%llu.log", log_dir, j->m->name, j->seed);
			next++;
			spawn(j);
			nrun++;
			more = soak ? kgci_now_ns() < tend : next < (unsigned long long)seeds * nsel;
		}
		if (!nrun)
			break;
		/* reap one */
		for (;;) {
			int st = 0, done = -1, timed_out = 0;
			double limit = 30 + 10 * drv_secs * (SANITIZED ? 3 : 1);

			for (unsigned q = 0; q < nrun; q++) {
				pid_t r = waitpid(run[q].pid, &st, WNOHANG);

				if (r == run[q].pid) {
					done = (int)q;
					break;
				}
				if ((kgci_now_ns() - run[q].start) / 1e9 > limit) {
					kill(run[q].pid, SIGKILL);
					waitpid(run[q].pid, &st, 0);
					timed_out = 1;
					done = (int)q;
					break;
				}
			}
			if (done < 0) {
				struct timespec ts = { 0, 20000000 };

				nanosleep(&ts, NULL);
				continue;
			}
			struct job *j = &run[done];
			size_t mi = (size_t)(j->m - modes);
			int ok = !timed_out && WIFEXITED(st) && WEXITSTATUS(st) == 0;

			ms[mi].runs++;
			all.runs++;
			if (!ok) {
				char why[64], line[1024];
				int c = classify(j->log, timed_out, line, sizeof(line));

				ms[mi].fails++;
				ms[mi].cls[c]++;
				all.fails++;
				all.cls[c]++;
				if (timed_out)
					snprintf(why, sizeof(why), "timeout after %.0f s", limit);
				else if (WIFSIGNALED(st))
					snprintf(why, sizeof(why), "signal %d", WTERMSIG(st));
				else
					snprintf(why, sizeof(why), "exit %d", WEXITSTATUS(st));
				printf("FAILED mode=%s seed=%llu (%s; %s): %s\n", j->m->name, j->seed, why,
				       class_name[c], line);
				if (!soak)
					print_log(j->log, NULL, c == C_SAN ? 40 : 12);
				printf("  reproduce: %sSHADOW_MODE=%s SHADOW_SEED=%llu SHADOW_SECS=%g %s\n", extra,
				       j->m->name, j->seed, drv_secs, self);
				if (soak)
					printf("  log: %s\n", j->log);
				else
					unlink(j->log);
				if (fl) {
					fprintf(fl, "mode=%s seed=%llu %s [%s]: %s\n", j->m->name, j->seed, why,
						class_name[c], line);
					fflush(fl);
				}
			} else {
				if (!soak)
					print_log(j->log, "shadow: PASS", 0);
				unlink(j->log);
			}
			fflush(stdout);
			run[done] = run[--nrun];
			break;
		}
	}
	if (!soak)
		rmdir(log_dir);
	printf("\n%s summary: %u runs, %u failed (%.0f s)\n", soak ? "soak" : "mt_shadow", all.runs, all.fails,
	       (kgci_now_ns() - t0) / 1e9);
	for (size_t i = 0; i < NMODES; i++) {
		if (!ms[i].runs)
			continue;
		printf("  %-11s %4u runs %4u failed", modes[i].name, ms[i].runs, ms[i].fails);
		for (int c = 0; c < NCLASS; c++)
			if (ms[i].cls[c])
				printf("  [%s: %u]", class_name[c], ms[i].cls[c]);
		printf("\n");
	}
	if (all.fails) {
		printf("  failure classes:");
		for (int c = 0; c < NCLASS; c++)
			if (all.cls[c])
				printf("  [%s: %u]", class_name[c], all.cls[c]);
		printf("\n");
	}
	if (fl)
		fclose(fl);
	return all.fails ? 1 : 0;
}

int main(void)
{
	const char *mode = getenv("SHADOW_MODE");

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mode && *mode)
		return run_one(mode);
	return driver();
}
