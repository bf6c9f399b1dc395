// SPDX-License-Identifier: GPL-2.0
/*
 * kgc kselftests: module parameters and the module-wide counters.
 *
 * pages_held is read-only: "insmod kgc.ko pages_held=1" must fail cleanly
 * (v1 oopsed on a NULL .set and left the module stuck in "Loading"), and
 * it, like every module-wide counter, is for root only.
 *
 * The load test unloads and reloads kgc.ko from KGC_KO (default
 * /lib/modules/kgc.ko, where the VM rig puts it), so it needs no other
 * user of the module; it always tries to leave the module loaded.
 */
#include <pwd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "kselftest_harness.h"
#include "kgc_util.h"

#define KGC_KO_DEFAULT	"/lib/modules/kgc.ko"
#define PARAMS		"/sys/module/kgc/parameters/"

static const char *ko_path(void)
{
	const char *p = getenv("KGC_KO");

	return p ? p : KGC_KO_DEFAULT;
}

/* finit_module(2) of the kgc.ko file with @params: 0 or -errno. */
static int load(const char *params)
{
	int fd = open(ko_path(), O_RDONLY | O_CLOEXEC), ret;

	if (fd < 0)
		return -errno;
	ret = syscall(SYS_finit_module, fd, params, 0) ? -errno : 0;
	close(fd);
	return ret;
}

static int unload(void)
{
	return syscall(SYS_delete_module, "kgc", O_NONBLOCK) ? -errno : 0;
}

static int loaded(void)
{
	return access("/sys/module/kgc", F_OK) == 0;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

FIXTURE(mod) {
	int was_loaded;
};

FIXTURE_SETUP(mod)
{
	self->was_loaded = loaded();
	if (access(ko_path(), R_OK))
		SKIP(return, "%s: %s (set KGC_KO)", ko_path(), strerror(errno));
	if (geteuid())
		SKIP(return, "needs root");
	if (self->was_loaded && unload())
		SKIP(return, "cannot unload kgc (in use?): %s", strerror(errno));
}

FIXTURE_TEARDOWN(mod)
{
	if (!loaded())
		load("");
}

TEST_F(mod, load_with_read_only_param_fails_eperm)
{
	ASSERT_FALSE(loaded());
	ASSERT_EQ(-EPERM, load("pages_held=1"));
	ASSERT_FALSE(loaded());
	/* Again: nothing was left half-loaded. */
	ASSERT_EQ(-EPERM, load("pages_held=0"));
	ASSERT_EQ(-EINVAL, load("max_heap_mb=0"));
	ASSERT_FALSE(loaded());
	ASSERT_EQ(0, load(""));
	ASSERT_TRUE(loaded());
	ASSERT_EQ(0, kgc_pages_held());
}

TEST_F(mod, read_only_param_refuses_writes)
{
	struct stat st;

	ASSERT_EQ(0, load(""));
	ASSERT_EQ(0, stat(PARAMS "pages_held", &st));
	ASSERT_EQ(0400, st.st_mode & 0777);
	ASSERT_EQ(-EACCES, write_file(PARAMS "pages_held", "5"));
	ASSERT_EQ(0, kgc_pages_held());
}

/* Module-wide page counts are root's business: 0400 in sysfs and debugfs. */
TEST(module_wide_counters_are_root_only)
{
	struct stat st;
	pid_t pid;
	int status;

	if (geteuid())
		SKIP(return, "needs root");
	if (!loaded())
		SKIP(return, "kgc.ko not loaded");
	ASSERT_EQ(0, stat(PARAMS "pages_held", &st));
	ASSERT_EQ(0400, st.st_mode & 0777);
	if (stat(KGC_DEBUGFS "/pages_held", &st) == 0)
		ASSERT_EQ(0400, st.st_mode & 0777);

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		/* nobody */
		if (setgid(65534) || setuid(65534))
			_exit(2);
		if (open(PARAMS "pages_held", O_RDONLY) >= 0)
			_exit(3);
		_exit(errno == EACCES ? 0 : 4);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
