/* SPDX-License-Identifier: MIT */
/*
 * kgc_heap_histogram counts the reachable objects per type after its
 * collection, garbage excluded: 300 nodes in a list, 50 scanned variants,
 * 7 byte[1000] and the ref[] holding them; rows sorted by bytes, totals the
 * sums, kgc_histogram_print's table names each type; a struct of another
 * size is refused (-EINVAL).
 */
#include "tscan.h"

int main(void)
{
	struct kgc_histogram hg = { .size = sizeof(hg) }, bad = { .size = sizeof(hg) - 8 };
	kgc_obj s[2] = { 0 };
	struct kgc_frame f;
	kgc_type_id NODE, VAR;
	kgc_heap *h;
	kgc_thread *t;
	char buf[4096];
	FILE *mf;

	setvbuf(stdout, NULL, _IOLBF, 0);
	h = t_heap(64, 4, &NODE);
	VAR = t_register_scanned(h, "variant", V_PAYLOAD, variant_scan);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, s, 2, NULL);
	t_list(t, NODE, &s[0], 300, 0);
	s[1] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 57);
	for (int i = 0; i < 57; i++) {
		kgc_obj o = i < 50 ? kgc_alloc(t, VAR) :
			kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 1000);

		kgc_array_set_ref(t, s[1], i, o);
		T_ASSERT(kgc_alloc(t, NODE) && kgc_alloc(t, VAR));	/* garbage */
	}
	T_ASSERT_EQ(kgc_heap_histogram(t, 0, &bad), -EINVAL);
	T_ASSERT_EQ(kgc_heap_histogram(t, 0, &hg), 0);
	mf = fmemopen(buf, sizeof(buf), "w");
	T_ASSERT_EQ(kgc_histogram_print(&hg, 0, mf), 0);
	fclose(mf);
	printf("%s", buf);
	T_ASSERT_EQ(hg.nrows, 4);
	struct { kgc_type_id type; uint64_t count, bytes; } want[4] = {
		{ NODE, 300, 300 * 32 },
		{ KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 7, 7 * 1016 },
		{ VAR, 50, 50 * (KGC_HEADER_SIZE + V_PAYLOAD) },
		{ KGC_TYPE_REF_ARRAY, 1, KGC_ARRAY_DATA_OFFSET + 57 * 8 },
	};
	uint64_t c = 0, b = 0;

	for (int i = 0; i < 4; i++) {
		T_ASSERT_EQ(hg.rows[i].type, want[i].type);
		T_ASSERT_EQ(hg.rows[i].count, want[i].count);
		T_ASSERT_EQ(hg.rows[i].bytes, want[i].bytes);
		T_ASSERT(strcmp(hg.rows[i].name, kgc_type_name(h, want[i].type)) == 0);
		T_ASSERT(strstr(buf, hg.rows[i].name));
		c += want[i].count;
		b += want[i].bytes;
	}
	T_ASSERT_EQ(hg.count, c);
	T_ASSERT_EQ(hg.bytes, b);
	T_ASSERT(strstr(buf, "#instances") && strstr(buf, "Total"));
	kgc_histogram_free(&hg);
	T_ASSERT(hg.rows == NULL);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
