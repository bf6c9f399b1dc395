/* kmod backend: O_DIRECT reads from /dev/ram0 straight into a heap byte
 * array while another thread keeps collecting (young and full) - the data
 * lands in the right array bytes and nothing else of the array changes.
 *
 * The read runs inside a critical section (kgc_critical_get): the thread is
 * in native state, so collections proceed during the I/O, and the array's
 * region is pinned by the library and, while the bio holds the pages, by the
 * kernel too. (Without a critical section no collector can keep a buffer
 * address valid between computing it and the kernel pinning it: a kernel pin
 * only shows up once the I/O has started.) Between reads the thread
 * allocates, and every tenth read targets a fresh array that a young GC has
 * just evacuated, so reads hit arrays that moved. Skips unless the backend is
 * kmod and /dev/ram0 exists (the VM rig loads brd). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include "tgc.h"

#define PG 4096u
#define DEV_BYTES (1u << 20)		/* pattern written to the first MiB */
#define ARR_LEN (192u * 1024)
#define SENTINEL 0xa5
#define MIN_ITERS 60
#define MIN_GCS 12
#define MIN_OVERLAPS 5	/* reads with a collection completing inside their critical section */

static uint8_t dpat(size_t off)
{
	return (uint8_t)(off * 7 + (off >> 12) * 13 + 0x5b);
}

struct helper {
	kgc_heap *h;
	kgc_type_id node;
	atomic_int stop;
	atomic_int gcs;
};

static void *collector(void *arg)
{
	struct helper *hp = arg;
	kgc_thread *t;

	T_ASSERT_EQ(kgc_thread_attach(hp->h, "collector", &t), 0);
	for (int i = 0; !atomic_load(&hp->stop); i++) {
		for (int k = 0; k < 3000; k++)
			T_ASSERT(kgc_alloc(t, hp->node));
		T_ASSERT_EQ(kgc_collect(t, (i % 4 == 3) ? KGC_GC_FULL : KGC_GC_YOUNG), 0);
		atomic_fetch_add(&hp->gcs, 1);
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	return NULL;
}

int main(void)
{
	static const uint32_t offs[2] = { N_LEFT, N_RIGHT };
	struct kgc_type_desc nd = { .name = "node", .payload_size = 24, .nrefs = 2, .ref_offsets = offs };
	struct kgc_options o;
	struct helper hp = { 0 };
	kgc_heap *h;
	kgc_thread *t;
	kgc_obj slots[1] = { 0 };
	struct kgc_frame f;
	pthread_t th;
	uint8_t *wbuf, *p, *prev = NULL;
	unsigned long long seed;
	int fd, moves = 0, overlaps = 0, evacuated = 0, iters, gcs0;

	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = (size_t)32 << 20;
	o.region_size = (size_t)1 << 20;
	o.young_size = (size_t)4 << 20;
	h = t_kmod_heap(&o);
	fd = open("/dev/ram0", O_RDWR | O_DIRECT | O_CLOEXEC);
	if (fd < 0) {
		T_ASSERT_EQ(kgc_heap_destroy(h), 0);
		printf("SKIP: /dev/ram0 unusable with O_DIRECT: %s\n", strerror(errno));
		return T_SKIP;
	}
	seed = t_seed();

	/* the device's first MiB gets a known pattern (O_DIRECT from aligned memory) */
	T_ASSERT_EQ(posix_memalign((void **)&wbuf, PG, DEV_BYTES), 0);
	for (size_t i = 0; i < DEV_BYTES; i++)
		wbuf[i] = dpat(i);
	T_ASSERT_EQ(pwrite(fd, wbuf, DEV_BYTES, 0), DEV_BYTES);
	free(wbuf);

	T_ASSERT_EQ(kgc_type_register(h, &nd, &hp.node), 0);
	hp.h = h;
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, slots, 1, NULL);
	slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ARR_LEN);
	T_ASSERT(slots[0]);
	T_ASSERT_EQ(pthread_create(&th, NULL, collector, &hp), 0);

	for (iters = 0; iters < MIN_ITERS || atomic_load(&hp.gcs) < MIN_GCS ||
		       overlaps < MIN_OVERLAPS; iters++) {
		size_t len, npg, room, dst_off, dev_off;
		uint8_t *dst;

		T_ASSERT(iters < 100000);
		/* garbage: safepoints where the array may move */
		for (int k = 0; k < (int)(t_rand(&seed) % 2000); k++)
			T_ASSERT(kgc_alloc(t, hp.node));
		if (iters % 10 == 9) {
			/* a fresh (eden, unpinned) array: a young GC must evacuate it,
			 * so the next reads target a moved array */
			kgc_obj fresh = NULL;
			int tries;

			/* a young GC may legally keep it in place (its region failed
			 * evacuation: no to-space, or a page still looked pinned):
			 * then try a new one, a few times */
			for (tries = 0; tries < 8 && slots[0] == fresh; tries++) {
				slots[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_BYTE), ARR_LEN);
				T_ASSERT(slots[0]);
				fresh = slots[0];
				T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
			}
			if (slots[0] == fresh) {
				struct kgc_stats st;

				T_ASSERT_EQ(kgc_stats_get(h, &st, sizeof(st)), 0);
				T_FAIL("a fresh array was never evacuated in %d young GCs (evacuation failures: "
				       "pinned %llu, kernel-pinned %llu, allocation %llu)", tries,
				       (unsigned long long)st.evac_fail_pinned,
				       (unsigned long long)st.evac_fail_kernel_pinned,
				       (unsigned long long)st.evac_fail_alloc);
			}
			evacuated++;
		}

		p = kgc_critical_get(t, &slots[0], &len);
		T_ASSERT(p);
		T_ASSERT_EQ(len, ARR_LEN);
		if (prev && p != prev)
			moves++;
		prev = p;
		gcs0 = atomic_load(&hp.gcs);
		memset(p, SENTINEL, len);
		dst = (uint8_t *)(((uintptr_t)p + PG - 1) & ~(uintptr_t)(PG - 1));
		room = (size_t)(p + len - dst) / PG;	/* whole pages inside the elements */
		npg = 1 + t_rand(&seed) % 16;
		T_ASSERT(room > npg);
		dst += (t_rand(&seed) % (room - npg + 1)) * PG;
		dst_off = (size_t)(dst - p);
		dev_off = (t_rand(&seed) % (DEV_BYTES / PG - npg + 1)) * PG;
		if (pread(fd, dst, npg * PG, (off_t)dev_off) != (ssize_t)(npg * PG))
			T_FAIL("pread %zu pages at %zu: %s", npg, dev_off, strerror(errno));
		for (size_t i = 0; i < len; i++) {
			uint8_t want = (i >= dst_off && i < dst_off + npg * PG) ?
				       dpat(dev_off + i - dst_off) : SENTINEL;

			if (p[i] != want)
				T_FAIL("iteration %d: array byte %zu = %#x, want %#x (read %zu pages of "
				       "device offset %zu to array offset %zu)",
				       iters, i, p[i], want, npg, dev_off, dst_off);
		}
		if (atomic_load(&hp.gcs) != gcs0)
			overlaps++;
		T_ASSERT_EQ(kgc_critical_release(t, &slots[0], p, KGC_CRITICAL_COMMIT), 0);
	}
	atomic_store(&hp.stop, 1);
	/* the collector may be waiting for this thread at a safepoint */
	kgc_enter_native(t);
	T_ASSERT_EQ(pthread_join(th, NULL), 0);
	kgc_leave_native(t);
	printf("%d O_DIRECT reads (%d with a collection inside), %d collections alongside, "
	       "array at a new address %d times (%d fresh arrays evacuated)\n", iters, overlaps,
	       atomic_load(&hp.gcs), moves, evacuated);
	T_ASSERT(evacuated >= MIN_ITERS / 10);
	close(fd);
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
