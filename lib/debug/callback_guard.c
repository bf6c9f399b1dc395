/* SPDX-License-Identifier: MIT */
/*
 * callback_guard.c - what a runtime callback may not do. While the
 * library runs one of the runtime's callbacks that must not re-enter it
 * (a scan function, a heap walk's visitor: kgci_cb_running names it), a
 * managed kgc call on that thread (allocation, frames, collections,
 * safepoints) would corrupt the collector's state or deadlock: it fails
 * with -EPERM, and checked mode aborts naming the callback.
 */
#include <errno.h>
#include "gc_internal.h"

__thread const char *kgci_cb_running;

/* true: refuse the call what (the error set; checked mode: fatal) */
bool kgci_cb_refuse(struct kgc_heap *h, const char *what)
{
	if (likely(!kgci_cb_running))
		return false;
	if (h->opt.check)
		kgci_fatal("%s called from %s: a callback must not allocate or call managed kgc functions",
			   what, kgci_cb_running);
	kgci_err_set(EPERM, "%s called from %s", what, kgci_cb_running);
	return true;
}
