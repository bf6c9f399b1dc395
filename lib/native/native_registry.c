/* SPDX-License-Identifier: MIT */
/*
 * native_registry.c - per-heap registry of native methods: owner classes,
 * methods (hashed by owner/name/descriptor), RegisterNatives-style binding,
 * lazy lookup of JNI-mangled symbols with dlsym, loaded libraries.
 *
 * The registry of a heap is the bridge's data in the heap's extension slot
 * (kgc_ext.h, kgcn_ext): created on first use, freed by
 * kgc_native_heap_release or, through kgcn_ext's heap_destroy hook, by
 * kgc_heap_destroy. Touched only by register/find/load/release, never by
 * calls. Methods live until then, so a kgc_method * stays valid across
 * unregistration; its binding (fn) is the only field that changes after
 * creation and is read/written atomically.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "native_internal.h"

static void registry_free(struct native_registry *r);

static void kgci_ext_heap_destroy(kgc_heap *heap, void *data)
{
	registry_free(data);
}

/* The registry's extension: heap data only (a thread's pending exception
 * is native_exc.c's own extension). */
static const struct kgc_ext kgcn_ext = {
	.name = "libkgc-native",
	.heap_destroy = kgci_ext_heap_destroy,
};

static int method_link(struct kgc_method *m);

static unsigned nregs;	/* registries alive (tests) */

/* heap's registry (the bridge's data in the heap's extension slot). */
static struct native_registry *registry_get(kgc_heap *heap, bool create)
{
	struct native_registry *r = kgc_ext_heap_get(heap, &kgcn_ext), *cur;

	if (r || !create)
		return r;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->heap = heap;
	r->checked = kgc_ext_heap_checked(heap);
	pthread_mutex_init(&r->lock, NULL);
	r->libs_tail = &r->libs;
	r->link = method_link;
	__atomic_fetch_add(&nregs, 1, __ATOMIC_RELAXED);
	cur = kgc_ext_heap_install(heap, &kgcn_ext, r);
	if (cur != r)		/* another thread's first, or no free slot */
		registry_free(r);
	return cur;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull;
}

static uint64_t method_hash(const char *owner, const char *name, const char *desc)
{
	return hash_str(hash_str(hash_str(0xcbf29ce484222325ull, owner), name), desc);
}

static struct kgc_native_class *class_get(struct native_registry *r, const char *name, bool create)
{
	struct kgc_native_class *c;

	for (c = r->classes; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	if (!create)
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strdup(name))) {
		free(c);
		return NULL;
	}
	c->reg = r;
	c->next = r->classes;
	r->classes = c;
	return c;
}

static struct kgc_method *method_lookup(struct native_registry *r, const char *owner,
					const char *name, const char *desc)
{
	struct kgc_method *m;

	if (!r->nbuckets)
		return NULL;
	m = r->buckets[method_hash(owner, name, desc) & (r->nbuckets - 1)];
	for (; m; m = m->hnext)
		if (!strcmp(m->name, name) && !strcmp(m->desc, desc) &&
		    !strcmp(m->owner->name, owner))
			return m;
	return NULL;
}

static int method_insert(struct native_registry *r, struct kgc_method *m)
{
	size_t b;

	if (r->nmethods + 1 > r->nbuckets / 2 * 1) {
		size_t nb = r->nbuckets ? r->nbuckets * 2 : 64;
		struct kgc_method **nt = calloc(nb, sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		for (size_t i = 0; i < r->nbuckets; i++) {
			struct kgc_method *x = r->buckets[i], *nx;

			for (; x; x = nx) {
				nx = x->hnext;
				b = method_hash(x->owner->name, x->name, x->desc) & (nb - 1);
				x->hnext = nt[b];
				nt[b] = x;
			}
		}
		free(r->buckets);
		r->buckets = nt;
		r->nbuckets = nb;
	}
	b = method_hash(m->owner->name, m->name, m->desc) & (r->nbuckets - 1);
	m->hnext = r->buckets[b];
	r->buckets[b] = m;
	r->nmethods++;
	return 0;
}

static void method_free(struct kgc_method *m)
{
	if (!m)
		return;
	kgcn_method_unprepare(m);
	kgcn_sig_free(&m->sig);
	free(m->name);
	free(m->desc);
	free(m);
}

static const char *flag_str(uint32_t f)
{
	if (f & KGC_NATIVE_CRITICAL)
		return "critical";
	return (f & KGC_NATIVE_STATIC) ? "static" : "instance";
}

static uint32_t norm_flags(uint32_t f)
{
	/* critical implies static: keep the bit so "critical non-static" is an error */
	return f & (KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL);
}

/*
 * Parses and prepares a new method. On failure sets kgc_last_error with the
 * method named and returns -errno.
 */
static int method_new(struct kgc_native_class *c, const char *name, const char *desc,
		      uint32_t flags, struct kgc_method **out)
{
	struct kgc_method *m;
	char err[256];
	int rc;

	*out = NULL;
	if (!name || !*name) {
		kgcn_error("native %s: method without a name", c->name);
		return -EINVAL;
	}
	if (!desc) {
		kgcn_error("native %s.%s: no signature", c->name, name);
		return -EINVAL;
	}
	if (flags & ~(KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL)) {
		kgcn_error("native %s.%s%s: unknown flags %#x", c->name, name, desc, flags);
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		goto nomem;
	m->owner = c;
	m->flags = flags;
	m->name = strdup(name);
	m->desc = strdup(desc);
	if (!m->name || !m->desc)
		goto nomem;
	rc = kgcn_sig_parse(desc, &m->sig, err, sizeof(err));
	if (!rc)
		rc = kgcn_method_prepare(m, err, sizeof(err));
	if (rc) {
		kgcn_error("native %s.%s%s: %s", c->name, name, desc, err);
		method_free(m);
		return rc;
	}
	*out = m;
	return 0;
nomem:
	method_free(m);
	kgcn_error("native %s.%s: out of memory", c->name, name);
	return -ENOMEM;
}

/*
 * kgc_native_register's first pass (r->lock held): every entry checked
 * (duplicates in the table or the registry, flags, function pointer) and
 * its method found (target[i]) or created unbound (fresh[i] = target[i]).
 * Nothing is bound; 0 or -errno with the reason set.
 */
static int register_validate(struct native_registry *r, struct kgc_native_class *c,
			     const char *owner, const struct kgc_native_method *table, size_t n,
			     struct kgc_method **fresh, struct kgc_method **target)
{
	int rc;

	for (size_t i = 0; i < n; i++) {
		const struct kgc_native_method *e = &table[i];
		uint32_t fl = norm_flags(e->flags);
		struct kgc_method *m;

		if (e->name && e->signature) {
			for (size_t k = 0; k < i; k++)
				if (table[k].name && table[k].signature &&
				    !strcmp(table[k].name, e->name) &&
				    !strcmp(table[k].signature, e->signature)) {
					kgcn_error("native %s.%s%s: duplicate registration "
						     "(entries %zu and %zu of the table)",
						     owner, e->name, e->signature, k, i);
					return -EEXIST;
				}
		}
		if (e->flags & ~(KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL)) {
			kgcn_error("native %s.%s%s: unknown flags %#x", owner,
				     e->name ? e->name : "?", e->signature ? e->signature : "",
				     e->flags);
			return -EINVAL;
		}
		if (!e->fnptr) {
			kgcn_error("native %s.%s%s: NULL function pointer", owner,
				     e->name ? e->name : "?", e->signature ? e->signature : "");
			return -EINVAL;
		}
		m = (e->name && e->signature) ? method_lookup(r, owner, e->name, e->signature) : NULL;
		if (m) {
			if (m->registered) {
				kgcn_error("native %s.%s%s: duplicate registration "
					     "(already registered)", owner, e->name, e->signature);
				return -EEXIST;
			}
			if (m->flags != fl) {
				kgcn_error("native %s.%s%s: registered as %s but known as %s",
					     owner, e->name, e->signature, flag_str(fl),
					     flag_str(m->flags));
				return -EINVAL;
			}
			target[i] = m;
			continue;
		}
		rc = method_new(c, e->name, e->signature, fl, &fresh[i]);
		if (rc)
			return rc;
		target[i] = fresh[i];
	}
	return 0;
}

KGC_API int kgc_native_register(kgc_heap *heap, const char *owner,
			const struct kgc_native_method *table, size_t n)
{
	struct native_registry *r;
	struct kgc_native_class *c;
	struct kgc_method **fresh = NULL, **target = NULL;
	int rc = 0;

	if (!heap || !owner || !*owner || (n && !table)) {
		kgcn_error("kgc_native_register: %s", !heap ? "no heap" :
			     (!owner || !*owner) ? "no owner class" : "no table");
		return -EINVAL;
	}
	r = registry_get(heap, true);
	if (!r) {
		kgcn_error("kgc_native_register: out of memory");
		return -ENOMEM;
	}
	fresh = calloc(n + 1, sizeof(*fresh));
	target = calloc(n + 1, sizeof(*target));
	if (!fresh || !target) {
		free(fresh);
		free(target);
		kgcn_error("kgc_native_register: out of memory");
		return -ENOMEM;
	}
	pthread_mutex_lock(&r->lock);
	c = class_get(r, owner, true);
	if (!c) {
		rc = -ENOMEM;
		kgcn_error("kgc_native_register: out of memory");
		goto out;
	}
	/* Pass 1: validate everything, bind nothing. */
	rc = register_validate(r, c, owner, table, n, fresh, target);
	if (rc)
		goto out;
	/* Pass 2: insert and bind. */
	for (size_t i = 0; i < n; i++) {
		if (fresh[i]) {
			rc = method_insert(r, fresh[i]);
			if (rc) {
				/* only possible failure: hash growth; undo nothing bound yet */
				kgcn_error("kgc_native_register: out of memory");
				goto out;
			}
			fresh[i] = NULL;
		}
	}
	for (size_t i = 0; i < n; i++) {
		target[i]->registered = true;
		__atomic_store_n(&target[i]->fn, table[i].fnptr, __ATOMIC_RELEASE);
	}
out:
	pthread_mutex_unlock(&r->lock);
	for (size_t i = 0; i < n; i++)
		method_free(fresh[i]);
	free(fresh);
	free(target);
	return rc;
}

KGC_API int kgc_native_unregister(kgc_heap *heap, const char *owner)
{
	struct native_registry *r = heap ? registry_get(heap, false) : NULL;

	if (!heap || !owner) {
		kgcn_error("kgc_native_unregister: no %s", heap ? "owner" : "heap");
		return -EINVAL;
	}
	if (!r)
		return 0;
	pthread_mutex_lock(&r->lock);
	for (size_t b = 0; b < r->nbuckets; b++)
		for (struct kgc_method *m = r->buckets[b]; m; m = m->hnext)
			if (m->registered && !strcmp(m->owner->name, owner)) {
				m->registered = false;
				__atomic_store_n(&m->fn, NULL, __ATOMIC_RELEASE);
			}
	pthread_mutex_unlock(&r->lock);
	return 0;
}

KGC_API int kgc_native_method_find(kgc_heap *heap, const char *owner, const char *name,
			   const char *sig, uint32_t flags, kgc_method **out)
{
	struct native_registry *r;
	struct kgc_native_class *c;
	struct kgc_method *m;
	int rc = 0;

	if (out)
		*out = NULL;
	if (!heap || !owner || !*owner || !name || !sig || !out) {
		kgcn_error("kgc_native_method_find: missing %s", !heap ? "heap" :
			     (!owner || !*owner) ? "owner" : !name ? "name" :
			     !sig ? "signature" : "out");
		return -EINVAL;
	}
	flags = norm_flags(flags);
	r = registry_get(heap, true);
	if (!r) {
		kgcn_error("kgc_native_method_find: out of memory");
		return -ENOMEM;
	}
	pthread_mutex_lock(&r->lock);
	m = method_lookup(r, owner, name, sig);
	if (m) {
		if (m->flags != flags) {
			kgcn_error("native %s.%s%s: looked up as %s but known as %s",
				     owner, name, sig, flag_str(flags), flag_str(m->flags));
			rc = -EINVAL;
		} else {
			*out = m;
		}
		goto out;
	}
	c = class_get(r, owner, true);
	if (!c) {
		kgcn_error("kgc_native_method_find: out of memory");
		rc = -ENOMEM;
		goto out;
	}
	rc = method_new(c, name, sig, flags, &m);
	if (rc)
		goto out;
	rc = method_insert(r, m);
	if (rc) {
		method_free(m);
		kgcn_error("kgc_native_method_find: out of memory");
		goto out;
	}
	*out = m;
out:
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* ------------------------------------------------------------ lazy lookup */

static char *mangled(const char *prefix, struct kgc_method *m, bool long_form)
{
	const char *d = long_form ? m->desc : NULL;
	int n = kgcn_mangle(NULL, 0, prefix, m->owner->name, m->name, d);
	char *s;

	if (n < 0 || !(s = malloc((size_t)n + 1)))
		return NULL;
	kgcn_mangle(s, (size_t)n + 1, prefix, m->owner->name, m->name, d);
	return s;
}

static int method_link(struct kgc_method *m)
{
	struct native_registry *r = m->owner->reg;
	const char *prefix = (m->flags & KGC_NATIVE_CRITICAL) ? "JavaCritical_" : "Java_";
	char *names[2];
	void *fn = NULL;
	int rc = 0;

	if (__atomic_load_n(&m->fn, __ATOMIC_ACQUIRE))
		return 0;
	names[0] = mangled(prefix, m, false);
	names[1] = mangled(prefix, m, true);
	if (!names[0] || !names[1]) {
		kgcn_error("native %s.%s%s: cannot mangle the name (bad UTF-8?)",
			     m->owner->name, m->name, m->desc);
		rc = -EINVAL;
		goto out;
	}
	pthread_mutex_lock(&r->lock);
	/* Short name everywhere first, then the overloaded long name (JNI order). */
	for (int k = 0; k < 2 && !fn; k++) {
		fn = dlsym(RTLD_DEFAULT, names[k]);
		for (struct native_library *l = r->libs; l && !fn; l = l->next)
			fn = dlsym(l->dl, names[k]);
	}
	if (fn) {
		void *expected = NULL;

		/* a concurrent registration wins */
		__atomic_compare_exchange_n(&m->fn, &expected, fn, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	} else {
		unsigned nlib = 0;

		for (struct native_library *l = r->libs; l; l = l->next)
			nlib++;
		kgcn_error("native %s.%s%s: not registered and no symbol %s or %s "
			     "in the process or %u loaded librar%s", m->owner->name,
			     m->name, m->desc, names[0], names[1], nlib, nlib == 1 ? "y" : "ies");
		rc = -ENOENT;
	}
	pthread_mutex_unlock(&r->lock);
out:
	free(names[0]);
	free(names[1]);
	return rc;
}

KGC_API int kgc_native_method_link(kgc_method *m)
{
	if (!m) {
		kgcn_error("kgc_native_method_link: no method");
		return -EINVAL;
	}
	return method_link(m);
}

KGC_API uint64_t kgc_native_method_fingerprint(const kgc_method *m)
{
	return m ? m->sig.fingerprint : 0;
}

KGC_API const char *kgc_native_class_name(kgc_jclass cls)
{
	return cls ? cls->name : NULL;
}

KGC_API int kgc_native_load_library(kgc_heap *heap, const char *path)
{
	struct native_registry *r;
	struct native_library *l;
	void *dl;

	if (!heap || !path) {
		kgcn_error("kgc_native_load_library: no %s", heap ? "path" : "heap");
		return -EINVAL;
	}
	r = registry_get(heap, true);
	if (!r) {
		kgcn_error("kgc_native_load_library: out of memory");
		return -ENOMEM;
	}
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		const char *e = dlerror();

		kgcn_error("kgc_native_load_library: %s", e ? e : path);
		return -ENOENT;
	}
	pthread_mutex_lock(&r->lock);
	for (l = r->libs; l; l = l->next)
		if (l->dl == dl)
			break;
	if (l) {	/* already loaded: keep one reference */
		pthread_mutex_unlock(&r->lock);
		dlclose(dl);
		return 0;
	}
	l = calloc(1, sizeof(*l));
	if (!l || !(l->path = strdup(path))) {
		pthread_mutex_unlock(&r->lock);
		free(l);
		dlclose(dl);
		kgcn_error("kgc_native_load_library: out of memory");
		return -ENOMEM;
	}
	l->dl = dl;
	*r->libs_tail = l;
	r->libs_tail = &l->next;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

KGC_API int kgc_native_set_env_ops(kgc_heap *heap, const struct kgc_native_env_ops *ops,
				   void *ctx)
{
	struct native_registry *r;
	int rc = 0;

	if (!heap || !ops || !ops->enter || !ops->leave) {
		kgcn_error("kgc_native_set_env_ops: NULL %s",
			   !heap ? "heap" : !ops ? "ops" : "enter or leave callback");
		return -EINVAL;
	}
	if (ops->size != sizeof(*ops) || ops->reserved0 || ops->reserved[0] || ops->reserved[1]) {
		kgcn_error("kgc_native_set_env_ops: size %u (want %zu) or reserved fields not zero",
			   ops->size, sizeof(*ops));
		return -EINVAL;
	}
	r = registry_get(heap, true);
	if (!r) {
		kgcn_error("kgc_native_set_env_ops: out of memory");
		return -ENOMEM;
	}
	pthread_mutex_lock(&r->lock);
	if (r->has_env_ops || r->nmethods) {
		kgcn_error("kgc_native_set_env_ops: %s", r->has_env_ops ? "env ops already set"
					: "the heap has native methods already");
		rc = -EBUSY;
	} else {
		r->env_ops = *ops;
		r->env_ctx = ctx;
		r->has_env_ops = true;
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

/* Tests: registries alive (one per heap that used the bridge). */
unsigned kgcn_registry_count(void)
{
	return __atomic_load_n(&nregs, __ATOMIC_RELAXED);
}

static void registry_free(struct native_registry *r)
{
	if (!r)
		return;
	for (size_t b = 0; b < r->nbuckets; b++) {
		struct kgc_method *m = r->buckets[b], *n;

		for (; m; m = n) {
			n = m->hnext;
			method_free(m);
		}
	}
	free(r->buckets);
	while (r->classes) {
		struct kgc_native_class *c = r->classes;

		r->classes = c->next;
		free(c->name);
		free(c);
	}
	while (r->libs) {
		struct native_library *l = r->libs;

		r->libs = l->next;
		dlclose(l->dl);
		free(l->path);
		free(l);
	}
	pthread_mutex_destroy(&r->lock);
	free(r);
	__atomic_fetch_sub(&nregs, 1, __ATOMIC_RELAXED);
}

KGC_API void kgc_native_heap_release(kgc_heap *heap)
{
	if (heap)
		registry_free(kgc_ext_heap_take(heap, &kgcn_ext));
}
