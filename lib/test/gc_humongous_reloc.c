/* SPDX-License-Identifier: MIT */
/*
 * Relocation without a full collection (issue 32, humreloc.c): humongous
 * byte arrays of 1-4 regions (seeded sizes) fill a 64-region heap, held by
 * a root, an old reference array (write barrier), a global handle, or a
 * root and the old array both; every other one dies and a young
 * collection frees it (eager reclaim through its remembered set): more
 * regions are free than the longest free run, by far. One survivor is pinned (a
 * pinned handle: a wall). After the remembered sets were built, a survivor
 * is stored into another old slot and a young object. An allocation of
 * the longest run plus half the other free regions then succeeds with no full collection: a young pause moved arrays out of
 * the way (stats humongous_reloc_pauses, humongous_moved_young). Every
 * reference to each survivor - roots, old slots, handles, the young
 * object, weak references - names one address, the contents and identity
 * hashes are intact, the pinned array has not moved. The verifier runs at
 * every collection (a reference left at an old address is a slot into a
 * free region). Fails without the relocation (a full collection runs) or
 * with a reference kind it does not update.
 */
#include "tgc.h"
#include "../gc_internal.h"
#include "t_regions.h"

#define MAXA 48
#define EXTRA 4		/* holder slots stored after the remembered sets were built */

static kgc_heap *h;
static kgc_thread *t;
static kgc_obj slots[MAXA + 4];	/* roots; [MAXA]: holder, +1: node, +2: the new array */
static kgc_handle handles[MAXA];
static size_t len[MAXA];

enum { BY_ROOT, BY_OLD, BY_HANDLE, BY_BOTH };

/* Array i's holder kind: survivors (odd i) and the dead alike take each. */
static int kind(int i)
{
	return (i >> 1) % 4;
}

/* Survivor i through its holder kind (all must agree: checked by the caller). */
static kgc_obj get(int i)
{
	switch (kind(i)) {
	case BY_ROOT: return slots[i];
	case BY_HANDLE: return kgc_handle_get(handles[i]);
	default: return kgc_array_get_ref(slots[MAXA], i);
	}
}

static void check_contents(kgc_obj a, int i)
{
	const unsigned char *d = kgc_array_data(a);

	T_ASSERT_EQ(kgc_array_length(a), len[i]);
	T_ASSERT_EQ(*(const int32_t *)d, i);
	for (size_t k = 8; k < len[i]; k += 4093)
		if (d[k] != (unsigned char)(i + 1))
			T_FAIL("array %d damaged at %zu: %u", i, k, d[k]);
}

int main(void)
{
	unsigned long long seed = t_seed();
	struct kgc_options o;
	kgc_type_id node;
	struct kgc_frame f;
	struct kgc_stats st, s0;
	kgc_weak weak[MAXA] = { 0 };
	uint32_t hash[MAXA] = { 0 };
	kgc_obj before[MAXA] = { 0 };
	kgc_pin_handle pin;
	int n = 0, pinned = -1, extra[EXTRA], nextra = 0, moved = 0;
	unsigned kinds = 0;
	uint32_t run, need;
	uint64_t dead = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	t_opts_small(&o, 64, 4);
	o.verify = 1;
	o.ihop_percent = 100;	/* no cycle: this is about young pauses */
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, MAXA + 4, NULL);
	slots[MAXA] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, MAXA + EXTRA);
	T_ASSERT(slots[MAXA]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* the holder is old now */
	T_ASSERT_EQ(((struct kgc_heap *)h)->regions[region_index((struct kgc_heap *)h, slots[MAXA])].type, RT_OLD);

	while (n < MAXA && t_stats(h).regions_humongous < 52) {
		kgc_obj a;

		len[n] = ((1 + t_rand(&seed) % 4) << 20) - 64;
		a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), len[n]);
		T_ASSERT(a);
		memset(kgc_array_data(a), n + 1, len[n]);
		*(int32_t *)kgc_array_data(a) = n;
		switch (kind(n)) {
		case BY_ROOT: slots[n] = a; break;
		case BY_OLD: kgc_array_set_ref(t, slots[MAXA], n, a); break;
		case BY_HANDLE: handles[n] = kgc_handle_new(t, a); T_ASSERT(handles[n]); break;
		default: slots[n] = a; kgc_array_set_ref(t, slots[MAXA], n, a); break;
		}
		n++;
	}
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);	/* the old references remembered */
	s0 = t_stats(h);
	for (int i = 0; i < n; i += 2) {
		slots[i] = NULL;
		if (kind(i) == BY_OLD || kind(i) == BY_BOTH)
			kgc_array_set_ref(t, slots[MAXA], i, NULL);
		if (handles[i])
			kgc_handle_free(t, handles[i]);
		handles[i] = NULL;
		dead++;
	}
	pinned = (n / 2) | 1;	/* a survivor in the middle: a wall */
	pin = kgc_pin_handle_new(t, get(pinned));
	T_ASSERT(pin);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	st = t_stats(h);
	printf("%d arrays, %llu dead freed eagerly, %u regions free, %u humongous, longest free run %u\n", n,
	       (unsigned long long)(st.humongous_eager - s0.humongous_eager), st.regions_free,
	       st.regions_humongous, t_longest_free_run((struct kgc_heap *)h));
	T_ASSERT_EQ(st.humongous_eager - s0.humongous_eager, dead);	/* remembered ones too */
	T_ASSERT_EQ(st.full_gcs, 0);
	run = t_longest_free_run((struct kgc_heap *)h);
	need = run + (st.regions_free - run) / 2;	/* no run that long: half the rest moves */
	T_ASSERT(st.regions_free > need + 1);

	for (int i = 1; i < n; i += 2) {
		before[i] = get(i);
		weak[i] = kgc_weak_new(t, before[i]);
		T_ASSERT(weak[i]);
		hash[i] = kgc_identity_hash(t, before[i]);
		if (nextra < EXTRA && kind(i) == BY_HANDLE)	/* stored after the sets were built */
			kgc_array_set_ref(t, slots[MAXA], MAXA + nextra, before[i]), extra[nextra++] = i;
	}
	slots[MAXA + 1] = kgc_alloc(t, node);	/* young: refers to the last survivor */
	kgc_set_ref(t, slots[MAXA + 1], N_LEFT, get(n % 2 ? n - 2 : n - 1));

	slots[MAXA + 2] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ((size_t)need << 20) - 64);
	st = t_stats(h);
	printf("%u MiB: %s; full collections %llu, relocating young pauses %llu, moved by them %llu\n",
	       need, slots[MAXA + 2] ? "allocated" : "failed", (unsigned long long)st.full_gcs,
	       (unsigned long long)st.humongous_reloc_pauses, (unsigned long long)st.humongous_moved_young);
	T_ASSERT(slots[MAXA + 2]);
	T_ASSERT_EQ(st.full_gcs, 0);
	T_ASSERT_EQ(st.humongous_reloc_pauses, 1);
	T_ASSERT(st.humongous_moved_young > 0);
	memset(kgc_array_data(slots[MAXA + 2]), 0x5a, ((size_t)need << 20) - 64);

	for (int i = 1; i < n; i += 2) {
		kgc_obj a = get(i);

		check_contents(a, i);
		if (kind(i) == BY_BOTH)
			T_ASSERT(slots[i] == a && kgc_array_get_ref(slots[MAXA], i) == a);
		T_ASSERT(kgc_weak_get(t, weak[i]) == a);
		T_ASSERT_EQ(kgc_identity_hash(t, a), hash[i]);
		moved += a != before[i];
		kinds |= (unsigned)(a != before[i]) << kind(i);
	}
	for (int k = 0; k < nextra; k++)
		T_ASSERT(kgc_array_get_ref(slots[MAXA], MAXA + k) == get(extra[k]));
	T_ASSERT(kgc_get_ref(slots[MAXA + 1], N_LEFT) == get(n % 2 ? n - 2 : n - 1));
	T_ASSERT(get(pinned) == before[pinned] && kgc_pin_handle_get(pin) == before[pinned]);
	printf("%d of %d survivors moved (held by kinds %#x); the pinned one stayed\n", moved, n / 2, kinds);
	T_ASSERT(moved > 0);
	/* one more young and one full collection: the verifier sees the moved ones settled */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_pin_handle_free(t, pin), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	for (int i = 1; i < n; i += 2)
		check_contents(get(i), i);

	for (int i = 1; i < n; i += 2)
		kgc_weak_free(t, weak[i]);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("PASS\n");
	return 0;
}
