/* SPDX-License-Identifier: MIT */
/*
 * kgcstat - watch a kgc heap from outside its process, like jstat -gc:
 *   kgcstat <pid> [interval[ms|s] [count]]   a line per interval
 *   kgcstat --map [--png FILE] <pid>         the region map (one character
 *                                            per region), or as a picture
 * The process publishes with KGC_STATS_PUBLISH=1 (lib/support/statpub.c).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "mapcolors.h"
#include "png.h"
#include "statpage.h"

static void usage(void)
{
	fprintf(stderr, "usage: kgcstat <pid> [interval[ms|s] [count]]\n"
			"       kgcstat --map [--png FILE] <pid>\n"
			"The process must run with KGC_STATS_PUBLISH=1 (see kgcstat(1)).\n");
	exit(2);
}

static int parse_ulong(const char *s, unsigned long *v, unsigned long scale_s)
{
	char *end;

	*v = strtoul(s, &end, 10);
	if (end == s || *s == '-')
		return -1;
	if (!strcmp(end, "s"))
		*v *= scale_s;
	else if (*end && strcmp(end, "ms"))
		return -1;
	return 0;
}

static void print_header(void)
{
	printf("%5s %5s %5s %5s %5s %5s %5s %7s %8s %6s %6s %8s %5s %8s %8s %8s %7s %7s %7s\n",
	       "EDEN", "SURV", "OLD", "HUM", "PIN", "KPIN", "FREE", "YGC", "YGCT", "MGC", "FGC", "FGCT",
	       "CYC", "PMAXms", "GCT", "PINS", "PACE", "PACET", "USEDM");
}

static void print_line(const struct kgcs_snap *s)
{
	const struct kgc_stats *st = &s->st;

	printf("%5u %5u %5u %5u %5u %5u %5u %7llu %8.3f %6llu %6llu %8.3f %5llu %8.3f %8.3f %8llu %7llu %7.3f %7llu\n",
	       st->regions_eden, st->regions_survivor, st->regions_old, st->regions_humongous,
	       st->regions_pinned, kgcs_snap_count(s, KGC_MAP_KPINNED), st->regions_free,
	       (unsigned long long)st->young_gcs, st->young_pause_ns / 1e9,
	       (unsigned long long)st->mixed_gcs, (unsigned long long)st->full_gcs, st->full_pause_ns / 1e9,
	       (unsigned long long)st->concurrent_cycles, st->pause_max_ns / 1e6, st->pause_total_ns / 1e9,
	       (unsigned long long)st->critical_gets, (unsigned long long)st->pacing_stalls,
	       st->pacing_stall_ns / 1e9, (unsigned long long)(st->heap_used >> 20));
}

static int stat_loop(const struct kgcs_page *p, unsigned long interval_ms, unsigned long count)
{
	char err[256];
	struct kgcs_snap s;

	for (unsigned long i = 0; !count || i < count; i++) {
		if (i)
			usleep((useconds_t)(interval_ms * 1000));
		if (kill((pid_t)p->pid, 0) < 0) {
			fprintf(stderr, "kgcstat: process %ld exited\n", p->pid);
			return i ? 0 : 1;
		}
		if (kgcs_page_snapshot(p, &s, err, sizeof(err))) {
			fprintf(stderr, "kgcstat: %s\n", err);
			return 1;
		}
		if (i % 20 == 0)
			print_header();
		print_line(&s);
		fflush(stdout);
		kgcs_snap_free(&s);
	}
	return 0;
}

static void print_map(const struct kgcs_snap *s)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	printf("kgc heap of process %ld: %u regions of %u KiB, backend %s, %llu collections, "
	       "map of %.1f s ago\n", s->pid, s->nregions, s->st.region_size >> 10, s->backend,
	       (unsigned long long)(s->st.young_gcs + s->st.full_gcs),
	       ((uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec - s->update_ns) / 1e9);
	for (uint32_t i = 0; i < s->nregions; i += KGCS_MAP_COLS)
		printf("%6u %.*s\n", i, (int)(s->nregions - i < KGCS_MAP_COLS ? s->nregions - i : KGCS_MAP_COLS),
		       s->map + i);
	for (size_t k = 0; k < KGCS_NCOLORS; k++)
		printf("%s%c %s %u", k ? "  " : "", kgcs_colors[k].c, kgcs_colors[k].name,
		       kgcs_snap_count(s, kgcs_colors[k].c));
	printf("\n");
}

static const uint8_t *map_rgb(char c)
{
	for (size_t k = 0; k < KGCS_NCOLORS; k++)
		if (kgcs_colors[k].c == c)
			return kgcs_colors[k].rgb;
	return kgcs_grid_rgb;
}

/* The map as cells of KGCS_CELL pixels with 1-pixel grid lines. */
static int write_png(const struct kgcs_snap *s, const char *path)
{
	uint32_t cols = s->nregions < KGCS_MAP_COLS ? s->nregions : KGCS_MAP_COLS;
	uint32_t rows = (s->nregions + KGCS_MAP_COLS - 1) / KGCS_MAP_COLS;
	uint32_t w = cols * (KGCS_CELL + 1) + 1, h = rows * (KGCS_CELL + 1) + 1;
	uint8_t *rgb = malloc((size_t)w * h * 3);
	FILE *f;
	int ret;

	if (!rgb)
		return -1;
	for (uint32_t y = 0; y < h; y++)
		for (uint32_t x = 0; x < w; x++) {
			uint32_t i = (y / (KGCS_CELL + 1)) * KGCS_MAP_COLS + x / (KGCS_CELL + 1);
			int grid = x % (KGCS_CELL + 1) == 0 || y % (KGCS_CELL + 1) == 0 || i >= s->nregions;

			memcpy(rgb + ((size_t)y * w + x) * 3, grid ? kgcs_grid_rgb : map_rgb(s->map[i]), 3);
		}
	f = fopen(path, "wb");
	ret = f ? kgcs_png_write(f, rgb, w, h) : -1;
	if (f && fclose(f))
		ret = -1;
	free(rgb);
	return ret;
}

static int map_cmd(const struct kgcs_page *p, const char *png)
{
	char err[256];
	struct kgcs_snap s;
	int ret = 0;

	if (kgcs_page_snapshot(p, &s, err, sizeof(err))) {
		fprintf(stderr, "kgcstat: %s\n", err);
		return 1;
	}
	if (!png) {
		print_map(&s);
	} else if (write_png(&s, png)) {
		perror(png);
		ret = 1;
	}
	kgcs_snap_free(&s);
	return ret;
}

int main(int argc, char **argv)
{
	int map = 0, ret, i = 1;
	const char *png = NULL;
	unsigned long pid, interval = 0, count = 1;
	char err[256];
	struct kgcs_page p;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--map"))
			map = 1;
		else if (!strcmp(argv[i], "--png") && i + 1 < argc)
			png = argv[++i], map = 1;
		else
			usage();
	}
	if (i >= argc || parse_ulong(argv[i], &pid, 1) || !pid || argc - i > (map ? 1 : 3))
		usage();
	if (!map && i + 1 < argc && (parse_ulong(argv[i + 1], &interval, 1000) || !interval))
		usage();
	if (interval)
		count = 0;	/* until the process exits, unless a count follows */
	if (!map && i + 2 < argc && (parse_ulong(argv[i + 2], &count, 1) || !count))
		usage();
	if (kgcs_page_open((long)pid, &p, err, sizeof(err))) {
		fprintf(stderr, "kgcstat: %s\n", err);
		return 1;
	}
	ret = map ? map_cmd(&p, png) : stat_loop(&p, interval, count);
	kgcs_page_close(&p);
	return ret;
}
