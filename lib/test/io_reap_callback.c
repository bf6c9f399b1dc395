/* SPDX-License-Identifier: MIT */
/*
 * kgc_io_reap_wait's completion callback: three operations (a read, a
 * two-buffer readv, a read into an array the program dropped) complete,
 * one reap with a callback and wait_nr 3 returns them. The callback runs
 * once per completion, on the reaping thread, in out[]'s order, with the
 * operation's arrays: at their prep-time addresses, with the bytes read.
 * Inside it the callback allocates and forces a young and a full
 * collection (the arrays must stay where they are: still pinned and
 * rooted), and preps and submits a new read on the same ring (no lock of
 * the ring is held); cancelling its own completion's user_data finds
 * nothing in flight (-ENOENT). After the reap returns the arrays are released
 * (nothing pinned once the new read is reaped, and a full GC moves them)
 * and a reap without out but with a callback gets the new read. Verifier
 * and poison on.
 */
#include <pthread.h>
#include "io_test.h"

#define LEN 4096u

struct op {
	uint64_t ud;
	unsigned narr, gen[2];
	kgc_obj prep[2];	/* the arrays at prep time */
};

static struct op ops[3];
static kgc_heap *heap;
static kgc_io_ring *ring;
static kgc_type_id node;
static pthread_t reaper;
static int pn[2];
static kgc_obj roots[5];	/* a frame: 0..3 the arrays, 4 the callback's new one */
static uint64_t order[8];
static unsigned ncalls;

static void cb(kgc_thread *t, const struct kgc_io_cqe *c, const kgc_obj *arrays, unsigned narrays,
	       void *arg)
{
	const struct op *o = NULL;

	T_ASSERT(pthread_equal(pthread_self(), reaper));
	for (int i = 0; i < 3; i++)
		if (ops[i].ud == c->user_data)
			o = &ops[i];
	if (arg == &pn) {	/* the second reap: the callback's new read */
		T_ASSERT_EQ(c->user_data, 9);
		T_ASSERT_EQ(narrays, 1);
		T_ASSERT(arrays[0] == roots[4]);
		order[ncalls++] = c->user_data;
		return;
	}
	T_ASSERT(arg == &ops);
	T_ASSERT(o);
	T_ASSERT_EQ(narrays, o->narr);
	T_ASSERT_EQ(c->res, LEN * o->narr);
	order[ncalls++] = c->user_data;
	/* completed (held until the reap returns): nothing to cancel */
	T_ASSERT_EQ(kgc_io_cancel(ring, t, c->user_data), -ENOENT);
	/* collections inside the callback leave its arrays in place */
	t_churn(t, heap, node, 1);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	for (unsigned k = 0; k < narrays; k++) {
		T_ASSERT(arrays[k] == o->prep[k]);
		T_ASSERT_EQ(kgc_array_length(arrays[k]), LEN);
		t_pat_check(kgc_array_data(arrays[k]), LEN, o->gen[k]);
	}
	if (ncalls == 1) {	/* the ring is usable from the callback */
		roots[4] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN);
		T_ASSERT(roots[4]);
		T_ASSERT_EQ(kgc_io_prep_read(ring, t, pn[0], &roots[4], 0, LEN, KGC_IO_OFF_CUR, 9), 0);
		T_ASSERT_EQ(kgc_io_submit(ring, t), 1);
	}
}

int main(void)
{
	struct kgc_options opt;
	kgc_thread *t;
	struct kgc_frame f;
	struct kgc_io_cqe out[3];
	struct kgc_io_wait w = { .size = sizeof(w), .wait_nr = 3, .timeout_ns = -1,
				 .complete = cb, .arg = &ops };
	int p[3][2];
	struct kgc_io_buf v[2];

	alarm(20);
	t_opts_small(&opt, 64, 8);
	opt.verify = 1;
	opt.poison = 1;
	heap = t_heap_opts(&opt, &node);
	reaper = pthread_self();
	T_ASSERT_EQ(kgc_thread_attach(heap, "main", &t), 0);
	ring = t_ring(t, 8);
	kgc_frame_push(t, &f, roots, 5, NULL);
	for (int i = 0; i < 3; i++)
		T_ASSERT_EQ(pipe(p[i]), 0);
	T_ASSERT_EQ(pipe(pn), 0);
	for (int i = 0; i < 4; i++) {
		T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), 1000));	/* dead */
		roots[i] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), LEN);
		T_ASSERT(roots[i]);
	}
	ops[0] = (struct op){ 1, 1, { 1 }, { roots[0] } };
	ops[1] = (struct op){ 2, 2, { 2, 3 }, { roots[1], roots[2] } };
	ops[2] = (struct op){ 3, 1, { 4 }, { roots[3] } };
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, p[0][0], &roots[0], 0, LEN, KGC_IO_OFF_CUR, 1), 0);
	v[0] = (struct kgc_io_buf){ &roots[1], 0, LEN };
	v[1] = (struct kgc_io_buf){ &roots[2], 0, LEN };
	T_ASSERT_EQ(kgc_io_prep_readv(ring, t, p[1][0], v, 2, KGC_IO_OFF_CUR, 2), 0);
	T_ASSERT_EQ(kgc_io_prep_read(ring, t, p[2][0], &roots[3], 0, LEN, KGC_IO_OFF_CUR, 3), 0);
	T_ASSERT_EQ(kgc_io_submit(ring, t), 3);
	roots[3] = NULL;	/* only the ring holds it */
	t_pat_write(p[0][1], LEN, 1);
	{
		uint8_t b[2 * LEN];

		t_pat_fill(b, LEN, 2);
		t_pat_fill(b + LEN, LEN, 3);
		T_ASSERT_EQ(write(p[1][1], b, sizeof(b)), (long)sizeof(b));
	}
	t_pat_write(p[2][1], LEN, 4);

	T_ASSERT_EQ(kgc_io_reap_wait(ring, t, out, 3, &w), 3);
	T_ASSERT_EQ(ncalls, 3);
	for (int i = 0; i < 3; i++)
		T_ASSERT_EQ(out[i].user_data, order[i]);
	T_ASSERT_EQ(order[0] + order[1] + order[2], 6);
	T_ASSERT_EQ(kgc_io_inflight(ring), 1);	/* the callback's read */

	/* released: the callback's read holds the only pin; a full GC moves
	 * the arrays (their bytes with them) */
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT(roots[0] != ops[0].prep[0] || roots[1] != ops[1].prep[0] ||
		 roots[2] != ops[1].prep[1]);
	t_pat_check(kgc_array_data(roots[0]), LEN, 1);
	t_pat_check(kgc_array_data(roots[1]), LEN, 2);
	t_pat_check(kgc_array_data(roots[2]), LEN, 3);

	t_pat_write(pn[1], LEN, 5);
	w.arg = &pn;
	w.wait_nr = 1;
	T_ASSERT_EQ(kgc_io_reap_wait(ring, t, NULL, 1, &w), 1);
	T_ASSERT_EQ(ncalls, 4);
	t_pat_check(kgc_array_data(roots[4]), LEN, 5);
	T_ASSERT_EQ(t_stats(heap).regions_pinned, 0);

	for (int i = 0; i < 3; i++) {
		close(p[i][0]);
		close(p[i][1]);
	}
	t_io_end(heap, t, ring, &f, pn);
	return 0;
}
