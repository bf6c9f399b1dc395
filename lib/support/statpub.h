/* SPDX-License-Identifier: MIT */
/*
 * statpub.h - the page a heap publishes with KGC_STATS_PUBLISH=1, read by
 * tools/kgcstat: /dev/shm/kgc-<pid>, mode 0600, owned by the process's user.
 * Written by statpub.c after each collection (at the safepoint), never per
 * allocation. Shared by the library and the tool (not an installed header).
 *
 * Seqlock: the writer makes seq odd, writes, makes it even again; a reader
 * copies the page, and keeps the copy only if seq was the same even value
 * before and after (it retries otherwise), so it never sees a torn update.
 */
#ifndef KGC_STATPUB_H
#define KGC_STATPUB_H
#include <stdint.h>
#include <kgc.h>

#define KGC_STATPUB_MAGIC	0x5354474bu	/* "KGTS" */
#define KGC_STATPUB_VERSION	1
#define KGC_STATPUB_NAME	"/kgc-%ld"	/* shm_open name: /dev/shm/kgc-<pid> */

/* One character per region in map[]. */
#define KGC_MAP_FREE		'.'
#define KGC_MAP_EDEN		'E'
#define KGC_MAP_SURVIVOR	'S'
#define KGC_MAP_OLD		'O'
#define KGC_MAP_HUMONGOUS	'H'
#define KGC_MAP_PINNED		'P'	/* pinned by the program (any kind) */
#define KGC_MAP_KPINNED		'K'	/* pinned by the kernel (kmod) */

struct kgc_statpub_page {
	uint32_t magic;
	uint32_t version;
	uint32_t header_size;	/* sizeof(struct kgc_statpub_page): map[] follows */
	uint32_t stats_size;	/* sizeof(struct kgc_stats) of the writer */
	uint64_t seq;		/* odd while an update is written */
	int64_t pid;
	uint64_t start_ns;	/* CLOCK_REALTIME when the heap was created */
	uint64_t update_ns;	/* CLOCK_REALTIME of the last update */
	uint64_t updates;	/* updates written */
	uint32_t nregions;	/* map[] entries */
	uint32_t pace_permille;	/* allocation pacing now, 0: off */
	char backend[8];	/* "kmod" / "anon" */
	struct kgc_stats stats;	/* at the last collection */
	char map[];		/* nregions characters, KGC_MAP_* */
};

#endif /* KGC_STATPUB_H */
