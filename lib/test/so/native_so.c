/* SPDX-License-Identifier: MIT */
/*
 * Linked against the shared libkgc-native and libkgc (test/check_deps.sh):
 * registers a regular and a critical native, calls them through
 * kgc_native_call and a prepared entry, and destroys the heap without
 * kgc_native_heap_release (the heap-destroy hook frees the registry).
 */
#include <stdio.h>
#include <stdlib.h>
#include <kgc_native.h>

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: %s (%s)\n", __FILE__, __LINE__, \
					#c, kgc_last_error()); exit(1); } } while (0)

static int32_t n_add(kgc_env *env, kgc_jclass c, int32_t a, int32_t b)
{
	return a + b;
}

static int32_t n_sum(int32_t len, const int32_t *p)
{
	int32_t s = 0;

	for (int32_t i = 0; i < len; i++)
		s += p[i];
	return s;
}

int main(void)
{
	struct kgc_native_method tab[] = {
		{ "add", "(II)I", (void *)n_add, KGC_NATIVE_STATIC },
		{ "sum", "([I)I", (void *)n_sum, KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL },
	};
	union kgc_value a[2], r;
	union kgc_native_entry e;
	struct kgc_options o;
	kgc_method *add, *sum;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[1];
	struct kgc_frame f;
	int32_t v = 0;
	int rc;

	CHECK(kgc_options_init(&o) == 0);
	o.max_heap = 64u << 20;
	rc = kgc_heap_create(&o, &h);
	if (rc) {
		printf("no heap backend (%d): skipped\n", rc);
		return 0;
	}
	CHECK(kgc_thread_attach(h, "main", &t) == 0);
	CHECK(kgc_native_register(h, "kgc/test/So", tab, 2) == 0);
	CHECK(kgc_native_method_find(h, "kgc/test/So", "add", "(II)I", KGC_NATIVE_STATIC, &add) == 0);
	CHECK(kgc_native_method_find(h, "kgc/test/So", "sum", "([I)I",
				     KGC_NATIVE_STATIC | KGC_NATIVE_CRITICAL, &sum) == 0);
	a[0].i = 40;
	a[1].i = 2;
	CHECK(kgc_native_call(t, add, NULL, a, &r) == 0 && r.i == 42);

	kgc_frame_push(t, &f, slots, 1, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 16);
	CHECK(slots[0]);
	for (int i = 0; i < 16; i++)
		((int32_t *)kgc_array_data(slots[0]))[i] = i;
	CHECK(kgc_native_entry(sum, KGC_NATIVE_SHAPE_L_I, &e) == 0);
	CHECK(e.l_i(t, sum, slots[0], &v) == 0 && v == 120);
	a[0].l = slots[0];
	CHECK(kgc_native_call(t, sum, NULL, a, &r) == 0 && r.i == 120);
	CHECK(kgc_frame_pop(t, &f) == 0);

	CHECK(kgc_thread_detach(t) == 0);
	CHECK(kgc_heap_destroy(h) == 0);
	puts("ok");
	return 0;
}
