/* SPDX-License-Identifier: MIT */
/*
 * Concurrent refinement against running mutators (refine.c, KGC_REFINE=
 * always, verifier on). Two threads keep storing fresh young nodes into
 * random old holders (made old by a full GC) while kgc-refine turns their
 * dirty cards into logged slots between the young GCs the allocation
 * triggers; a third thread forces a full GC now and then (the log is
 * dropped). Each thread keeps a shadow of what each holder must hold; it
 * checks a few holders per batch and all of them at the end. A slot the
 * refiner read before a store reached it, with the card left refined, is
 * what the barrier hand-off (membarrier) rules out: the verifier stops the
 * next pause on it, and the shadow check sees a lost object.
 * MT_REFINE_SECS (default 2), KGC_TEST_SEED.
 */
#include <linux/membarrier.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include "tgc.h"
#include "../gc_internal.h"

enum { NHOLD = 3000, NTHREADS = 2 };

static kgc_heap *h;
static kgc_type_id node;
static atomic_bool stop;
static double secs = 2;

struct mut {
	int id;
	unsigned long long seed;
	int64_t shadow[NHOLD];
	uint64_t stores, checks;
};

static void check_one(struct mut *m, kgc_obj holders, int i)
{
	kgc_obj y = kgc_get_ref(kgc_array_get_ref(holders, (size_t)i), N_RIGHT);

	if (!m->shadow[i])
		return;
	m->checks++;
	if (m->shadow[i] < 0) {
		T_ASSERT(!y);
		return;
	}
	T_ASSERT(y);
	T_ASSERT_EQ(KGC_FIELD(y, N_VALUE, int64_t), m->shadow[i]);
}

static void *mutator(void *arg)
{
	struct mut *m = arg;
	char name[16];
	kgc_thread *t;
	kgc_obj slots[2] = { 0 };
	struct kgc_frame f;
	int64_t seq = 0;

	snprintf(name, sizeof(name), "mut%d", m->id);
	T_ASSERT_EQ(kgc_thread_attach(h, name, &t), 0);
	kgc_frame_push(t, &f, slots, 2, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_REF_ARRAY, NHOLD);
	T_ASSERT(slots[0]);
	for (int i = 0; i < NHOLD; i++) {
		slots[1] = kgc_alloc(t, node);
		T_ASSERT(slots[1]);
		kgc_array_set_ref(t, slots[0], (size_t)i, slots[1]);
	}
	slots[1] = NULL;
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);	/* the holders are old now */
	while (!atomic_load(&stop)) {
		for (int k = 0; k < 256; k++) {
			int i = (int)(t_rand(&m->seed) % NHOLD);
			kgc_obj y = NULL;

			/* a third of the stores clear the slot: a card whose slot
			 * held nothing when refined must still find what comes next */
			if (t_rand(&m->seed) % 3) {
				y = kgc_alloc(t, node);
				T_ASSERT(y);
				KGC_FIELD(y, N_VALUE, int64_t) = m->shadow[i] = ((int64_t)m->id << 48) | ++seq;
			} else {
				m->shadow[i] = -1;
			}
			kgc_set_ref(t, kgc_array_get_ref(slots[0], (size_t)i), N_RIGHT, y);
			m->stores++;
			for (int g = 0; g < 4; g++)	/* garbage: young GCs come often */
				T_ASSERT(kgc_alloc(t, node));
		}
		for (int k = 0; k < 16; k++)
			check_one(m, slots[0], (int)(t_rand(&m->seed) % NHOLD));
	}
	for (int i = 0; i < NHOLD; i++)
		check_one(m, slots[0], i);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

static void *fuller(void *arg)
{
	kgc_thread *t;
	unsigned *fulls = arg;

	T_ASSERT_EQ(kgc_thread_attach(h, "fuller", &t), 0);
	while (!atomic_load(&stop)) {
		kgc_enter_native(t);
		usleep(300000);
		kgc_leave_native(t);
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
		(*fulls)++;
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

int main(void)
{
	long q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	unsigned long long seed = t_seed();
	static struct mut m[NTHREADS];
	pthread_t th[NTHREADS], ft;
	uint64_t cards, slots, passes, stores = 0, checks = 0;
	struct kgc_stats st;
	unsigned fulls = 0;

	T_SKIP_IF(q < 0 || !(q & MEMBARRIER_CMD_PRIVATE_EXPEDITED), "needs membarrier(PRIVATE_EXPEDITED)");
	if (getenv("MT_REFINE_SECS"))
		secs = atof(getenv("MT_REFINE_SECS"));
	setvbuf(stdout, NULL, _IOLBF, 0);
	setenv("KGC_REFINE", "always", 1);
	setenv("KGC_VERIFY", "1", 1);
	h = t_heap(64, 4, &node);
	for (int i = 0; i < NTHREADS; i++) {
		m[i].id = i + 1;
		m[i].seed = seed + (unsigned long long)i * 7919;
		T_ASSERT_EQ(pthread_create(&th[i], NULL, mutator, &m[i]), 0);
	}
	T_ASSERT_EQ(pthread_create(&ft, NULL, fuller, &fulls), 0);
	usleep((useconds_t)(secs * 1e6));
	/* a slow machine (TSan on a loaded host: 8 young GCs in 2 s) runs on
	 * until enough pauses happened, for at most 30 s more */
	for (int i = 0; i < 300; i++) {
		kgc_stats_get(h, &st, sizeof(st));
		if (st.young_gcs > 10)
			break;
		usleep(100000);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < NTHREADS; i++) {
		T_ASSERT_EQ(pthread_join(th[i], NULL), 0);
		stores += m[i].stores;
		checks += m[i].checks;
	}
	T_ASSERT_EQ(pthread_join(ft, NULL), 0);
	kgci_refine_test_counts(h, &cards, &slots, &passes);
	kgc_stats_get(h, &st, sizeof(st));
	printf("mt_refine: seed %llu: %llu stores, %llu checks; %llu young + %llu full GCs; refined %llu cards, "
	       "%llu slots logged, %llu passes\n", seed, (unsigned long long)stores, (unsigned long long)checks,
	       (unsigned long long)st.young_gcs, (unsigned long long)st.full_gcs, (unsigned long long)cards,
	       (unsigned long long)slots, (unsigned long long)passes);
	T_ASSERT(st.young_gcs > 10);
	T_ASSERT(slots > 0);	/* refinement ran and logged between pauses */
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
