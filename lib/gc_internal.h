/* SPDX-License-Identifier: MIT */
/*
 * gc_internal.h - internals of the collector: the structs and the prototypes
 * called across the layers of lib/ (mutator/, gc/, cycle/, heap/, debug/,
 * support/, os/, io/; each file's job is in ARCHITECTURE.md; the files of one
 * subsystem share a header of their own: gc/young.h, cycle/cm.h, ...). The
 * native bridge in lib/native/ is a separate library, libkgc-native, on kgc.h
 * and kgc_ext.h. Internal names never start with kgc_ (the version script
 * exports kgc_*); each module uses its own kgci_<module>_ prefix.
 */
#ifndef KGC_GC_INTERNAL_H
#define KGC_GC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/resource.h>
#ifdef RUSAGE_THREAD
#define KGCI_RUSAGE_THREAD RUSAGE_THREAD
#else
#define KGCI_RUSAGE_THREAD 1	/* Linux's, without _GNU_SOURCE */
#endif

#include "kgc_api.h"	/* KGC_API, the export macro; before kgc.h (KGC_INLINE*) */
#include <kgc.h>

#define UNUSED __attribute__((unused))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((size_t)(a) - 1))
#define WORD 8

/* ------------------------------------------------------------------ errors */
void kgci_err_set(int err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
_Noreturn void kgci_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern void (*kgci_fatal_before_abort)(const char *msg);	/* error.c: set by hooks.c */
/* Grow a collector work array (doubling from 4096 entries of elem bytes);
 * running out of memory inside a collection is fatal, naming what. */
void *kgci_array_grow(void *p, size_t *cap, size_t elem, const char *what);

/* ----------------------------------------------------------------- objects */
/*
 * Header word:
 *   bits 0-1   tag: 00 normal, 10 evacuation failed (live, stays in place),
 *              11 forwarded (bits 2..63 | 0 = forwardee address)
 *   bits 2-5   age (young collections survived)
 *   bits 6-7   kind: instance / prim array / ref array / filler
 *   bits 8-31  instances: size in words; prim arrays: log2 element size;
 *              filler: 1 = one-word filler, 0 = length word holds bytes
 *   bits 32-55 type id
 *   bits 56-63 the runtime's (kgc_obj_vm_bits_*, vmbits.c): no collector
 *              code reads or changes them; a copy or a slide keeps them
 * The full collection marks in a side bitmap, so headers stay intact.
 */
#define HDR_TAG_MASK	3ull
#define HDR_TAG_FAILED	2ull
#define HDR_TAG_FWD	3ull
#define HDR_AGE_SHIFT	2
#define HDR_AGE_MASK	(0xfull << HDR_AGE_SHIFT)
#define HDR_AGE_MAX	15
#define HDR_KIND_SHIFT	6
#define HDR_INFO_SHIFT	8
#define HDR_INFO_MASK	0xffffffull
#define HDR_TYPE_SHIFT	32
#define HDR_TYPE_MASK	0xffffffull
#define HDR_VM_SHIFT	56

enum obj_kind { KIND_INSTANCE = 0, KIND_PRIM_ARRAY = 1, KIND_REF_ARRAY = 2, KIND_FILLER = 3 };

#define TYPE_FILLER	0xfffff0u	/* the largest ids: 24 bits */
#define INSTANCE_MAX_WORDS HDR_INFO_MASK

static inline uint64_t *obj_hdr(const void *o) { return (uint64_t *)o; }

static inline uint64_t hdr_make(unsigned kind, uint64_t info, uint32_t type)
{
	return ((uint64_t)type << HDR_TYPE_SHIFT) | (info << HDR_INFO_SHIFT) |
	       ((uint64_t)kind << HDR_KIND_SHIFT);
}
static inline unsigned hdr_kind(uint64_t h) { return (h >> HDR_KIND_SHIFT) & 3; }
static inline uint32_t hdr_type(uint64_t h) { return (uint32_t)((h >> HDR_TYPE_SHIFT) & HDR_TYPE_MASK); }
static inline unsigned hdr_age(uint64_t h) { return (h & HDR_AGE_MASK) >> HDR_AGE_SHIFT; }
static inline uint64_t hdr_info(uint64_t h) { return (h >> HDR_INFO_SHIFT) & HDR_INFO_MASK; }
static inline bool hdr_is_fwd(uint64_t h) { return (h & HDR_TAG_MASK) == HDR_TAG_FWD; }
static inline uint64_t hdr_with_age(uint64_t h, unsigned age)
{
	return (h & ~HDR_AGE_MASK) | ((uint64_t)age << HDR_AGE_SHIFT);
}

/* Size in bytes from a (non-forwarded) header and the object. */
static inline size_t obj_size_h(const void *o, uint64_t h)
{
	switch (hdr_kind(h)) {
	case KIND_INSTANCE:
		return hdr_info(h) * WORD;
	case KIND_PRIM_ARRAY:
		return ALIGN_UP(KGC_ARRAY_DATA_OFFSET +
				(((const uint64_t *)o)[1] << hdr_info(h)), WORD);
	case KIND_REF_ARRAY:
		return KGC_ARRAY_DATA_OFFSET + ((const uint64_t *)o)[1] * WORD;
	default:
		return hdr_info(h) == 1 ? WORD : ((const uint64_t *)o)[1];
	}
}
static inline size_t obj_size(const void *o) { return obj_size_h(o, *obj_hdr(o)); }

void kgci_obj_fill(void *start, size_t bytes);	/* filler object(s), heap stays parsable */
size_t kgci_array_bytes(unsigned elem_shift, size_t length, bool *overflow);

/* ------------------------------------------------------------------- types */
struct type_info {
	char *name;
	uint32_t kind;		/* enum obj_kind */
	uint32_t size_words;	/* instances */
	uint32_t elem_shift;	/* prim arrays */
	uint32_t nrefs;
	uint32_t *ref_offsets;	/* byte offsets */
	kgc_scan_fn scan;	/* runtime-defined layout (scan.c): nrefs 0, the
				 * walkers call kgci_scan_refs after the (empty) map */
	void *scan_ctx;
};

struct type_table {
	pthread_mutex_t lock;
	_Atomic(struct type_info **) slots;	/* grows; old arrays kept until destroy */
	_Atomic(uint64_t *) hdrs;	/* per id: a fresh object's header (kgc.h's inline
					 * allocation); grows with slots, old ones kept too */
	_Atomic(uint8_t *) init_refs;	/* per id: leading reference fields at offsets
					 * 8, 16, ... (kgc_alloc_init); grows with hdrs */
	_Atomic uint32_t count;
	uint32_t cap;
	void **retired;		/* old slot and header arrays */
	uint32_t nretired;
};
int kgci_types_init(struct kgc_heap *h);
void kgci_types_destroy(struct kgc_heap *h);
static inline const struct type_info *type_get(struct kgc_heap *h, uint32_t id);
bool kgci_type_valid(struct kgc_heap *h, uint32_t id);
int kgci_types_add(struct kgc_heap *h, struct type_info *ti, uint32_t *id);	/* locks */
/* scan.c: the reference slots of o (type ti, a scanned type) in [lo, hi)
 * holding a reference (is_ref), each to fn; kgci_scan_values hands every
 * reported slot's value (NULL, immediates too) to mark, as cm_obj_refs does */
void kgci_scan_refs(struct kgc_heap *h, const struct type_info *ti, void *o, char *lo, char *hi,
		    void (*fn)(struct kgc_heap *h, kgc_obj *slot, void *ctx), void *ctx);
void kgci_scan_values(struct kgc_heap *h, const struct type_info *ti, void *o,
		      void (*mark)(struct kgc_heap *h, void *ctx, kgc_obj v), void *ctx);
/* callback_guard.c: while a runtime callback runs on this thread (a scan
 * function, a heap walk's visitor), managed kgc calls fail (checked: abort) */
extern __thread const char *kgci_cb_running;
bool kgci_cb_refuse(struct kgc_heap *h, const char *what);

/* ----------------------------------------------------------------- options */
int kgci_log_parse(const char *spec);	/* the LOG_* mask, -1: a selector it does not know */
enum { LOG_GC = 1, LOG_HEAP = 2, LOG_PIN = 4, LOG_SAFEPOINT = 8, LOG_PHASES = 16, LOG_ALL = 0xff };

/* ----------------------------------------------------------------- backend */
struct backend {
	int kind;		/* KGC_BACKEND_KMOD or KGC_BACKEND_ANON (kgci_backend_name) */
	int fd;			/* /dev/kgc, -1 for anon */
	char *reserve;		/* anon: whole reservation (for munmap) */
	size_t reserve_size;
	void *table;		/* kmod: region table mapping */
	size_t table_size;
	uint64_t *pinq_bitmap;	/* kmod: PIN_QUERY scratch */
	bool membarrier;
	bool pin_watch;		/* kmod: the module has KGC_IOC_PIN_WATCH */
	_Atomic bool no_populate;	/* MADV_POPULATE_WRITE refused once: touch only */
	uint64_t uncommit_busy;
	int move_kind;		/* MOVE_*: how kgci_backend_move_regions moves pages (heap creation) */
	uint64_t move_calls;	/* region ranges moved by pages (mremap / REGION_MOVE calls) */
	uint64_t move_copies;	/* region ranges moved by copying: no page move, or it failed */
};
/* kgci_backend_move_regions: anon mremap(MREMAP_DONTUNMAP), the module's
 * KGC_IOC_REGION_MOVE, or memmove + release (the honest fallback) */
enum { MOVE_COPY = 0, MOVE_REMAP, MOVE_IOCTL };
size_t kgci_backend_region_hint(int kind);		/* region size served best, 0: any */
int kgci_backend_open(struct kgc_heap *h, int kind, size_t region_size, uint32_t nregions);
void kgci_backend_close(struct kgc_heap *h);
void *kgci_os_alloc(size_t bytes);			/* zeroed, NORESERVE side tables */
void kgci_os_free(void *p, size_t bytes);
int kgci_backend_commit(struct kgc_heap *h, uint32_t first, uint32_t count);
int kgci_backend_uncommit(struct kgc_heap *h, uint32_t first, uint32_t count);
void kgci_backend_back(struct kgc_heap *h, char *p, size_t len);	/* first touch, in bulk */
/* What policy.c decides to give back (kgci_policy_uncommit_plan): of the
 * committed free regions, all but the first keep (lowest addresses: the
 * ones allocation takes first) that were freed before collection gc and
 * before time ns. */
struct uncommit_plan {
	uint32_t keep;
	uint64_t gc, ns;
};
uint32_t kgci_backend_uncommit_free(struct kgc_heap *h, const struct uncommit_plan *plan);
int kgci_backend_protect(struct kgc_heap *h, void *p, size_t len, bool accessible);
/* At a safepoint, regions unpinned: regions [dst, dst + count) get the bytes
 * of [src, src + count) (the ranges may overlap), src's regions outside dst
 * read zero afterwards and are released. By pages where the backend can
 * (be.move_kind), else copied. 0 or -errno (then nothing is lost: a page
 * move that fails is done by copying). */
int kgci_backend_move_regions(struct kgc_heap *h, uint32_t src, uint32_t dst, uint32_t count);
/* Regions per step of a cheap page move: a move between regions that differ
 * by a multiple of it takes whole page tables (mremap moves a 2 MiB page
 * table in one step where both ends are 2 MiB-aligned: 30-40x fewer steps
 * than a PTE each with small pages); 1 where it makes no difference. */
uint32_t kgci_backend_move_granule(const struct kgc_heap *h);
/* The highest start <= d for an n-region object at src that keeps page
 * tables whole; d itself when the object spans less than two page tables'
 * worth, the granule is 1, or no such start exists. */
uint32_t kgci_backend_move_start(const struct kgc_heap *h, uint32_t src, uint32_t d, uint32_t n);
/* The same by copying only (what policy.c says below its threshold). */
int kgci_backend_copy_regions(struct kgc_heap *h, uint32_t src, uint32_t dst, uint32_t count);
int kgci_backend_kernel_pins(struct kgc_heap *h, uint64_t *bitmap); /* regions pinned by the kernel; 0 if none */
void kgci_os_membarrier(struct kgc_heap *h);
bool kgci_os_membarrier_ok(struct kgc_heap *h);	/* kgci_os_membarrier is the real one */
size_t kgci_os_phys_mem(void);
/* pin-drop watches (kmod): ops as KGC_WATCH_*; wait results */
enum { KPW_ARM = 0, KPW_DISARM = 1, KPW_FIRED = 2 };
enum { KPW_WAKE_FIRED = 1, KPW_WAKE_EVENT = 2 };
int kgci_backend_pin_watch(struct kgc_heap *h, int op, uint64_t *bitmap);	/* nr_armed or -errno */
int kgci_backend_watch_wait(struct kgc_heap *h, int event_fd, int timeout_ms);
int kgci_os_event_open(void);
void kgci_os_event_signal(int fd);
void kgci_os_event_close(int fd);

/* ----------------------------------------------------------------- regions */
enum region_type {
	RT_FREE = 0, RT_EDEN, RT_SURVIVOR, RT_OLD, RT_HUM_START, RT_HUM_CONT, RT_COUNT,
};
enum {
	RF_COMMITTED = 1 << 0,
	RF_CSET = 1 << 1,	/* being evacuated (young) / compacted (full) */
	RF_FAILED = 1 << 2,	/* evacuation failed: objects stay, becomes old */
	RF_GC_ALLOC = 1 << 3,	/* allocated as to-space during this collection */
	RF_PINNED = 1 << 4,	/* pinned at the start of this collection */
	RF_KPINNED = 1 << 5,	/* pinned by the kernel (kmod PIN_QUERY) */
	RF_ZEROED = 1 << 6,	/* never used since mapped/uncommitted: reads as zero;
				 * free and RF_COMMITTED too: backed ahead (pretouch.c) */
	RF_PRETOUCH = 1 << 7,	/* held (as an empty old region) while it is backed (pretouch.c) */
};
/* Why a young pause kept a region's live objects in place (evacfail.c):
 * pinned (user, kernel), no to-space, or the pause ran over its evacuation
 * budget (the rest of the young objects promoted in place: young.c). */
enum fail_cause { FAIL_NONE = 0, FAIL_PINNED, FAIL_KPINNED, FAIL_ALLOC, FAIL_BUDGET, FAIL_N };
/* Eager reclaim of humongous objects (G1's): a humongous primitive array
 * is tracked from its allocation (EAGER_TRACKED: the write barrier cards
 * references into it, young pauses log the cards holding them in its
 * remembered set); a young pause with no cycle running dirties those cards,
 * and if its card scan, the roots and the young objects show no reference,
 * frees it, if unpinned. Untracked (EAGER_NO): reference arrays, the
 * pinned-object space, a remembered set overflowed, after a full GC. */
enum { EAGER_NO = 0, EAGER_TRACKED };

/* remset.c: a mixed candidate's remembered set (cards holding references
 * into it), at most the policy's kgci_policy_remset_max (<= REMSET_MAX_CARDS):
 * a region referenced from more cards costs more to scan than one mixed
 * pause's budget */
#define REMSET_MAX_CARDS (1u << 16)
struct remset {
	uint32_t *v;		/* card index + 1, 0 = empty */
	uint32_t n, cap;	/* cap: 0 or a power of two */
	uint8_t overflow;	/* an add failed: the region is no candidate any more */
};
int kgci_remset_add(struct remset *rs, uint32_t card, uint32_t max);
bool kgci_remset_has(const struct remset *rs, uint32_t card);
void kgci_remset_each(const struct remset *rs, void (*fn)(uint32_t card, void *ctx), void *ctx);
void kgci_remset_clear(struct remset *rs);
struct kgc_heap;
size_t kgci_remset_dirty_cards(struct kgc_heap *h, const struct remset *rs);	/* before a card scan */

struct region {
	char *bottom, *top, *end;
	uint8_t type, flags, fail_cause;
	uint8_t evac_alloc_failed;	/* FAIL_ALLOC or FAIL_BUDGET: an object kept in place, this pause */
	uint8_t retained;	/* old after a pinned evacuation failure: evacuated once unpinned */
	uint8_t candidate;	/* sparse old region to be evacuated by a mixed collection (mixed.c) */
	uint8_t quarantined;	/* free, but PROT_NONE and not handed out for a while (stale.c) */
	uint8_t pinspace;	/* PS_*: in the pinned-object space (pinspace.c) */
	uint8_t eager;		/* humongous start: EAGER_* (young.c's eager reclaim) */
	uint8_t eager_reached;	/* this young pause found a reference to it (workers: atomic) */
	uint32_t fixed_rings;	/* kgc_io rings that registered it as a fixed buffer (h->lock) */
	uint64_t quarantine_gc;	/* the collection that quarantined it */
	uint32_t hum_start;	/* humongous: index of the start region */
	uint32_t hum_count;	/* start region: number of regions */
	size_t live_bytes;	/* computed by collections */
	struct remset rs;	/* a mixed candidate's, or a humongous start's tracked for eager
				 * reclaim and relocation (remset.c), else empty */
	uint64_t free_gc, free_ns;	/* free: since collection gc_id, since kgci_now_ns (policy.c's
					 * uncommit delay) */
};

const char *kgci_region_type_name(int t);
void kgci_region_set_type(struct kgc_heap *h, struct region *r, int type);
long kgci_region_alloc_free(struct kgc_heap *h, int type);	/* index or -1 */
long kgci_region_alloc_contig(struct kgc_heap *h, uint32_t n);	/* index or -1 */
void kgci_region_free(struct kgc_heap *h, struct region *r);
void kgci_region_track_update(struct kgc_heap *h, struct region *r);	/* after type/retained/candidate */

/* A free region's memory is backed - its first touches will not fault: it
 * was used before (not RF_ZEROED), or backed ahead and still zero
 * (RF_ZEROED | RF_COMMITTED, pretouch.c). Fresh: RF_ZEROED alone. */
static inline bool kgci_region_backed(const struct region *r)
{
	return !(r->flags & RF_ZEROED) || (r->flags & RF_COMMITTED);
}

/* ---------------------------------------------------------------- threads */
/* t->pub.state; kgc.h's inline critical fast path uses the same values */
enum thread_state { TS_MANAGED = KGC__TS_MANAGED, TS_NATIVE = KGC__TS_NATIVE, TS_BLOCKED = 2 };

#define CRIT_MAX 64

#define THREAD_MAGIC 0x6b677474u
#define THREAD_DEAD 0xdeadbeefu
#define FRAME_MAGIC KGC__FRAME_MAGIC

/* An extension's data on a heap or thread (ext.c, kgc_ext.h). */
#define EXT_SLOTS 4
struct ext_slot {
	const struct kgc_ext *ext;	/* owner, NULL = free */
	void *data;
};
void kgci_ext_thread_detach(struct kgc_thread *t);	/* kgc_thread_detach, t managed */
void kgci_ext_heap_destroy(struct kgc_heap *h);	/* kgc_heap_destroy, no thread attached */

struct kgc_thread {
	struct kgc_thread_pub pub;	/* must be first */
	kgc_obj cn_arg;			/* array of the running critical native (kgc_ext.h) */
	struct kgc_frame *frames;	/* the frame stack (kgc.h's struct kgc_thread_pub_v5) */
	const uint8_t *type_init_refs;	/* kgc_alloc_init's inline path (alloc.c) */
	uint8_t *card_sum_biased;	/* the inline barrier's card summary (kgc.h, ABI 6) */
	char *tlab_start;		/* the TLAB: [tlab_start, pub.tlab_end), bump at pub.tlab_top */
	struct kgc_heap *heap;
	uint32_t magic;
	uint64_t stale_allocs;		/* KGC_STALE_CHECK allocation count */
	/*
	 * In pub, for kgc.h's inline critical fast path (every access an __atomic
	 * builtin where another thread may read): state, the pin cache (pins of
	 * this thread on one region not yet in the region count: pc_region,
	 * pc_count), the open critical sections (crit_stack = crit, entries
	 * [0, crit_top), NULL = released slot; crit_open live ones), crit_gets,
	 * crit_fast (attached, unchecked, pin mode), membarrier (heap registered
	 * for it), heap_base, native_before_crit.
	 */
	kgc_obj crit[CRIT_MAX];
	uint32_t gclocker_held;
	bool gclocker;			/* heap in KGC_PIN_MODE_GCLOCKER */
	bool pretouch_pending;		/* back a fresh region at the next slow-path entry */
	struct region *pt_region;	/* region being backed (RF_PRETOUCH), pt_next: */
	char *pt_next;			/* where the next slice starts (pretouch.c) */
	uint64_t pace_t;		/* allocation pacing: its start or the end of the last
					 * sleep, 0 while off (alloc.c) */
	struct satb_buf *satb;		/* SATB log (satb.c) */
	uint64_t bytes_allocated;
	struct kgc_thread *next, *prev;
	char name[40];
	struct ext_slot ext[EXT_SLOTS];	/* layered libraries' data (ext.c) */
	bool service;			/* the library's own (kgc-kpinwatch): not the user's to detach */
};

/* struct kgc_thread_pub is compiled into callers of kgc.h's inline functions:
 * its layout is part of the ABI, explicit and checked here (LP64). */
_Static_assert(offsetof(struct kgc_thread, pub) == 0, "pub must be first");
_Static_assert(offsetof(struct kgc_thread_pub, card_biased) == 0, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, poll_word) == 8, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, region_shift) == 16, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, checked) == 20, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, satb_active) == 24, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, tag_mask) == 28, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, heap_base) == 32, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, crit_stack) == 40, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, crit_gets) == 48, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, state) == 56, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, crit_top) == 60, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, crit_open) == 64, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, pc_region) == 68, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, pc_count) == 72, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, crit_fast) == 76, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, membarrier) == 77, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, native_before_crit) == 78, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, tlab_top) == 80, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, tlab_end) == 88, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, type_hdr) == 96, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, ninst) == 104, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, narr) == 108, "kgc_thread_pub layout");
_Static_assert(offsetof(struct kgc_thread_pub, region_track) == 112, "kgc_thread_pub layout");
_Static_assert(sizeof(struct kgc_thread_pub) == 120, "kgc_thread_pub layout");
/* ABI 5: appended, ABI 4's offsets unchanged (KGCI_ABI_OLDEST) */
_Static_assert(offsetof(struct kgc_thread, cn_arg) == offsetof(struct kgc_thread_pub_v5, ext_cn_arg) &&
	       offsetof(struct kgc_thread_pub_v5, ext_cn_arg) == 120, "kgc_thread_pub_v5 layout");
_Static_assert(offsetof(struct kgc_thread, frames) == offsetof(struct kgc_thread_pub_v5, frames) &&
	       offsetof(struct kgc_thread_pub_v5, frames) == 128, "kgc_thread_pub_v5 layout");
_Static_assert(offsetof(struct kgc_thread, type_init_refs) == offsetof(struct kgc_thread_pub_v5, type_init_refs) &&
	       offsetof(struct kgc_thread_pub_v5, type_init_refs) == 136, "kgc_thread_pub_v5 layout");
_Static_assert(sizeof(struct kgc_thread_pub_v5) == 144, "kgc_thread_pub_v5 layout");
/* ABI 6: appended */
_Static_assert(offsetof(struct kgc_thread, card_sum_biased) == offsetof(struct kgc_thread_pub_v6, card_sum_biased) &&
	       offsetof(struct kgc_thread_pub_v6, card_sum_biased) == 144, "kgc_thread_pub_v6 layout");
/* The oldest KGC_ABI_VERSION whose fields this library keeps at the same
 * offsets: kgc_thread_attach accepts [KGCI_ABI_OLDEST, KGC_ABI_VERSION]. */
#define KGCI_ABI_OLDEST 4
_Static_assert(HDR_VM_SHIFT + KGC_VM_BITS == 64 && HDR_TYPE_SHIFT + 24 == HDR_VM_SHIFT, "header layout");
/* kgc.h's inline kgc_obj_type reads the type id (ABI) */
_Static_assert(KGC__HDR_TYPE_SHIFT == HDR_TYPE_SHIFT && KGC__HDR_TYPE_MASK == HDR_TYPE_MASK, "header layout");
/* the header's copy of the object header test (crit_is_prim_array) */
_Static_assert(KGC__HDR_PRIM_MASK == (HDR_TAG_MASK | (3ull << HDR_KIND_SHIFT)) &&
	       KGC__HDR_PRIM_ARRAY == ((uint64_t)KIND_PRIM_ARRAY << HDR_KIND_SHIFT),
	       "kgc.h's primitive-array header test");

/* ------------------------------------------------------------------ handles */
struct kgc_handle_cell { kgc_obj obj; };
#define HANDLE_BLOCK 256
struct handle_block {
	struct handle_block *next;
	struct kgc_handle_cell cells[HANDLE_BLOCK];
};
#define HANDLE_FREE_TAG ((uintptr_t)1)

/* --------------------------------------------------------------------- heap */
/* The steps of a young pause, timed for the gc+phases log line: collect.c's
 * (pins, kernel pins, the cycle's step, verify, policy) around young.c's. */
enum { YP_PINS, YP_CSET, YP_EVACUATE, YP_WEAK, YP_REGIONS, YP_RECORD, YP_KPIN, YP_CYCLE, YP_VERIFY,
       YP_POLICY, YP_N };

/*
 * What one young collection did, recorded by young.c (the workers' part)
 * and the driver, collect.c (the pause's), handed to policy.c's cost model
 * (kgci_policy_young_pause). CPU times come from each thread's own clock.
 */
struct young_facts {
	uint64_t wall_ns;		/* the whole pause */
	uint64_t phase_ns[YP_N];	/* wall time of each step (YP_*; kgci_phase_lap) */
	uint64_t cpu_ns;		/* the pausing thread's CPU, its worker share included */
	uint64_t cards_cpu_ns;		/* all workers: phase A, dirty card scanning */
	uint64_t evac_cpu_ns;		/* all workers: phase B, roots, slots, copying */
	uint64_t w0_cpu_ns;		/* of those two, the pausing thread's (worker 0) */
	uint64_t crit_cpu_ns;		/* the workers' critical path: the longest card scan
					 * plus the longest evacuation (a barrier parts them) */
	size_t dirty_cards;		/* cards scanned */
	size_t refined_cards;		/* cards refined since the last pause (refine.c) */
	size_t refined_slots;		/* their logged slots, read in phase A */
	uint64_t refined_cpu_ns;	/* all workers: phase A, reading them */
	uint64_t faults;		/* all workers' page faults (to-space never backed) */
	size_t slots, slots_taken;	/* old->young slots found; processed by another worker */
	size_t copied, copied_max;	/* bytes copied; the most one worker copied */
	size_t promoted, cset_bytes;
	uint32_t cset_regions;		/* eden and survivor regions collected */
	uint32_t nworkers;
	uint32_t mixed;			/* old regions in the collection set (a mixed pause) */
	size_t kept;			/* live young bytes promoted in place: the pause ran over its budget */
};

/* A mark bitmap, one bit per heap word (markbits.h). */
struct markbits { uint64_t *w; size_t nwords; const char *base; };

/* The full collection's side tables (h->full; full.c). */
struct full_state {
	struct markbits mark;	/* marked objects; the verifier's scratch too (markbits.h) */
	char **block_dest;	/* per 512-byte block: where its first marked object goes */
	kgc_obj **stack;	/* mark stack */
	size_t stack_len, stack_cap;
	uint32_t *hum_dest;	/* per humongous start region: its destination + 1 this
				 * collection, 0: stays (compact_humongous.c) */
	uint32_t hum_planned;	/* objects with a destination */
	/* references into tracked humongous objects the adjust phase saw:
	 * (the object's final start region << 32 | the slot's final card),
	 * their remembered sets once everything moved (full.c) */
	uint64_t *hlog;
	size_t nhlog, hlog_cap;
};
/* compact_humongous.c: the full collection's compaction of humongous
 * objects. plan: after forwarding, busy[i] nonzero for every region the
 * collection leaves occupied by anything but a live movable humongous
 * object (live: marked in h->full.mark); move: after the regions' bookkeeping,
 * the planned moves (page moves by backend.c), the regions following. */
void kgci_humc_plan(struct kgc_heap *h, const uint8_t *busy);
void kgci_humc_move(struct kgc_heap *h);
char *kgci_humc_forwardee(struct kgc_heap *h, const struct region *r, char *p);	/* r: p's, a start */

/* The young pause's own state (h->young). */
struct young_state {
	struct gc_pool *pool;	/* the worker gang's threads (KGC_GC_THREADS > 1; gang.c) */
	long surv_cur, old_cur;	/* to-space allocation regions, -1 none (promote.c) */
	long old_keep;		/* the last pause's old one, to go on filling (promote.c) */
	uint32_t surv_regions;	/* survivor regions taken by this pause */
	uint32_t reloc_need;	/* this pause makes a run of so many free regions (humreloc.c) */
	int64_t test_budget_ns;	/* test hook: the next test_budget_gcs pauses' evacuation budget */
	int test_budget_gcs;
};

/* What policy.c remembers between its questions (h->pol). */
#define STRETCH_SAMPLES 5	/* pauses policy_stretch remembers */
struct policy_state {
	uint32_t young_target;		/* eden regions before a young GC */
	uint32_t young_pause_cap;	/* eden regions the pause goal allows */
	uint32_t soft_regions;		/* heap sizing: regions we try to stay within */
	unsigned tenure;		/* the adaptive tenuring threshold */
	/* the pause cost model (kgci_policy_young_pause): CPU ns per dirty card
	 * scanned, per byte copied (roots and slots included), and the pausing
	 * thread's serial part ~ fixed + per region; survival = copied / cset
	 * bytes; cards = dirty cards per pause; copy_share = the share of the
	 * copying the busiest worker did (1/n: balanced). Running averages. */
	double card_ns, byte_ns;		/* 0: not measured yet */
	double copy_share;			/* 0: not measured yet */
	double serial_fixed, serial_region;	/* ns, ns per cset region */
	double sx, sy, sxx, sxy, sn;		/* decayed sums: serial ns over regions */
	double survival, cards;
	double survival_var;			/* the decayed variance of its samples */
	double rslot_ns, rslots;		/* logged slots (refine.c): ns each, per pause */
	double card_work;			/* dirty + refined cards per pause: refinement on? */
	/* CPU availability (policy_stretch): a pause's wall time over its CPU
	 * critical path, the last STRETCH_SAMPLES pauses of 1 ms or more */
	double stretch_s[STRETCH_SAMPLES];
	unsigned nstretch;
	double stretch;			/* their largest, 1..STRETCH_MAX; 0: none yet */
	double gc_share;		/* of wall time in young pauses (running average) */
	uint64_t last_pause_end;	/* kgci_now_ns */
	bool need_full;			/* the last young GC left too little: go full */
	bool hum_retry_failed;		/* the last kgci_policy_hum_retry did not avoid a full GC */
};

/* kgc_io ring counters (h->io_stat, stats io_*) */
enum io_stat { IOS_SUBMITTED, IOS_COMPLETED, IOS_ERRORS, IOS_BYTES, IOS_CANCELS, IOS_FIXED,
	       IOS_PLAIN, IOS_INLINE, IOS_INLINE_CALLS, IOS_COUNT };

/*
 * The pinned-object space (pinspace.c): primitive arrays that never move
 * (kgc_alloc_array_pinned), in old regions (PS_MEMBER, pinned: RF_PINNED
 * at every collection) or humongous objects. Dead objects are reclaimed in
 * place: at remark and after a full collection, runs of them become gaps
 * that later pinned allocations reuse; a unit (a region, or a humongous
 * object's regions) with nothing live leaves the space once no kgc_io ring
 * has it registered as a fixed buffer (PS_LEAVING until then). gen changes
 * whenever a unit joins or leaves: the rings' fixed-buffer tables follow it.
 */
enum { PS_NONE = 0, PS_MEMBER, PS_LEAVING };
struct pinspace {
	uint32_t cur1;		/* bump region + 1, 0 = none (h->lock) */
	bool gaps_ok;		/* no cycle runs: gaps below top may be reused */
	bool cur_zeroed;	/* the bump region came fresh from the OS */
	struct gap *gaps;	/* dead runs of the last reclaim (h->lock) */
	size_t ngaps, gaps_cap;
	uint32_t nunits;	/* units in the space (members and leaving) */
	_Atomic uint64_t gen;
};

/* The mutator side's state, one struct per module (struct kgc_heap holds them). */
struct alloc_state {		/* alloc.c (h->lock but the atomics) */
	long eden_cur;		/* current eden region for TLABs, -1 none */
	bool eden_cur_zeroed;	/* eden_cur came fresh from the OS: no clearing needed */
	uint32_t eden_regions;	/* eden regions handed out since the last GC */
	size_t tlab_size;
	size_t humongous_threshold;
	bool eden_use_reserve;	/* allocation after a full GC: may use the reserve */
	/* wakes the kgc-pretouch service thread (pretouch_thread.c), set by
	 * heap.c; false or NULL: the allocating thread backs the region */
	bool (*pretouch_kick)(struct kgc_heap *h);
	bool eden_new_region;	/* eden_alloc just took a region (mutator may pre-touch) */
	uint64_t alloc_zero_retries;	/* allocations redone: a collection ran while clearing */
	_Atomic unsigned pace_permille;	/* allocation pacing now (kgci_policy_pace), 0: off */
	_Atomic uint64_t pace_stalls, pace_ns;	/* its sleeps (stats: pacing_stall*) */
	_Atomic uint64_t assists, assist_ns, assist_bytes;	/* marking instead (stats: mark_assist*) */
};
struct sp_state {		/* safepoint.c */
	pthread_mutex_t lock;	/* with cond: waiting for a collection to end */
	pthread_cond_t cond;
	_Atomic uint32_t poll_word;
	_Atomic uint64_t gc_count;	/* completed collections */
	_Atomic uint32_t locker_count;	/* GCLocker */
	_Atomic uint32_t locker_needs_gc;
	uint32_t reloc_regions;	/* a GCR_RELOCATE collection's humongous allocation, in regions */
	pthread_cond_t locker_cond;	/* with lock */
	/* the driver's collection (collect.c), set by heap.c, the composition
	 * root: the safepoint runs it without knowing the driver */
	void (*collect)(struct kgc_heap *h, int kind, int reason);
};
struct thread_list {		/* thread.c */
	struct kgc_thread *threads;
	struct kgc_thread *zombies;	/* checked mode: detached threads, kept to diagnose use */
	uint32_t nthreads;
};
struct handle_state {		/* roots.c */
	struct handle_block *hblocks;
	struct kgc_handle_cell *hfree;
};

struct kgc_heap {
	struct kgc_options opt;
	unsigned log_mask;
	struct log_file *log_file;	/* KGC_LOG_FILE sink (log.c), NULL = stderr */
	struct statpub *statpub;	/* KGC_STATS_PUBLISH page (statpub.c), NULL = off */
	struct backend be;
	char *base, *limit;
	size_t region_size;
	uint32_t region_shift;
	uint32_t nregions;
	struct region *regions;
	/* pin counts: anon = own array (stride 1); kmod = region table user_pins */
	_Atomic uint32_t *pin_base;
	uint32_t pin_stride;	/* in uint32 units */
	/* card table (byte per 512 bytes, 0 = dirty) and block offset table */
	uint8_t *cards;
	uint8_t *card_biased;
	/* its summary (kgc.h's ABI 6): a byte per 64 cards, 0 = one may be
	 * dirty; trusted unless a thread of an older ABI ever attached */
	uint8_t *card_sum;
	uint8_t *card_sum_biased;
	_Atomic bool card_sum_off;
	uint8_t *region_track;		/* kgc.h's barrier filter (kgci_region_track_update) */
	size_t ncards;
	uint32_t *bot;		/* per card: byte offset from region bottom of the object covering the card start */
	struct full_state full;	/* full.c's side tables (its bitmap also the verifier's) */
	/* region counts */
	uint32_t count[RT_COUNT];
	uint32_t next_free_hint;
	struct alloc_state alloc;	/* the mutators' allocation (alloc.c) */
	uint32_t tospace_need;	/* to-space regions the last young GC used (the next
				 * one's: kgci_policy_tospace_backed) */
	/* pause model (policy.c): young pause ~ copied bytes x ns_per_byte */
	uint32_t retained_pending;	/* unpinned retained regions the last young GC left */
	struct young_facts last_young;	/* the last young pause's, as collect.c handed them on */
	struct policy_state pol;	/* policy.c's own state: no other file reads it */
	size_t age_bytes[HDR_AGE_MAX + 1];	/* copied to survivor by new age, last young GC */
	/* locks / safepoints */
	pthread_mutex_t lock;		/* regions, threads, handles, stats */
	pthread_mutex_t gc_lock;	/* serializes collections */
	struct sp_state sp;		/* stopping the world, GCLocker (safepoint.c) */
	struct thread_list thr;		/* attached threads (thread.c; h->lock) */
	struct handle_state hd;		/* global handles (roots.c; h->lock) */
	pthread_mutex_t ext_lock;	/* writers of ext (ext.c) */
	struct ext_slot ext[EXT_SLOTS];	/* layered libraries' data, e.g. libkgc-native's registry */
	struct hooks *hooks;		/* the runtime's hooks (hooks.c; h->lock), NULL until the first */
	struct pinh *pinh;		/* pinned handles (pinhandle.c; h->lock), NULL until the first */
	struct weak *weak;		/* weak cells: weak refs, cleaners, hashes (weak.c) */
	uint32_t nquarantine;		/* regions quarantined (stale.c) */
	_Atomic uint64_t cleaners_run;
	/* types */
	struct type_table types;
	/* stats */
	struct kgc_stats st;
	uint64_t gc_id;
	_Atomic uint64_t critical_gets;
	int evac_fail_inject;	/* test hook: fail to-space allocation in the next N young GCs */
	struct young_state young;	/* the young pause's (young.c, gang.c, promote.c) */
	uint64_t *kpin_bits;
	bool kpin_known;	/* the last kgci_pins_compute's kernel pin query succeeded */
	struct kpinwatch *kpw;	/* pin-drop watches (kpinwatch.c), NULL until first armed */
	struct pretouch *pretouch;	/* the kgc-pretouch thread (pretouch.c) */
	struct refine *refine;		/* the kgc-refine thread and its log (refine.c) */
	_Atomic uint64_t kpw_armed, kpw_fired, kpw_gcs;	/* stats: kpin_watch_* */
	/* the concurrent cycle (cmark.c) */
	struct cmark *cm;		/* cm.h */
	uint32_t satb_active;		/* copied to attaching threads */
	size_t chunk_bytes;		/* swept gaps available for promotion */
	/* asynchronous I/O (io_ring.c): the heap's rings, their counters */
	struct kgc_io_ring *io_rings;	/* h->lock; their in-flight arrays are roots */
	_Atomic uint64_t io_stat[IOS_COUNT];
	struct pinspace ps;		/* the pinned-object space (pinspace.c) */
};

static inline const struct type_info *type_get(struct kgc_heap *h, uint32_t id)
{
	struct type_info **s = atomic_load_explicit(&h->types.slots, memory_order_acquire);
	return s[id];
}

/* "kmod" or "anon" (kgc_heap_backend, the stats page) */
static inline const char *kgci_backend_name(const struct kgc_heap *h)
{
	return h->be.kind == KGC_BACKEND_KMOD ? "kmod" : "anon";
}

static inline uint32_t region_index(const struct kgc_heap *h, const void *p)
{
	return (uint32_t)(((const char *)p - h->base) >> h->region_shift);
}
static inline struct region *region_of(const struct kgc_heap *h, const void *p)
{
	return &h->regions[region_index(h, p)];
}
static inline bool in_heap(const struct kgc_heap *h, const void *p)
{
	return (const char *)p >= h->base && (const char *)p < h->limit;
}
/* A reference slot's value v is a reference: not NULL and no tag bit set
 * (kgc_options.tag_mask: tagged immediates are never read through). Every
 * reader of slots asks this, never v != NULL alone. */
static inline bool is_ref(const struct kgc_heap *h, kgc_obj v)
{
	return v && !((uintptr_t)v & h->opt.tag_mask);
}
static inline _Atomic uint32_t *region_pins(struct kgc_heap *h, uint32_t idx)
{
	return h->pin_base + (size_t)idx * h->pin_stride;
}
static inline bool region_is_young(const struct region *r)
{
	return r->type == RT_EDEN || r->type == RT_SURVIVOR;
}

/* ------------------------------------------------------------------ modules */
int kgci_options_from_env(struct kgc_options *o);
void kgci_options_defaults(struct kgc_options *o);
int kgci_options_import(const struct kgc_options *caller, struct kgc_options *o);

void kgci_policy_init(struct kgc_heap *h);
size_t kgci_policy_region_size(size_t max_heap, size_t hint);
size_t kgci_policy_default_heap(void);
void kgci_policy_after_gc(struct kgc_heap *h, bool full);
/* Bytes in old and humongous regions, less the swept gaps promotion may
 * still fill: what the cycle's trigger and schedule measure. */
static inline size_t kgci_old_used(const struct kgc_heap *h)
{
	size_t old = (size_t)(h->count[RT_OLD] + h->count[RT_HUM_START] + h->count[RT_HUM_CONT])
		     << h->region_shift;

	return old > h->chunk_bytes ? old - h->chunk_bytes : 0;
}
void kgci_policy_young_pause(struct kgc_heap *h, const struct young_facts *f);
/* A young pause's evacuation budget: past ns and bytes copied, young
 * objects are promoted in place (young.c); ns 0: none. */
struct evac_budget { uint64_t ns; size_t bytes; };
void kgci_policy_evac_budget(struct kgc_heap *h, struct evac_budget *b);
void kgci_policy_adapt_tenure(struct kgc_heap *h);
unsigned kgci_policy_safepoint_warn_ms(struct kgc_heap *h);
unsigned kgci_policy_gc_threads(struct kgc_heap *h);
bool kgci_policy_pretouch_thread(struct kgc_heap *h);
uint32_t kgci_policy_pretouch_ahead(struct kgc_heap *h);
uint64_t kgci_policy_refine_period_ns(struct kgc_heap *h);	/* 0: no refinement now */
size_t kgci_policy_refine_keep(struct kgc_heap *h);		/* dirty cards left to the pause */
uint64_t kgci_policy_refine_delay_ns(struct kgc_heap *h);	/* none that soon after a pause */
uint32_t kgci_policy_tospace_backed(struct kgc_heap *h);
unsigned kgci_policy_tenure(struct kgc_heap *h);
bool kgci_policy_should_full(struct kgc_heap *h);
/* what an allocation that failed in its safepoint tries next (safepoint.c) */
enum alloc_retry { ALLOC_RETRY_NONE, ALLOC_RETRY_FULL, ALLOC_RETRY_RESERVE };
enum alloc_retry kgci_policy_alloc_retry(struct kgc_heap *h, bool full_ran, bool reserve_tried);
bool kgci_policy_alloc_relocate(struct kgc_heap *h, size_t size, uint32_t *regions);
bool kgci_policy_hum_retry(struct kgc_heap *h);
bool kgci_policy_release_humongous(struct kgc_heap *h, uint32_t nregions);	/* freed dead */		/* a young GC again instead of a full one? */
void kgci_policy_hum_retry_done(struct kgc_heap *h, bool avoided);
bool kgci_policy_eden_available(struct kgc_heap *h);
bool kgci_policy_move_by_pages(struct kgc_heap *h, size_t bytes);	/* else copy */
bool kgci_policy_uncommit_plan(struct kgc_heap *h, struct uncommit_plan *plan);
uint32_t kgci_policy_survivor_limit(struct kgc_heap *h);

void kgci_stats_pause(struct kgc_heap *h, bool full, uint64_t ns);
void kgci_stats_refresh(struct kgc_heap *h);
void kgci_stats_snapshot(struct kgc_heap *h, struct kgc_stats *s);
int kgci_statpub_open(struct kgc_heap *h);	/* KGC_STATS_PUBLISH (statpub.c) */
void kgci_statpub_update(struct kgc_heap *h);
void kgci_statpub_close(struct kgc_heap *h);

void kgci_log_gc(struct kgc_heap *h, const char *what, const char *cause, size_t before,
	    size_t after, uint64_t ns, uint32_t npinned, unsigned fail_mask);
void kgci_log_line(struct kgc_heap *h, unsigned mask, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int kgci_log_open(struct kgc_heap *h, const struct kgc_options *o);	/* KGC_LOG_FILE */
void kgci_log_close(struct kgc_heap *h);

size_t kgci_heap_used_bytes(struct kgc_heap *h);
static inline uint64_t kgci_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The wall time since *t counts for step i of a young pause (gc+phases);
 * *t moves on to now. */
static inline void kgci_phase_lap(struct young_facts *f, int i, uint64_t *t)
{
	uint64_t now = kgci_now_ns();

	f->phase_ns[i] += now - *t;
	*t = now;
}

/* Page faults of the calling thread so far (minor and major): a young
 * pause's workers fault when their to-space was never backed (gc+phases). */
static inline uint64_t kgci_thread_faults(void)
{
	struct rusage ru;

	if (getrusage(KGCI_RUSAGE_THREAD, &ru))
		return 0;
	return (uint64_t)ru.ru_minflt + (uint64_t)ru.ru_majflt;
}

/* CPU time of the calling thread: the pause cost model counts work, not
 * time a worker spent descheduled. */
static inline uint64_t kgci_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
/* CLOCK_REALTIME deadline ms from now (pthread_cond_timedwait) */
static inline void timespec_after_ms(struct timespec *ts, unsigned ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_nsec += (long)ms * 1000000;
	ts->tv_sec += ts->tv_nsec / 1000000000;
	ts->tv_nsec %= 1000000000;
}

int kgci_cards_init(struct kgc_heap *h);
void kgci_cards_clear_region(struct kgc_heap *h, struct region *r);
void kgci_cards_clear_all(struct kgc_heap *h);
static inline uint8_t *card_for(struct kgc_heap *h, const void *p)
{
	return h->card_biased + ((uintptr_t)p >> KGC_CARD_SHIFT);
}
static inline uint32_t card_index(const struct kgc_heap *h, const void *p)
{
	return (uint32_t)(((const char *)p - h->base) >> KGC_CARD_SHIFT);
}
#define CARD_CLEAN 0xff
#define CARD_DIRTY 0
#define CARD_REFINED 0xfe	/* not dirty: its slots are in the refinement log (refine.c) */
#define CARDS_PER_SUM (1u << (KGC_CARD_SUM_SHIFT - KGC_CARD_SHIFT))

/* The card of p dirty, then its summary byte (the inline barrier's order:
 * a sweep that takes the byte, card_next_unclean_sum's SUM_TAKE, then
 * sees the card). */
static inline void kgci_card_dirty_index(struct kgc_heap *h, size_t card)
{
	__atomic_store_n(&h->cards[card], CARD_DIRTY, __ATOMIC_RELAXED);
	if (__atomic_load_n(&h->card_sum[card / CARDS_PER_SUM], __ATOMIC_RELAXED) != CARD_DIRTY)
		__atomic_store_n(&h->card_sum[card / CARDS_PER_SUM], CARD_DIRTY, __ATOMIC_RELEASE);
}
static inline void kgci_card_dirty(struct kgc_heap *h, const void *p)
{
	kgci_card_dirty_index(h, (size_t)(((const char *)p - h->base) >> KGC_CARD_SHIFT));
}

/* Cards of r below its top. */
static inline size_t region_ncards(const struct region *r)
{
	return (size_t)(r->top - r->bottom + (1u << KGC_CARD_SHIFT) - 1) >> KGC_CARD_SHIFT;
}

/* The first of the cards c[i..nc) that is not clean (nc if none), eight
 * clean ones at a time where c[i] is 8-aligned. Atomic loads: mutators and
 * other workers dirty cards meanwhile (c: a region's first card, aligned). */
/* A run of 64 clean cards (one cache line of the table) at c: tested as
 * eight words at once, most of a large old space's table is skipped at a
 * few cycles per 32 KiB of heap. */
static inline bool cards_line_clean(const uint8_t *c)
{
	const uint64_t *q = (const uint64_t *)(const void *)c;
	uint64_t a = ~0ull;

	for (int k = 0; k < 8; k++)
		a &= __atomic_load_n(&q[k], __ATOMIC_RELAXED);
	return a == ~0ull;
}

static inline size_t card_next_unclean(const uint8_t *c, size_t i, size_t nc)
{
	for (; i < nc; i++) {
		if ((i & 63) == 0 && i + 64 <= nc && cards_line_clean(c + i)) {
			i += 63;
			continue;
		}
		if ((i & 7) == 0 && i + 8 <= nc &&
		    __atomic_load_n((const uint64_t *)(const void *)(c + i), __ATOMIC_RELAXED) == ~0ull) {
			i += 7;
			continue;
		}
		if (__atomic_load_n(&c[i], __ATOMIC_RELAXED) != CARD_CLEAN)
			break;
	}
	return i < nc ? i : nc;
}

/*
 * The same with the card table's summary (kgc.h, ABI 6; s: the summary
 * byte of c[0], a region's first card): the cards of a part whose summary
 * byte is clean are not read. How a sweep uses it (struct kgc_heap's
 * card_sum_off: a thread of an older ABI attached, whose barrier does not
 * write it):
 *  - SUM_OFF: every card is read (card_next_unclean);
 *  - SUM_READ: parts with a clean summary are skipped (refinement: a card
 *    dirtied meanwhile is found by the pause);
 *  - SUM_TAKE: the same, and each part's byte is cleaned as the sweep
 *    enters it, with a full fence before its cards are read: a card that
 *    a barrier dirties after that read set the byte again after it was
 *    cleaned (the barrier stores the card, then the byte). A young pause
 *    takes: it cleans every dirty card it reads, or dirties it again
 *    through kgci_card_dirty.
 * i advances from one call to the next (i + 1 after a card returned): a
 * part's byte is looked at when i is at the part's first card.
 */
enum { SUM_OFF, SUM_READ, SUM_TAKE };

static inline int card_sum_mode(struct kgc_heap *h, bool take)
{
	return atomic_load_explicit(&h->card_sum_off, memory_order_relaxed) ? SUM_OFF : take ? SUM_TAKE : SUM_READ;
}

static inline uint8_t *card_sum_for(struct kgc_heap *h, const void *p)
{
	return h->card_sum_biased + ((uintptr_t)p >> KGC_CARD_SUM_SHIFT);
}

static inline size_t card_next_unclean_sum(const uint8_t *c, uint8_t *s, size_t i, size_t nc, int mode)
{
	if (mode == SUM_OFF)
		return card_next_unclean(c, i, nc);
	while (i < nc) {
		size_t j = i / CARDS_PER_SUM, e;

		if (i % CARDS_PER_SUM == 0) {
			if ((j & 7) == 0 && i + 8 * CARDS_PER_SUM <= nc &&
			    __atomic_load_n((const uint64_t *)(const void *)(s + j), __ATOMIC_RELAXED) == ~0ull) {
				i += 8 * CARDS_PER_SUM;
				continue;
			}
			if (__atomic_load_n(&s[j], __ATOMIC_RELAXED) == CARD_CLEAN) {
				i += CARDS_PER_SUM;
				continue;
			}
			if (mode == SUM_TAKE)
				__atomic_exchange_n(&s[j], CARD_CLEAN, __ATOMIC_SEQ_CST);
		}
		e = (j + 1) * CARDS_PER_SUM < nc ? (j + 1) * CARDS_PER_SUM : nc;
		i = card_next_unclean(c, i, e);
		if (i < e)
			return i;
	}
	return nc;
}
void kgci_bot_record(struct kgc_heap *h, struct region *r, char *start, size_t size);
void kgci_bot_rebuild(struct kgc_heap *h, struct region *r);
char *kgci_bot_block_start(struct kgc_heap *h, struct region *r, const char *card_start);

/* thread/safepoint: the state transitions are mutator/thread_state.h's */
#include "mutator/thread_state.h"
void kgci_sp_block(struct kgc_thread *t);	/* safepoint.c */
enum gc_reason { GCR_ALLOC = 0, GCR_EXPLICIT, GCR_HUMONGOUS, GCR_YOUNG_FAILED,
		 GCR_RELOCATE };	/* a young one relocating humongous objects (h->sp.reloc_regions) */
void kgci_collect_run(struct kgc_heap *h, int kind, int reason);	/* collect.c, at a safepoint */
int kgci_sp_collect(struct kgc_thread *t, int kind, int reason, uint64_t epoch);
void kgci_sp_run(struct kgc_thread *t, void (*fn)(struct kgc_heap *h, void *ctx), void *ctx);
int kgci_sp_collect_alloc(struct kgc_thread *t, int kind, int reason, uint64_t epoch,
		     size_t alloc_size, char **out, size_t *zero);
char *kgci_alloc_locked(struct kgc_thread *t, size_t size, size_t *zero);
void kgci_alloc_retire_tlabs(struct kgc_heap *h);	/* every thread's (alloc.c) */
/* thread_state.c: a leaf (checks, transitions) every layer may call */
void kgci_thread_check(struct kgc_thread *t, const char *what);
bool kgci_thread_check_managed(struct kgc_thread *t, const char *what);
kgc_obj kgci_thread_first_critical(struct kgc_thread *t);
void kgci_thread_wait_gc_end(struct kgc_heap *h);

/* roots */
typedef void (*slot_fn)(struct kgc_heap *h, kgc_obj *slot, void *ctx);
void kgci_roots_iterate(struct kgc_heap *h, slot_fn fn, void *ctx);		/* frames + handles */
void kgci_roots_iterate_critical(struct kgc_heap *h, slot_fn fn, void *ctx);	/* open critical arrays (read only) */
/*
 * A pinned root o (what) of owner_kind 'owner': fn gets a copy; fatal if fn
 * moved it. Open critical arrays, the arrays of running critical natives and those of
 * I/O in flight on kgc_io rings are roots (an array reachable only from
 * native code or the kernel must survive). They are pinned, so they never
 * move: fn gets a copy and must not change it.
 */
static inline void kgci_pinned_root(struct kgc_heap *h, const char *owner_kind, const char *owner, kgc_obj o,
		      const char *what, slot_fn fn, void *ctx)
{
	kgc_obj c = o;

	if (!o)
		return;
	fn(h, &c, ctx);
	if (c != o)
		kgci_fatal("%s %p of %s '%s' was moved (region %u not pinned)",
		      what, (void *)o, owner_kind, owner, region_index(h, o));
}

void kgci_io_roots_iterate(struct kgc_heap *h, slot_fn fn, void *ctx);	/* io_roots.c: in-flight arrays */
void kgci_io_stats_refresh(struct kgc_heap *h);				/* io_roots.c: stats io_* */
void kgci_handles_destroy(struct kgc_heap *h);
void kgci_pinh_roots_iterate(struct kgc_heap *h, slot_fn fn, void *ctx);	/* pinhandle.c: pinned roots */
void kgci_pinh_destroy(struct kgc_heap *h);
/* hooks.c: the runtime's hooks */
extern __thread const char *kgci_in_pause_hook;
bool kgci_hook_forbidden_slow(struct kgc_heap *h, const char *what);
/* a kgc call (what) inside a pause hook: checked mode aborts; else true and an error set */
static inline bool kgci_hook_forbidden(struct kgc_heap *h, const char *what)
{
	return __builtin_expect(kgci_in_pause_hook != NULL, 0) && kgci_hook_forbidden_slow(h, what);
}
void kgci_hook_pause(struct kgc_heap *h, unsigned event, int kind, uint64_t ns, const char *what);
bool kgci_hook_alloc_fail(struct kgc_thread *t, size_t bytes, unsigned attempt);	/* true: retry */
void kgci_hook_fatal(const char *msg);
void kgci_hooks_destroy(struct kgc_heap *h);
/* o names a heap object the managed thread t may use: 0, -EPERM, -EINVAL
 * (a message); checked mode aborts unless o is a live object's start */
int kgci_obj_arg_check(struct kgc_thread *t, kgc_obj o, const char *what);
/* object.c: calls fn on every reference slot of object o that holds a reference
 * (is_ref: not NULL, not a tagged immediate); the same for the root
 * iterators. A reader that loads the slot again (a concurrent one: the
 * value may have changed) asks is_ref itself. */
void kgci_obj_iterate_refs(struct kgc_heap *h, kgc_obj o, slot_fn fn, void *ctx);
void kgci_obj_iterate_refs_range(struct kgc_heap *h, kgc_obj o, char *lo, char *hi, slot_fn fn, void *ctx);
/* The same, inline: with a constant fn the call is inlined too (the young
 * pause's card scan: a bucket array's dirty card is 64 slots). */
static inline __attribute__((always_inline)) void
kgci_obj_refs_range_inline(struct kgc_heap *h, kgc_obj o, char *lo, char *hi, slot_fn fn, void *ctx)
{
	/* atomic: during a parallel young GC another worker may CAS the header of
	 * an object kept in place (evacuation failure) while this one scans it */
	uint64_t hd = __atomic_load_n(obj_hdr(o), __ATOMIC_RELAXED);

	switch (hdr_kind(hd)) {
	case KIND_INSTANCE: {
		const struct type_info *ti = type_get(h, hdr_type(hd));

		for (uint32_t i = 0; i < ti->nrefs; i++) {
			kgc_obj *s = (kgc_obj *)((char *)o + ti->ref_offsets[i]);

			if ((char *)s >= lo && (char *)s < hi && is_ref(h, __atomic_load_n(s, __ATOMIC_RELAXED)))
				fn(h, s, ctx);
		}
		if (unlikely(ti->scan != NULL))
			kgci_scan_refs(h, ti, o, lo, hi, fn, ctx);
		break;
	}
	case KIND_REF_ARRAY: {
		kgc_obj *s = (kgc_obj *)kgc_array_data(o), *e = s + kgc_array_length(o);

		if ((char *)s < lo)
			s = (kgc_obj *)lo;
		if ((char *)e > hi)
			e = (kgc_obj *)hi;
		for (; s < e; s++)
			if (is_ref(h, __atomic_load_n(s, __ATOMIC_RELAXED)))
				fn(h, s, ctx);
		break;
	}
	default:
		break;
	}
}

/*
 * Every reference slot holding a reference (is_ref) on the card at cs of old or humongous
 * region r, inline as above: the objects covering [cs, cs + card) found
 * through the block offset table (the young pause's card scan, refine.c).
 * Headers are read atomically: another worker may CAS one meanwhile.
 */
static inline __attribute__((always_inline)) void
kgci_card_refs_inline(struct kgc_heap *h, struct region *r, char *cs, slot_fn fn, void *ctx)
{
	char *ce = cs + (1u << KGC_CARD_SHIFT), *top = r->top;

	if (cs >= top)
		return;
	if (r->type == RT_HUM_START || r->type == RT_HUM_CONT) {
		kgci_obj_refs_range_inline(h, (kgc_obj)h->regions[r->hum_start].bottom, cs, ce, fn, ctx);
		return;
	}
	for (char *p = kgci_bot_block_start(h, r, cs); p < ce && p < top;) {
		size_t sz = obj_size_h(p, __atomic_load_n(obj_hdr(p), __ATOMIC_RELAXED));

		if (p + sz > cs)
			kgci_obj_refs_range_inline(h, (kgc_obj)p, cs, ce, fn, ctx);
		p += sz;
	}
}

/* collections (called at a safepoint with h->lock held) */
void kgci_young_collect(struct kgc_heap *h, uint32_t *npinned, unsigned *fail_mask,
			struct young_facts *facts);
void kgci_young_init(struct kgc_heap *h);
void kgci_young_start(struct kgc_heap *h);	/* starts the worker gang's threads */
void kgci_young_destroy(struct kgc_heap *h);	/* stops the worker gang */
void kgci_full_collect(struct kgc_heap *h, uint32_t *npinned);
int kgci_full_init(struct kgc_heap *h);
void kgci_full_destroy(struct kgc_heap *h);
void kgci_verify_heap(struct kgc_heap *h, const char *when);
/* pins.c (heap): which regions are pinned at this collection */
void kgci_pins_compute(struct kgc_heap *h);	/* sets RF_PINNED / RF_KPINNED */
unsigned kgci_pins_private(struct kgc_heap *h, struct kgc_thread *t, uint32_t idx[2]);
bool kgci_region_pinned_now(struct kgc_heap *h, uint32_t idx);
void kgci_pin_flush_cache(struct kgc_thread *t);	/* critical.c */
void kgci_evac_test_inject_failure(kgc_heap *h, int ngcs);	/* test hook */
void kgci_young_test_budget(kgc_heap *h, int64_t budget_ns, int ngcs);	/* test hook (young.c) */
extern void (*kgci_alloc_test_zero_hook)(struct kgc_heap *h);	/* test hook (alloc.c) */
extern void (*kgci_young_test_batch_hook)(bool own);	/* test hooks (gang.c) */
extern void (*kgci_young_test_drain_hook)(void);
extern void (*kgci_young_test_wake_hook)(uint64_t gen);
uint64_t kgci_gang_test_gen(struct kgc_heap *h);

/* the concurrent cycle (cmark.c, satb.c, sweep.c, mixed.c, cmverify.c; the
 * young pause's side of it: cm_young.h); pause functions with h->lock held */
int kgci_cm_init(struct kgc_heap *h);
void kgci_cm_destroy(struct kgc_heap *h);
void kgci_cm_pause_begin(struct kgc_heap *h);	/* every pause: marker off the heap */
void kgci_cm_pause_end(struct kgc_heap *h);
void kgci_cm_abort(struct kgc_heap *h);		/* full collection */
bool kgci_cm_abortable(struct kgc_heap *h);	/* outside one: not once swept */
bool kgci_cm_finish_swept(struct kgc_heap *h);	/* else: sweep and clean up now */
void kgci_cm_before_young(struct kgc_heap *h);		/* root regions not scanned yet */
const char *kgci_cm_after_young(struct kgc_heap *h);	/* initial mark / remark / cleanup; NULL if none */
bool kgci_cm_marker_busy(struct kgc_heap *h);	/* the marker thread has cycle work */
bool kgci_cm_retained_evac_ok(struct kgc_heap *h);
void kgci_cm_test_hold(struct kgc_heap *h, bool on);		/* test hooks */
const char *kgci_cm_test_state(struct kgc_heap *h);
void kgci_cm_test_remark_ready(struct kgc_heap *h);	/* marking declared done, work left */
size_t kgci_cm_test_bits(struct kgc_heap *h, uint32_t idx);	/* mark bits set in a region */
uint32_t kgci_cm_test_rr_left(struct kgc_heap *h);	/* root regions not scanned yet */
uint64_t kgci_cm_test_marked_bytes(struct kgc_heap *h);	/* live bytes the last remark found */
bool kgci_cm_obj_dead(struct kgc_heap *h, const void *p);	/* swept-to-be garbage (verifier) */
#define CM_CHUNK_MIN 128	/* smallest gap reused for promotion */
struct gap { char *start; size_t size; };	/* free space in an old region (a filler) */
bool kgci_cm_candidates_tracked(struct kgc_heap *h);				/* verifier */
void kgci_cm_thread_detach(struct kgc_thread *t);

/* stale.c: KGC_STALE_CHECK */
int kgci_stale_init(struct kgc_heap *h);
void kgci_stale_destroy(struct kgc_heap *h);
void kgci_stale_quarantine(struct kgc_heap *h, struct region *r);
void kgci_stale_release(struct kgc_heap *h, bool all);
bool kgci_stale_alloc_due(struct kgc_thread *t);	/* a young collection is due */

/* weak.c */
int kgci_weak_init(struct kgc_heap *h);
void kgci_weak_destroy(struct kgc_heap *h);
void kgci_weak_process(struct kgc_heap *h, kgc_obj (*alive)(struct kgc_heap *h, kgc_obj o, void *ctx),
		  void *ctx);
void kgci_weak_iterate(struct kgc_heap *h, slot_fn fn, void *ctx);
void kgci_weak_values(struct kgc_heap *h, slot_fn fn, void *ctx);	/* ephemerons' */
void kgci_weak_ephemerons(struct kgc_heap *h, kgc_obj (*alive)(struct kgc_heap *h, kgc_obj o, void *ctx),
			  slot_fn trace, void (*drain)(struct kgc_heap *h, void *ctx), void *ctx);
void kgci_cm_verify_bits(struct kgc_heap *h, const char *when);	/* bitmap/TAMS invariants */
bool kgci_policy_start_mark(struct kgc_heap *h, bool mixed_pending);
bool kgci_policy_mixed_candidate(struct kgc_heap *h, size_t live);
bool kgci_policy_mixed_worth(struct kgc_heap *h, size_t reclaimable);
size_t kgci_policy_mixed_surplus(struct kgc_heap *h, size_t free_after, uint64_t promoted_period);
void kgci_policy_retained_limits(struct kgc_heap *h, uint32_t *max, size_t *budget);
void kgci_policy_mixed_limits(struct kgc_heap *h, uint32_t ncand_cycle, uint32_t *min, uint32_t *max,
			      double *budget_ns, double *cap_ns);
double kgci_policy_mixed_cost_ns(struct kgc_heap *h, size_t live, size_t cards);	/* CPU */
double kgci_policy_mixed_pause_ns(struct kgc_heap *h, size_t live, size_t cards);	/* stretched */
size_t kgci_policy_mixed_waste(struct kgc_heap *h);
double kgci_policy_mixed_budget_ns(struct kgc_heap *h);	/* old part of a mixed pause */
uint32_t kgci_policy_remset_max(struct kgc_heap *h);	/* cards in a candidate's remembered set */
bool kgci_policy_cycle_urgent(struct kgc_heap *h);
uint64_t kgci_policy_remark_ns(struct kgc_heap *h);	/* how long remark may mark in its pause */
/* A cycle's marking so far (kgci_cm_progress, in a pause): bytes marked
 * against those expected, old space now against its start. */
struct mark_progress {
	bool marking;
	uint64_t marked, expect;
	size_t old0, old_now;
};
void kgci_cm_progress(struct kgc_heap *h, struct mark_progress *mp);
/* an allocating thread marks instead of sleeping (assist.c) */
size_t kgci_cm_assist(struct kgc_heap *h, uint64_t budget_ns, uint64_t *spent_ns);
unsigned kgci_policy_pace(struct kgc_heap *h, bool marking, const struct mark_progress *mp);

/* kpinwatch.c (kmod): after a young collection, h->lock held, at the safepoint */
void kgci_kpinwatch_after_young(struct kgc_heap *h);
void kgci_kpinwatch_destroy(struct kgc_heap *h);	/* heap destroy: stops the thread */
void kgci_kpinwatch_test_off(bool off);	/* test hook: arm nothing, start no thread */
int kgci_thread_attach_service(struct kgc_heap *h, const char *name, struct kgc_thread **out);

/* pinspace.c: the pinned-object space; pause functions with h->lock held */
typedef bool (*ps_live_fn)(struct kgc_heap *h, const void *p, void *ctx);
void kgci_pinspace_reclaim(struct kgc_heap *h, ps_live_fn live, void *ctx);	/* remark, full */
void kgci_pinspace_after_gc(struct kgc_heap *h, bool cycle_idle);	/* every pause's end */
void kgci_pinspace_destroy(struct kgc_heap *h);
void kgci_pinspace_stats_refresh(struct kgc_heap *h);
/* the unit starting at region i: its bytes a ring may register, 0 if none */
size_t kgci_pinspace_unit_bytes(struct kgc_heap *h, uint32_t i);
/* h->lock held: size bytes (at most a region) of a unit, NULL if no room;
 * a humongous object of kgci_alloc_humongous's made a unit (alloc_pinned.c) */
char *kgci_pinspace_alloc(struct kgc_heap *h, size_t size, bool *zeroed);
void kgci_pinspace_adopt(struct kgc_heap *h, char *p);
bool kgci_cm_idle(struct kgc_heap *h);	/* no cycle runs (a pause) */

/* alloc */
/* h->lock held; NULL: no room. *zeroed: every region came fresh from the OS */
char *kgci_alloc_humongous(struct kgc_heap *h, size_t size, bool *zeroed);
void kgci_alloc_retire_tlab(struct kgc_thread *t);
/* refine.c: dirty cards into a log of slots between pauses */
int kgci_refine_init(struct kgc_heap *h);
void kgci_refine_destroy(struct kgc_heap *h);
void kgci_refine_after_pause(struct kgc_heap *h);	/* every pause's end */
kgc_obj **kgci_refine_log(struct kgc_heap *h, size_t *n);	/* young pause: the slots to read */
size_t kgci_refine_cards(struct kgc_heap *h);
void kgci_refine_drop(struct kgc_heap *h);		/* full pause: cards dirty again */
bool kgci_refine_logged(struct kgc_heap *h, kgc_obj *slot);	/* verifier */
void kgci_refine_test_counts(struct kgc_heap *h, uint64_t *cards, uint64_t *slots, uint64_t *passes);

/* pretouch.c: the next pause's to-space backed ahead of time */
int kgci_pretouch_init(struct kgc_heap *h);
void kgci_pretouch_destroy(struct kgc_heap *h);
bool kgci_pretouch_kick(struct kgc_heap *h);	/* h->lock not held; false: back it yourself */
bool kgci_pretouch_slice(struct kgc_thread *t);
void kgci_pretouch_end(struct kgc_thread *t);	/* h->lock held */
uint64_t kgci_pretouch_regions(struct kgc_heap *h);
/* spawn.c: a library thread, signals blocked, named; 0 or a positive error */
int kgci_spawn(pthread_t *th, void *(*fn)(void *), void *arg, const char *name);
/* Pool threads kept off the pausing thread's CPU for a pause (spawn.c). */
struct kgci_steer;
struct kgci_steer *kgci_steer_new(unsigned n);	/* free() it */
void kgci_steer_self(struct kgci_steer *s, unsigned i);
int kgci_steer_away(struct kgci_steer *s, unsigned n);
void kgci_steer_restore(struct kgci_steer *s, unsigned n);
size_t alloc_gc_words(struct kgc_heap *h);

#endif
