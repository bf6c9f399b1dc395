/* SPDX-License-Identifier: MIT */
/*
 * tscan.h - runtime-defined layouts for the tests (kgc_scan.3): two types
 * whose reference slots depend on their contents, reported by scan
 * functions.
 *
 * variant, a tagged union { u64 tag; obj a; obj b; i64 raw }:
 *   V_NUM  raw is a number, a and b hold nothing
 *   V_BOX  a is a reference
 *   V_PAIR a and b are references
 *   V_STR  a is a byte[], raw its length
 * table, a hash table with keys and values inline and a type byte per
 * entry { u64 kinds (byte i: entry i's); 8 x { key; val } }: bit K_KEYREF
 * says the key word holds a reference, K_VALREF the value word; otherwise
 * the word holds raw data (an int64 - the tests put object addresses
 * there: a collector that followed them would rewrite them). An entry's
 * kind is set when it is filled and kept while the entry lives.
 */
#ifndef KGC_TSCAN_H
#define KGC_TSCAN_H

#include "tgc.h"

#define V_TAG 8
#define V_A 16
#define V_B 24
#define V_RAW 32
#define V_PAYLOAD 32
enum { V_NUM = 0, V_BOX, V_PAIR, V_STR };

#define TB_KINDS 8
#define TB_NENT 8
#define TB_KEY(i) (16 + (i) * 16)
#define TB_VAL(i) (24 + (i) * 16)
#define TB_PAYLOAD (8 + TB_NENT * 16)
enum { K_USED = 1, K_KEYREF = 2, K_VALREF = 4 };

static inline uint64_t v_tag(kgc_obj o)
{
	return __atomic_load_n(&KGC_FIELD(o, V_TAG, uint64_t), __ATOMIC_ACQUIRE);
}

/* the tag is published after the slots it makes reported (release) */
static inline void v_set_tag(kgc_obj o, uint64_t tag)
{
	__atomic_store_n(&KGC_FIELD(o, V_TAG, uint64_t), tag, __ATOMIC_RELEASE);
}

static __attribute__((unused)) void variant_scan(kgc_obj o, struct kgc_slot_visitor *v, void *ctx)
{
	uint64_t tag = v_tag(o);

	(void)ctx;
	if (tag != V_NUM)
		kgc_visit_slot(v, &KGC_FIELD(o, V_A, kgc_obj));
	if (tag == V_PAIR)
		kgc_visit_slot(v, &KGC_FIELD(o, V_B, kgc_obj));
}

static inline unsigned tb_kind(kgc_obj o, int i)
{
	return (unsigned)(__atomic_load_n(&KGC_FIELD(o, TB_KINDS, uint64_t), __ATOMIC_ACQUIRE) >> (8 * i)) & 0xff;
}

static inline void tb_set_kind(kgc_obj o, int i, unsigned kind)
{
	uint64_t k = __atomic_load_n(&KGC_FIELD(o, TB_KINDS, uint64_t), __ATOMIC_RELAXED);

	k = (k & ~(0xffull << (8 * i))) | ((uint64_t)kind << (8 * i));
	__atomic_store_n(&KGC_FIELD(o, TB_KINDS, uint64_t), k, __ATOMIC_RELEASE);
}

static __attribute__((unused)) void table_scan(kgc_obj o, struct kgc_slot_visitor *v, void *ctx)
{
	uint64_t kinds = __atomic_load_n(&KGC_FIELD(o, TB_KINDS, uint64_t), __ATOMIC_ACQUIRE);

	(void)ctx;
	for (int i = 0; i < TB_NENT; i++, kinds >>= 8) {
		if (kinds & K_KEYREF)
			kgc_visit_slot(v, &KGC_FIELD(o, TB_KEY(i), kgc_obj));
		if (kinds & K_VALREF)
			kgc_visit_slot(v, &KGC_FIELD(o, TB_VAL(i), kgc_obj));
	}
}

static inline kgc_type_id t_register_scanned(kgc_heap *h, const char *name, uint32_t payload, kgc_scan_fn fn)
{
	struct kgc_scan_type_desc d = {
		.size = sizeof(d), .payload_size = payload, .name = name, .scan = fn,
	};
	kgc_type_id id;

	T_ASSERT_EQ(kgc_type_register_scanned(h, &d, &id), 0);
	return id;
}

#endif
