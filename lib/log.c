/* SPDX-License-Identifier: MIT */
/* log.c - -Xlog:gc style output on stderr (KGC_LOG=gc,gc+heap,gc+pin,gc*). */
#include <stdarg.h>
#include <stdio.h>
#include "gc_internal.h"

void kgci_log_line(struct kgc_heap *h, unsigned mask, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	if (!(h->log_mask & mask))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "[kgc] GC(%llu) %s\n", (unsigned long long)h->gc_id, buf);
}

void kgci_log_gc(struct kgc_heap *h, const char *what, const char *cause, size_t before,
	    size_t after, uint64_t ns, uint32_t npinned, unsigned fail_mask)
{
	char fail[80] = "";
	char pin[48] = "";

	if (!(h->log_mask & LOG_GC))
		return;
	if (fail_mask) {
		const char *a = (fail_mask & (1u << FAIL_ALLOC)) ? "Allocation" : "";
		const char *p = (fail_mask & ((1u << FAIL_PINNED) | (1u << FAIL_KPINNED))) ? "Pinned" : "";

		snprintf(fail, sizeof(fail), " (Evacuation Failure: %s%s%s)", a, *a && *p ? " / " : "", p);
	}
	if (npinned)
		snprintf(pin, sizeof(pin), " [pinned regions: %u]", npinned);
	fprintf(stderr, "[kgc] GC(%llu) %s (%s)%s %zuM->%zuM(%zuM) %.3fms%s\n",
		(unsigned long long)h->gc_id, what, cause, fail, before >> 20, after >> 20,
		((size_t)h->nregions << h->region_shift) >> 20, ns / 1e6, pin);
}
