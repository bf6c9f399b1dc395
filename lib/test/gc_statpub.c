/* KGC_STATS_PUBLISH: off, no page; on, /dev/shm/kgc-<pid> exists from
 * kgc_heap_create, mode 0600 and owned by the process's user, holds after
 * each collection the numbers kgc_stats_get reports and one map character
 * per region (a seq word even between updates); a second publishing heap in
 * the process is refused with -EEXIST; kgc_heap_destroy removes the page. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "tgc.h"
#include "../support/statpub.h"

static char path[64];

static const struct kgc_statpub_page *page_map(size_t *size)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY);

	T_ASSERT(fd >= 0);
	T_ASSERT_EQ(fstat(fd, &st), 0);
	T_ASSERT_EQ(st.st_mode & 07777, 0600);
	T_ASSERT_EQ(st.st_uid, geteuid());
	*size = (size_t)st.st_size;
	p = mmap(NULL, *size, PROT_READ, MAP_SHARED, fd, 0);
	T_ASSERT(p != MAP_FAILED);
	close(fd);
	return p;
}

int main(void)
{
	struct kgc_options o;
	struct kgc_stats s;
	const struct kgc_statpub_page *pg;
	kgc_type_id node;
	kgc_heap *h, *h2;
	kgc_thread *t;
	kgc_obj keep = NULL;
	struct kgc_frame f;
	size_t size;

	snprintf(path, sizeof(path), "/dev/shm" KGC_STATPUB_NAME, (long)getpid());
	unsetenv("KGC_STATS_PUBLISH");
	t_opts_small(&o, 32, 4);
	h = t_heap_opts(&o, &node);
	T_ASSERT(access(path, F_OK) != 0);	/* off: no page */
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);

	T_ASSERT_EQ(kgc_options_set(&o, "stats_publish", "1"), 0);
	h = t_heap_opts(&o, &node);
	pg = page_map(&size);
	T_ASSERT_EQ(pg->magic, KGC_STATPUB_MAGIC);
	T_ASSERT_EQ(pg->version, KGC_STATPUB_VERSION);
	T_ASSERT_EQ(pg->pid, getpid());
	T_ASSERT_EQ(pg->nregions, 32);
	T_ASSERT(size >= pg->header_size + pg->nregions);
	T_ASSERT_EQ(pg->updates, 1);	/* at creation */
	T_ASSERT_EQ(pg->stats.young_gcs, 0);

	T_ASSERT_EQ(kgc_options_set(&o, "KGC_HEAP_MAX", "8m"), 0);
	T_ASSERT_EQ(kgc_heap_create(&o, &h2), -EEXIST);
	T_ASSERT(strstr(kgc_last_error(), "KGC_STATS_PUBLISH"));

	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	kgc_frame_push(t, &f, &keep, 1, NULL);
	t_list(t, node, &keep, 1000, 0);
	for (int i = 0; i < 5; i++)
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_stats_get(h, &s, sizeof(s)), 0);
	T_ASSERT_EQ(pg->seq % 2, 0);
	T_ASSERT_EQ(pg->updates, 7);
	T_ASSERT_EQ(pg->stats.young_gcs, 5);
	T_ASSERT_EQ(pg->stats.full_gcs, 1);
	T_ASSERT_EQ(pg->stats.young_gcs, s.young_gcs);
	T_ASSERT_EQ(pg->stats.regions_old, s.regions_old);
	T_ASSERT(pg->stats.young_pause_ns + pg->stats.full_pause_ns == s.pause_total_ns);
	T_ASSERT(s.regions_old > 0);
	for (uint32_t i = 0, old = 0; i < pg->nregions; i++) {
		T_ASSERT(strchr(".ESOHPK", pg->map[i]) && pg->map[i]);
		old += pg->map[i] == KGC_MAP_OLD;
		if (i == pg->nregions - 1)
			T_ASSERT_EQ(old, s.regions_old);
	}
	T_ASSERT_EQ(kgc_frame_pop(t, &f), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	T_ASSERT(access(path, F_OK) != 0);	/* removed */
	munmap((void *)pg, size);
	return 0;
}
