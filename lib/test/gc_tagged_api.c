/* SPDX-License-Identifier: MIT */
/*
 * Tagged immediates at the API's edges (kgc_options.tag_mask):
 *  - kgc_heap_create refuses a mask beyond the alignment bits (0x7) and a
 *    non-zero reserved word with -EINVAL;
 *  - the identity hash (0), weak references (NULL), cleaners (-EINVAL),
 *    handles (NULL) and critical sections (NULL) refuse an immediate with
 *    a message naming it, in plain and in checked mode, and still take a
 *    real object (the control);
 *  - checked mode aborts, naming the value, on a store of a misaligned value
 *    that is no immediate (bit 1 with mask 1; bit 0 with no mask), and
 *    kgc_critical_get on an immediate aborts there as on any bad array.
 */
#include <stdlib.h>
#include "tgc.h"

static kgc_type_id NODE;

static kgc_heap *tag_heap(unsigned mask, int check)
{
	struct kgc_options o;

	t_opts_small(&o, 32, 4);
	o.tag_mask = mask;
	o.check = check;
	return t_heap_opts(&o, &NODE);
}

static void noop(void *arg) { (void)arg; }

static void expect_msg(const char *what)
{
	if (!strstr(kgc_last_error(), "tagged immediate"))
		T_FAIL("%s: message does not name the immediate: '%s'", what, kgc_last_error());
}

static void refusals(int check)
{
	kgc_heap *h = tag_heap(1, check);
	kgc_thread *t;
	kgc_obj s[2] = { 0 }, imm = (kgc_obj)(uintptr_t)(2 * 99 + 1), alias;
	struct kgc_frame f;
	kgc_weak w;
	kgc_handle hd;
	size_t len;

	T_ASSERT_EQ(kgc_thread_attach(h, "api", &t), 0);
	kgc_frame_push(t, &f, s, 2, NULL);
	s[0] = kgc_alloc(t, NODE);
	s[1] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 4);
	alias = (kgc_obj)((uintptr_t)s[1] | 1);	/* an array's address, tagged */
	T_ASSERT_EQ(kgc_identity_hash(t, imm), 0);
	expect_msg("kgc_identity_hash");
	T_ASSERT_EQ(kgc_identity_hash(t, alias), 0);
	T_ASSERT(kgc_weak_new(t, imm) == NULL);
	expect_msg("kgc_weak_new");
	T_ASSERT(kgc_weak_new(t, alias) == NULL);
	T_ASSERT_EQ(kgc_cleaner_register(t, imm, noop, NULL), -EINVAL);
	expect_msg("kgc_cleaner_register");
	T_ASSERT(kgc_handle_new(t, imm) == NULL);
	expect_msg("kgc_handle_new");
	if (!check) {	/* checked mode aborts here (below) */
		kgc_obj r = alias;

		T_ASSERT(kgc_critical_get(t, &r, &len) == NULL);
		expect_msg("kgc_critical_get");
		r = imm;
		T_ASSERT(kgc_critical_get(t, &r, &len) == NULL);
	}
	/* the controls: real objects */
	T_ASSERT(kgc_identity_hash(t, s[0]) != 0);
	T_ASSERT((w = kgc_weak_new(t, s[0])) != NULL);
	kgc_weak_free(t, w);
	T_ASSERT((hd = kgc_handle_new(t, s[0])) != NULL);
	kgc_handle_free(t, hd);
	T_ASSERT(kgc_critical_get(t, &s[1], &len) != NULL);
	T_ASSERT_EQ(kgc_critical_release(t, &s[1], kgc_array_data(s[1]), 0), 0);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

static unsigned death_mask;
static uintptr_t death_val;

static void store_bad(void)
{
	kgc_heap *h = tag_heap(death_mask, 1);
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(h, "bad", &t), 0);
	{
		KGC_ROOTS(t, s, 1);

		s[0] = kgc_alloc(t, NODE);
		kgc_set_ref(t, s[0], N_LEFT, (kgc_obj)death_val);
	}
}

static void critical_imm(void)
{
	kgc_heap *h = tag_heap(1, 1);
	kgc_thread *t;
	kgc_obj r = (kgc_obj)(uintptr_t)5;

	T_ASSERT_EQ(kgc_thread_attach(h, "crit", &t), 0);
	kgc_critical_get(t, &r, NULL);
}

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;

	setvbuf(stdout, NULL, _IOLBF, 0);
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	T_ASSERT_EQ(o.tag_mask, 0);	/* default: no immediates */
	o.tag_mask = 8;
	T_ASSERT_EQ(kgc_heap_create(&o, &h), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "tag_mask"));
	o.tag_mask = 0x101;
	T_ASSERT_EQ(kgc_heap_create(&o, &h), -EINVAL);
	o.tag_mask = 1;
	o.reserved2 = 1;
	T_ASSERT_EQ(kgc_heap_create(&o, &h), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "reserved"));
	o.reserved2 = 0;
	o.tag_mask = 7;
	T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	printf("options: masks beyond 0x7 and reserved words refused\n");

	refusals(0);
	refusals(1);
	printf("identity hash, weak, cleaner, handle, critical: immediates refused, objects taken\n");

	death_mask = 1;
	death_val = 0x1002;	/* bit 1 only: no immediate under mask 1 */
	t_expect_death(store_bad, "misaligned");
	death_mask = 0;
	death_val = 0x1001;	/* no mask: bit 0 is no immediate either */
	t_expect_death(store_bad, "misaligned");
	t_expect_death(critical_imm, "a tagged immediate, not an array");
	return 0;
}
