/* KGC_* environment variables are read from one table; bad values are rejected. */
#include "tgc.h"

int main(void)
{
	struct kgc_options o;
	kgc_heap *h;

	setenv("KGC_HEAP_MAX", "48m", 1);
	setenv("KGC_REGION_SIZE", "2M", 1);
	setenv("KGC_YOUNG_SIZE", "8m", 1);
	setenv("KGC_TENURE", "3", 1);
	setenv("KGC_BACKEND", "anon", 1);
	setenv("KGC_PIN_MODE", "gclocker", 1);
	setenv("KGC_CHECK", "1", 1);
	setenv("KGC_LOG", "gc+heap", 1);
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	T_ASSERT_EQ(o.thp, 0);		/* off by default */
	setenv("KGC_THP", "1", 1);
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	T_ASSERT_EQ(o.thp, 1);
	unsetenv("KGC_THP");
	T_ASSERT_EQ(o.pacing_percent, 0);	/* policy default */
	setenv("KGC_PACING", "100", 1);
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	T_ASSERT_EQ(o.pacing_percent, 100);
	unsetenv("KGC_PACING");
	T_ASSERT_EQ(o.pause_budget, KGC_PAUSE_BUDGET_OFF);
	setenv("KGC_PAUSE_BUDGET", "on", 1);
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	T_ASSERT_EQ(o.pause_budget, KGC_PAUSE_BUDGET_ON);
	setenv("KGC_PAUSE_BUDGET", "sometimes", 1);
	T_ASSERT_EQ(kgc_options_init(&o), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "KGC_PAUSE_BUDGET"));
	unsetenv("KGC_PAUSE_BUDGET");
	T_ASSERT_EQ(o.max_heap, 48 << 20);
	T_ASSERT_EQ(o.region_size, 2 << 20);
	T_ASSERT_EQ(o.young_size, 8 << 20);
	T_ASSERT_EQ(o.tenure_threshold, 3);
	T_ASSERT_EQ(o.backend, KGC_BACKEND_ANON);
	T_ASSERT_EQ(o.pin_mode, KGC_PIN_MODE_GCLOCKER);
	T_ASSERT_EQ(o.check, 1);
	T_ASSERT(o.log && !strcmp(o.log, "gc+heap"));
	T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
	T_ASSERT_EQ(kgc_heap_region_size(h), 2 << 20);
	T_ASSERT(!strcmp(kgc_heap_backend(h), "anon"));
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	/* NULL options = defaults + environment */
	T_ASSERT_EQ(kgc_heap_create(NULL, &h), 0);
	T_ASSERT_EQ(kgc_heap_region_size(h), 2 << 20);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);

	/* log selectors: tag sets joined by '+'; one it does not know is
	 * refused, not silently logged as nothing */
	setenv("KGC_LOG", "gc+phases+heap,gc+safepoint", 1);
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	setenv("KGC_LOG", "gc+phase", 1);
	T_ASSERT_EQ(kgc_options_init(&o), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "KGC_LOG"));
	setenv("KGC_LOG", "heap", 1);
	T_ASSERT_EQ(kgc_options_init(&o), -EINVAL);
	T_ASSERT_EQ(kgc_options_set(&o, "KGC_LOG", "gc,gc+pin+heap"), 0);
	T_ASSERT_EQ(kgc_options_set(&o, "KGC_LOG", "gc+pin+"), 0);	/* an empty tag: none */
	T_ASSERT_EQ(kgc_options_set(&o, "KGC_LOG", "gc+pinn"), -EINVAL);
	setenv("KGC_LOG", "gc+heap", 1);
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.log = "gc,gc+bogus";
	T_ASSERT_EQ(kgc_heap_create(&o, &h), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "gc+bogus"));

	setenv("KGC_PIN_MODE", "sometimes", 1);
	T_ASSERT_EQ(kgc_options_init(&o), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "KGC_PIN_MODE"));
	setenv("KGC_PIN_MODE", "pin", 1);
	setenv("KGC_HEAP_MAX", "lots", 1);
	T_ASSERT_EQ(kgc_options_init(&o), -EINVAL);
	T_ASSERT(strstr(kgc_last_error(), "KGC_HEAP_MAX"));
	unsetenv("KGC_HEAP_MAX");
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.region_size = 3 << 20;
	T_ASSERT_EQ(kgc_heap_create(&o, &h), -EINVAL);
	/* region size chosen from the heap size, like G1 */
	unsetenv("KGC_REGION_SIZE");
	T_ASSERT_EQ(kgc_options_init(&o), 0);
	o.max_heap = (size_t)16 << 30;
	T_ASSERT_EQ(kgc_heap_create(&o, &h), 0);
	T_ASSERT_EQ(kgc_heap_region_size(h), 8 << 20);
	T_ASSERT_EQ(kgc_heap_destroy(h), 0);
	/* kmod backend on a machine without /dev/kgc: a clear error */
	if (access("/dev/kgc", F_OK) != 0) {
		o.max_heap = 64 << 20;
		o.backend = KGC_BACKEND_KMOD;
		T_ASSERT(kgc_heap_create(&o, &h) < 0);
		T_ASSERT(strstr(kgc_last_error(), "/dev/kgc"));
	}
	return 0;
}
