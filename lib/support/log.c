/* SPDX-License-Identifier: MIT */
/*
 * log.c - -Xlog:gc style lines (KGC_LOG=gc,gc+heap,gc+pin,gc*) on stderr, or
 * in a file (KGC_LOG_FILE, like -Xlog:gc:file=) capped at KGC_LOG_FILE_SIZE
 * bytes and rotated over KGC_LOG_FILE_COUNT files: before a line would take
 * the file past the cap, path.<n-2> becomes path.<n-1>, ..., path becomes
 * path.0, and a new path starts. The same decorations either way.
 * The file sink is this file's own small OS boundary (stdio, rename).
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gc_internal.h"

#define LOG_FILE_SIZE_DEFAULT	(20u << 20)	/* -Xlog's filesize default */
#define LOG_FILE_COUNT_DEFAULT	5		/* -Xlog's filecount default */

struct log_file {
	pthread_mutex_t lock;
	FILE *f;		/* NULL after a failed reopen: lines are dropped */
	size_t size, cap;
	unsigned count;
	char path[];
};

/* path.<i> into buf */
static void log_file_name(const struct log_file *lf, unsigned i, char *buf, size_t n)
{
	snprintf(buf, n, "%s.%u", lf->path, i);
}

static void log_file_rotate(struct log_file *lf)
{
	size_t n = strlen(lf->path) + 16;
	char from[n], to[n];

	fclose(lf->f);
	for (unsigned i = lf->count - 1; i > 0; i--) {
		log_file_name(lf, i - 1, from, n);
		log_file_name(lf, i, to, n);
		rename(from, to);	/* ENOENT while fewer files exist yet */
	}
	log_file_name(lf, 0, to, n);
	rename(lf->path, to);
	lf->f = fopen(lf->path, "w");
	lf->size = 0;
	if (!lf->f)
		fprintf(stderr, "kgc: warning: KGC_LOG_FILE: cannot reopen '%s' after rotation: %s; "
			"log lines are dropped\n", lf->path, strerror(errno));
}

static void log_emit(struct kgc_heap *h, const char *line)
{
	struct log_file *lf = h->log_file;
	size_t n = strlen(line) + 1;

	if (!lf) {
		fprintf(stderr, "%s\n", line);
		return;
	}
	pthread_mutex_lock(&lf->lock);
	if (lf->f && lf->size && lf->size + n > lf->cap)
		log_file_rotate(lf);
	if (lf->f) {
		fprintf(lf->f, "%s\n", line);
		fflush(lf->f);
		lf->size += n;
	}
	pthread_mutex_unlock(&lf->lock);
}

/* The path with %p replaced by the pid (and %% by %), into buf[n]: 0 or -ENAMETOOLONG. */
static int log_file_expand(const char *spec, char *buf, size_t n)
{
	size_t k = 0;

	for (const char *s = spec; *s && k < n; s++) {
		if (s[0] == '%' && s[1] == 'p') {
			k += (size_t)snprintf(buf + k, n - k, "%ld", (long)getpid());
			s++;
		} else {
			if (s[0] == '%' && s[1] == '%')
				s++;
			buf[k++] = *s;
		}
	}
	if (k >= n)
		return -ENAMETOOLONG;
	buf[k] = 0;
	return 0;
}

int kgci_log_open(struct kgc_heap *h, const struct kgc_options *o)
{
	char path[4096];
	struct log_file *lf;
	int err;

	if (!o->log_file || !*o->log_file)
		return 0;
	if ((err = log_file_expand(o->log_file, path, sizeof(path)))) {
		kgci_err_set(-err, "KGC_LOG_FILE: path too long: '%s'", o->log_file);
		return err;
	}
	lf = calloc(1, sizeof(*lf) + strlen(path) + 1);
	if (!lf)
		return -ENOMEM;
	strcpy(lf->path, path);
	lf->f = fopen(path, "w");
	if (!lf->f) {
		err = errno;
		kgci_err_set(err, "KGC_LOG_FILE: cannot open '%s': %s", path, strerror(err));
		free(lf);
		return -err;
	}
	lf->cap = o->log_file_size ? o->log_file_size : LOG_FILE_SIZE_DEFAULT;
	lf->count = o->log_file_count ? o->log_file_count : LOG_FILE_COUNT_DEFAULT;
	pthread_mutex_init(&lf->lock, NULL);
	h->log_file = lf;
	if (!h->log_mask)
		h->log_mask = LOG_GC;	/* -Xlog:gc:file=... */
	return 0;
}

void kgci_log_close(struct kgc_heap *h)
{
	struct log_file *lf = h->log_file;

	if (!lf)
		return;
	h->log_file = NULL;
	if (lf->f)
		fclose(lf->f);
	pthread_mutex_destroy(&lf->lock);
	free(lf);
}

void kgci_log_line(struct kgc_heap *h, unsigned mask, const char *fmt, ...)
{
	char buf[512], line[560];
	va_list ap;

	if (!(h->log_mask & mask))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	snprintf(line, sizeof(line), "[kgc] GC(%llu) %s", (unsigned long long)h->gc_id, buf);
	log_emit(h, line);
}

void kgci_log_gc(struct kgc_heap *h, const char *what, const char *cause, size_t before,
	    size_t after, uint64_t ns, uint32_t npinned, unsigned fail_mask)
{
	char fail[80] = "";
	char pin[48] = "";

	if (!(h->log_mask & LOG_GC))
		return;
	if (fail_mask & (1u << FAIL_BUDGET))
		snprintf(fail, sizeof(fail), " (Promoted In Place)");
	fail_mask &= ~(1u << FAIL_BUDGET);
	if (fail_mask) {
		const char *a = (fail_mask & (1u << FAIL_ALLOC)) ? "Allocation" : "";
		const char *p = (fail_mask & ((1u << FAIL_PINNED) | (1u << FAIL_KPINNED))) ? "Pinned" : "";

		snprintf(fail + strlen(fail), sizeof(fail) - strlen(fail), " (Evacuation Failure: %s%s%s)", a,
			 *a && *p ? " / " : "", p);
	}
	if (npinned)
		snprintf(pin, sizeof(pin), " [pinned regions: %u]", npinned);
	kgci_log_line(h, LOG_GC, "%s (%s)%s %zuM->%zuM(%zuM) %.3fms%s", what, cause, fail, before >> 20,
		      after >> 20, ((size_t)h->nregions << h->region_shift) >> 20, ns / 1e6, pin);
}
