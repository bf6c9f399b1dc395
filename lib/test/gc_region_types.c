/* Region type transitions are checked: legal ones update the accounting,
 * illegal ones abort with a message. */
#include "tgc.h"
#include "../gc_internal.h"

static kgc_heap *h;

static void illegal(void)
{
	long i = kgci_region_alloc_free(h, RT_OLD);

	kgci_region_set_type(h, &h->regions[i], RT_EDEN);	/* old -> eden: never */
}

int main(void)
{
	long a, b, c;

	h = t_heap(16, 2, NULL);
	T_ASSERT_EQ(h->count[RT_FREE], 16);
	a = kgci_region_alloc_free(h, RT_EDEN);
	b = kgci_region_alloc_free(h, RT_SURVIVOR);
	T_ASSERT(a >= 0 && b >= 0 && a != b);
	T_ASSERT_EQ(h->count[RT_EDEN], 1);
	T_ASSERT_EQ(h->count[RT_SURVIVOR], 1);
	kgci_region_set_type(h, &h->regions[a], RT_OLD);	/* evacuation failure */
	T_ASSERT_EQ(h->count[RT_OLD], 1);
	kgci_region_free(h, &h->regions[a]);
	kgci_region_free(h, &h->regions[b]);
	T_ASSERT_EQ(h->count[RT_FREE], 16);
	c = kgci_region_alloc_contig(h, 3);
	T_ASSERT(c >= 0);
	T_ASSERT_EQ(h->regions[c].type, RT_HUM_START);
	T_ASSERT_EQ(h->regions[c + 2].type, RT_HUM_CONT);
	T_ASSERT_EQ(h->regions[c + 2].hum_start, c);
	T_ASSERT_EQ(kgci_region_alloc_contig(h, 14), -1);
	T_ASSERT_EQ(h->count[RT_FREE], 13);
	t_expect_death(illegal, "illegal transition old -> eden");
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
