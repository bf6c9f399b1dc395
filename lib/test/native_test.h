/* SPDX-License-Identifier: MIT */
/* Helpers shared by the native-bridge tests (lib/test/native_*.c, mt_native_*.c). */
#ifndef KGC_NATIVE_TEST_H
#define KGC_NATIVE_TEST_H

#include "test.h"
#include "../native/native_internal.h"

static kgc_heap *nt_heap;
static kgc_thread *nt_thread;

static inline void nt_setup(void)
{
	struct kgc_options o;
	int rc;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	if (!getenv("KGC_HEAP_MAX"))
		o.max_heap = 64u << 20;
	rc = kgc_heap_create(&o, &nt_heap);
	T_SKIP_IF(rc == -ENOSYS || rc == -EOPNOTSUPP, "no heap backend");
	T_ASSERT_EQ(rc, 0);
	T_ASSERT_EQ(kgc_thread_attach(nt_heap, "main", &nt_thread), 0);
}

static inline void nt_teardown(void)
{
	kgc_native_heap_release(nt_heap);
	T_ASSERT_EQ(kgc_thread_detach(nt_thread), 0);
	T_ASSERT_EQ(kgc_heap_destroy(nt_heap), 0);
}

/* Registers one method and returns it. */
static inline kgc_method *nt_reg(const char *owner, const char *name, const char *sig,
				 void *fn, uint32_t flags)
{
	struct kgc_native_method e = { name, sig, fn, flags };
	kgc_method *m = NULL;

	/* already registered with this function: reuse */
	if (!kgc_native_method_find(nt_heap, owner, name, sig, flags, &m) && m->registered &&
	    m->fn == fn)
		return m;
	if (kgc_native_register(nt_heap, owner, &e, 1))
		T_FAIL("register %s.%s%s", owner, name, sig);
	T_ASSERT_EQ(kgc_native_method_find(nt_heap, owner, name, sig, flags, &m), 0);
	return m;
}

#define T_ASSERT_STR_HAS(s, sub) do { \
	const char *_s = (s); \
	if (!_s || !strstr(_s, (sub))) T_FAIL("\"%s\" does not contain \"%s\"", _s ? _s : "(null)", (sub)); \
} while (0)

#endif
