/* KGC_LOG_FILE with KGC_LOG_FILE_SIZE / _COUNT: lines go to the file, not
 * stderr, with the stderr decorations; collections fill it past the cap
 * several times: path, path.0 .. path.<count-1> exist, none larger than the
 * cap, no path.<count>, the rotated ones nearly full, and read oldest first
 * they hold consecutive GC ids ending at the last collection. */
#include <stdio.h>
#include <sys/stat.h>
#include "tgc.h"

#define CAP	2048
#define COUNT	3
#define NGC	200

static long file_size(const char *p)
{
	struct stat st;

	return stat(p, &st) ? -1 : (long)st.st_size;
}

/* Every line of file p must be "[kgc] GC(<*next>) ...", *next counting up. */
static void check_ids(const char *p, unsigned long long *next)
{
	char line[600];
	FILE *f = fopen(p, "r");
	unsigned long long id;

	T_ASSERT(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "[kgc] GC(%llu) Pause Young (Normal) ", &id) != 1)
			T_FAIL("%s: unexpected line '%s'", p, line);
		if (*next && id != *next)
			T_FAIL("%s: GC(%llu) follows GC(%llu)", p, id, *next - 1);
		*next = id + 1;
	}
	fclose(f);
}

int main(void)
{
	char dir[] = "/tmp/kgc-logrot-XXXXXX", path[256], p[300], errp[300];
	struct kgc_options o;
	unsigned long long next = 0;
	kgc_type_id node;
	kgc_heap *h;
	kgc_thread *t;
	int saved_stderr = dup(2);

	T_ASSERT(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gc.log", dir);
	snprintf(errp, sizeof(errp), "%s/stderr", dir);
	T_ASSERT(freopen(errp, "w", stderr));
	t_opts_small(&o, 32, 4);
	T_ASSERT_EQ(kgc_options_set(&o, "log_file", path), 0);
	T_ASSERT_EQ(kgc_options_set(&o, "KGC_LOG_FILE_SIZE", "2k"), 0);
	T_ASSERT_EQ(kgc_options_set(&o, "log_file_count", "3"), 0);
	h = t_heap_opts(&o, &node);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	for (int i = 0; i < NGC; i++) {
		T_ASSERT(kgc_alloc(t, node));
		T_ASSERT_EQ(kgc_collect(t, KGC_GC_YOUNG), 0);
	}
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	fflush(stderr);
	T_ASSERT(dup2(saved_stderr, 2) == 2);	/* failures below are seen again */
	T_ASSERT_EQ(file_size(errp), 0);	/* nothing went to stderr */
	T_ASSERT(file_size(path) > 0 && file_size(path) <= CAP);
	for (int i = COUNT - 1; i >= 0; i--) {
		snprintf(p, sizeof(p), "%s.%d", path, i);
		T_ASSERT(file_size(p) <= CAP && file_size(p) > CAP - 200);
		check_ids(p, &next);
	}
	check_ids(path, &next);
	T_ASSERT_EQ(next, NGC + 1);	/* the current file ends at the last collection */
	snprintf(p, sizeof(p), "%s.%d", path, COUNT);
	T_ASSERT_EQ(file_size(p), -1);
	for (int i = 0; i < COUNT; i++) {
		snprintf(p, sizeof(p), "%s.%d", path, i);
		unlink(p);
	}
	unlink(path);
	unlink(errp);
	rmdir(dir);
	return 0;
}
