/* SPDX-License-Identifier: MIT */
/*
 * mt_shadow_refs.h - mt_shadow's modes for reference queues and pinned
 * handles (included by mt_shadow.c after its model and walk).
 *
 * refqueue (F_REFQ): each thread keeps NWK weak references, ephemerons
 * (their values fixnums: the value's tracing is mode ephemeron's) and
 * cleaners with handles on random reachable objects, all attached to its queue,
 * with tag (generation << 8 | slot). At every check the model settles each
 * cell: a referent the walk reached must still be in its cell (its cleaner
 * not run, no entry seen); an unreached one is dead, and after the thread's
 * next full collection (and kgc_cleaners_drain) its cell must read cleared,
 * its cleaner must have run once and the queue must have delivered exactly
 * one entry for it. Every entry drained must be of a live cell of this
 * generation (a cell freed while queued or pending never shows up), of the
 * right kind, already cleared, and its cleaner already run. Cells are freed
 * or cancelled at random (cancel: 1 iff the cleaner ran).
 *
 * pinhandle (F_PINH): each thread holds NPH pinned handles on random
 * reachable objects, created and freed at random; they are roots of the
 * walk, and the object's address must never change while its handle lives
 * (checked at every check, with the collections of every kind mt_shadow
 * runs at random points, KGC_VERIFY on).
 */
enum { NWK = 24, NPH = 8 };

enum { WKK_WEAK, WKK_CLEANER, WKK_EPH };

struct wk {
	void *cell;			/* kgc_weak, kgc_ephemeron or kgc_cleaner; NULL: unused */
	int kind;			/* WKK_* */
	bool cleaner, dead;
	kgc_obj value;			/* WKK_EPH: a fixnum */
	struct mobj *m;			/* the referent's model (not read once dead) */
	uint32_t gen;
	int entries;
	atomic_int ran;
};

struct refs_state {
	kgc_refqueue *q;
	struct wk wk[NWK];
	uint32_t gen;
	kgc_pin_handle ph[NPH];
	struct mobj *mph[NPH];
	kgc_obj aph[NPH];		/* the address it was pinned at */
	uint64_t entries, pins;
};

static struct refs_state RS[MAXTHREADS + 1];

static struct refs_state *rs(struct mut *T)
{
	return &RS[T->idx < 0 ? MAXTHREADS : T->idx];
}

static void refs_init(struct mut *T)
{
	struct refs_state *S = rs(T);

	memset(S, 0, sizeof(*S));
	if ((flags & F_REFQ) && kgc_refqueue_create(heap, &S->q))
		fail(T, "kgc_refqueue_create: %s", kgc_last_error());
}

static void cleaner_fn(void *arg)
{
	atomic_fetch_add((atomic_int *)arg, 1);
}

/* Release slot i (a live cell): entries of it must never come any more. */
static void wk_release(struct mut *T, struct wk *w)
{
	if (w->cleaner) {
		int rc = kgc_cleaner_cancel(T->t, w->cell);

		if (rc != atomic_load(&w->ran))
			fail(T, "kgc_cleaner_cancel returned %d, the cleaner ran %d times", rc, atomic_load(&w->ran));
	} else if (w->kind == WKK_EPH) {
		kgc_ephemeron_free(T->t, w->cell);
	} else {
		kgc_weak_free(T->t, w->cell);
	}
	w->cell = NULL;
	w->m = NULL;
}

/* The referent a weak reference or an ephemeron holds now (NULL: cleared);
 * an ephemeron's value must be its fixnum while it holds its key. */
static kgc_obj wk_get(struct mut *T, struct wk *w)
{
	kgc_obj k, v;
	int rc;

	if (w->kind == WKK_WEAK)
		return kgc_weak_get(T->t, w->cell);
	rc = kgc_ephemeron_get(T->t, w->cell, &k, &v);
	if (rc ? rc != -ENOENT || k || v : v != w->value)
		fail(T, "refqueue: ephemeron: rc %d key %p value %p, stored value %p", rc, (void *)k, (void *)v,
		     (void *)w->value);
	return k;
}

/* Drain the thread's queue; every entry must be a live cell's, once. */
static void refs_drain(struct mut *T)
{
	struct refs_state *S = rs(T);
	struct kgc_ref_event ev;

	while (S->q && kgc_refqueue_poll(S->q, &ev, sizeof(ev)) == 0) {
		struct wk *w = &S->wk[ev.tag & 0xff];

		S->entries++;
		if ((ev.tag & 0xff) >= NWK || !w->cell || w->gen != (uint32_t)(ev.tag >> 8) || ev.ref != w->cell)
			fail(T, "refqueue: entry tag %#llx ref %p of a freed or unknown cell", (unsigned long long)ev.tag,
			     ev.ref);
		if (ev.kind != (w->cleaner ? KGC_REF_CLEANER : w->kind == WKK_EPH ? KGC_REF_EPHEMERON : KGC_REF_WEAK))
			fail(T, "refqueue: entry of slot %d has kind %u", (int)(ev.tag & 0xff), ev.kind);
		if (w->cleaner ? atomic_load(&w->ran) != 1 : wk_get(T, w) != NULL)
			fail(T, "refqueue: slot %d enqueued before %s", (int)(ev.tag & 0xff),
			     w->cleaner ? "its cleaner ran" : "it was cleared");
		if (++w->entries > 1)
			fail(T, "refqueue: slot %d enqueued twice", (int)(ev.tag & 0xff));
	}
}

/* check_all, after the walk of epoch e: settle every cell (see the top). */
static void refs_settle(struct mut *T, uint64_t e, const char *why)
{
	struct refs_state *S = rs(T);

	for (int i = 0; i < NWK; i++) {
		struct wk *w = &S->wk[i];

		if (!w->cell || w->dead)
			continue;
		if (w->m->mark != e) {
			w->dead = true;		/* its model may be freed now: never read again */
			continue;
		}
		if (w->cleaner ? atomic_load(&w->ran) != 0 : wk_get(T, w) != w->m->seen)
			fail(T, "%s: refqueue slot %d: referent id %llu reached at %p, but the %s", why, i,
			     (unsigned long long)w->m->id, (void *)w->m->seen,
			     w->cleaner ? "cleaner ran" : "weak reference differs");
		if (w->entries)
			fail(T, "%s: refqueue slot %d: enqueued while its referent id %llu is reachable", why, i,
			     (unsigned long long)w->m->id);
	}
	refs_drain(T);
}

/* After this thread's full collection: every dead cell cleared, run and enqueued once. */
static void refs_check_cleared(struct mut *T)
{
	struct refs_state *S = rs(T);

	if (!S->q)
		return;
	if (kgc_cleaners_drain(T->t))
		fail(T, "kgc_cleaners_drain failed");
	refs_drain(T);
	for (int i = 0; i < NWK; i++) {
		struct wk *w = &S->wk[i];

		if (!w->cell || !w->dead)
			continue;
		if (w->entries != 1 || (w->cleaner ? atomic_load(&w->ran) != 1 : wk_get(T, w) != NULL))
			fail(T, "refqueue slot %d (%s): its referent died, but after a full GC and a drain: %d entries, "
			     "%s", i, w->cleaner ? "cleaner" : w->kind == WKK_EPH ? "ephemeron" : "weak", w->entries,
			     w->cleaner ? (atomic_load(&w->ran) ? "ran" : "not run") :
			     wk_get(T, w) ? "not cleared" : "cleared");
		wk_release(T, w);
	}
}

/* op_deposit: a referent the rest of the thread does not reach may leave
 * with the closure (another thread may free its model): forget its cell. */
static void refs_forget_unreached(struct mut *T, uint64_t e)
{
	struct refs_state *S = rs(T);

	for (int i = 0; i < NWK; i++)
		if (S->wk[i].cell && !S->wk[i].dead && S->wk[i].m->mark != e) {
			wk_release(T, &S->wk[i]);
			S->wk[i].gen++;
		}
}

static void op_refq(struct mut *T)
{
	struct refs_state *S = rs(T);
	int i = (int)rnd(T, NWK);
	struct wk *w = &S->wk[i];
	struct mobj *m;
	kgc_obj o;

	if (w->cell) {
		/* freed early, maybe cleared and pending or queued already: its
		 * entry must never come (a dead cell's model is not read) */
		if (rnd(T, 4) == 0) {
			wk_release(T, w);
			w->gen++;
		}
		return;
	}
	if (!pick(T, WANT_ANY, &m, &o))
		return;
	w->gen++;
	w->m = m;
	w->dead = false;
	w->entries = 0;
	atomic_store(&w->ran, 0);
	w->kind = (int)rnd(T, 3);
	w->cleaner = w->kind == WKK_CLEANER;
	if (w->cleaner) {
		w->cell = kgc_cleaner_new(T->t, o, cleaner_fn, &w->ran, S->q, (uint64_t)w->gen << 8 | i);
	} else if (w->kind == WKK_EPH) {
		w->value = (kgc_obj)(uintptr_t)(t_rand(&T->rng) << 1 | 1);
		if ((w->cell = kgc_ephemeron_new(T->t, o, w->value)) &&
		    kgc_ephemeron_set_queue(T->t, w->cell, S->q, (uint64_t)w->gen << 8 | i))
			fail(T, "kgc_ephemeron_set_queue: %s", kgc_last_error());
	} else if ((w->cell = kgc_weak_new(T->t, o)) &&
		   kgc_weak_set_queue(T->t, w->cell, S->q, (uint64_t)w->gen << 8 | i)) {
		fail(T, "kgc_weak_set_queue: %s", kgc_last_error());
	}
	if (!w->cell)
		fail(T, "refqueue: new cell: %s", kgc_last_error());
}

/* Pinned handles: roots, whose objects never move. */
static void refs_push_roots(struct mut *T, const char *why)
{
	struct refs_state *S = rs(T);

	for (int i = 0; i < NPH; i++) {
		kgc_obj o;

		if (!S->ph[i])
			continue;
		o = kgc_pin_handle_get(S->ph[i]);
		if (o != S->aph[i])
			fail(T, "%s: pinned handle %d: object id %llu moved from %p to %p", why, i,
			     (unsigned long long)S->mph[i]->id, (void *)S->aph[i], (void *)o);
		root_push(T, S->mph[i], o, "pinned handle", i, why);
	}
}

static void pinh_free(struct mut *T, int i)
{
	struct refs_state *S = rs(T);

	if (kgc_pin_handle_free(T->t, S->ph[i]))
		fail(T, "kgc_pin_handle_free: %s", kgc_last_error());
	S->ph[i] = NULL;
	S->mph[i] = NULL;
}

/* drop_roots: pinned handles are roots too (the thread's budget) */
static void refs_drop_pins(struct mut *T, int keep_one_in)
{
	for (int i = 0; i < NPH; i++)
		if (rs(T)->ph[i] && rnd(T, (uint64_t)keep_one_in) != 0)
			pinh_free(T, i);
}

static void op_pinh(struct mut *T)
{
	struct refs_state *S = rs(T);
	int i = (int)rnd(T, NPH);

	if (S->ph[i]) {
		if (rnd(T, 3) == 0)
			pinh_free(T, i);
		return;
	}
	if (!pick(T, WANT_ANY, &S->mph[i], &S->aph[i]))
		return;
	if (!(S->ph[i] = kgc_pin_handle_new(T->t, S->aph[i])))
		fail(T, "kgc_pin_handle_new: %s", kgc_last_error());
	S->pins++;
}

/* Thread teardown, before its last check: every handle and cell goes. */
static void refs_teardown(struct mut *T)
{
	struct refs_state *S = rs(T);
	int rc;

	for (int i = 0; i < NPH; i++)
		if (S->ph[i])
			pinh_free(T, i);
	if (!S->q)
		return;
	refs_drain(T);
	for (int i = 0; i < NWK; i++)
		if (S->wk[i].cell)
			wk_release(T, &S->wk[i]);
	rc = kgc_refqueue_destroy(S->q);
	if (rc < 0)
		fail(T, "kgc_refqueue_destroy: %d", rc);
	S->q = NULL;
}
