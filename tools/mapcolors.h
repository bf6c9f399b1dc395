/* SPDX-License-Identifier: MIT */
/* mapcolors.h - kgcstat --png: cell geometry and one colour per map character. */
#ifndef KGCS_MAPCOLORS_H
#define KGCS_MAPCOLORS_H
#include <stdint.h>
#include "support/statpub.h"

#define KGCS_MAP_COLS	64	/* regions per row, in the terminal and the PNG */
#define KGCS_CELL	8	/* PNG: pixels per region cell, plus a 1-pixel grid line */

static const struct kgcs_color { char c; const char *name; uint8_t rgb[3]; } kgcs_colors[] = {
	{ KGC_MAP_EDEN, "eden", { 110, 200, 110 } },
	{ KGC_MAP_SURVIVOR, "survivor", { 60, 150, 230 } },
	{ KGC_MAP_OLD, "old", { 240, 170, 50 } },
	{ KGC_MAP_HUMONGOUS, "humongous", { 170, 90, 210 } },
	{ KGC_MAP_PINNED, "pinned", { 230, 40, 40 } },
	{ KGC_MAP_KPINNED, "kernel-pinned", { 120, 0, 0 } },
	{ KGC_MAP_FREE, "free", { 235, 235, 235 } },
};
#define KGCS_NCOLORS (sizeof(kgcs_colors) / sizeof(kgcs_colors[0]))
static const uint8_t kgcs_grid_rgb[3] = { 40, 40, 40 };

#endif
