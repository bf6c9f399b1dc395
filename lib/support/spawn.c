/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - the library's own threads (kgc-gc, kgc-marker, kgc-kpinwatch,
 * kgc-pretouch): started with every signal blocked - signals are the
 * program's threads' business - and named for top, perf and gdb.
 */
#define _GNU_SOURCE	/* pthread_setname_np */
#include <signal.h>
#include "gc_internal.h"

/* 0 or the positive error of pthread_create. */
int kgci_spawn(pthread_t *th, void *(*fn)(void *), void *arg, const char *name)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		pthread_setname_np(*th, name);
	return err;
}
