/* SPDX-License-Identifier: MIT */
/*
 * The option and stats structs work across header versions: options with a
 * smaller (older) and a larger (newer) struct than the library's, options by
 * key, a thread layout mismatch refused at attach (newer, or older than
 * ABI 4) and a program built against ABI 4 accepted by this ABI 5 library, stats into a smaller and
 * a larger struct, and kgc_stats_print naming
 * every field of the stats table (so print and struct cannot drift).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include "tgc.h"

static void heap_roundtrip(struct kgc_options *o)
{
	kgc_heap *h;
	kgc_thread *t;

	T_ASSERT_EQ(kgc_heap_create(o, &h), 0);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	T_ASSERT(kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 10));
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
}

int main(void)
{
	union { struct kgc_options o; char bytes[sizeof(struct kgc_options) + 64]; } big;
	struct kgc_options o, zero = { 0 };
	size_t older = offsetof(struct kgc_options, thp);	/* a struct from before thp */
	struct kgc_stats s;
	union { struct kgc_stats s; char bytes[sizeof(struct kgc_stats) + 64]; } sbig;
	uint64_t small[2];
	kgc_heap *h;
	kgc_thread *t;
	char *text = NULL;
	size_t textlen = 0;
	FILE *mf;

	/* options: older (smaller) struct: the library never writes past it */
	memset(&big, 0x5a, sizeof(big));
	T_ASSERT_EQ(kgc_options_init_size(&big.o, older), 0);
	T_ASSERT_EQ(big.o.size, older);
	T_ASSERT_EQ((unsigned char)big.bytes[older], 0x5a);
	big.o.max_heap = 32 << 20;
	heap_roundtrip(&big.o);
	/* newer (larger) struct: the tail the library does not know is zeroed and ignored */
	memset(&big, 0x5a, sizeof(big));
	T_ASSERT_EQ(kgc_options_init_size(&big.o, sizeof(big)), 0);
	T_ASSERT_EQ(big.o.size, sizeof(big));
	T_ASSERT_EQ(big.bytes[sizeof(big) - 1], 0);
	big.o.max_heap = 32 << 20;
	heap_roundtrip(&big.o);
	/* never initialized */
	T_ASSERT_EQ(kgc_heap_create(&zero, &h), -EINVAL);
	printf("uninitialized options: %s\n", kgc_last_error());

	/* options by key */
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	T_ASSERT_EQ(kgc_options_set(&o, "KGC_IHOP", "5"), 0);
	T_ASSERT_EQ(o.ihop_percent, 5);
	T_ASSERT_EQ(kgc_options_set(&o, "heap_max", "48m"), 0);
	T_ASSERT_EQ(o.max_heap, 48 << 20);
	T_ASSERT_EQ(kgc_options_set(&o, "pin_mode", "gclocker"), 0);
	T_ASSERT_EQ(o.pin_mode, KGC_PIN_MODE_GCLOCKER);
	T_ASSERT_EQ(kgc_options_set(&o, "KGC_IHOP", "-1"), -EINVAL);
	T_ASSERT_EQ(kgc_options_set(&o, "no_such_option", "1"), -ENOENT);
	T_ASSERT_EQ(kgc_options_set(&big.o, "KGC_THP", "1"), 0);
	T_ASSERT_EQ(kgc_options_init_size(&big.o, older), 0);
	T_ASSERT_EQ(kgc_options_set(&big.o, "KGC_THP", "1"), -ENOENT);	/* not in an older struct */
	o.pin_mode = KGC_PIN_MODE_PIN;
	heap_roundtrip(&o);

	/* a program built against a kgc.h with another thread layout: a newer
	 * one, or one older than ABI 4, is refused */
	T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
	T_ASSERT_EQ(kgc_thread_attach_abi(h, "new", &t, KGC_ABI_VERSION + 1), -EPROTO);
	printf("layout mismatch: %s\n", kgc_last_error());
	T_ASSERT(strstr(kgc_last_error(), "rebuild"));
	T_ASSERT_EQ(kgc_thread_attach_abi(h, "old", &t, 3), -EPROTO);
	T_ASSERT(strstr(kgc_last_error(), "version 3"));
	/* header N on library N+2: ABI 5 appended the frame stack and ABI 6
	 * the card summary, so a program built against ABI 4 (its inline paths
	 * on ABI 4's offsets, frames by the library's calls) runs, and the
	 * heap's card scans read every card (gc_card_summary: ABI 5) */
	T_ASSERT_EQ(KGC_ABI_VERSION, 6);
	T_ASSERT_EQ(kgc_thread_attach_abi(h, "abi4", &t, 4), 0);
	{
		void (*push)(kgc_thread *, struct kgc_frame *, kgc_obj *, uint32_t, const uint64_t *) =
			(void (*)(kgc_thread *, struct kgc_frame *, kgc_obj *, uint32_t, const uint64_t *))
				dlsym(RTLD_DEFAULT, "kgc_frame_push");
		int (*pop)(kgc_thread *, struct kgc_frame *) =
			(int (*)(kgc_thread *, struct kgc_frame *))dlsym(RTLD_DEFAULT, "kgc_frame_pop");
		kgc_obj r[1] = { 0 }, was;
		struct kgc_frame f;

		T_ASSERT(push && pop);
		push(t, &f, r, 1, NULL);
		was = r[0] = kgc_alloc_array(t, KGC_TYPE_PRIM_ARRAY(KGC_PRIM_INT), 10);
		T_ASSERT(r[0]);
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
		T_ASSERT(r[0] != was && kgc_array_length(r[0]) == 10);	/* moved, the root followed */
		T_ASSERT_EQ(pop(t, &f), 0);
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);

	/* stats: smaller and larger structs */
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = 32 << 20;
	T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_stats_get(h, (struct kgc_stats *)small, sizeof(small)), 0);
	T_ASSERT_EQ(small[0], 2);	/* young_gcs */
	T_ASSERT_EQ(small[1], 1);	/* full_gcs */
	memset(&sbig, 0x5a, sizeof(sbig));
	T_ASSERT_EQ(kgc_stats_get(h, &sbig.s, sizeof(sbig)), 0);
	T_ASSERT_EQ(sbig.s.young_gcs, 2);
	for (size_t i = sizeof(struct kgc_stats); i < sizeof(sbig); i++)
		T_ASSERT_EQ(sbig.bytes[i], 0);
	T_ASSERT_EQ(kgc_stats_get(h, &s, 0), -EINVAL);

	/* print names every field of the table */
	mf = open_memstream(&text, &textlen);
	T_ASSERT(mf);
	kgc_stats_print(h, mf);
	fclose(mf);
#define CHECK_FIELD(type, name, what) \
	if (!strstr(text, " " #name "=")) T_FAIL("kgc_stats_print lacks %s:\n%s", #name, text);
#define CHECK_ARRAY(type, name, n, what)
	KGC_STATS_FIELDS(CHECK_FIELD, CHECK_ARRAY)
	T_ASSERT(strstr(text, " pause_hist["));
	fputs(text, stdout);
	free(text);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	return 0;
}
