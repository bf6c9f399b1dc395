/* SPDX-License-Identifier: MIT */
/*
 * VM header bits (kgc_obj_vm_bits_*): the runtime's 8 bits of each header
 * word stay with the object through every move - young evacuation to
 * survivor, promotion, an evacuation failure (objects kept in place, their
 * GC tag cleared again), a full compaction, concurrent cycles with mixed
 * evacuation - on instances, primitive and reference arrays, a humongous
 * array and a pinned-space array; the type and size read through a header
 * whose bits are all set stay right. Three threads racing on one object's
 * bits with CAS increments and set/clear updates while a fourth collects
 * lose no update. Errors: EINVAL (NULL, a tagged immediate, bits out of
 * range, NULL out-pointers), EPERM (native state), EAGAIN with the bits
 * seen (CAS mismatch); checked mode aborts on an interior pointer.
 * Seeded: KGC_TEST_SEED.
 */
#include <pthread.h>
#include <stdlib.h>
#include "tgc.h"

void kgci_evac_test_inject_failure(kgc_heap *h, int ngcs);

enum { N = 3000 };

static kgc_type_id NODE;
static kgc_heap *h;
static kgc_thread *t;
static unsigned char want[N];
static kgc_type_id want_type[N];
static size_t want_size[N];

static uint32_t bits_of(kgc_obj o)
{
	uint32_t b = 0xdead;

	T_ASSERT_EQ(kgc_obj_vm_bits_get(t, o, &b), 0);
	return b;
}

/* Element i of the table: a node, a primitive array, a reference array,
 * now and then a humongous or a pinned-space array. */
static kgc_obj make(long i, unsigned long long *rng)
{
	switch (i % 7) {
	case 0: case 1: case 2:
		return kgc_alloc(t, NODE);
	case 3:
		return kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), t_rand(rng) % 100);
	case 4:
		return kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, t_rand(rng) % 20);
	case 5:
		return i % 700 == 5 ? kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 600000)
				    : kgc_alloc(t, NODE);
	default:
		return i % 500 == 6 ? kgc_alloc_array_pinned(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), 50)
				    : kgc_alloc(t, NODE);
	}
}

static void check(kgc_obj tab, const char *when)
{
	for (long i = 0; i < N; i++) {
		kgc_obj o = kgc_array_get_ref(tab, i);

		if (bits_of(o) != want[i])
			T_FAIL("%s: object %ld (%p): VM bits %#x, set %#x", when, i, (void *)o, bits_of(o), want[i]);
		if (kgc_obj_type(o) != want_type[i] || kgc_obj_size(o) != want_size[i])
			T_FAIL("%s: object %ld: type %u size %zu, was %u %zu", when, i, kgc_obj_type(o),
			       kgc_obj_size(o), want_type[i], want_size[i]);
		if (want_type[i] == NODE && KGC_FIELD(o, N_VALUE, int64_t) != i)
			T_FAIL("%s: node %ld holds %lld", when, i, (long long)KGC_FIELD(o, N_VALUE, int64_t));
	}
}

static void test_moves(unsigned long long *rng)
{
	kgc_obj s[2] = { 0 };
	struct kgc_frame f;
	struct kgc_stats st;
	uint64_t c0;
	int rounds = 0;

	kgc_frame_push(t, &f, s, 2, NULL);
	s[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, N);
	for (long i = 0; i < N; i++) {
		uint32_t old = 0x55;

		s[1] = make(i, rng);
		T_ASSERT(s[1]);
		if (kgc_obj_type(s[1]) == NODE)
			KGC_FIELD(s[1], N_VALUE, int64_t) = i;
		want[i] = i % 5 == 0 ? 0xff : (unsigned char)t_rand(rng);
		T_ASSERT_EQ(bits_of(s[1]), 0);		/* fresh: all clear */
		T_ASSERT_EQ(kgc_obj_vm_bits_update(t, s[1], 0, want[i], &old), 0);
		T_ASSERT_EQ(old, 0);
		want_type[i] = kgc_obj_type(s[1]);
		want_size[i] = kgc_obj_size(s[1]);
		kgc_array_set_ref(t, s[0], i, s[1]);
	}
	check(s[0], "set");
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	check(s[0], "after a young GC (survivor)");
	kgci_evac_test_inject_failure(h, 1);	/* no to-space: kept in place, tags cleared */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT(t_stats(h).evac_fail_alloc > 0);
	check(s[0], "after an evacuation failure");
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	check(s[0], "after promotion");
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	check(s[0], "after a full GC");
	/* half the table replaced: sparse old regions for mixed GCs */
	c0 = t_stats(h).concurrent_cycles;
	while (t_stats(h).concurrent_cycles < c0 + 3 || (t_stats(h).mixed_gcs == 0 && rounds < 400)) {
		T_ASSERT(++rounds < 5000);
		for (long i = rounds % 2; i < N; i += 2) {
			if (t_rand(rng) % 8)
				continue;
			s[1] = make(i, rng);
			if (kgc_obj_type(s[1]) == NODE)
				KGC_FIELD(s[1], N_VALUE, int64_t) = i;
			want[i] = (unsigned char)t_rand(rng);
			T_ASSERT_EQ(kgc_obj_vm_bits_update(t, s[1], 0xff, want[i], NULL), 0);
			want_type[i] = kgc_obj_type(s[1]);
			want_size[i] = kgc_obj_size(s[1]);
			kgc_array_set_ref(t, s[0], i, s[1]);
		}
		t_churn(t, h, NODE, 1);
		if (rounds % 8 == 0) {
			check(s[0], "during concurrent cycles");
			t_nap_native(t, 500);
		}
	}
	check(s[0], "after concurrent cycles");
	st = t_stats(h);
	printf("moves: %llu young (%llu mixed, %llu regions failed), %llu full, %llu cycles: bits kept\n",
	       (unsigned long long)st.young_gcs, (unsigned long long)st.mixed_gcs,
	       (unsigned long long)st.evac_fail_alloc, (unsigned long long)st.full_gcs,
	       (unsigned long long)st.concurrent_cycles);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
}

/* --- racing threads: a 6-bit counter by CAS, bit 6 by set/clear */

enum { RACERS = 3, INCS = 3000 };
static kgc_handle shared;
static int racing;

static void *racer(void *arg)
{
	kgc_thread *rt;
	int id = (int)(intptr_t)arg;

	T_ASSERT_EQ(kgc_thread_attach(h, "racer", &rt), 0);
	for (int k = 0; k < INCS; k++) {
		kgc_obj o = kgc_handle_get(shared);	/* managed: no move until the next safepoint */
		uint32_t e;

		T_ASSERT_EQ(kgc_obj_vm_bits_get(rt, o, &e), 0);
		for (;;) {
			uint32_t d = (e & ~0x3fu) | ((e + 1) & 0x3f);
			int rc = kgc_obj_vm_bits_cas(rt, o, &e, d);

			if (rc == 0)
				break;
			T_ASSERT_EQ(rc, -EAGAIN);
		}
		if (id == 0)
			T_ASSERT_EQ(kgc_obj_vm_bits_update(rt, o, k % 2 ? 0x40 : 0, k % 2 ? 0 : 0x40, NULL), 0);
		if (k % 64 == 0)
			T_ASSERT(kgc_alloc(rt, NODE));	/* a safepoint: the object moves meanwhile */
	}
	T_ASSERT_EQ(kgc_thread_detach(rt), 0);
	return NULL;
}

static void *collector(void *arg)
{
	kgc_thread *ct;

	(void)arg;
	T_ASSERT_EQ(kgc_thread_attach(h, "collector", &ct), 0);
	for (int k = 0; __atomic_load_n(&racing, __ATOMIC_ACQUIRE); k++)
		T_ASSERT_EQ(kgc_collect(ct, k % 5 == 4 ? KGC_GC_FULL : KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_thread_detach(ct), 0);
	return NULL;
}

static void test_race(void)
{
	pthread_t th[RACERS + 1];
	uint32_t b;

	shared = kgc_handle_new(t, kgc_alloc(t, NODE));
	T_ASSERT(shared);
	T_ASSERT_EQ(kgc_obj_vm_bits_update(t, kgc_handle_get(shared), 0, 0x80, NULL), 0);
	racing = 1;
	T_ASSERT_EQ(pthread_create(&th[RACERS], NULL, collector, NULL), 0);
	for (int i = 0; i < RACERS; i++)
		T_ASSERT_EQ(pthread_create(&th[i], NULL, racer, (void *)(intptr_t)i), 0);
	kgc_enter_native(t);
	for (int i = 0; i < RACERS; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&racing, 0, __ATOMIC_RELEASE);
	pthread_join(th[RACERS], NULL);
	kgc_leave_native(t);
	b = bits_of(kgc_handle_get(shared));
	printf("race: bits %#x after %d CAS increments and %d updates (want %#x)\n", b, RACERS * INCS, INCS,
	       0x80 | ((RACERS * INCS) & 0x3f));
	T_ASSERT_EQ(b, 0x80 | ((RACERS * INCS) & 0x3f));	/* bit 6: cleared last (INCS even) */
	kgc_handle_free(t, shared);
}

static void test_errors(void)
{
	KGC_ROOTS(t, s, 1);
	uint32_t b = 0, e;

	s[0] = kgc_alloc(t, NODE);
	T_ASSERT_EQ(kgc_obj_vm_bits_get(t, NULL, &b), -EINVAL);
	T_ASSERT_EQ(kgc_obj_vm_bits_get(t, (kgc_obj)(uintptr_t)0x2b, &b), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "tagged immediate"));
	T_ASSERT_EQ(kgc_obj_vm_bits_update(t, (kgc_obj)((uintptr_t)s[0] | 1), 0, 1, NULL), -EINVAL);
	T_ASSERT_EQ(kgc_obj_vm_bits_get(t, s[0], NULL), -EINVAL);
	T_ASSERT_EQ(kgc_obj_vm_bits_update(t, s[0], 0, 0x100, NULL), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "VM header bits"));
	e = 0x1ff;
	T_ASSERT_EQ(kgc_obj_vm_bits_cas(t, s[0], &e, 1), -EINVAL);
	T_ASSERT_EQ(kgc_obj_vm_bits_cas(t, s[0], NULL, 1), -EINVAL);
	T_ASSERT_EQ(kgc_obj_vm_bits_update(t, s[0], 0, 0x21, NULL), 0);
	e = 0x20;
	T_ASSERT_EQ(kgc_obj_vm_bits_cas(t, s[0], &e, 0x7), -EAGAIN);
	T_ASSERT_EQ(e, 0x21);				/* the bits it saw */
	T_ASSERT_EQ(kgc_obj_vm_bits_cas(t, s[0], &e, 0x7), 0);
	T_ASSERT_EQ(bits_of(s[0]), 0x7);
	kgc_enter_native(t);
	T_ASSERT_EQ(kgc_obj_vm_bits_get(t, s[0], &b), -EPERM);
	kgc_leave_native(t);
	T_ASSERT_EQ(bits_of(s[0]), 0x7);
	printf("errors: EINVAL, EPERM, EAGAIN as documented\n");
}

static void interior(void)
{
	kgc_heap *hh;
	kgc_thread *tt;
	struct kgc_options o;
	kgc_obj n;

	t_opts_small(&o, 32, 4);
	hh = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(hh, "bad", &tt), 0);
	n = kgc_alloc(tt, NODE);
	kgc_obj_vm_bits_update(tt, (kgc_obj)((char *)n + 8), 0, 1, NULL);
}

int main(void)
{
	struct kgc_options o;
	unsigned long long rng;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rng = t_seed();
	t_opts_small(&o, 96, 4);
	o.tenure_threshold = 2;
	o.ihop_percent = 5;
	o.mixed_live_percent = 60;
	o.verify = 1;
	o.tag_mask = 1;
	h = t_heap_opts(&o, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	test_errors();
	test_moves(&rng);
	test_race();
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	t_expect_death(interior, "not a live object's start");
	return 0;
}
