/* SPDX-License-Identifier: MIT */
/* error.c - kgc_last_error (thread-local reason) and checked-mode aborts. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "gc_internal.h"

static __thread char err_buf[256];	/* per thread: the last error's message */

KGC_API const char *kgc_last_error(void)
{
	return err_buf;
}

void kgci_err_set(int err, const char *fmt, ...)
{
	va_list ap;

	(void)err;
	va_start(ap, fmt);
	vsnprintf(err_buf, sizeof(err_buf), fmt, ap);
	va_end(ap);
}

/* Called with the message before abort() when set: a callback passed down
 * (hooks.c sets it with the first fatal hook), so this base file calls nothing above it. */
void (*kgci_fatal_before_abort)(const char *msg);

void kgci_fatal(const char *fmt, ...)
{
	void (*before)(const char *msg);
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (n > (int)sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	/* one message, one write */
	if (write(2, "kgc: fatal: ", 12) < 0 || write(2, buf, n) < 0) {
	}
	buf[n - 1] = 0;
	before = __atomic_load_n(&kgci_fatal_before_abort, __ATOMIC_ACQUIRE);
	if (before)
		before(buf);	/* the runtime's last word (hooks.c installs it) */
	abort();
}

void *kgci_array_grow(void *p, size_t *cap, size_t elem, const char *what)
{
	size_t nc = *cap ? *cap * 2 : 4096;
	void *n = realloc(p, nc * elem);

	if (!n)
		kgci_fatal("%s: out of memory (%zu entries)", what, nc);
	*cap = nc;
	return n;
}
