/* SPDX-License-Identifier: MIT */
/* statpage.h - kgcstat's reader of a process's published page (lib/support/statpub.h). */
#ifndef KGCS_STATPAGE_H
#define KGCS_STATPAGE_H
#include <stddef.h>
#include "support/statpub.h"

struct kgcs_page {
	long pid;
	const struct kgc_statpub_page *pg;	/* the shared mapping, read only */
	size_t size;
};

/* One consistent copy of the page. */
struct kgcs_snap {
	long pid;
	uint64_t start_ns, update_ns, updates;
	uint32_t nregions, pace_permille;
	char backend[8];
	struct kgc_stats st;
	char *map;		/* nregions characters (malloc'd) */
};

/* 0, or -1 with a message for the user in err[n]. */
int kgcs_page_open(long pid, struct kgcs_page *p, char *err, size_t n);
void kgcs_page_close(struct kgcs_page *p);
/* 0, or -1 (err) when no stable copy could be taken or the process is gone. */
int kgcs_page_snapshot(const struct kgcs_page *p, struct kgcs_snap *s, char *err, size_t n);
void kgcs_snap_free(struct kgcs_snap *s);
/* Regions of map character c. */
unsigned kgcs_snap_count(const struct kgcs_snap *s, char c);

#endif
