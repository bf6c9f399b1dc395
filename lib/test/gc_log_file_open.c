/* KGC_LOG_FILE is opened at kgc_heap_create: an unwritable path fails the
 * create with -errno and a message naming the variable and the path (no
 * heap, nothing logged to stderr); "%p" in the path is the pid; the variable
 * alone (no KGC_LOG) logs the gc lines, as -Xlog:gc:file= does. */
#include <stdio.h>
#include "tgc.h"

int main(void)
{
	char dir[] = "/tmp/kgc-logopen-XXXXXX", path[256], want[300], line[600];
	struct kgc_options o;
	kgc_heap *h = (kgc_heap *)1;
	kgc_thread *t;
	FILE *f;

	T_ASSERT(mkdtemp(dir));
	unsetenv("KGC_LOG");
	snprintf(path, sizeof(path), "%s/no/such/dir/gc.log", dir);
	setenv("KGC_LOG_FILE", path, 1);
	t_opts_small(&o, 16, 2);
	T_ASSERT_EQ(kgc_heap_create(&o, &h), -ENOENT);
	T_ASSERT(h == NULL);
	T_ASSERT(strstr(kgc_last_error(), "KGC_LOG_FILE"));
	T_ASSERT(strstr(kgc_last_error(), path));

	snprintf(path, sizeof(path), "%s/gc-%%p.log", dir);
	snprintf(want, sizeof(want), "%s/gc-%ld.log", dir, (long)getpid());
	setenv("KGC_LOG_FILE", path, 1);
	t_opts_small(&o, 16, 2);
	T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
	T_ASSERT_EQ(kgc_thread_attach(h, "main", &t), 0);
	T_ASSERT_EQ(kgc_collect(t, KGC_GC_FULL), 0);
	T_ASSERT_EQ(kgc_thread_detach(t), 0);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	f = fopen(want, "r");
	T_ASSERT(f);
	T_ASSERT(fgets(line, sizeof(line), f));
	fclose(f);
	T_ASSERT(strstr(line, "[kgc] GC(1) Pause Full (Explicit) "));
	unlink(want);
	rmdir(dir);
	return 0;
}
