// SPDX-License-Identifier: MIT
//
// The critical-stall workload of pinbench.c on HotSpot, with a JNI native
// holding the array critical (libcritstall.so, critstall_jni.c): JDK 17's G1
// blocks collections while a critical section is open (GCLocker), JDK 25's
// G1 pins the region instead (JEP 423, kgc's seed). Two allocating threads
// keep a ~100 MB live set (tables of 16-node lists, 1 in 64 new lists
// replaces a random entry) and time batches of 1000 node allocations; a
// third loops: a fresh 1 MB byte[], GetPrimitiveArrayCritical, hold H ms,
// release, rest 1 ms.
//
// java -Dcritstall.lib=<path of libcritstall.so> CritStall <H ms> <seconds>
// prints "RESULT batches= p50= p99= p999= max= over10= over50= sections="
// (latencies in ms; only batches inside the timed window, after the live
// set is built and a warm-up of 1 s and one System.gc()). The allocating
// threads: StallLoad.java.
public final class CritStall {
	static final long LIVE_BYTES = 50_000_000L;	// per thread (StallLoad)
	static volatile long sections;

	static native void hold(byte[] a, int ms);

	public static void main(String[] args) throws Exception {
		System.load(System.getProperty("critstall.lib"));
		int holdMs = Integer.parseInt(args[0]);
		double secs = Double.parseDouble(args[1]);
		Thread pinner = new Thread(() -> {
			while (!StallLoad.stop.get()) {
				byte[] b = new byte[1 << 20];

				hold(b, holdMs);
				if (b[0] != 1 || b[b.length - 1] != 2)
					throw new AssertionError("the native's writes are lost");
				sections++;
				try {
					Thread.sleep(1);
				} catch (InterruptedException e) {
					return;
				}
			}
		});

		StallLoad.Allocator[] a = StallLoad.start(2, LIVE_BYTES);

		Thread.sleep(1000);	// warm-up: JIT, first touches
		System.gc();
		StallLoad.timing.set(true);
		pinner.start();
		Thread.sleep((long) (secs * 1000));
		StallLoad.stop.set(true);
		pinner.join();
		long[] all = StallLoad.join(a);
		int n = all.length, over10 = 0, over50 = 0;

		for (long v : all) {
			over10 += v > 10_000_000L ? 1 : 0;
			over50 += v > 50_000_000L ? 1 : 0;
		}
		System.out.printf("RESULT batches=%d p50=%.4f p99=%.4f p999=%.4f max=%.3f over10=%d over50=%d sections=%d%n",
				  n, StallLoad.ms(StallLoad.pct(all, n, 50)), StallLoad.ms(StallLoad.pct(all, n, 99)),
				  StallLoad.ms(StallLoad.pct(all, n, 99.9)), StallLoad.ms(n > 0 ? all[n - 1] : 0),
				  over10, over50, sections);
	}
}
