/* SPDX-License-Identifier: MIT */
/*
 * A full collection's humongous moves keep page tables whole where the
 * backend moves them whole (kgci_backend_move_granule: mremap with 1 MiB
 * regions moves a 2 MiB page table in one step only between 2 MiB-aligned
 * ends). From the top of the heap down: a 1-region hole, a 7-region
 * object, a 3-region hole, a 7-region object, a 1-region hole, a 2-region
 * object. Full compaction slides each up by the holes above it; with a
 * granule of 2:
 * - the first stays (a slide under the granule is not worth moving 7 MiB
 *   PTE by PTE);
 * - the second slides 2 of its 3 (an even distance);
 * - the third, under two page tables' worth (none to keep whole), takes
 *   all 3 regions it can.
 * With a granule of 1 (copy: run a second time forced; the module) they
 * slide 1, 4 and 5. Contents
 * checked word by word; the verifier is on.
 */
#include "tgc.h"
#include "../gc_internal.h"

static kgc_obj filled(kgc_thread *t, size_t mb, unsigned long long seed)
{
	size_t n = ((mb << 20) - 4096) / 8;
	kgc_obj a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_LONG), n);

	T_ASSERT(a);
	for (size_t i = 0; i < n; i++)
		((uint64_t *)kgc_array_data(a))[i] = t_rand(&seed);
	return a;
}

static void check(kgc_obj a, unsigned long long seed)
{
	size_t n = kgc_array_length(a);

	for (size_t i = 0; i < n; i++)
		if (((uint64_t *)kgc_array_data(a))[i] != t_rand(&seed))
			T_FAIL("word %zu of a moved array differs", i);
}

static kgc_obj junk(kgc_thread *t, size_t mb)
{
	kgc_obj a = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), (mb << 20) - 4096);

	T_ASSERT(a);
	return a;
}

static void scenario(unsigned long long seed, bool force_copy)
{
	struct kgc_options o;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	char *was[3];
	uint32_t g;

	t_opts_small(&o, 64, 4);
	o.verify = 1;
	h = t_heap_opts(&o, &node);
	if (force_copy)	/* what a kernel without MREMAP_DONTUNMAP gets */
		((struct kgc_heap *)h)->be.move_kind = MOVE_COPY;
	g = kgci_backend_move_granule((struct kgc_heap *)h);
	printf("backend %s, move granule %u regions\n", kgci_backend_name((struct kgc_heap *)h), g);
	T_ASSERT(g == 1 || g == 2);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	{
	KGC_ROOTS(t, r, 6);	/* humongous runs are taken from the top down */
	r[3] = junk(t, 1);
	r[0] = filled(t, 7, seed);
	r[4] = junk(t, 3);
	r[1] = filled(t, 7, seed + 1);
	r[5] = junk(t, 1);
	r[2] = filled(t, 2, seed + 2);
	T_ASSERT((char *)r[0] == (char *)r[1] + (10 << 20) && (char *)r[1] == (char *)r[2] + (3 << 20));
	for (int i = 0; i < 3; i++)
		was[i] = (char *)r[i];
	r[3] = r[4] = r[5] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	printf("moved by %td, %td, %td MiB\n", ((char *)r[0] - was[0]) >> 20,
	       ((char *)r[1] - was[1]) >> 20, ((char *)r[2] - was[2]) >> 20);
	T_ASSERT((char *)r[0] == was[0] + ((g == 2 ? 0 : 1) << 20));
	T_ASSERT((char *)r[1] == was[1] + ((g == 2 ? 2 : 4) << 20));
	T_ASSERT((char *)r[2] == was[2] + ((g == 2 ? 3 : 5) << 20));
	check(r[0], seed);
	check(r[1], seed + 1);
	check(r[2], seed + 2);
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

int main(void)
{
	unsigned long long seed = t_seed();

	scenario(seed, false);
	scenario(seed, true);
	return 0;
}
