// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: runs last (sorted by name). Every heap of the earlier
 * tests is closed by now, so the module must hold no page and no heap.
 * The VM rig then checks that "rmmod kgc" succeeds.
 */
#include <dirent.h>

#include "kselftest_harness.h"
#include "kgc_util.h"

TEST(module_pages_back_to_zero)
{
	long held = kgc_pages_held();

	if (held < 0)
		SKIP(return, KGC_PAGES_HELD ": %s (kgc.ko not loaded?)",
		     strerror(errno));
	ASSERT_EQ(0, held);
}

TEST(debugfs_pages_held_zero_and_no_heaps_left)
{
	struct dirent *de;
	char buf[32] = "";
	int fd, heaps = 0;
	DIR *d;

	d = opendir(KGC_DEBUGFS);
	if (!d)
		SKIP(return, KGC_DEBUGFS ": %s (debugfs not mounted?)",
		     strerror(errno));
	while ((de = readdir(d)))
		if (de->d_name[0] >= '0' && de->d_name[0] <= '9')
			heaps++;
	closedir(d);
	ASSERT_EQ(0, heaps);

	fd = open(KGC_DEBUGFS "/pages_held", O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_GT(read(fd, buf, sizeof(buf) - 1), 0);
	close(fd);
	ASSERT_EQ(0, strtol(buf, NULL, 10));
}

TEST(new_heap_starts_empty)
{
	struct kgc_dev_stats st;
	int fd = kgc_open();

	if (fd < 0)
		SKIP(return, "cannot open " KGC_DEV ": %s", strerror(errno));
	ASSERT_EQ(0, kgc_create(fd, MiB, 1, NULL));
	ASSERT_EQ(0, kgc_ioctl(fd, KGC_IOC_STATS, &st));
	ASSERT_EQ(0, st.heap_pages);
	ASSERT_EQ(0, st.reserved0);
	ASSERT_EQ(0, st.faults);
	ASSERT_EQ(0, close(fd));
}

TEST_HARNESS_MAIN
