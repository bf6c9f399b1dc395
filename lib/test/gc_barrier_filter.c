/* Write barrier filter (kgc.h region_track): a store of an old object into
 * an old object of another region leaves the card clean; a store of a young
 * object, and of an object in a retained region, dirties it; the filter
 * follows regions as they change type (old -> freed -> eden). */
#include "tgc.h"
#include "../gc_internal.h"

int main(void)
{
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj s[4] = { 0 };
	struct kgc_frame f;
	uint8_t *card;

	h = t_heap(64, 4, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, s, 4, NULL);
	/* two old objects in different regions: a humongous reference array
	 * (its own region) and a node */
	s[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, (1u << 20) / sizeof(kgc_obj));
	s[1] = kgc_alloc(t, node);
	T_ASSERT(s[0] && s[1]);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(region_of(h, s[1])->type, RT_OLD);
	T_ASSERT(region_of(h, s[0]) != region_of(h, s[1]));
	T_ASSERT_EQ(h->region_track[region_index(h, s[1])], 0);
	T_ASSERT_EQ(h->region_track[region_index(h, s[0])], 0);

	/* old -> old, across regions: no card */
	card = card_for(h, (kgc_obj *)kgc_array_data(s[0]) + 7);
	T_ASSERT_EQ(*card, CARD_CLEAN);
	kgc_array_set_ref(t, s[0], 7, s[1]);
	T_ASSERT_EQ(*card, CARD_CLEAN);
	kgc_set_ref(t, s[1], N_LEFT, s[0]);
	T_ASSERT_EQ(*card_for(h, (char *)s[1] + N_LEFT), CARD_CLEAN);

	/* old -> young: carded, and the young object survives through it */
	s[2] = kgc_alloc(t, node);
	T_ASSERT(region_is_young(region_of(h, s[2])));
	T_ASSERT(h->region_track[region_index(h, s[2])]);
	KGC_FIELD(s[2], N_VALUE, int64_t) = 42;
	kgc_array_set_ref(t, s[0], 9, s[2]);
	T_ASSERT_EQ(*card_for(h, (kgc_obj *)kgc_array_data(s[0]) + 9), CARD_DIRTY);
	s[2] = NULL;
	t_churn(t, h, node, 2);
	T_ASSERT_EQ(KGC_FIELD(kgc_array_get_ref(s[0], 9), N_VALUE, int64_t), 42);
	T_ASSERT_EQ(kgc_array_get_ref(s[0], 7), s[1]);

	/* after a full GC (regions freed, compacted, reused) the filter matches
	 * every region's type */
	{
		kgc_array_set_ref(t, s[0], 7, NULL);
		kgc_set_ref(t, s[1], N_LEFT, NULL);
		s[1] = NULL;
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
		for (uint32_t i = 0; i < h->nregions; i++) {
			const struct region *r = &h->regions[i];
			bool want = !(r->type == RT_OLD || r->type == RT_HUM_START || r->type == RT_HUM_CONT) ||
				    r->retained || r->candidate;

			T_ASSERT_EQ(!!h->region_track[i], want);
		}
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
