/* SPDX-License-Identifier: MIT */
/*
 * kgc.h - public API of libkgc: a generational, region-based, moving collector
 * with JEP 423-style region pinning and a critical-array API. The JNI-like
 * native-call bridge is a separate library on top of this one: libkgc-native
 * (kgc_native.h).
 *
 * Conventions
 *  - Functions return 0 or -errno; functions returning pointers return NULL on
 *    failure and kgc_last_error() then names the reason (thread-local).
 *  - Objects move. A raw kgc_obj is valid only until the calling thread's next
 *    safepoint (any allocation, kgc_safepoint_poll, kgc_collect, entering
 *    native state). Keep references across safepoints in frame slots
 *    (kgc_frame_push) or handles; the collector updates those.
 *  - Reference stores into heap objects go through kgc_set_ref /
 *    kgc_array_set_ref (the write barrier). Primitive stores are plain.
 */
#ifndef KGC_H
#define KGC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KGC_VERSION_MAJOR 0
#define KGC_VERSION_MINOR 1

typedef struct kgc_heap kgc_heap;
typedef struct kgc_thread kgc_thread;
typedef struct kgc_object *kgc_obj;		/* a managed object (moves!) */
typedef struct kgc_handle_cell *kgc_handle;	/* a global root */
typedef uint32_t kgc_type_id;

/* ------------------------------------------------------------------ errors */

/* Message for the last failure on this thread ("" if none). */
const char *kgc_last_error(void);

/* ----------------------------------------------------------------- options */

enum kgc_backend_kind {
	KGC_BACKEND_AUTO = 0,	/* /dev/kgc if usable, else anon */
	KGC_BACKEND_KMOD = 1,
	KGC_BACKEND_ANON = 2,
};

enum kgc_pin_mode {
	KGC_PIN_MODE_PIN = 0,		/* JEP 423: critical sections pin regions */
	KGC_PIN_MODE_GCLOCKER = 1,	/* pre-JEP: critical sections block GC */
};

/* Concurrent refinement (struct kgc_options.refine, KGC_REFINE): dirty cards
 * turned into a log of reference slots between pauses by a service thread. */
enum kgc_refine_mode {
	KGC_REFINE_AUTO = 0,		/* while card scanning is a large part of the pause */
	KGC_REFINE_OFF = 1,		/* every dirty card is scanned in the pause */
	KGC_REFINE_ALWAYS = 2,		/* whenever no concurrent cycle runs (tests) */
};

/*
 * Heap options. kgc_options_init() fills defaults and then applies the KGC_*
 * environment variables (one table in options.c: KGC_HEAP_MAX, KGC_REGION_SIZE,
 * KGC_YOUNG_SIZE, KGC_TENURE, KGC_GC_THREADS, KGC_BACKEND, KGC_PIN_MODE,
 * KGC_VERIFY, KGC_CHECK, KGC_POISON, KGC_IHOP, KGC_PAUSE_GOAL_MS,
 * KGC_MIXED_LIVE, KGC_PACING, KGC_SAFEPOINT_WARN_MS, KGC_STALE_CHECK, KGC_THP,
 * KGC_UNCOMMIT_DELAY_MS, KGC_LOG, KGC_LOG_FILE, KGC_LOG_FILE_SIZE, KGC_LOG_FILE_COUNT,
 * KGC_STATS_PUBLISH, KGC_REFINE).
 * A zero size means "choose".
 */
struct kgc_options {
	uint32_t size;		/* the caller's sizeof(struct kgc_options): kgc_options_init sets it */
	uint32_t reserved0;	/* zero */
	size_t max_heap;	/* bytes reserved for the heap */
	size_t region_size;	/* 1..32 MiB power of two, 0 = from max_heap (about 2048
				   regions, at least the size /dev/kgc backs with
				   huge folios: 2 MiB on x86-64) */
	size_t young_size;	/* eden+survivor target, 0 = policy decides */
	unsigned tenure_threshold; /* young GCs survived before promotion */
	unsigned gc_threads;	/* evacuation workers, 0 = policy decides */
	int backend;		/* enum kgc_backend_kind */
	int pin_mode;		/* enum kgc_pin_mode */
	int verify;		/* heap verifier before/after every GC */
	int check;		/* checked mode (-Xcheck:jni-like) */
	int poison;		/* poison evacuated from-space (stale pointers) */
	const char *log;	/* "gc", "gc+heap", "gc+pin", ... NULL = off */
	unsigned ihop_percent;	/* old space % of the heap that starts concurrent marking
				 * (0 = policy default, >= 100 = never) */
	unsigned pause_goal_ms;	/* young pause goal sizing eden (0 = policy default) */
	unsigned mixed_live_percent; /* mixed collections evacuate old regions less live
				 * than this % (0 = policy default: 30; >= 100 = off) */
	unsigned thp;		/* anon backend: transparent huge pages for the heap
				 * (MADV_HUGEPAGE); 0 = off (default) */
	unsigned pacing_percent; /* most of their time allocating threads may sleep while
				 * a concurrent cycle falls behind (0 = policy default,
				 * 50; >= 100 = no pacing) */
	unsigned safepoint_warn_ms; /* warn on stderr when a safepoint waits this long for a
				 * thread (0 = policy default, 1000; UINT32_MAX = never) */
	unsigned stale_check;	/* debug: a young GC every N allocations per thread, evacuated
				 * regions kept PROT_NONE for a while: a stale pointer faults
				 * with a message (0 = off) */
	unsigned uncommit_delay_ms; /* a free region goes back to the OS only after staying
				 * free this long and 16 collections (0 = policy default,
				 * 2000; UINT32_MAX = never) */
	const char *log_file;	/* log lines to this file instead of stderr ("%p": the pid);
				 * NULL = stderr. Implies "gc" when log is NULL */
	size_t log_file_size;	/* rotate the log file before it passes this many bytes
				 * (0 = default, 20 MiB) */
	unsigned log_file_count; /* rotated files kept: path.0 (newest) .. path.<n-1>
				 * (0 = default, 5) */
	unsigned stats_publish;	/* publish stats and the region map after each collection
				 * in /dev/shm/kgc-<pid> for kgcstat (0 = off) */
	unsigned refine;	/* enum kgc_refine_mode: concurrent refinement of dirty
				 * cards (0 = auto) */
	uint32_t tag_mask;	/* tagged immediates: a reference slot (object field,
				 * reference array element, frame slot) whose value has
				 * any of these low bits set holds no pointer, and the
				 * collector never reads through it; a subset of 0x7
				 * (objects are 8-byte aligned), 0 = none (see
				 * "Tagged immediates" below, kgc_options.3) */
	unsigned pause_budget;	/* enum kgc_pause_budget: promotion in place when a young
				 * pause overruns (0 = off) */
	uint32_t reserved3;	/* zero */
	uint64_t reserved2;	/* zero */
};

/* struct kgc_options.pause_budget (KGC_PAUSE_BUDGET): a young pause in which
 * far more survives than the policy predicted stops copying once past its
 * evacuation budget and promotes the rest of the young objects in place
 * (stats evac_fail_budget, bytes_kept_in_place; kgc.7). Off by default: on
 * binary trees it promoted young garbage, 1.5x the time (bench/RESULTS-ab.md). */
enum kgc_pause_budget {
	KGC_PAUSE_BUDGET_OFF = 0,	/* every survivor is copied, however long it takes */
	KGC_PAUSE_BUDGET_ON = 1,
};

/*
 * Defaults, then the KGC_* environment variables (-EINVAL with a message
 * naming a bad one). The struct is size-versioned: kgc_options_init records
 * the caller's sizeof, so a program built against an older kgc.h (a smaller
 * struct) or a newer one works with this library: fields the library does
 * not know are ignored, fields the program does not know keep their defaults.
 */
int kgc_options_init_size(struct kgc_options *opts, size_t size);
#define kgc_options_init(opts) kgc_options_init_size((opts), sizeof(*(opts)))
/*
 * Set one option by name, as a runtime passes its command line through:
 * key is the environment variable's name ("KGC_IHOP") or the same in lower
 * case without the prefix ("ihop"); value is parsed as in the environment.
 * 0, or -EINVAL (unknown key, bad value) / -ENOENT with kgc_last_error.
 */
int kgc_options_set(struct kgc_options *opts, const char *key, const char *value);

/* -------------------------------------------------------------------- heap */

/* opts NULL = kgc_options_init() defaults. */
int kgc_heap_create(const struct kgc_options *opts, kgc_heap **out);
/* -EBUSY if threads are still attached, critical sections or kgc_io rings open. */
int kgc_heap_destroy(kgc_heap *heap);
/* "kmod" or "anon". */
const char *kgc_heap_backend(const kgc_heap *heap);
size_t kgc_heap_region_size(const kgc_heap *heap);

/* ------------------------------------------------------------------- types */

enum kgc_prim {
	KGC_PRIM_BOOLEAN = 0,	/* 1 byte */
	KGC_PRIM_BYTE,		/* 1 */
	KGC_PRIM_CHAR,		/* 2 (uint16_t) */
	KGC_PRIM_SHORT,		/* 2 */
	KGC_PRIM_INT,		/* 4 */
	KGC_PRIM_FLOAT,		/* 4 */
	KGC_PRIM_LONG,		/* 8 */
	KGC_PRIM_DOUBLE,	/* 8 */
	KGC_PRIM_COUNT,
};

/* Predefined type ids, valid in every heap. */
#define KGC_TYPE_PRIM_ARRAY(p)	((kgc_type_id)(1 + (p)))	/* p: enum kgc_prim */
#define KGC_TYPE_REF_ARRAY	((kgc_type_id)(1 + KGC_PRIM_COUNT))
#define KGC_TYPE_FIRST_USER	((kgc_type_id)(2 + KGC_PRIM_COUNT))

/*
 * A fixed-size instance type. Field offsets are from the object start and
 * must lie in [KGC_HEADER_SIZE, KGC_HEADER_SIZE + payload_size); reference
 * fields are 8-byte aligned. The payload is zeroed on allocation.
 */
struct kgc_type_desc {
	const char *name;
	uint32_t payload_size;		/* bytes after the header */
	uint32_t nrefs;
	const uint32_t *ref_offsets;	/* nrefs offsets of reference fields */
	uint64_t reserved[2];
};

/* Type ids are 24 bits wide (the header's other 8 are the runtime's,
 * KGC_VM_BITS): -ENOSPC after 2^24 - 16 types. */
int kgc_type_register(kgc_heap *heap, const struct kgc_type_desc *desc,
		      kgc_type_id *out);
const char *kgc_type_name(const kgc_heap *heap, kgc_type_id type);

/*
 * Runtime-defined layouts (kgc_scan.3): a type whose reference slots the
 * runtime reports itself, MMTk-style, instead of a fixed offset list: a
 * tagged union, a hash table with keys and values inline and a type byte.
 * Whenever the collector needs the type's references (young evacuation,
 * card scanning and refinement, concurrent marking, full marking and
 * pointer updates, the verifier, kgc_obj_refs) it calls scan(o, v, ctx),
 * which calls kgc_visit_slot(v, slot) for each word of o that holds a
 * reference now; the collector loads the slot itself and skips NULL and
 * tagged immediates, as for a layout-map type.
 *
 * scan may run on any thread (a collector worker, the concurrent marker,
 * the refinement thread, an allocating thread that assists marking), in a
 * pause or while mutators run, many times per object. It must only read o
 * and report slots inside o: no allocation, no kgc call, no lock that a
 * thread holds while it allocates or waits for a collection. A slot it may
 * report in any state of the object holds only a reference, NULL or a
 * tagged immediate, stored with kgc_set_ref; a slot that becomes reported
 * (a type byte changes) is stored before the byte is (release order).
 * A reported slot outside o or misaligned is fatal (naming the type);
 * a kgc call from scan fails (-EPERM), and checked mode aborts naming it.
 */
struct kgc_slot_visitor {
	void (*visit)(struct kgc_slot_visitor *v, kgc_obj *slot);	/* the collector's */
};
static inline void kgc_visit_slot(struct kgc_slot_visitor *v, kgc_obj *slot)
{
	v->visit(v, slot);
}
typedef void (*kgc_scan_fn)(kgc_obj o, struct kgc_slot_visitor *v, void *ctx);

struct kgc_scan_type_desc {
	uint32_t size;			/* sizeof(struct kgc_scan_type_desc) */
	uint32_t payload_size;		/* bytes after the header (fixed, zeroed) */
	const char *name;
	kgc_scan_fn scan;
	void *ctx;			/* scan's third argument */
	uint64_t reserved[4];		/* zero */
};
/* 0, or -EINVAL (NULL, bad size, reserved nonzero, too large), -ENOSPC. */
int kgc_type_register_scanned(kgc_heap *heap, const struct kgc_scan_type_desc *desc,
			      kgc_type_id *out);

/* ----------------------------------------------------------------- threads */

/*
 * A thread must attach before touching the heap; it starts in managed state.
 * kgc_thread_attach passes the layout version of struct kgc_thread_pub (and
 * struct kgc_thread_pub_v5) this header inlines (KGC_ABI_VERSION): a library
 * that does not have that layout refuses the thread (-EPROTO, kgc_last_error
 * says to rebuild) instead of letting the inline fast paths write the wrong
 * fields. Layouts only grow at the end: a library accepts the versions whose
 * fields it keeps at the same offsets (this one: 4 to 6), so a program built
 * against header N runs on library N+1; a program built against a newer
 * header than the library's is refused.
 */
#define KGC_ABI_VERSION 6
int kgc_thread_attach_abi(kgc_heap *heap, const char *name, kgc_thread **out, unsigned abi);
#define kgc_thread_attach(heap, name, out) kgc_thread_attach_abi((heap), (name), (out), KGC_ABI_VERSION)
/* -EBUSY if frames are still pushed or critical sections are open. */
int kgc_thread_detach(kgc_thread *t);

/*
 * Native state: the thread holds no raw object pointers (only frames, handles
 * and pinned critical arrays) and never blocks a collection. Leaving native
 * state blocks while a collection is in progress.
 *
 * A managed thread must reach a safepoint (allocation, kgc_safepoint_poll,
 * kgc_collect) regularly: before it blocks on anything outside the heap
 * (pthread_join, a lock another attached thread holds while allocating,
 * sleep, I/O) it must kgc_enter_native (or call it through kgc_do_blocking),
 * or a collection requested meanwhile waits for it. A safepoint that waits
 * longer than KGC_SAFEPOINT_WARN_MS (default 1000) for a thread writes a
 * warning to stderr naming the thread and its state, and again each time
 * the wait doubles.
 */
void kgc_enter_native(kgc_thread *t);
void kgc_leave_native(kgc_thread *t);
/* fn(arg) in native state (like Boehm's GC_do_blocking): for a call that
 * may block. fn must not touch managed objects. Returns fn's result. */
void *kgc_do_blocking(kgc_thread *t, void *(*fn)(void *arg), void *arg);

/* Explicit safepoint poll (managed state). */
void kgc_safepoint_poll(kgc_thread *t);

enum kgc_gc_kind {
	KGC_GC_YOUNG = 0,
	KGC_GC_FULL = 1,
};
/* Request a collection and wait for it (the caller's frames are roots). */
int kgc_collect(kgc_thread *t, int kind);

/* ------------------------------------------------------------------- roots */

/*
 * A frame: slots owned by the runtime (usually on the C stack), pushed and
 * popped in LIFO order. refmap bit i set = slot i holds a reference, NULL
 * or a tagged immediate (NULL refmap = every slot is a reference). The
 * collector walks every attached
 * thread's frames (like frame::oops_do) and updates reference slots in place.
 */
struct kgc_frame {
	struct kgc_frame *prev;
	kgc_obj *slots;
	const uint64_t *refmap;
	uint32_t nslots;
	uint32_t magic;		/* set by push, checked by pop */
};

/*
 * Managed state only, not inside a critical section: checked mode aborts
 * with a message; plain mode does not check (the push is a few stores).
 *
 * API v2 (ABI 5): both are inline (defined further down, on the thread's
 * frame stack in struct kgc_thread_pub_v5): plain mode links and unlinks
 * the frame without a call; checked mode (KGC_CHECK) always calls the
 * library (kgc__frame_push_slow, kgc__frame_pop_slow), which checks the
 * thread's state before it does the same. libkgc exports both names too.
 * Define KGC_V1_CALLS before including kgc.h to get them (and kgc_obj_type)
 * as the library calls of API v1 instead: for an interposer or a
 * breakpoint on them, or to compare against v1 (bench/klispbench).
 */
#ifdef KGC_V1_CALLS
#define KGC__ROOTS_FN
#else
#ifndef KGC_INLINE_ROOTS
#define KGC_INLINE_ROOTS static inline __attribute__((always_inline))
#endif
#define KGC__ROOTS_FN KGC_INLINE_ROOTS
#endif
KGC__ROOTS_FN void kgc_frame_push(kgc_thread *t, struct kgc_frame *f, kgc_obj *slots,
				  uint32_t nslots, const uint64_t *refmap);
/* -EINVAL (and a checked-mode abort) if f is NULL or not the top frame. */
KGC__ROOTS_FN int kgc_frame_pop(kgc_thread *t, struct kgc_frame *f);

/*
 * Scoped roots: KGC_ROOTS(t, r, 3); declares kgc_obj r[3] (all NULL) as a
 * frame of t, popped when r goes out of scope - on every return path, also
 * early returns (GCC/Clang cleanup attribute). One per scope per name; the
 * frames of one thread must still nest (a scope inside a scope is fine).
 */
struct kgc__scope {
	kgc_thread *t;
	struct kgc_frame f;
};
static inline void kgc__scope_end(struct kgc__scope *s)
{
	kgc_frame_pop(s->t, &s->f);
}
#define KGC_ROOTS(t, name, n) \
	kgc_obj name[n] = { 0 }; \
	struct kgc__scope kgc__scope_##name __attribute__((cleanup(kgc__scope_end))) = { (t), { 0 } }; \
	kgc_frame_push((t), &kgc__scope_##name.f, name, (n), NULL)

/*
 * Weak references: a cell that names an object without keeping it alive.
 * Every kind of collection clears it when the object dies (young GCs for
 * young objects, a concurrent cycle's remark or a full GC for old ones) and
 * updates it when the object moves. kgc_weak_get returns the object, or
 * NULL once it is cleared; managed state. kgc_weak_new: NULL + kgc_last_error
 * on bad arguments or no memory.
 */
typedef struct kgc_weak_cell *kgc_weak;
kgc_weak kgc_weak_new(kgc_thread *t, kgc_obj obj);
kgc_obj kgc_weak_get(kgc_thread *t, kgc_weak ref);
void kgc_weak_free(kgc_thread *t, kgc_weak ref);

/*
 * Cleaners (like java.lang.ref.Cleaner): fn(arg) runs once, on the library
 * thread 'kgc-cleaner', after a collection found obj dead - never inside a
 * pause and never with obj (it is gone: keep what fn needs in arg). fn must
 * not use the heap. Cleaners queued when the heap is destroyed run then;
 * those of objects still alive do not. 0, -EINVAL, -ENOMEM.
 */
int kgc_cleaner_register(kgc_thread *t, kgc_obj obj, void (*fn)(void *arg), void *arg);
/* Wait (in native state) until every cleaner queued so far has run. */
int kgc_cleaners_drain(kgc_thread *t);

/*
 * Ephemerons (key, value): a cell that keeps value alive only while key is
 * alive through something other than the cell - weak-key tables (object
 * properties, memo tables, interning) that neither leak nor need polling.
 * A value that refers back to its own key, or to the key of another
 * ephemeron whose value refers to it, keeps nothing alive: every kind of
 * collection (young, full, a concurrent cycle's remark) iterates to a fixed
 * point. When the key dies, key and value are cleared together.
 * key: an object (a tagged immediate is refused); value: an object, NULL or
 * a tagged immediate. kgc_ephemeron_get stores both (0), or NULL twice and
 * returns -ENOENT once cleared; -EINVAL on NULL arguments. While a cycle
 * marks, what it hands out is kept alive by that cycle (SATB), as for
 * kgc_weak_get. A value that is young while its key is old is copied by
 * every young collection until a cycle or a full collection finds the key
 * dead. kgc_ephemeron_new: NULL + kgc_last_error on bad arguments (checked
 * mode aborts on a value that is no object) or no memory. Managed state.
 */
typedef struct kgc_ephemeron_cell *kgc_ephemeron;
kgc_ephemeron kgc_ephemeron_new(kgc_thread *t, kgc_obj key, kgc_obj value);
int kgc_ephemeron_get(kgc_thread *t, kgc_ephemeron e, kgc_obj *key, kgc_obj *value);
void kgc_ephemeron_free(kgc_thread *t, kgc_ephemeron e);

/*
 * Reference queues (like java.lang.ref.ReferenceQueue; kgc_refqueue.3):
 * a weak reference or an ephemeron attached to a queue is enqueued once a
 * collection (young, full or a cycle's remark) clears it; a cleaner with a
 * handle attached to one is enqueued once its function has run. Enqueueing
 * happens after the pause, on the thread 'kgc-cleaner': an entry appears
 * only after its cell reads cleared (and after its cleaner returned), in
 * the order the collections cleared them. The runtime drains a queue with
 * kgc_refqueue_poll (never blocks: -EAGAIN when empty) or kgc_refqueue_wait
 * (blocks up to timeout_ns, < 0 forever, in native state if t is given:
 * -ETIMEDOUT), or waits for kgc_refqueue_fd (an eventfd signalled on each
 * enqueue; read it to reset, then poll until -EAGAIN). An event names the
 * cell (ref: the kgc_weak, kgc_ephemeron or kgc_cleaner) and the tag given
 * when it was attached; the cell stays the runtime's to free. Freeing a
 * cell that is queued or on its way removes its entry. kgc_refqueue_destroy
 * detaches every cell (their later clearing enqueues nothing) and drops the
 * entries left (returns how many; -EBUSY while a thread waits on it);
 * kgc_heap_destroy destroys the queues left. Attaching: 0, -EINVAL (another
 * heap's queue, a freed cell: checked mode aborts), -ENOENT (cleared
 * already: no entry will come); q NULL detaches.
 */
typedef struct kgc_refqueue kgc_refqueue;
enum { KGC_REF_WEAK = 1, KGC_REF_EPHEMERON = 2, KGC_REF_CLEANER = 3 };
struct kgc_ref_event {
	uint32_t size;		/* out: the bytes filled (min(caller's size, this struct's)) */
	uint32_t kind;		/* KGC_REF_* */
	void *ref;		/* the kgc_weak, kgc_ephemeron or kgc_cleaner */
	uint64_t tag;		/* given to *_set_queue / kgc_cleaner_new */
	uint64_t reserved[2];	/* 0 */
};
#define KGC_REF_EVENT_SIZE_V1	24	/* through tag: the least size the calls accept */
int kgc_refqueue_create(kgc_heap *heap, kgc_refqueue **out);
int kgc_refqueue_destroy(kgc_refqueue *q);
int kgc_refqueue_poll(kgc_refqueue *q, struct kgc_ref_event *ev, size_t size);
int kgc_refqueue_wait(kgc_thread *t, kgc_refqueue *q, struct kgc_ref_event *ev, size_t size,
		      int64_t timeout_ns);
int kgc_refqueue_fd(kgc_refqueue *q);
int kgc_weak_set_queue(kgc_thread *t, kgc_weak ref, kgc_refqueue *q, uint64_t tag);
int kgc_ephemeron_set_queue(kgc_thread *t, kgc_ephemeron e, kgc_refqueue *q, uint64_t tag);

/*
 * Cleaners with a handle: as kgc_cleaner_register (fn(arg) once, on
 * 'kgc-cleaner', after obj died; fn must not use the heap), and, if q is
 * given, the cleaner is enqueued there after fn returned. The handle lives
 * until kgc_cleaner_cancel, which releases it and returns 1 if fn has run
 * (it waits for a running fn to return), 0 if fn never will; -EDEADLK
 * from fn itself; -EINVAL on a cancelled handle (checked mode aborts).
 * NULL + kgc_last_error on bad arguments.
 */
typedef struct kgc_cleaner_cell *kgc_cleaner;
kgc_cleaner kgc_cleaner_new(kgc_thread *t, kgc_obj obj, void (*fn)(void *arg), void *arg,
			    kgc_refqueue *q, uint64_t tag);
int kgc_cleaner_cancel(kgc_thread *t, kgc_cleaner c);

/*
 * Identity hash: the same non-zero value for an object for its whole life,
 * however often it moves (like System.identityHashCode). The first call
 * for an object costs a table insert, later ones a lookup.
 */
uint32_t kgc_identity_hash(kgc_thread *t, kgc_obj obj);

/* Global handles: long-lived roots, usable from any attached thread. A
 * handle holds an object or NULL, never a tagged immediate (kgc_handle_new:
 * NULL, -EINVAL; a handle's free list marks cells with bit 0). */
kgc_handle kgc_handle_new(kgc_thread *t, kgc_obj obj);
void kgc_handle_free(kgc_thread *t, kgc_handle h);
static inline kgc_obj kgc_handle_get(kgc_handle h) { return *(kgc_obj *)h; }
static inline void kgc_handle_set(kgc_handle h, kgc_obj o) { *(kgc_obj *)h = o; }

/*
 * Pinned handles (like .NET's pinned GCHandle; kgc_pin_handle.3): a root
 * that also pins obj's region, JEP 423 style, so obj never moves while the
 * handle lives - its address may be given to native code or the kernel -
 * and, unlike a critical section, the holder may call anything meanwhile
 * (allocate, collect, enter and leave native, other handles). A young GC
 * keeps the region in place (evacuation failure, kgc_stats evac_fail_pinned),
 * so many long-lived pins of young objects cost eden space until they are
 * freed. kgc_pin_handle_get reads the object from any thread in any state.
 * new: managed state; NULL + kgc_last_error for a NULL, tagged or non-heap
 * obj (checked mode also aborts on a stale or interior pointer) or no
 * memory. free: any state (waits for a running pause); 0, -EINVAL (NULL,
 * freed twice: checked mode aborts). kgc_heap_destroy frees the handles left.
 */
typedef struct kgc_pin_handle_cell *kgc_pin_handle;
kgc_pin_handle kgc_pin_handle_new(kgc_thread *t, kgc_obj obj);
int kgc_pin_handle_free(kgc_thread *t, kgc_pin_handle p);
static inline kgc_obj kgc_pin_handle_get(kgc_pin_handle p) { return *(kgc_obj *)p; }

/*
 * Hooks (kgc_hooks.3): the runtime learns of pauses, of the concurrent
 * cycle's steps, of an allocation about to fail and of a fatal error.
 *   KGC_HOOK_PAUSE_START, KGC_HOOK_PAUSE_END (duration_ns), KGC_HOOK_PHASE
 *     (name: the cycle's step a young pause took, e.g. "Concurrent Start",
 *     "Remark", "Cleanup", "Mixed"): inside the pause, on the collecting
 *     thread, the world stopped. They may call nothing of kgc (no
 *     allocation, no handles, no kgc_stats_get): record and return. Checked
 *     mode aborts on such a call with a message naming it and the hook;
 *     plain mode refuses the calls that check their thread (-EPERM / NULL)
 *     and may deadlock in others.
 *   KGC_HOOK_ALLOC_FAIL (bytes, attempt): an allocation found no room even
 *     after a full collection; on the allocating thread, managed, outside
 *     any pause: the hook may call anything (free handles and caches, drop
 *     weak tables, collect). Returning KGC_HOOK_RETRY retries the
 *     allocation (collections included) - at most KGC_HOOK_MAX_RETRIES
 *     times per allocation; anything else lets it fail (-ENOMEM).
 *   KGC_HOOK_FATAL (message): just before the library aborts the process;
 *     on the failing thread, in any state. Process-wide: every heap's fatal
 *     hook runs. It may log and flush, not use the heap; its return value
 *     is ignored and abort() follows.
 * kgc_hook_set replaces the event's hook (fn NULL removes it); not from a
 * pause hook. info->size is the library's sizeof: fields past it are absent.
 */
enum {
	KGC_HOOK_PAUSE_START = 1,
	KGC_HOOK_PAUSE_END = 2,
	KGC_HOOK_PHASE = 3,
	KGC_HOOK_ALLOC_FAIL = 4,
	KGC_HOOK_FATAL = 5,
};
#define KGC_HOOK_RETRY		1
#define KGC_HOOK_MAX_RETRIES	3
struct kgc_hook_info {
	uint32_t size;		/* sizeof(struct kgc_hook_info) of the library */
	uint32_t event;		/* KGC_HOOK_* */
	int32_t kind;		/* pauses: KGC_GC_YOUNG or KGC_GC_FULL */
	uint32_t attempt;	/* ALLOC_FAIL: 1..KGC_HOOK_MAX_RETRIES */
	uint64_t gc_id;		/* the collection's number (as in the gc log) */
	uint64_t duration_ns;	/* PAUSE_END */
	uint64_t bytes;		/* ALLOC_FAIL: the request */
	const char *name;	/* pauses: "Pause Young" / "Pause Full"; PHASE: the step */
	const char *message;	/* FATAL */
	uint64_t reserved[4];	/* 0 */
};
typedef int kgc_hook_fn(kgc_heap *heap, const struct kgc_hook_info *info, void *arg);
int kgc_hook_set(kgc_heap *heap, unsigned event, kgc_hook_fn *fn, void *arg);

/* ------------------------------------------------------------ object model */

/*
 * Tagged immediates (kgc_options.tag_mask; kgc_options.3): a runtime that
 * keeps small integers, characters or other non-pointer values in
 * reference slots (Lisp fixnums, V8 Smis, OCaml's ints) declares the low
 * bits that mark them, e.g. tag_mask = 1: every slot value with bit 0 set
 * is an immediate (a fixnum n stored as 2n+1). Objects are 8-byte aligned,
 * so the mask is a subset of 0x7. Such values may be stored with
 * kgc_set_ref / kgc_array_set_ref (no card, no SATB entry), kept in frame
 * slots marked as references, and read back bit for bit: no collection,
 * barrier, verifier or checked-mode check follows, moves or changes them.
 * They are no objects: kgc_weak_new, kgc_cleaner_register, kgc_identity_hash,
 * kgc_critical_get, kgc_handle_new and kgc_obj_vm_bits_* refuse them
 * (-EINVAL or NULL, a message; checked mode aborts in kgc_critical_get as
 * for any bad array); kgc_obj_type, kgc_obj_size and kgc_array_* on one
 * read a wild address. A value with low bits set
 * that are not in the mask is neither: checked mode aborts on its store,
 * KGC_VERIFY at the next collection.
 */

#define KGC_HEADER_SIZE		8	/* one header word */
#define KGC_ARRAY_DATA_OFFSET	16	/* header + 64-bit length */
#define KGC_CARD_SHIFT		9	/* 512-byte cards */

/* Safe on an array held critical while collections run: a young pause
 * that keeps a pinned array in place sets and clears two GC tag bits of its
 * header word (atomically); type, kind, length and elements never change.
 * Read a held array's header only through these and kgc_array_length. */
size_t kgc_obj_size(kgc_obj o);		/* bytes, header included */

/*
 * API v2: kgc_obj_type is inline, one load of the header word (the type id
 * is its bits 32-55, part of the ABI since the header's bits 56-63 became
 * the runtime's, KGC_VM_BITS). The library exports the name too;
 * KGC_V1_CALLS (above) makes it the library call.
 */
#define KGC__HDR_TYPE_SHIFT	32
#define KGC__HDR_TYPE_MASK	0xffffffu
#ifdef KGC_V1_CALLS
kgc_type_id kgc_obj_type(kgc_obj o);
#else
#ifndef KGC_INLINE_OBJ
#define KGC_INLINE_OBJ static inline __attribute__((always_inline))
#endif
KGC_INLINE_OBJ kgc_type_id kgc_obj_type(kgc_obj o)
{
	return (kgc_type_id)(__atomic_load_n((const uint64_t *)o, __ATOMIC_RELAXED) >> KGC__HDR_TYPE_SHIFT) &
	       KGC__HDR_TYPE_MASK;
}
#endif

/*
 * VM header bits: KGC_VM_BITS bits of every object's header word belong to
 * the runtime (a lock's state, "has a finalizer", a class-initialized
 * flag, a hash-state bit, ...). A new object has them all 0; the collector
 * never reads or changes them, and every move (young evacuation, promotion,
 * mixed evacuation, full compaction) keeps them. Reads and updates are
 * atomic on the whole header word, so threads may race on them (a CAS
 * lock). The thread must be attached and managed (not native, not inside
 * a critical section: -EPERM) - a collection never runs during a call.
 *
 * get: *bits = the object's bits (acquire).
 * cas: if the bits equal *expected, set desired and return 0; else store
 *   the bits seen in *expected and return -EAGAIN (acq_rel; never spurious).
 * update: bits = (bits & ~clear) | set in one atomic step, the previous
 *   bits in *old (NULL: not wanted).
 * 0 or -errno: -EINVAL (NULL, a tagged immediate, an address outside the
 * heap, bits beyond KGC_VM_BITS in expected/desired/clear/set), -EPERM.
 * Checked mode also verifies that o is a live object's start (a stale or
 * interior pointer aborts with a message); plain mode does not, and
 * changing bits 56-63 of whatever word a wrong pointer names corrupts it.
 */
#define KGC_VM_BITS	8	/* bits 56-63 of the header word; type ids take 24 bits */
int kgc_obj_vm_bits_get(kgc_thread *t, kgc_obj o, uint32_t *bits);
int kgc_obj_vm_bits_cas(kgc_thread *t, kgc_obj o, uint32_t *expected, uint32_t desired);
int kgc_obj_vm_bits_update(kgc_thread *t, kgc_obj o, uint32_t clear, uint32_t set, uint32_t *old);

static inline size_t kgc_array_length(kgc_obj a)
{
	return (size_t)*(const uint64_t *)((const char *)a + KGC_HEADER_SIZE);
}

static inline void *kgc_array_data(kgc_obj a)
{
	return (char *)a + KGC_ARRAY_DATA_OFFSET;
}

/* Primitive field access: KGC_FIELD(obj, offset, int32_t) = 5; */
#define KGC_FIELD(o, off, type) (*(type *)((char *)(o) + (off)))

/*
 * The part of struct kgc_thread the inline fast paths (barriers, critical
 * get/release) read and write. Internal, may change with the library version:
 * do not use the fields directly. Fields other threads read are accessed with
 * __atomic builtins on both sides (no _Atomic: this header is also C++).
 */
struct kgc_thread_pub {
	uint8_t *card_biased;		/* card table biased by heap base */
	volatile uint32_t *poll_word;	/* nonzero: a safepoint is pending */
	uint32_t region_shift;
	uint32_t checked;		/* checked mode: barriers go slow */
	uint32_t satb_active;		/* concurrent marking: log overwritten references */
	uint32_t tag_mask;		/* the heap's kgc_options.tag_mask: the barriers skip
					 * values with one of these bits set (ABI 4) */
	/* the critical fast path (kgc_critical_get/_release) */
	char *heap_base;		/* region index = (obj - heap_base) >> region_shift */
	kgc_obj *crit_stack;		/* open critical arrays [0, crit_top), NULL = released */
	uint64_t crit_gets;		/* sections entered (stats) */
	int32_t state;			/* KGC__TS_*; read by the collector */
	uint32_t crit_top;		/* read by the collector */
	uint32_t crit_open;		/* live entries of crit_stack */
	uint32_t pc_region;		/* pin cache: region (UINT32_MAX: none) and pins on */
	uint32_t pc_count;		/* it not yet in the region count; read by the collector */
	uint8_t crit_fast;		/* pin mode, unchecked: the fast paths apply */
	uint8_t membarrier;		/* managed transition needs only a compiler barrier */
	uint8_t native_before_crit;	/* state to return to after the last release */
	uint8_t pad1_;
	/* the allocation fast path (kgc_alloc/_array): only this thread writes them,
	 * the collector reads them at safepoints */
	char *tlab_top, *tlab_end;	/* bump region, both NULL: none */
	const uint64_t *type_hdr;	/* per type id: the header of a fresh object */
	uint32_t ninst;			/* instance ids [KGC_TYPE_FIRST_USER, +ninst) inline */
	uint32_t narr;			/* array ids [1, 1 + narr) inline (0 or KGC_TYPE_REF_ARRAY) */
	/* the write barrier's filter: per region (index from heap_base), nonzero
	 * when references into it must be carded (young, free, retained, mixed
	 * candidate); zero for plain old and humongous regions */
	const uint8_t *region_track;
};

/*
 * ABI 5 appends the thread's frame stack, for the inline kgc_frame_push/_pop
 * (API v2), after kgc_thread_pub and kgc_ext.h's cn_arg: every offset of
 * ABI 4 stays where it was (a program built against the ABI 4 header runs
 * on this library: it calls the library's kgc_frame_push, which keeps the
 * same stack). Internal like kgc_thread_pub: do not use the fields.
 */
struct kgc_thread_pub_v5 {
	struct kgc_thread_pub pub;	/* ABI 4 */
	kgc_obj ext_cn_arg;		/* kgc_ext.h's cn_arg (struct kgc_ext_thread_pub) */
	struct kgc_frame *frames;	/* the top frame, NULL: none; the collector reads it
					 * at safepoints (relaxed stores: a late safepoint's
					 * warning reads it too) */
	const uint8_t *type_init_refs;	/* per type id below pub.ninst + KGC_TYPE_FIRST_USER:
					 * how many of its first reference fields are its first
					 * payload words (kgc_alloc_init's inline path) */
};

/*
 * ABI 6 appends the card table's summary for the inline write barrier: one
 * byte per KGC_CARD_SUM_SHIFT of heap (64 cards), 0 when one of its cards
 * may be dirty. A young pause then sweeps only those parts of the card
 * table, not all of it: the table grows with the old generation (6 MiB at
 * 3 GiB), the dirty cards with the program's stores. A heap that ever had
 * a thread of an older ABI attached (whose barrier does not write the
 * summary) sweeps every card, as before. Internal: do not use the field.
 */
#define KGC_CARD_SUM_SHIFT	(KGC_CARD_SHIFT + 6)
struct kgc_thread_pub_v6 {
	struct kgc_thread_pub_v5 v5;	/* ABI 5 */
	uint8_t *card_sum_biased;	/* the summary biased like card_biased */
};

#define KGC__FRAME_MAGIC 0x6b676672u	/* struct kgc_frame.magic of a pushed frame */

void kgc__frame_push_slow(kgc_thread *t, struct kgc_frame *f, kgc_obj *slots, uint32_t nslots,
			  const uint64_t *refmap);
int kgc__frame_pop_slow(kgc_thread *t, struct kgc_frame *f);

/* The push and pop proper (the inline path's and the library's). */
static inline __attribute__((always_inline)) void
kgc__frame_link(kgc_thread *t, struct kgc_frame *f, kgc_obj *slots, uint32_t nslots, const uint64_t *refmap)
{
	struct kgc_thread_pub_v5 *p = (struct kgc_thread_pub_v5 *)t;

	f->prev = p->frames;
	f->slots = slots;
	f->refmap = refmap;
	f->nslots = nslots;
	f->magic = KGC__FRAME_MAGIC;
	__atomic_store_n(&p->frames, f, __ATOMIC_RELAXED);
}

/* f is the top frame (pushed, not popped). */
static inline __attribute__((always_inline)) int kgc__frame_is_top(kgc_thread *t, const struct kgc_frame *f)
{
	return f && ((struct kgc_thread_pub_v5 *)t)->frames == f && f->magic == KGC__FRAME_MAGIC;
}

static inline __attribute__((always_inline)) void kgc__frame_unlink(kgc_thread *t, struct kgc_frame *f)
{
	__atomic_store_n(&((struct kgc_thread_pub_v5 *)t)->frames, f->prev, __ATOMIC_RELAXED);
	f->magic = 0;
}

#ifndef KGC_V1_CALLS
KGC_INLINE_ROOTS void kgc_frame_push(kgc_thread *t, struct kgc_frame *f, kgc_obj *slots,
				     uint32_t nslots, const uint64_t *refmap)
{
	if (__builtin_expect(((const struct kgc_thread_pub *)t)->checked, 0))
		kgc__frame_push_slow(t, f, slots, nslots, refmap);
	else
		kgc__frame_link(t, f, slots, nslots, refmap);
}

KGC_INLINE_ROOTS int kgc_frame_pop(kgc_thread *t, struct kgc_frame *f)
{
	if (__builtin_expect(((const struct kgc_thread_pub *)t)->checked || !kgc__frame_is_top(t, f), 0))
		return kgc__frame_pop_slow(t, f);
	kgc__frame_unlink(t, f);
	return 0;
}
#endif

void kgc__barrier_slow(kgc_thread *t, kgc_obj *slot, kgc_obj val);
void kgc__set_ref_checked(kgc_thread *t, kgc_obj o, size_t off, kgc_obj val);
void kgc__array_set_ref_checked(kgc_thread *t, kgc_obj a, size_t i, kgc_obj val);
void kgc__satb_slow(kgc_thread *t, kgc_obj old);

/* A slot value that is a reference: not NULL, no tag bit set (tagged
 * immediates, kgc_options.tag_mask). */
static inline int kgc__is_ref(const struct kgc_thread_pub *p, kgc_obj v)
{
	return v && !((uintptr_t)v & p->tag_mask);
}

/* Pre-write barrier (snapshot at the beginning): while old space is being
 * marked concurrently, the reference about to be overwritten is logged
 * (initializing stores into new objects overwrite null: no call; an
 * overwritten tagged immediate is no reference: none either). */
static inline __attribute__((always_inline)) void kgc__pre_barrier(kgc_thread *t, kgc_obj *slot)
{
	const struct kgc_thread_pub *p = (const struct kgc_thread_pub *)t;

	if (__builtin_expect(__atomic_load_n(&p->satb_active, __ATOMIC_RELAXED), 0)) {
		kgc_obj old = __atomic_load_n(slot, __ATOMIC_RELAXED);

		if (kgc__is_ref(p, old))
			kgc__satb_slow(t, old);
	}
}
void kgc__safepoint_slow(kgc_thread *t);

/* The write barrier: records cross-region reference stores on the card table,
 * those into regions whose incoming references a young collection needs
 * (young ones, retained and mixed candidates: region_track; a tagged
 * immediate is stored without a card). A store of an
 * old object into another old object (relinking old entries of a cache) is
 * no old->young reference: carding it only makes the next pause scan one
 * more card. */
static inline __attribute__((always_inline)) void kgc__post_barrier(kgc_thread *t, kgc_obj *slot, kgc_obj val)
{
	const struct kgc_thread_pub *p = (const struct kgc_thread_pub *)t;

	if (kgc__is_ref(p, val) && (((uintptr_t)slot ^ (uintptr_t)val) >> p->region_shift) &&
	    __atomic_load_n(&p->region_track[((uintptr_t)val - (uintptr_t)p->heap_base) >> p->region_shift],
			    __ATOMIC_RELAXED)) {
		uint8_t *card = p->card_biased + ((uintptr_t)slot >> KGC_CARD_SHIFT);

		/* relaxed atomics: plain byte load/store, but no C11 data race
		 * when two threads dirty the same card */
		if (__atomic_load_n(card, __ATOMIC_RELAXED)) {
			uint8_t *sum = ((const struct kgc_thread_pub_v6 *)t)->card_sum_biased +
				       ((uintptr_t)slot >> KGC_CARD_SUM_SHIFT);

			__atomic_store_n(card, 0, __ATOMIC_RELAXED);	/* 0 = dirty, like HotSpot */
			/* the summary after the card (release): a sweep that
			 * clears it first and then reads the cards sees this card */
			if (__atomic_load_n(sum, __ATOMIC_RELAXED))
				__atomic_store_n(sum, 0, __ATOMIC_RELEASE);
		}
	}
}

static inline kgc_obj kgc_get_ref(kgc_obj o, size_t off)
{
	return *(kgc_obj *)((char *)o + off);
}

/*
 * Reference stores, always inline like a JIT's barriers: with ABI 6's card
 * summary, GCC stopped inlining a plain static inline kgc_set_ref into an
 * LRU cache's request loop, a call per store (bench/RESULTS-ab.md).
 * Checked mode (KGC_CHECK) validates the object, that off
 * is one of its type's reference fields (i within the array's length), the
 * value, and the thread's state, before the store; plain mode checks
 * nothing: a wrong offset or index there corrupts the heap silently.
 */
static inline __attribute__((always_inline)) void kgc_set_ref(kgc_thread *t, kgc_obj o, size_t off, kgc_obj val)
{
	kgc_obj *slot = (kgc_obj *)((char *)o + off);

	if (__builtin_expect(((const struct kgc_thread_pub *)t)->checked, 0)) {
		kgc__set_ref_checked(t, o, off, val);
		return;
	}
	kgc__pre_barrier(t, slot);
	/* relaxed atomic: a plain store, but the concurrent marker may read it */
	__atomic_store_n(slot, val, __ATOMIC_RELAXED);
	kgc__post_barrier(t, slot, val);
}

static inline kgc_obj kgc_array_get_ref(kgc_obj a, size_t i)
{
	return ((kgc_obj *)kgc_array_data(a))[i];
}

static inline __attribute__((always_inline)) void kgc_array_set_ref(kgc_thread *t, kgc_obj a, size_t i, kgc_obj val)
{
	kgc_obj *slot = (kgc_obj *)kgc_array_data(a) + i;

	if (__builtin_expect(((const struct kgc_thread_pub *)t)->checked, 0)) {
		kgc__array_set_ref_checked(t, a, i, val);
		return;
	}
	kgc__pre_barrier(t, slot);
	__atomic_store_n(slot, val, __ATOMIC_RELAXED);
	kgc__post_barrier(t, slot, val);
}

/* ------------------------------------------------------ critical (JEP 423) */

/*
 * kgc_critical_get and kgc_critical_release are inline (like liburing's
 * header-inline functions): the common case - pin mode, unchecked heap, one
 * section at a time entered from managed state, the array's region the one
 * in the thread's pin cache - is plain loads and stores on struct
 * kgc_thread_pub;
 * everything else calls the library (kgc__critical_*_slow). libkgc also
 * exports both names (it compiles this header with KGC_INLINE defined
 * non-static), for callers that take their address or bind them by name.
 * always_inline: with plain inline GCC keeps an out-of-line copy in large
 * callers, a call per get and release again.
 * The kgc__ names are internal: they may change with the library version.
 */
#ifndef KGC_INLINE
#define KGC_INLINE static inline __attribute__((always_inline))
#endif

#define KGC__TS_MANAGED	0	/* struct kgc_thread_pub.state */
#define KGC__TS_NATIVE	1
/* Object header bits: an unforwarded primitive array (kind 1 in bits 6-7, tag bits 0-1 clear). */
#define KGC__HDR_PRIM_MASK	((uint64_t)0xc3)
#define KGC__HDR_PRIM_ARRAY	((uint64_t)0x40)

void *kgc__critical_get_slow(kgc_thread *t, kgc_obj *ref, size_t *length);
int kgc__critical_release_slow(kgc_thread *t, kgc_obj *ref, void *elems);

static inline uint32_t kgc__crit_region(const struct kgc_thread_pub *p, kgc_obj o)
{
	return (uint32_t)(((char *)o - p->heap_base) >> p->region_shift);
}

/*
 * The fast paths handle one section at a time: the outermost, entered from
 * managed state, at crit_stack[0]. Their stores are constants, never values
 * loaded from the fields they overwrite, so that a get/release loop carries
 * no dependency from one call to the next through memory (but crit_gets).
 *
 * Entry test: p managed in unchecked pin mode (so no section is open and the
 * stack is empty), *ref a non-null unforwarded primitive array. Sets *o.
 */
static inline int kgc__crit_enter_ok(const struct kgc_thread_pub *p, kgc_obj *ref, kgc_obj *o)
{
	/* *ref only once managed: in native state a collection may update it */
	return p->crit_fast && __atomic_load_n(&p->state, __ATOMIC_RELAXED) == KGC__TS_MANAGED &&
	       __atomic_load_n(&p->crit_top, __ATOMIC_RELAXED) == 0 &&
	       ref && (*o = *ref) && !((uintptr_t)*o & 7) &&	/* not a tagged immediate */
	       (*(const uint64_t *)*o & KGC__HDR_PRIM_MASK) == KGC__HDR_PRIM_ARRAY;
}

/*
 * Pin cache: the first pin on region idx, if idx is the cached region and
 * (no section open) no pin is cached. Managed state only: increments never
 * happen during a collection. 0 if not (the library switches the cache).
 */
static inline int kgc__pin_first_cached(struct kgc_thread_pub *p, uint32_t idx)
{
	if (__atomic_load_n(&p->pc_region, __ATOMIC_RELAXED) != idx ||
	    __atomic_load_n(&p->pc_count, __ATOMIC_RELAXED) != 0)
		return 0;
	__atomic_store_n(&p->pc_count, 1, __ATOMIC_RELAXED);
	return 1;
}

/* Pins on region idx in the pin cache (0: none, or not the cached region). */
static inline uint32_t kgc__pin_cached(const struct kgc_thread_pub *p, uint32_t idx)
{
	return __atomic_load_n(&p->pc_region, __ATOMIC_RELAXED) == idx ?
	       __atomic_load_n(&p->pc_count, __ATOMIC_RELAXED) : 0;
}

/* Drop one of the c (> 0) cached pins; release: whatever the caller cleared
 * before (the critical entry) is visible before the unpin. */
static inline void kgc__pin_dec_cached(struct kgc_thread_pub *p, uint32_t c)
{
	__atomic_store_n(&p->pc_count, c - 1, __ATOMIC_RELEASE);
}

/*
 * After kgc__crit_enter_ok and the pin: record o as the one open section (a
 * root the collector sees as pinned), enter native state, return the
 * elements.
 */
/* Count one critical section (only this thread writes crit_gets; the
 * collector and kgc_stats read it). */
static inline void kgc__crit_count(struct kgc_thread_pub *p)
{
	__atomic_store_n(&p->crit_gets, __atomic_load_n(&p->crit_gets, __ATOMIC_RELAXED) + 1,
			 __ATOMIC_RELAXED);
}

static inline void *kgc__crit_push(struct kgc_thread_pub *p, kgc_obj o, size_t *length)
{
	p->crit_open = 1;
	p->native_before_crit = 0;
	__atomic_store_n(&p->crit_stack[0], o, __ATOMIC_RELAXED);
	__atomic_store_n(&p->crit_top, 1, __ATOMIC_RELEASE);
	kgc__crit_count(p);
	if (length)
		*length = kgc_array_length(o);
	__atomic_store_n(&p->state, KGC__TS_NATIVE, __ATOMIC_RELEASE);
	return kgc_array_data(o);
}

/*
 * Back to managed state, asymmetric Dekker (see thread.c): store the state,
 * then only a compiler barrier (the collector runs membarrier before it reads
 * states) or, without membarrier, a seq_cst RMW; then load the poll word.
 * Returns 0 if a safepoint is pending: the caller must then block (the
 * library's slow path), the thread already marked managed.
 */
static inline int kgc__to_managed(struct kgc_thread_pub *p)
{
	if (__builtin_expect(p->membarrier, 1)) {
		__atomic_store_n(&p->state, KGC__TS_MANAGED, __ATOMIC_RELAXED);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
	} else {
		__atomic_exchange_n(&p->state, KGC__TS_MANAGED, __ATOMIC_SEQ_CST);
	}
	return !__atomic_load_n(p->poll_word, __ATOMIC_SEQ_CST);
}

/* Release test: o (non-null) is the one open section and its pin (on o's
 * region idx) the one in the pin cache. */
static inline int kgc__crit_exit_ok(const struct kgc_thread_pub *p, kgc_obj o, uint32_t idx)
{
	return __atomic_load_n(&p->crit_top, __ATOMIC_RELAXED) == 1 &&
	       __atomic_load_n(&p->crit_stack[0], __ATOMIC_RELAXED) == o &&
	       kgc__pin_cached(p, idx) == 1;
}

/*
 * After kgc__crit_exit_ok: drop the one open section. Clear the root first,
 * then unpin: a collection never sees a held, unpinned array.
 */
static inline void kgc__crit_pop(struct kgc_thread_pub *p)
{
	__atomic_store_n(&p->crit_stack[0], (kgc_obj)0, __ATOMIC_RELEASE);
	kgc__pin_dec_cached(p, 1);
	__atomic_store_n(&p->crit_top, 0, __ATOMIC_RELEASE);
	p->crit_open = 0;
}

/*
 * Get a raw pointer to a primitive array's elements. ref points at a root
 * that holds the array (a frame slot, a handle, or - in managed state - any
 * variable). The array's region is pinned and the thread enters native state
 * until the matching release: collections proceed while it holds the pointer
 * (in KGC_PIN_MODE_GCLOCKER they wait instead). Nesting is allowed.
 * In KGC_PIN_MODE_GCLOCKER the first get may first wait for a pending
 * collection, which may move the array: get keeps it alive across the wait
 * and stores its new address in *ref, so *ref may be a plain local variable.
 * Returns NULL (with kgc_last_error) for non-primitive arrays or misuse.
 * *ref must hold a heap object: checked mode verifies that (an address
 * outside the heap or in a free region aborts with a message); plain mode
 * looks only at the header bits, like the inline fast path.
 */
KGC_INLINE void *kgc_critical_get(kgc_thread *t, kgc_obj *ref, size_t *length)
{
	struct kgc_thread_pub *p = (struct kgc_thread_pub *)t;
	kgc_obj o;

	if (__builtin_expect(!kgc__crit_enter_ok(p, ref, &o) ||
			     !kgc__pin_first_cached(p, kgc__crit_region(p, o)), 0))
		return kgc__critical_get_slow(t, ref, length);
	return kgc__crit_push(p, o, length);
}

/*
 * Release the innermost-first or any open section: elems must be the pointer
 * kgc_critical_get returned for *ref (ref may be NULL: matched by elems).
 * When the last section ends the thread returns to the state it had before
 * the first get (managed, blocking while a collection runs; or native).
 * Misuse (no matching get, a different pointer) returns -EINVAL with a
 * message naming thread and array; with KGC_CHECK=1 it aborts with it.
 */
#define KGC_CRITICAL_COMMIT	0	/* JNI mode 0 / JNI_COMMIT / JNI_ABORT are */
#define KGC_CRITICAL_ABORT	2	/* equivalent here: elements are never copied */
KGC_INLINE int kgc_critical_release(kgc_thread *t, kgc_obj *ref, void *elems, int mode)
{
	struct kgc_thread_pub *p = (struct kgc_thread_pub *)t;
	kgc_obj o;

	(void)mode;
	if (__builtin_expect(!p->crit_fast || !ref || !(o = *ref) || kgc_array_data(o) != elems ||
			     !kgc__crit_exit_ok(p, o, kgc__crit_region(p, o)), 0))
		return kgc__critical_release_slow(t, ref, elems);
	/* managed again first; a collection pending: the slow path releases,
	 * then blocks */
	if (!p->native_before_crit && __builtin_expect(!kgc__to_managed(p), 0))
		return kgc__critical_release_slow(t, ref, elems);
	kgc__crit_pop(p);
	return 0;
}

/* ------------------------------------ bulk copies (JNI Get/Set...Region) */

/*
 * Copy count elements from element index start of the primitive array held
 * by the root *array out to buf (get) or in from buf (set), like JNI's
 * Get/Set<Type>ArrayRegion. type is the array's element type (enum
 * kgc_prim); buf holds count elements in ordinary memory (not the heap).
 * Callable in managed or native state, not inside a critical section. The
 * copy never holds up a collection for long: every 64 KiB it is a
 * safepoint, where a pending collection may move the array; it then reads
 * the array's new address from *array (so in native state *array must be a
 * root - a frame slot, a handle; in managed state any variable: it gets the
 * new address). No piece is ever copied from or to an address the array
 * has left. 0; -EINVAL (NULL array or root, not a primitive array of type,
 * type out of range, NULL buf with count > 0, buf in the heap), -ERANGE
 * (start + count beyond the length), -EPERM (inside a critical section),
 * each with kgc_last_error; nothing is copied then.
 */
int kgc_array_get_region(kgc_thread *t, kgc_obj *array, enum kgc_prim type, size_t start,
			 size_t count, void *buf);
int kgc_array_set_region(kgc_thread *t, kgc_obj *array, enum kgc_prim type, size_t start,
			 size_t count, const void *buf);

/* ------------------------------------------ asynchronous I/O (io_uring) */

/*
 * Zero-copy asynchronous I/O straight into (or out of) ordinary, movable
 * primitive arrays, on an io_uring ring bound to a heap (kgc_io.3).
 *
 * A prep call names its buffer as (array root, byte offset, byte length):
 * array points at a root holding a primitive array (a frame slot, a handle;
 * in managed state any variable). From the prep until its completion is
 * reaped the array's region is pinned (JEP 423: collections keep running,
 * the region stays in place) and the ring holds the array as a root: it
 * stays alive and in place even when the program drops its last reference.
 * The reap call that returns the completion releases both, when it returns:
 * every array of a completion it returns is where the prep found it, even
 * when collections ran while the reap waited for later completions.
 *
 * Every call takes the calling thread, attached to the ring's heap and in
 * managed state; calls that may block (submit, reap with wait_nr > 0,
 * destroy) block in native state and never hold up a collection. A ring
 * may be used by several threads (calls are serialized internally).
 *
 * Errors: 0 or a count, else -errno with kgc_last_error, and nothing is
 * queued: -EINVAL (NULL ring or array, not a primitive array - a reference
 * array, an instance -, a thread not attached to the ring's heap or
 * detached, length over 2^31-1, more than KGC_IO_IOV_MAX buffers),
 * -EFAULT (offset + length beyond the array's bytes), -EPERM (thread in
 * native state or inside a critical section), -EAGAIN (as many operations
 * in flight as the ring has entries: reap first). I/O errors come back as
 * -errno in the completion's res (like io_uring's cqe->res).
 */
typedef struct kgc_io_ring kgc_io_ring;

#define KGC_IO_IOV_MAX	8	/* buffers per readv/writev */
#define KGC_IO_OFF_CUR	((uint64_t)-1)	/* file_off: the file position (pipes, sockets) */

struct kgc_io_buf {		/* one buffer of a readv/writev */
	kgc_obj *array;		/* root holding a primitive array */
	size_t offset, length;	/* bytes into its elements */
};

struct kgc_io_cqe {		/* one completion */
	uint64_t user_data;	/* the prep call's */
	int32_t res;		/* bytes transferred, or -errno */
	uint32_t flags;		/* io_uring's cqe->flags */
};

/* A ring of entries (1..4096) submission slots bound to t's heap;
 * setup_flags are io_uring_setup's IORING_SETUP_* (passed through). At most
 * entries operations are in flight at once. 0 or -errno. */
int kgc_io_ring_create(kgc_thread *t, unsigned entries, unsigned setup_flags, kgc_io_ring **out);
/*
 * Submits what is queued, cancels everything in flight and waits (native
 * state) until the kernel has completed all of it - the arrays stay pinned
 * and rooted until then, so no memory the kernel may still write is ever
 * reused - then frees the ring. Returns how many operations were still in
 * flight (their completions are dropped), or -EINVAL.
 */
int kgc_io_ring_destroy(kgc_io_ring *r, kgc_thread *t);

/* Queue one operation (submitted by kgc_io_submit). file_off KGC_IO_OFF_CUR
 * = the file position. 0 or -errno (see above). */
int kgc_io_prep_read(kgc_io_ring *r, kgc_thread *t, int fd, kgc_obj *array, size_t offset,
		     size_t length, uint64_t file_off, uint64_t user_data);
int kgc_io_prep_write(kgc_io_ring *r, kgc_thread *t, int fd, kgc_obj *array, size_t offset,
		      size_t length, uint64_t file_off, uint64_t user_data);
int kgc_io_prep_readv(kgc_io_ring *r, kgc_thread *t, int fd, const struct kgc_io_buf *bufs,
		      unsigned nbufs, uint64_t file_off, uint64_t user_data);
int kgc_io_prep_writev(kgc_io_ring *r, kgc_thread *t, int fd, const struct kgc_io_buf *bufs,
		       unsigned nbufs, uint64_t file_off, uint64_t user_data);
/* msg_flags: recv(2)/send(2)'s MSG_* */
int kgc_io_prep_recv(kgc_io_ring *r, kgc_thread *t, int sockfd, kgc_obj *array, size_t offset,
		     size_t length, int msg_flags, uint64_t user_data);
int kgc_io_prep_send(kgc_io_ring *r, kgc_thread *t, int sockfd, kgc_obj *array, size_t offset,
		     size_t length, int msg_flags, uint64_t user_data);

struct sockaddr;
struct sockaddr_storage;
/*
 * sendmsg(2)/recvmsg(2) gathering from or scattering into nbufs (1..
 * KGC_IO_IOV_MAX) array buffers, like readv/writev; no control messages.
 * sendmsg: to/tolen the destination (NULL/0 on a connected socket; at most
 * sizeof(struct sockaddr_storage)), copied at prep. recvmsg: from (NULL:
 * not wanted) receives the source address; it must stay valid until the
 * completion is reaped and must not be heap memory. res: bytes.
 */
int kgc_io_prep_sendmsg(kgc_io_ring *r, kgc_thread *t, int sockfd, const struct kgc_io_buf *bufs,
			unsigned nbufs, const struct sockaddr *to, unsigned tolen, int msg_flags,
			uint64_t user_data);
int kgc_io_prep_recvmsg(kgc_io_ring *r, kgc_thread *t, int sockfd, const struct kgc_io_buf *bufs,
			unsigned nbufs, struct sockaddr_storage *from, int msg_flags,
			uint64_t user_data);
/*
 * Operations that hold no array (nothing pinned or rooted; each still
 * counts in kgc_io_inflight until a reap returns it). What the kernel
 * reads later (a timeout's time, a connect's address) is copied into the
 * ring at prep. Descriptor errors come back in res, like I/O errors.
 *  fsync:   fsync_flags 0 or IORING_FSYNC_DATASYNC; res 0.
 *  close:   res 0 (the fd is closed).
 *  poll:    one-shot, poll_mask POLLIN, POLLOUT, ... (not 0); res the
 *           events that are ready.
 *  timeout: completes after ns nanoseconds (at most 2^63-1) with res
 *           -ETIME, or -ECANCELED when kgc_io_cancel'd.
 *  accept:  flags SOCK_NONBLOCK, SOCK_CLOEXEC; res the new socket (the
 *           peer's address: getpeername(2)).
 *  connect: addr of addrlen bytes (1 .. sizeof(struct sockaddr_storage));
 *           res 0.
 * Bad flags, masks, lengths or a NULL address: -EINVAL, nothing queued.
 */
int kgc_io_prep_fsync(kgc_io_ring *r, kgc_thread *t, int fd, unsigned fsync_flags,
		      uint64_t user_data);
int kgc_io_prep_close(kgc_io_ring *r, kgc_thread *t, int fd, uint64_t user_data);
int kgc_io_prep_poll(kgc_io_ring *r, kgc_thread *t, int fd, unsigned poll_mask, uint64_t user_data);
int kgc_io_prep_timeout(kgc_io_ring *r, kgc_thread *t, uint64_t ns, uint64_t user_data);
int kgc_io_prep_accept(kgc_io_ring *r, kgc_thread *t, int sockfd, int flags, uint64_t user_data);
int kgc_io_prep_connect(kgc_io_ring *r, kgc_thread *t, int sockfd, const struct sockaddr *addr,
			unsigned addrlen, uint64_t user_data);

/*
 * Flags of the operation the calling thread queued last on r, before it is
 * submitted (io_uring's IOSQE_*): KGC_IO_LINK - the next operation queued
 * starts when this one has completed, and completes with -ECANCELED if this
 * one fails (or is short); KGC_IO_HARDLINK - the same, but the next one
 * runs even if this one fails; KGC_IO_DRAIN - this one starts when every
 * operation queued before it has completed; KGC_IO_ASYNC - never try it
 * inline at submit; KGC_IO_FIXED_FILE - its fd is an index into the ring's
 * registered files (kgc_io_register_files). Every operation of a chain
 * still completes and is reaped on its own. A chain ends at a submit
 * (kgc_io_submit, a reap, or a full submission queue): keep it shorter
 * than the ring's entries. 0;
 * -EINVAL (other bits), -ENOENT (the last operation queued is submitted,
 * or another thread's).
 */
#define KGC_IO_LINK	1u
#define KGC_IO_HARDLINK	2u
#define KGC_IO_DRAIN	4u
#define KGC_IO_ASYNC	8u
#define KGC_IO_FIXED_FILE 16u
/*
 * KGC_IO_SKIP_SUCCESS (with KGC_IO_LINK or _HARDLINK, not on a multishot
 * recv): no completion when the operation succeeds (io_uring's
 * IOSQE_CQE_SKIP_SUCCESS) - the send of a request/response loop, with the
 * next recv linked after it, costs no completion and no turn of the event
 * loop. Its arrays stay pinned and rooted until the operation linked after
 * it is returned by a reap (that one only starts once this one is done),
 * and are released with it. If it fails, its completion is returned like
 * any other (before the follower's). If no operation is queued after it
 * before the queue is submitted, it completes like any other. It never
 * counts among the completions a reap waits for. Once a ring has used it,
 * the kernel refuses KGC_IO_DRAIN on that ring (-EOPNOTSUPP completions).
 */
#define KGC_IO_SKIP_SUCCESS 32u
int kgc_io_set_flags(kgc_io_ring *r, kgc_thread *t, unsigned flags);
/*
 * Register fds[0..n) as the ring's table of files (io_uring_register_files;
 * in native state): the kernel holds a reference to each, and an operation
 * flagged KGC_IO_FIXED_FILE names one by its index, which saves looking
 * the descriptor up per operation. Replaces an earlier table; n 0 drops it
 * (0 also when there was none). 0, -EINVAL (NULL fds with n > 0), or the
 * kernel's -errno (a bad descriptor: -EBADF), after which the ring has no
 * table.
 */
int kgc_io_register_files(kgc_io_ring *r, kgc_thread *t, const int *fds, unsigned n);

/* Submit the queued operations (native state). Returns how many, or -errno
 * (io_uring_enter's). */
int kgc_io_submit(kgc_io_ring *r, kgc_thread *t);
/*
 * Reap up to max completions into out, first waiting (native state) until
 * at least min(wait_nr, max, operations in flight) are there. The arrays of
 * the completions it returns stay pinned and rooted until it returns (a
 * collection while it waits for the rest moves and frees none of them);
 * then it unpins and unroots them. Returns how many, or -errno.
 */
int kgc_io_reap(kgc_io_ring *r, kgc_thread *t, struct kgc_io_cqe *out, unsigned max,
		unsigned wait_nr);

/*
 * A completion callback of kgc_io_reap_wait: called once per completion it
 * returns, in out[]'s order, on the reaping thread in managed state, with
 * no lock of the ring held. arrays[0..narrays) are the operation's arrays
 * (1 for read/write/recv/send, nbufs for readv/writev/sendmsg/recvmsg, 0
 * for the operations without arrays), still pinned and
 * rooted by the ring until kgc_io_reap_wait returns: the callback may
 * allocate (collections run, the arrays stay in place), prep, submit, reap
 * and cancel on the ring, but not destroy it.
 */
typedef void kgc_io_complete_fn(kgc_thread *t, const struct kgc_io_cqe *c, const kgc_obj *arrays,
				unsigned narrays, void *arg);

/* How kgc_io_reap_wait waits. Size-versioned: size = sizeof(struct
 * kgc_io_wait), reserved (and any bytes past what the library knows) zero. */
struct kgc_io_wait {
	uint32_t size;
	uint32_t wait_nr;		/* as kgc_io_reap's */
	int64_t timeout_ns;		/* < 0: no limit; else the longest the wait takes */
	kgc_io_complete_fn *complete;	/* NULL, or called for each completion */
	void *arg;			/* complete's */
	uint64_t reserved[4];
};
/*
 * kgc_io_reap with a timeout and a callback (either may be unused); out may
 * be NULL when complete is set. When timeout_ns passes first it returns
 * what it has: the count if any, else -ETIME (wait_nr > 0 and no
 * completion came; timeout_ns 0 polls). -EINVAL for a bad struct.
 */
int kgc_io_reap_wait(kgc_io_ring *r, kgc_thread *t, struct kgc_io_cqe *out, unsigned max,
		     const struct kgc_io_wait *w);
/*
 * An eventfd for an event loop (epoll, poll, select): registered with the
 * ring on the first call, the same one after, owned by the ring (closed by
 * kgc_io_ring_destroy: take it out of the epoll set first; do not close
 * it). It is readable while completions may be waiting: a reap resets it
 * and sets it again when it leaves some in the ring, so an epoll wake-up
 * is followed by kgc_io_reap(..., wait_nr 0), which does not block (it may
 * find none: a spurious wake-up). The fd or -errno.
 */
int kgc_io_ring_eventfd(kgc_io_ring *r, kgc_thread *t);
/*
 * Request cancellation of every operation in flight with this user_data
 * (submitted now; queued ones are submitted first). Each still completes,
 * with -ECANCELED if the cancel won, its result otherwise: reap it as
 * usual. Returns how many operations matched, -ENOENT if none.
 */
int kgc_io_cancel(kgc_io_ring *r, kgc_thread *t, uint64_t user_data);
/* The same for every operation in flight on fd (-ENOENT if none, -EINVAL
 * for fd < 0), and for every operation in flight (returns how many, 0 if
 * none). */
int kgc_io_cancel_fd(kgc_io_ring *r, kgc_thread *t, int fd);
int kgc_io_cancel_all(kgc_io_ring *r, kgc_thread *t);
/*
 * Provided buffers (kgc_io_pool.3): a pool of nbufs primitive arrays of the
 * pinned-object space, registered with ring r as an io_uring provided-buffer
 * ring (buffer group). A multishot recv on the pool stays armed and
 * completes once per chunk of data: the kernel picks an array of the pool,
 * the completion names it (IORING_CQE_F_BUFFER in flags, the buffer id
 * in flags >> IORING_CQE_BUFFER_SHIFT; IORING_CQE_F_MORE while the recv
 * stays armed), res the bytes in it. The pool roots its arrays (they are
 * pinned-space arrays: never moved) until the program takes one out as an
 * ordinary array (kgc_io_pool_take); it may put that array back for the
 * kernel to fill again, or drop it and let kgc_io_pool_refill put fresh
 * arrays in the empty places. With no array left to pick, the recv
 * completes with res -ENOBUFS and without IORING_CQE_F_MORE: refill (or
 * put) and prep it again. Every call: r's thread rules; r->lock taken.
 */
typedef struct kgc_io_pool kgc_io_pool;
/* Size-versioned: size = sizeof(struct kgc_io_pool_opts), reserved (and
 * any bytes past what the library knows) zero. */
struct kgc_io_pool_opts {
	uint32_t size;
	uint32_t nbufs;			/* a power of two, 1..32768 */
	kgc_type_id array_type;		/* KGC_TYPE_PRIM_ARRAY(...) */
	uint32_t length;		/* elements per array (1 .. 2^31-1 bytes) */
	uint64_t reserved[4];
};
/* A pool filled with nbufs new pinned arrays (may collect). 0, -EINVAL
 * (bad opts), -ENOMEM, or the kernel's -errno (-EINVAL: no provided-buffer
 * rings before Linux 5.19). */
int kgc_io_pool_create(kgc_io_ring *r, kgc_thread *t, const struct kgc_io_pool_opts *o,
		       kgc_io_pool **out);
/* Frees the pool (its arrays not taken out are dropped). -EBUSY while a
 * recv on it is in flight (cancel it and reap its last completion first).
 * kgc_io_ring_destroy destroys the ring's pools itself. */
int kgc_io_pool_destroy(kgc_io_pool *p, kgc_thread *t);
/* Queue a multishot recv(2) on sockfd into p's arrays (p must belong to
 * r); it stays in flight (one kgc_io_inflight) until a completion without
 * IORING_CQE_F_MORE (end of stream res 0, an error, -ENOBUFS, a cancel). */
int kgc_io_prep_recv_multishot(kgc_io_ring *r, kgc_thread *t, int sockfd, kgc_io_pool *p,
			       int msg_flags, uint64_t user_data);
/* Take the array completion c (reaped, IORING_CQE_F_BUFFER) names out of
 * the pool into *root: from now on an ordinary array of the program's.
 * Returns the bytes of data in it (c->res); -EINVAL (c names no buffer of
 * the pool), -ENOENT (already taken or put back). */
int kgc_io_pool_take(kgc_io_pool *p, kgc_thread *t, const struct kgc_io_cqe *c, kgc_obj *root);
/* Give *array (a pinned primitive array: kgc_alloc_array_pinned) to the
 * pool for the kernel to fill; the pool roots it. 0, -EINVAL (not a
 * pinned primitive array, over 2^31-1 bytes, or one the pool holds),
 * -ENOSPC (the pool has nbufs arrays). */
int kgc_io_pool_put(kgc_io_pool *p, kgc_thread *t, kgc_obj *array);
/* A new pinned array of the pool's type and length in every empty place
 * (may collect). Returns how many, or -ENOMEM. */
int kgc_io_pool_refill(kgc_io_pool *p, kgc_thread *t);
/* Arrays the kernel may pick now. */
unsigned kgc_io_pool_avail(const kgc_io_pool *p);
/*
 * Short reads without a kernel round trip: from now on a read or readv of
 * at most max_bytes (0: never, the default; at most 2^31-1) at an explicit
 * file offset is first tried on the calling thread at prep, with its
 * arrays pinned and rooted like any operation and the thread in native
 * state: preadv2(RWF_NOWAIT) (data in the page cache), or on tmpfs and
 * ramfs, which have no RWF_NOWAIT, a plain preadv (a memory copy). When
 * that has the result the completion is ready at once: the next reap
 * returns it without entering the kernel; else (the data is not cached, a
 * pipe or socket, an error) the read goes to io_uring as usual. A read
 * done at prep is not queued: kgc_io_set_flags after it returns -ENOENT,
 * and a read queued after an operation flagged KGC_IO_LINK/HARDLINK
 * always goes to io_uring. 0; -EINVAL (max_bytes too large).
 */
int kgc_io_ring_set_inline(kgc_io_ring *r, kgc_thread *t, size_t max_bytes);
/* Operations queued or in flight whose completions no reap has returned yet
 * (a reap that waits counts those it holds until it returns them). */
unsigned kgc_io_inflight(const kgc_io_ring *r);

/* -------------------------------------------------------------- allocation */

/*
 * May collect (a safepoint). NULL + -ENOMEM reason when the heap is full;
 * NULL + -EINVAL for a type that is not an instance type (kgc_alloc) or an
 * array type (kgc_alloc_array), or a thread not in managed state.
 *
 * Both are inline (like the critical fast path; alloc.c compiles them with
 * KGC_INLINE_ALLOC defined non-static for the exported names): in managed
 * state, when the object fits the rest of the thread's TLAB, an allocation
 * is a bump of tlab_top and the header store(s) - the TLAB was zeroed when
 * it was handed out. Everything else calls the library (kgc__alloc_slow,
 * kgc__alloc_array_slow): a TLAB refill, a collection, large objects, a
 * type registered since this thread's last slow path, errors. Checked mode
 * (KGC_CHECK) and KGC_STALE_CHECK leave ninst and narr 0: every allocation
 * there takes the library's checked path. libkgc exports both names too.
 */
#ifndef KGC_INLINE_ALLOC
#define KGC_INLINE_ALLOC static inline __attribute__((always_inline))
#endif
kgc_obj kgc__alloc_slow(kgc_thread *t, kgc_type_id type);
kgc_obj kgc__alloc_array_slow(kgc_thread *t, kgc_type_id array_type, size_t length);

/* Bytes [p, p + size) of the thread's TLAB, or NULL if it does not fit
 * (or the thread is not managed: then the slow path says why). */
static inline char *kgc__tlab_bump(struct kgc_thread_pub *p, size_t size)
{
	char *top = p->tlab_top;

	if (__builtin_expect((size_t)(p->tlab_end - top) < size ||
			     __atomic_load_n(&p->state, __ATOMIC_RELAXED) != KGC__TS_MANAGED, 0))
		return (char *)0;
	p->tlab_top = top + size;
	return top;
}

/* log2 of an array type's element size (KGC_TYPE_PRIM_ARRAY(p) or KGC_TYPE_REF_ARRAY) */
static inline unsigned kgc__array_shift(kgc_type_id type)
{
	return type == KGC_TYPE_REF_ARRAY ? 3 : (type - 1) >> 1;
}

KGC_INLINE_ALLOC kgc_obj kgc_alloc(kgc_thread *t, kgc_type_id type)
{
	struct kgc_thread_pub *p = (struct kgc_thread_pub *)t;
	uint64_t hdr;
	char *o;

	/* instance header: size in words in bits 8-31 */
	if (__builtin_expect(type - KGC_TYPE_FIRST_USER < p->ninst && (hdr = p->type_hdr[type], 1) &&
			     (o = kgc__tlab_bump(p, ((hdr >> 8) & 0xffffff) * 8)) != 0, 1)) {
		*(uint64_t *)o = hdr;
		return (kgc_obj)o;
	}
	return kgc__alloc_slow(t, type);
}

KGC_INLINE_ALLOC kgc_obj kgc_alloc_array(kgc_thread *t, kgc_type_id type, size_t length)
{
	struct kgc_thread_pub *p = (struct kgc_thread_pub *)t;
	char *o;

	/* a length below 2^32 cannot overflow */
	if (__builtin_expect(type - 1 < p->narr && length < ((size_t)1 << 32) &&
			     (o = kgc__tlab_bump(p, (KGC_ARRAY_DATA_OFFSET + (length << kgc__array_shift(type)) +
						     7) & ~(size_t)7)) != 0, 1)) {
		((uint64_t *)o)[0] = p->type_hdr[type];
		((uint64_t *)o)[1] = length;
		return (kgc_obj)o;
	}
	return kgc__alloc_array_slow(t, type, length);
}

/*
 * API v2 (ABI 5): an instance of type with its first n reference fields
 * (the type's ref_offsets[0..n), in that order) set to refs[0..n) -
 * objects, NULL or tagged immediates - and the rest zero, as kgc_alloc then
 * kgc_set_ref would, with two differences: the caller does not root refs'
 * objects (if the allocation collects, the library keeps them in a frame
 * of its own and stores where they moved), and inline the stores need no
 * barrier (a new object in the thread's TLAB is young: every young
 * collection scans it whole, and the values it overwrites are NULL). So a
 * cons is a bump, a header and two stores, with no frame around it.
 * Inline when the object fits the TLAB and the type's first n reference
 * fields are its first n payload words (offsets 8, 16, ...); otherwise,
 * and in checked mode and KGC_STALE_CHECK, the library's
 * kgc__alloc_init_slow: kgc_alloc's checks, the stores through
 * kgc_set_ref (checked stores in checked mode). NULL + -EINVAL if type is
 * not an instance type, n exceeds its reference fields or
 * KGC_ALLOC_INIT_MAX, refs is NULL with n > 0; -ENOMEM as kgc_alloc.
 * KGC_V1_CALLS has no effect on it (v1 had no such call).
 */
#define KGC_ALLOC_INIT_MAX 16
kgc_obj kgc__alloc_init_slow(kgc_thread *t, kgc_type_id type, const kgc_obj *refs, uint32_t n);

KGC_INLINE_ALLOC kgc_obj kgc_alloc_init(kgc_thread *t, kgc_type_id type, const kgc_obj *refs, uint32_t n)
{
	struct kgc_thread_pub_v5 *x = (struct kgc_thread_pub_v5 *)t;
	struct kgc_thread_pub *p = &x->pub;
	uint64_t hdr;
	char *o;

	if (__builtin_expect(type - KGC_TYPE_FIRST_USER < p->ninst && n <= x->type_init_refs[type] &&
			     (hdr = p->type_hdr[type], 1) &&
			     (o = kgc__tlab_bump(p, ((hdr >> 8) & 0xffffff) * 8)) != 0, 1)) {
		*(uint64_t *)o = hdr;
		for (uint32_t i = 0; i < n; i++)
			((kgc_obj *)o)[1 + i] = refs[i];
		return (kgc_obj)o;
	}
	return kgc__alloc_init_slow(t, type, refs, n);
}

/*
 * A primitive array in the pinned-object space (like .NET's
 * GC.AllocateArray(pinned: true)): no collection ever moves it, so its
 * address may be handed to the kernel or native code for as long as the
 * program keeps it alive, without a critical section. The space is
 * collected in place: dead arrays' space is reused by later pinned
 * allocations and a region with nothing live goes back to the heap. kgc_io
 * rings register the space with io_uring as fixed buffers, so reads and
 * writes into pinned arrays use READ_FIXED/WRITE_FIXED by themselves (readv
 * and writev within one unit of the space READV_FIXED/WRITEV_FIXED)
 * (kgc_io.3). Zeroed. May collect. NULL + -EINVAL for a type that is not a
 * primitive array type (a reference array is never pinned for good) or a
 * thread not in managed state, -ENOMEM when even a full collection leaves
 * no room.
 */
kgc_obj kgc_alloc_array_pinned(kgc_thread *t, kgc_type_id array_type, size_t length);

/* -------------------------------------------------------------------- stats */

#define KGC_PAUSE_HIST_BUCKETS 24	/* bucket i: pauses in [2^i, 2^(i+1)) us */

/*
 * Every statistic, once: X(type, name, what) for a number, XA(type, name,
 * count, what) for an array. struct kgc_stats, kgc_stats_print and the
 * tests are all generated from this list, so they cannot drift apart.
 * New fields go at the end (the struct only grows; see kgc_stats_get).
 */
#define KGC_STATS_FIELDS(X, XA) \
	X(uint64_t, young_gcs, "young collections (mixed ones included)") \
	X(uint64_t, full_gcs, "full collections") \
	X(uint64_t, pause_total_ns, "time in pauses") \
	X(uint64_t, pause_max_ns, "longest pause") \
	XA(uint64_t, pause_hist, KGC_PAUSE_HIST_BUCKETS, "pauses by length: bucket i = [2^i, 2^(i+1)) us") \
	X(uint64_t, bytes_allocated, "bytes handed to threads: TLABs (whole) and objects outside them") \
	X(uint64_t, bytes_copied, "bytes copied by young collections") \
	X(uint64_t, bytes_promoted, "bytes copied into old space") \
	X(uint64_t, bytes_freed, "bytes freed") \
	X(uint64_t, heap_capacity, "bytes the heap may grow to") \
	X(uint64_t, heap_used, "bytes in use") \
	X(uint64_t, heap_committed, "bytes backed by memory") \
	X(uint32_t, region_size, "bytes per region") \
	X(uint32_t, regions_total, "regions") \
	X(uint32_t, regions_free, "free regions") \
	X(uint32_t, regions_eden, "eden regions") \
	X(uint32_t, regions_survivor, "survivor regions") \
	X(uint32_t, regions_old, "old regions") \
	X(uint32_t, regions_humongous, "humongous regions") \
	X(uint32_t, regions_pinned, "regions with a pin now: user, a thread's pin cache, or the kernel's on kmod") \
	X(uint64_t, critical_gets, "critical sections entered") \
	X(uint64_t, pinned_bytes, "bytes in regions pinned at the last collection") \
	X(uint64_t, evac_fail_pinned, "regions that failed evacuation: user pins") \
	X(uint64_t, evac_fail_kernel_pinned, "regions that failed evacuation: kernel pins") \
	X(uint64_t, evac_fail_alloc, "regions that failed evacuation: no to-space") \
	X(uint64_t, gclocker_stalls, "waits for the GCLocker (requesting and entering threads)") \
	X(uint64_t, gclocker_stall_ns, "time in those waits") \
	X(uint64_t, uncommit_busy, "uncommits refused: kernel pins (kmod)") \
	X(uint64_t, concurrent_cycles, "concurrent mark + sweep cycles completed") \
	X(uint64_t, mixed_gcs, "young collections that also evacuated old regions") \
	X(uint64_t, mixed_regions, "old regions they evacuated") \
	X(uint64_t, degenerated_cycles, "concurrent cycles old space forced to finish in a young pause") \
	X(uint64_t, pacing_stalls, "sleeps of allocating threads for a cycle falling behind") \
	X(uint64_t, pacing_stall_ns, "time in those sleeps") \
	X(uint64_t, weak_cleared, "weak cells cleared: weak references, cleaners, hashes of dead objects") \
	X(uint64_t, cleaners_run, "cleaner functions run") \
	X(uint64_t, kpin_watch_armed, "pin-drop watches armed on retained kernel-pinned regions (kmod)") \
	X(uint64_t, kpin_watch_fired, "of those, fired: the kernel's pins dropped (kmod)") \
	X(uint64_t, kpin_watch_gcs, "young collections a fired watch requested (kmod)") \
	X(uint64_t, young_pause_ns, "time in young pauses (mixed ones included)") \
	X(uint64_t, full_pause_ns, "time in full pauses") \
	X(uint64_t, io_submitted, "I/O operations queued on kgc_io rings (prep calls that succeeded)") \
	X(uint64_t, io_completed, "of those, completions reaped (or dropped by a ring's destroy)") \
	X(uint64_t, io_errors, "of those, with a negative result (-errno, -ECANCELED included)") \
	X(uint64_t, io_bytes, "bytes the completed operations transferred") \
	X(uint64_t, io_cancels, "cancel requests submitted (kgc_io_cancel, ring destroy)") \
	X(uint64_t, io_fixed, "queued reads and writes into registered (fixed) buffers: READ_FIXED/WRITE_FIXED, READV_FIXED/WRITEV_FIXED") \
	X(uint64_t, io_plain, "queued operations that named their buffers by address (the kernel pins them each time)") \
	X(uint32_t, pinned_space_regions, "regions of the pinned-object space (kgc_alloc_array_pinned)") \
	X(uint64_t, pinned_space_bytes, "bytes in use in the pinned-object space: its regions up to their tops, less the gaps its last reclaim found") \
	X(uint64_t, mark_assists, "times allocating threads marked for a cycle falling behind, instead of sleeping") \
	X(uint64_t, mark_assist_ns, "time in those assists") \
	X(uint64_t, mark_assist_bytes, "bytes of old objects they marked") \
	X(uint64_t, humongous_eager, "dead humongous primitive arrays young collections freed (eager reclaim)") \
	X(uint64_t, refined_cards, "dirty cards concurrent refinement turned into logged slots between pauses") \
	X(uint64_t, refined_slots, "slots logged by it that young pauses read instead of scanning those cards") \
	X(uint64_t, evac_fail_budget, "young regions promoted in place: their pause ran over its evacuation budget") \
	X(uint64_t, bytes_kept_in_place, "live bytes those regions held (scanned, not copied)") \
	X(uint64_t, humongous_moved, "humongous objects full and young collections moved (by pages above the policy's threshold)") \
	X(uint64_t, humongous_moved_bytes, "bytes of those objects") \
	X(uint64_t, region_moves_copied, "region ranges moved by copying: no page move on this kernel or module, below the threshold, or refused") \
	X(uint64_t, io_inline, "reads a kgc_io ring did on the thread that submitted them (kgc_io_ring_set_inline)") \
	X(uint64_t, humongous_moved_young, "of humongous_moved, those a young collection moved for a humongous allocation that found no run of free regions (no full collection)") \
	X(uint64_t, humongous_reloc_pauses, "young collections that relocated humongous objects for such an allocation") \
	X(uint64_t, io_inline_calls, "system calls that did those reads: one for a run of consecutive reads of one file")

#define KGC__STAT_FIELD(type, name, what) type name;
#define KGC__STAT_ARRAY(type, name, n, what) type name[n];
struct kgc_stats {
	KGC_STATS_FIELDS(KGC__STAT_FIELD, KGC__STAT_ARRAY)
};
#undef KGC__STAT_FIELD
#undef KGC__STAT_ARRAY

/*
 * Copies min(size, sizeof(struct kgc_stats)) bytes and zeroes the rest of a
 * larger struct: a program built against an older or newer kgc.h passes its
 * own sizeof and gets every field both know. -EINVAL if size is 0.
 */
int kgc_stats_get(kgc_heap *heap, struct kgc_stats *out, size_t size);
/* Human-readable summary to a FILE* (void * to avoid <stdio.h>). */
void kgc_stats_print(kgc_heap *heap, void *file);

/* --------------------------------------------------------------- heap walk */

/*
 * Heap walk (kgc_heap_walk.3): at a safepoint of its own (every other
 * thread stopped), first a full collection, then fn once for every object
 * of the heap, in address order: after the collection those are exactly
 * the objects reachable from roots (frames, handles, critical and I/O
 * arrays; weak referents and ephemeron values that survived it). With
 * KGC_WALK_NO_COLLECT, no collection: every allocated object not yet
 * known dead, garbage included (cheap, but a garbage object's references
 * may dangle). fn may read the object and call kgc_walk_refs; it must not
 * allocate or call any other kgc function (they fail with -EPERM; checked
 * mode aborts), nor store into the heap, nor wait for another attached
 * thread. A positive return stops the walk and is returned.
 * Managed state; 0, a positive value from fn, or -EINVAL / -EPERM.
 */
enum kgc_walk_flags {
	KGC_WALK_NO_COLLECT = 1,	/* walk what is there, garbage included */
};
struct kgc_walk_object {
	uint32_t size;			/* sizeof(struct kgc_walk_object) of the library */
	kgc_type_id type;
	kgc_obj obj;
	size_t bytes;			/* the object's size, header included */
	uint32_t region;		/* index of its region */
	uint32_t reserved;
};
typedef int (*kgc_walk_fn)(const struct kgc_walk_object *o, void *ctx);
int kgc_heap_walk(kgc_thread *t, unsigned flags, kgc_walk_fn fn, void *ctx);
/* From a kgc_heap_walk callback, for the object it was given: fn(ref, ctx)
 * for each reference the object holds (layout map, reference array or scan
 * function; NULL and tagged immediates skipped). 0, or -EINVAL outside a
 * walk callback or for another object. */
int kgc_walk_refs(const struct kgc_walk_object *o, void (*fn)(kgc_obj ref, void *ctx), void *ctx);

/* A histogram by type, like jmap -histo: rows sorted by bytes (then count,
 * then type id) descending; names stay valid while the heap lives. */
struct kgc_histogram_row {
	kgc_type_id type;
	uint32_t reserved;
	uint64_t count, bytes;
	const char *name;
};
struct kgc_histogram {
	uint32_t size;			/* the caller's sizeof(struct kgc_histogram) */
	uint32_t nrows;
	uint64_t count, bytes;		/* totals */
	struct kgc_histogram_row *rows;	/* kgc_histogram_free */
	uint64_t reserved[2];		/* zeroed by the library */
};
/* flags as kgc_heap_walk's. 0, -EINVAL (bad size), -EPERM, -ENOMEM. */
int kgc_heap_histogram(kgc_thread *t, unsigned flags, struct kgc_histogram *out);
void kgc_histogram_free(struct kgc_histogram *hg);
/* jmap -histo's table to a FILE* (void *): at most max_rows rows (0: all)
 * and a total line. 0 or -EINVAL. */
int kgc_histogram_print(const struct kgc_histogram *hg, unsigned max_rows, void *file);

#ifdef __cplusplus
}
#endif

#endif /* KGC_H */
