/* Types: oop maps decide which fields are references; sizes and array
 * lengths; bad descriptors are rejected. */
#include "tgc.h"

int main(void)
{
	kgc_heap *h = t_heap(32, 4, NULL);
	kgc_thread *t;
	kgc_type_id ty, leaf;
	static const uint32_t offs[2] = { 24, 8 };	/* refs at 24 and 8; 16 is raw data */
	struct kgc_type_desc d = { .name = "mixed", .payload_size = 28, .nrefs = 2, .ref_offsets = offs };
	struct kgc_type_desc dl = { .name = "leaf", .payload_size = 8 };
	static const uint32_t bad1[1] = { 4 }, bad2[1] = { 32 };
	struct kgc_type_desc db = { .name = "bad", .payload_size = 28, .nrefs = 1, .ref_offsets = bad1 };
	kgc_obj slot = NULL;
	struct kgc_frame f;
	kgc_obj o;

	T_ASSERT_EQ(kgc_type_register(h, &d, &ty), 0);
	T_ASSERT_EQ(kgc_type_register(h, &dl, &leaf), 0);
	T_ASSERT(ty >= KGC_TYPE_FIRST_USER && leaf == ty + 1);
	T_ASSERT(!strcmp(kgc_type_name(h, ty), "mixed"));
	T_ASSERT(!strcmp(kgc_type_name(h, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_CHAR)), "char[]"));
	T_ASSERT_EQ(kgc_type_register(h, &db, &ty), -EINVAL);	/* misaligned */
	db.ref_offsets = bad2;
	T_ASSERT_EQ(kgc_type_register(h, &db, &ty), -EINVAL);	/* outside the payload */
	ty = leaf - 1;
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, &slot, 1, NULL);
	slot = kgc_alloc(t, ty);
	T_ASSERT_EQ(kgc_obj_size(slot), 40);	/* 8 + 28 rounded to 8 */
	T_ASSERT_EQ(kgc_obj_type(slot), ty);
	o = kgc_alloc(t, leaf);
	KGC_FIELD(o, 8, int64_t) = 8;
	kgc_set_ref(t, slot, 8, o);
	o = kgc_alloc(t, leaf);
	KGC_FIELD(o, 8, int64_t) = 24;
	kgc_set_ref(t, slot, 24, o);
	KGC_FIELD(slot, 16, uint64_t) = 0xdeadbeefcafef00dull;	/* looks like nothing: must stay */
	KGC_FIELD(slot, 32, int32_t) = -3;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(KGC_FIELD(kgc_get_ref(slot, 8), 8, int64_t), 8);
	T_ASSERT_EQ(KGC_FIELD(kgc_get_ref(slot, 24), 8, int64_t), 24);
	T_ASSERT_EQ(KGC_FIELD(slot, 16, uint64_t), 0xdeadbeefcafef00dull);
	T_ASSERT_EQ(KGC_FIELD(slot, 32, int32_t), -3);
	/* arrays: length and size per element type */
	o = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_SHORT), 5);
	T_ASSERT_EQ(kgc_array_length(o), 5);
	T_ASSERT_EQ(kgc_obj_size(o), 32);	/* 16 + 10 -> 32 */
	o = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_DOUBLE), 3);
	T_ASSERT_EQ(kgc_obj_size(o), 40);
	o = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, 0);
	T_ASSERT_EQ(kgc_obj_size(o), 16);
	T_ASSERT(kgc_alloc(t, KGC_TYPE_REF_ARRAY) == NULL);	/* not an instance type */
	T_ASSERT(kgc_alloc_array(t, ty, 3) == NULL);		/* not an array type */
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
