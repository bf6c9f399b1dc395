/* SPDX-License-Identifier: MIT */
/* options.c - defaults and the one table of KGC_* environment variables. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "gc_internal.h"

enum opt_kind { O_SIZE, O_UINT, O_BOOL, O_BACKEND, O_PINMODE, O_REFINE, O_BUDGET, O_STR };

static const struct opt_desc {
	const char *env;
	enum opt_kind kind;
	size_t off;
	const char *help;
} opt_table[] = {
	{ "KGC_HEAP_MAX", O_SIZE, offsetof(struct kgc_options, max_heap), "heap reservation (bytes, k/m/g suffix)" },
	{ "KGC_REGION_SIZE", O_SIZE, offsetof(struct kgc_options, region_size), "region size, 1m..32m power of two" },
	{ "KGC_YOUNG_SIZE", O_SIZE, offsetof(struct kgc_options, young_size), "eden+survivor target" },
	{ "KGC_TENURE", O_UINT, offsetof(struct kgc_options, tenure_threshold), "tenuring threshold (0..15)" },
	{ "KGC_GC_THREADS", O_UINT, offsetof(struct kgc_options, gc_threads), "GC worker threads" },
	{ "KGC_BACKEND", O_BACKEND, offsetof(struct kgc_options, backend), "auto|kmod|anon" },
	{ "KGC_PIN_MODE", O_PINMODE, offsetof(struct kgc_options, pin_mode), "pin|gclocker" },
	{ "KGC_VERIFY", O_BOOL, offsetof(struct kgc_options, verify), "verify heap before/after GC" },
	{ "KGC_CHECK", O_BOOL, offsetof(struct kgc_options, check), "checked mode" },
	{ "KGC_POISON", O_BOOL, offsetof(struct kgc_options, poison), "poison freed/evacuated space" },
	{ "KGC_IHOP", O_UINT, offsetof(struct kgc_options, ihop_percent), "old-space % starting concurrent marking (100: never)" },
	{ "KGC_PAUSE_GOAL_MS", O_UINT, offsetof(struct kgc_options, pause_goal_ms), "young pause goal, sizes eden" },
	{ "KGC_MIXED_LIVE", O_UINT, offsetof(struct kgc_options, mixed_live_percent), "mixed GCs evacuate old regions less live than this % (100: never)" },
	{ "KGC_PACING", O_UINT, offsetof(struct kgc_options, pacing_percent), "max % of time allocating threads give a lagging cycle: marking, else sleeping (100: off)" },
	{ "KGC_SAFEPOINT_WARN_MS", O_UINT, offsetof(struct kgc_options, safepoint_warn_ms), "warn when a safepoint waits this long for a thread (4294967295: never)" },
	{ "KGC_STALE_CHECK", O_UINT, offsetof(struct kgc_options, stale_check), "debug: young GC every N allocations, evacuated regions PROT_NONE for a while (0: off)" },
	{ "KGC_UNCOMMIT_DELAY_MS", O_UINT, offsetof(struct kgc_options, uncommit_delay_ms), "free regions go back to the OS after this long unused (and 16 GCs; 4294967295: never)" },
	{ "KGC_THP", O_BOOL, offsetof(struct kgc_options, thp), "anon heap: transparent huge pages (MADV_HUGEPAGE)" },
	{ "KGC_LOG", O_STR, offsetof(struct kgc_options, log), "gc,gc+heap,gc+pin,gc+safepoint,gc+phases,gc+phases+heap,gc*" },
	{ "KGC_LOG_FILE", O_STR, offsetof(struct kgc_options, log_file), "log to this file, not stderr (%p: pid)" },
	{ "KGC_LOG_FILE_SIZE", O_SIZE, offsetof(struct kgc_options, log_file_size), "rotate the log file at this size (0: 20m)" },
	{ "KGC_LOG_FILE_COUNT", O_UINT, offsetof(struct kgc_options, log_file_count), "rotated log files kept (0: 5)" },
	{ "KGC_REFINE", O_REFINE, offsetof(struct kgc_options, refine), "auto|off|always: concurrent refinement of dirty cards" },
	{ "KGC_PAUSE_BUDGET", O_BUDGET, offsetof(struct kgc_options, pause_budget), "off|on: a young pause past its budget promotes the rest in place" },
	{ "KGC_STATS_PUBLISH", O_BOOL, offsetof(struct kgc_options, stats_publish), "publish stats in /dev/shm/kgc-<pid> for kgcstat" },
};

static int parse_size(const char *s, size_t *out)
{
	char *end;
	unsigned long long v;

	unsigned shift = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '-' || *s == '+')
		return -EINVAL;	/* strtoull would take "-3" as 2^64 - 3 */
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	}
	if (shift && v > (~0ull >> shift))
		return -EINVAL;	/* overflows */
	v <<= shift;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

/* One option from its table entry: 0 or -EINVAL (with a message). */
static int option_parse(struct kgc_options *o, const struct opt_desc *d, const char *v)
{
	char *p = (char *)o + d->off;
	size_t sz;
	int bad = 0;

	switch (d->kind) {
	case O_SIZE:
		if (parse_size(v, &sz) == 0)
			*(size_t *)p = sz;
		else
			bad = 1;
		break;
	case O_UINT:
		if (parse_size(v, &sz) == 0 && sz <= UINT_MAX)
			*(unsigned *)p = (unsigned)sz;
		else
			bad = 1;
		break;
	case O_BOOL:
		*(int *)p = !(strcmp(v, "0") == 0 || strcasecmp(v, "false") == 0 ||
			      strcasecmp(v, "off") == 0 || strcasecmp(v, "no") == 0);
		break;
	case O_BACKEND:
		if (!strcasecmp(v, "auto"))
			*(int *)p = KGC_BACKEND_AUTO;
		else if (!strcasecmp(v, "kmod"))
			*(int *)p = KGC_BACKEND_KMOD;
		else if (!strcasecmp(v, "anon"))
			*(int *)p = KGC_BACKEND_ANON;
		else
			bad = 1;
		break;
	case O_PINMODE:
		if (!strcasecmp(v, "pin"))
			*(int *)p = KGC_PIN_MODE_PIN;
		else if (!strcasecmp(v, "gclocker"))
			*(int *)p = KGC_PIN_MODE_GCLOCKER;
		else
			bad = 1;
		break;
	case O_REFINE:
		if (!strcasecmp(v, "auto"))
			*(unsigned *)p = KGC_REFINE_AUTO;
		else if (!strcasecmp(v, "off"))
			*(unsigned *)p = KGC_REFINE_OFF;
		else if (!strcasecmp(v, "always"))
			*(unsigned *)p = KGC_REFINE_ALWAYS;
		else
			bad = 1;
		break;
	case O_BUDGET:
		if (!strcasecmp(v, "off"))
			*(unsigned *)p = KGC_PAUSE_BUDGET_OFF;
		else if (!strcasecmp(v, "on"))
			*(unsigned *)p = KGC_PAUSE_BUDGET_ON;
		else
			bad = 1;
		break;
	case O_STR:
		if (d->off == offsetof(struct kgc_options, log) && kgci_log_parse(v) < 0)
			bad = 1;	/* a selector it does not know would log nothing, silently */
		else
			*(const char **)p = v;
		break;
	}
	if (!bad)
		return 0;
	kgci_err_set(EINVAL, "bad value for %s: '%s' (%s)", d->env, v, d->help);
	return -EINVAL;
}

int kgci_options_from_env(struct kgc_options *o)
{
	int ret = 0;

	for (size_t i = 0; i < sizeof(opt_table) / sizeof(opt_table[0]); i++) {
		const char *v = getenv(opt_table[i].env);

		if (v && *v && option_parse(o, &opt_table[i], v))
			ret = -EINVAL;
	}
	return ret;
}

void kgci_options_defaults(struct kgc_options *o)
{
	memset(o, 0, sizeof(*o));
	o->size = sizeof(*o);
	o->tenure_threshold = 7;
	o->backend = KGC_BACKEND_AUTO;
	o->pin_mode = KGC_PIN_MODE_PIN;
}

KGC_API int kgc_options_init_size(struct kgc_options *opts, size_t size)
{
	struct kgc_options o;
	int ret;

	if (!opts || size < offsetof(struct kgc_options, max_heap) || size > UINT32_MAX) {
		kgci_err_set(EINVAL, "kgc_options_init: %s", opts ? "bad struct size" : "opts is NULL");
		return -EINVAL;
	}
	kgci_options_defaults(&o);
	ret = kgci_options_from_env(&o);
	if (size > sizeof(o))
		memset((char *)opts + sizeof(o), 0, size - sizeof(o));
	memcpy(opts, &o, size < sizeof(o) ? size : sizeof(o));
	opts->size = (uint32_t)size;
	return ret;
}

/* kgc_heap_create: the caller's struct, whatever its size, as this library's. */
int kgci_options_import(const struct kgc_options *caller, struct kgc_options *o)
{
	size_t n = caller->size;

	if (n < offsetof(struct kgc_options, max_heap)) {
		kgci_err_set(EINVAL, "kgc_heap_create: options not initialized (size %zu): call kgc_options_init first", n);
		return -EINVAL;
	}
	/* fields a smaller (older) caller does not have: defaults and environment */
	kgci_options_defaults(o);
	if (n < sizeof(*o))
		kgci_options_from_env(o);
	memcpy(o, caller, n < sizeof(*o) ? n : sizeof(*o));
	o->size = sizeof(*o);
	return 0;
}

KGC_API
int kgc_options_set(struct kgc_options *opts, const char *key, const char *value)
{
	if (!opts || !key || !value) {
		kgci_err_set(EINVAL, "kgc_options_set: NULL argument");
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(opt_table) / sizeof(opt_table[0]); i++) {
		const struct opt_desc *d = &opt_table[i];

		size_t end = d->off + (d->kind == O_SIZE ? sizeof(size_t) :
				       d->kind == O_STR ? sizeof(char *) : sizeof(int));

		if (end > opts->size)
			continue;	/* the caller's (older) struct has no such field */
		if (!strcmp(key, d->env) || !strcasecmp(key, d->env + 4))
			return option_parse(opts, d, value);
	}
	kgci_err_set(ENOENT, "kgc_options_set: no option '%s'", key);
	return -ENOENT;
}

/*
 * KGC_LOG: selectors separated by commas, each "gc" with any of the tags
 * heap, pin, safepoint, phases joined by '+' (HotSpot's -Xlog tag sets:
 * "gc+phases+heap"), or "gc*" / "all". The mask, or -1 for a selector it
 * does not know (kgc_options_set and the environment refuse it).
 */
int kgci_log_parse(const char *spec)
{
	static const struct { const char *tag; unsigned bit; } tags[] = {
		{ "heap", LOG_HEAP }, { "pin", LOG_PIN }, { "safepoint", LOG_SAFEPOINT }, { "phases", LOG_PHASES },
	};
	unsigned m = 0;
	char buf[128], *save, *tok;

	if (!spec || !*spec)
		return 0;
	if (strlen(spec) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *save2, *t;

		if (!strcmp(tok, "gc*") || !strcmp(tok, "all")) {
			m |= LOG_ALL;
			continue;
		}
		t = strtok_r(tok, "+", &save2);
		if (!t || strcmp(t, "gc"))
			return -1;
		m |= LOG_GC;
		while ((t = strtok_r(NULL, "+", &save2))) {
			size_t k = 0;

			while (k < sizeof(tags) / sizeof(tags[0]) && strcmp(t, tags[k].tag))
				k++;
			if (k == sizeof(tags) / sizeof(tags[0]))
				return -1;
			m |= tags[k].bit;
		}
	}
	return (int)m;
}
