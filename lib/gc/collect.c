/* SPDX-License-Identifier: MIT */
/*
 * collect.c - the collection driver: at a safepoint, plans one collection
 * with the policy, runs its pause (young.c, cmark.c's cycle step, full.c),
 * and records what the policy learns from it (pause time, occupancy,
 * pacing). Nothing else decides between a young and a full collection.
 *
 *   young pause   the cycle's root regions left (kgci_cm_before_young) -> pins
 *                 -> kgci_young_collect -> watches on kernel-pinned retained regions
 *                 (kgci_kpinwatch_after_young) -> the cycle's step (kgci_cm_after_young)
 *                 -> the policy records the pause; it may ask for a full one
 *                 (too little room left: once more with no cycle - no_cycle: a marking one
 *                 aborted, a swept one finished - if tracked humongous objects may free
 *                 enough: young_again, before a full one)
 *   relocating    (GCR_RELOCATE, an allocation that still failed: safepoint.c) no_cycle ->
 *                 a young pause that frees dead humongous objects and moves those in a
 *                 humongous allocation's way (h->young.reloc_need: humreloc.c)
 *   full pause    abort the cycle -> pins -> kgci_full_collect
 *   after either  free regions unused for a while go back to the OS (policy plans, backend does);
 *                 concurrent refinement's snapshot for the time to the next pause (refine.c)
 * Each pause is verified before and after with KGC_VERIFY; the stats page
 * (KGC_STATS_PUBLISH, statpub.c) is updated after it. The runtime's pause
 * hooks (hooks.c) run at each pause's start and end, and for the cycle's step.
 */
#include <time.h>
#include "gc_internal.h"

static const char *cause_name(int reason)
{
	switch (reason) {
	case GCR_EXPLICIT: return "Explicit";
	case GCR_HUMONGOUS: return "Humongous Allocation";
	case GCR_YOUNG_FAILED: return "G1 Compaction Pause";
	default: return "Allocation Failure";
	}
}

/* Free regions unused for a while back to the OS: policy.c plans, backend.c does. */
static void uncommit(struct kgc_heap *h)
{
	struct uncommit_plan plan;
	uint32_t n;

	if (!kgci_policy_uncommit_plan(h, &plan))
		return;
	n = kgci_backend_uncommit_free(h, &plan);
	if (n)
		kgci_log_line(h, LOG_HEAP, "uncommitted %u free regions (unused since GC(%llu))", n,
			      (unsigned long long)plan.gc);
}

/* A young pause; true if the policy wants a full collection after it. */
static bool young_pause(struct kgc_heap *h)
{
	uint64_t t0 = kgci_now_ns(), t1, c0, ns, t;
	size_t before;
	uint32_t npinned = 0;
	unsigned fail = 0;
	const char *step;
	struct young_facts f = { 0 };
	struct mark_progress mp;

	h->gc_id++;
	kgci_hook_pause(h, KGC_HOOK_PAUSE_START, KGC_GC_YOUNG, 0, "Pause Young");
	before = kgci_heap_used_bytes(h);
	if (h->opt.verify) {
		t = kgci_now_ns();
		kgci_verify_heap(h, "before young GC");
		kgci_phase_lap(&f, YP_VERIFY, &t);
	}
	kgci_cm_before_young(h);	/* the cycle's root regions the marker left, before they move */
	/* the model's pause: verification is not the collector's cost */
	t1 = t = kgci_now_ns();
	c0 = kgci_thread_cpu_ns();
	kgci_pins_compute(h);
	kgci_phase_lap(&f, YP_PINS, &t);
	f.cset_regions = h->count[RT_EDEN] + h->count[RT_SURVIVOR];
	kgci_young_collect(h, &npinned, &fail, &f);
	t = kgci_now_ns();
	kgci_kpinwatch_after_young(h);	/* kmod: learn when retained regions' kernel pins drop */
	kgci_phase_lap(&f, YP_KPIN, &t);
	f.wall_ns = t - t1;
	f.cpu_ns = kgci_thread_cpu_ns() - c0;
	kgci_policy_young_pause(h, &f);
	h->last_young = f;
	t = kgci_now_ns();
	step = kgci_cm_after_young(h);
	kgci_pinspace_after_gc(h, kgci_cm_idle(h));	/* leaving units freed, gaps reusable */
	kgci_phase_lap(&f, YP_CYCLE, &t);
	if (h->opt.verify) {
		kgci_verify_heap(h, "after young GC");
		kgci_phase_lap(&f, YP_VERIFY, &t);
	}
	kgci_policy_after_gc(h, false);
	uncommit(h);
	kgci_cm_progress(h, &mp);
	atomic_store_explicit(&h->alloc.pace_permille, kgci_policy_pace(h, kgci_cm_marker_busy(h), &mp),
			      memory_order_relaxed);
	kgci_phase_lap(&f, YP_POLICY, &t);
	ns = t - t0;
	kgci_stats_pause(h, false, ns);
	if (step)
		kgci_hook_pause(h, KGC_HOOK_PHASE, KGC_GC_YOUNG, 0, step);
	kgci_hook_pause(h, KGC_HOOK_PAUSE_END, KGC_GC_YOUNG, ns, "Pause Young");
	kgci_log_gc(h, "Pause Young", step ? step : f.mixed ? "Mixed" : "Normal", before,
	       kgci_heap_used_bytes(h), ns, npinned, fail);
	kgci_log_line(h, LOG_HEAP, "young: cpu %.3fms (wall %.3fms), workers: cards %.3fms evac %.3fms",
		      f.cpu_ns / 1e6, f.wall_ns / 1e6, f.cards_cpu_ns / 1e6, f.evac_cpu_ns / 1e6);
	/* where the pause's wall time went, step by step (gc+phases) */
	kgci_log_line(h, LOG_PHASES, "phases: pins %.3fms, cset %.3fms, evacuate %.3fms (workers' cpu: "
		      "cards %.3fms, copy %.3fms, %u worker(s), %llu page faults), weak %.3fms, regions %.3fms, record %.3fms, "
		      "kernel pins %.3fms, cycle step (%s) %.3fms, policy %.3fms, verify %.3fms; pause %.3fms",
		      f.phase_ns[YP_PINS] / 1e6, f.phase_ns[YP_CSET] / 1e6, f.phase_ns[YP_EVACUATE] / 1e6,
		      f.cards_cpu_ns / 1e6, f.evac_cpu_ns / 1e6, f.nworkers, (unsigned long long)f.faults,
		      f.phase_ns[YP_WEAK] / 1e6,
		      f.phase_ns[YP_REGIONS] / 1e6, f.phase_ns[YP_RECORD] / 1e6, f.phase_ns[YP_KPIN] / 1e6,
		      step ? step : "none", f.phase_ns[YP_CYCLE] / 1e6, f.phase_ns[YP_POLICY] / 1e6,
		      f.phase_ns[YP_VERIFY] / 1e6, ns / 1e6);
	return kgci_policy_should_full(h);
}

/* Before a young pause that needs no cycle running: one marking is
 * aborted (as a full pause would), one past remark finished in the pause
 * (its sweep made fillers only the rest of it makes safe). */
static void no_cycle(struct kgc_heap *h)
{
	if (kgci_cm_idle(h))
		return;
	if (kgci_cm_abortable(h))
		kgci_cm_abort(h);
	else
		kgci_cm_finish_swept(h);
}

/*
 * A young pause left too little room: when the policy says the humongous
 * objects tracked for eager reclaim may free enough, a second young pause
 * with no cycle running (one marking is aborted, as a full pause would)
 * frees the dead ones. True if that avoided the full pause.
 */
static bool young_again(struct kgc_heap *h)
{
	bool avoided;

	if (!kgci_policy_hum_retry(h))
		return false;
	kgci_refine_drop(h);	/* the first pause read the log: its slots may have moved since */
	no_cycle(h);
	avoided = !young_pause(h);
	kgci_policy_hum_retry_done(h, avoided);
	return avoided;
}

/* A young pause that relocates humongous objects for an allocation of
 * h->sp.reloc_regions regions (humreloc.c): it needs no cycle running. */
static void relocate_prepare(struct kgc_heap *h)
{
	no_cycle(h);
	h->young.reloc_need = h->sp.reloc_regions;
}

static void full_pause(struct kgc_heap *h, int reason)
{
	uint64_t t0 = kgci_now_ns(), ns;
	size_t before;
	uint32_t npinned = 0;

	h->gc_id++;
	kgci_hook_pause(h, KGC_HOOK_PAUSE_START, KGC_GC_FULL, 0, "Pause Full");
	before = kgci_heap_used_bytes(h);
	if (h->opt.verify)
		kgci_verify_heap(h, "before full GC");
	kgci_refine_drop(h);	/* objects move: the log's slots would be stale */
	kgci_cm_abort(h);
	kgci_pins_compute(h);
	kgci_full_collect(h, &npinned);
	kgci_pinspace_after_gc(h, kgci_cm_idle(h));
	if (h->opt.verify)
		kgci_verify_heap(h, "after full GC");
	kgci_policy_after_gc(h, true);
	uncommit(h);
	atomic_store_explicit(&h->alloc.pace_permille, 0, memory_order_relaxed);
	ns = kgci_now_ns() - t0;
	kgci_stats_pause(h, true, ns);
	kgci_hook_pause(h, KGC_HOOK_PAUSE_END, KGC_GC_FULL, ns, "Pause Full");
	kgci_log_gc(h, "Pause Full", cause_name(reason), before, kgci_heap_used_bytes(h), ns, npinned, 0);
}

/* At the safepoint, h->lock held: one collection of kind (maybe young, then full). */
void kgci_collect_run(struct kgc_heap *h, int kind, int reason)
{
	kgci_stale_release(h, false);	/* KGC_STALE_CHECK: quarantine over */
	kgci_alloc_retire_tlabs(h);
	h->alloc.eden_cur = -1;
	kgci_cm_pause_begin(h);
	if (reason == GCR_RELOCATE)
		relocate_prepare(h);
	if (kind == KGC_GC_YOUNG && young_pause(h) && !young_again(h))
		full_pause(h, GCR_YOUNG_FAILED);
	else if (kind != KGC_GC_YOUNG)
		full_pause(h, reason);
	h->young.reloc_need = 0;
	kgci_refine_after_pause(h);	/* the next log, from a snapshot of this heap (the
					 * marker still off: the cycle's state holds still) */
	kgci_cm_pause_end(h);
	if (h->statpub)
		kgci_statpub_update(h);	/* KGC_STATS_PUBLISH: kgcstat's page */
}
