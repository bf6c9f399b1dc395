/* SPDX-License-Identifier: MIT */
/*
 * KGC_HOOK_FATAL: before the library aborts (here: a handle freed twice in
 * checked mode), the fatal hook runs with the message, once, and abort()
 * follows whatever it returns; a hook removed before is not called; a
 * fatal error inside the fatal hook does not recurse.
 */
#include <unistd.h>
#include "tgc.h"

static kgc_type_id NODE;
static kgc_heap *h;
static kgc_thread *t;
static kgc_handle dbl;	/* freed twice */
static int ncalls;

static int on_fatal(kgc_heap *heap, const struct kgc_hook_info *in, void *arg)
{
	char buf[600];
	int n = snprintf(buf, sizeof(buf), "fatal hook (%s) call %d: heap %s, message [%s]\n", (const char *)arg,
			 ++ncalls, heap == h ? "ours" : "other", in->message);

	if (write(2, buf, (size_t)n) < 0) {
	}
	if (!strcmp(arg, "nested"))
		kgc_handle_free(t, dbl);	/* a third free: a fatal error in the hook */
	return 0;
}

static void double_free(const char *tag, int removed)
{
	kgc_handle c;

	h = t_heap(16, 4, &NODE);
	T_ASSERT_EQ(kgc_thread_attach(h, "checked", &t), 0);
	T_ASSERT_EQ(kgc_hook_set(h, KGC_HOOK_FATAL, on_fatal, (void *)tag), 0);
	if (removed)
		T_ASSERT_EQ(kgc_hook_set(h, KGC_HOOK_FATAL, NULL, NULL), 0);
	c = dbl = kgc_handle_new(t, kgc_alloc(t, NODE));
	kgc_handle_free(t, c);
	kgc_handle_free(t, c);
}

static void plain(void) { double_free("plain", 0); }
static void removed(void) { double_free("removed", 1); }
static void nested(void) { double_free("nested", 0); }

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	t_expect_death(plain, "fatal hook (plain) call 1: heap ours, message [kgc_handle_free: thread 'checked'");
	t_expect_death_without(removed, "kgc_handle_free: thread 'checked'", "fatal hook");
	t_expect_death_without(nested, "fatal hook (nested) call 1", "call 2");
	return 0;
}
