/* SPDX-License-Identifier: MIT */
/*
 * kgc_ext.h - the extension hooks of libkgc: what a library layered on the
 * public API (kgc.h) needs from the core and cannot get from kgc.h.
 * libkgc-native (the native-call bridge, kgc_native.h) is the one user today.
 *
 * Internal-but-exported: libkgc exports these names (kgc_ext_*, kgc__*), but
 * they are for layered libraries built with libkgc, not for applications, and
 * may change with the library version.
 *
 * 1. Extension slots. An extension is a static struct kgc_ext (its address
 *    is its identity). A heap and a thread each have KGC_EXT_SLOTS slots that
 *    hold one pointer of extension data per extension. The core calls the
 *    extension's hooks when it tears down what holds data:
 *      thread_detach(t, data)  from kgc_thread_detach(t), for each extension
 *                              with thread data on t; t is still attached and
 *                              managed (the hook may free handles); the slot
 *                              is cleared afterwards.
 *      heap_destroy(h, data)   from kgc_heap_destroy(h), for each extension
 *                              with heap data on h, once no thread is
 *                              attached, before anything is freed.
 *    Hooks may be NULL.
 *
 * 2. The critical-native pin (the collector's cn_arg): while a thread runs a
 *    critical native that takes one primitive array, the array sits in the
 *    thread's cn_arg, a root that pins its region - no pin count, no critical
 *    section. kgc_ext_cn_enter/kgc_ext_cn_exit below set and clear it inline
 *    (plain loads and stores on the thread; the collector reads cn_arg at
 *    each collection, see roots.c and critical.c).
 *
 * 3. Inline native-state transitions (kgc_enter_native/kgc_leave_native
 *    without their argument checks) and a kgc_last_error setter.
 */
#ifndef KGC_EXT_H
#define KGC_EXT_H

#include <kgc.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ slots */

#define KGC_EXT_SLOTS 4		/* extensions per heap (and per thread) */

struct kgc_ext {
	const char *name;
	void (*thread_detach)(kgc_thread *t, void *data);
	void (*heap_destroy)(kgc_heap *h, void *data);
};

/* ext's data on h, or NULL. Lock-free (acquire): safe beside install. */
void *kgc_ext_heap_get(kgc_heap *h, const struct kgc_ext *ext);
/*
 * Installs data as ext's data on h unless some is there already. Returns the
 * data now installed: data, or what another thread installed first (the
 * caller then frees its own). NULL with kgc_last_error if all KGC_EXT_SLOTS
 * slots of h belong to other extensions.
 */
void *kgc_ext_heap_install(kgc_heap *h, const struct kgc_ext *ext, void *data);
/* Removes ext's data from h and returns it (NULL if none): the extension's
 * own early release. No heap_destroy hook runs for it afterwards. */
void *kgc_ext_heap_take(kgc_heap *h, const struct kgc_ext *ext);

/* ext's data on t, or NULL. Thread data is set and read by the thread that
 * runs t (or with t otherwise idle); the detach hook frees it. */
void *kgc_ext_thread_get(kgc_thread *t, const struct kgc_ext *ext);
/* Sets (data NULL: clears) ext's data on t. 0, or -ENOSPC (slots full). */
int kgc_ext_thread_set(kgc_thread *t, const struct kgc_ext *ext, void *data);

/* The heap runs in checked mode (KGC_CHECK). */
int kgc_ext_heap_checked(const kgc_heap *h);

/* Sets this thread's kgc_last_error (printf-style). */
void kgc_ext_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------ native-state transitions */

/* The first bytes of every kgc_thread (the library checks the layout). */
struct kgc_ext_thread_pub {
	struct kgc_thread_pub pub;
	kgc_obj cn_arg;		/* array of the running critical native; read by the collector */
};

#define KGC__EXT_PUB(t) ((struct kgc_ext_thread_pub *)(t))

void kgc__leave_native_slow(kgc_thread *t);	/* blocks while a collection runs */
void kgc__cn_exit_slow(kgc_thread *t);		/* the native left sections open */

/* kgc_enter_native for a thread known managed: one release store. */
static inline __attribute__((always_inline)) void kgc_ext_enter_native(kgc_thread *t)
{
	__atomic_store_n(&KGC__EXT_PUB(t)->pub.state, KGC__TS_NATIVE, __ATOMIC_RELEASE);
}

/* kgc_leave_native after a native call: managed again (blocking while a
 * collection runs); critical sections the native left open keep t in
 * native state, as kgc_leave_native does. */
static inline __attribute__((always_inline)) void kgc_ext_leave_native(kgc_thread *t)
{
	struct kgc_thread_pub *p = &KGC__EXT_PUB(t)->pub;

	if (__builtin_expect(p->crit_open != 0, 0))
		kgc_leave_native(t);
	else if (__builtin_expect(!kgc__to_managed(p), 0))
		kgc__leave_native_slow(t);
}

/* ------------------------------------------------- the critical-native pin */

/*
 * kgc_ext_cn_enter(t, o, &len): t managed, o a non-null object in no root.
 * If the fast path applies (pin mode, unchecked, o an unforwarded primitive
 * array): sets cn_arg, counts a critical get, puts t in native state, stores
 * the length and returns the elements - plain loads and stores only. Else
 * returns NULL and changes nothing (the caller uses kgc_critical_get).
 * cn_arg is set only between enter and exit, that is while the thread runs
 * the native in native state, or blocks in the exit for a collection that
 * started meanwhile: no collection sees it change.
 */
static inline __attribute__((always_inline)) void *
kgc_ext_cn_enter(kgc_thread *t, kgc_obj o, size_t *len)
{
	struct kgc_ext_thread_pub *x = KGC__EXT_PUB(t);
	struct kgc_thread_pub *p = &x->pub;

	if (__builtin_expect(!p->crit_fast ||
			     __atomic_load_n(&p->state, __ATOMIC_RELAXED) != KGC__TS_MANAGED ||
			     (*(const uint64_t *)o & KGC__HDR_PRIM_MASK) != KGC__HDR_PRIM_ARRAY, 0))
		return NULL;
	__atomic_store_n(&x->cn_arg, o, __ATOMIC_RELAXED);
	kgc__crit_count(p);
	*len = kgc_array_length(o);
	__atomic_store_n(&p->state, KGC__TS_NATIVE, __ATOMIC_RELEASE);	/* publishes cn_arg */
	return kgc_array_data(o);
}

/*
 * kgc_ext_cn_exit(t): after a successful kgc_ext_cn_enter, t in native
 * state. Back to managed (blocking while a collection runs: cn_arg still
 * pins the array), then clears cn_arg. Sections the native left open of its
 * own (it keeps t in native state then, as after any native) are the slow
 * path's.
 */
static inline __attribute__((always_inline)) void kgc_ext_cn_exit(kgc_thread *t)
{
	struct kgc_ext_thread_pub *x = KGC__EXT_PUB(t);

	if (__builtin_expect(x->pub.crit_open != 0, 0)) {
		kgc__cn_exit_slow(t);
		return;
	}
	if (__builtin_expect(!kgc__to_managed(&x->pub), 0))
		kgc__leave_native_slow(t);
	__atomic_store_n(&x->cn_arg, (kgc_obj)0, __ATOMIC_RELAXED);
}

#ifdef __cplusplus
}
#endif

#endif /* KGC_EXT_H */
