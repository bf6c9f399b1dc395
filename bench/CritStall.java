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
// set is built and a warm-up of 1 s and one System.gc()).
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

public final class CritStall {
	static final int LIST_LEN = 16, REPLACE_EVERY = 64, BATCH = 1000;
	static final long LIVE_BYTES = 50_000_000L;	// per thread, in kgc's 24-byte nodes
	static final AtomicBoolean stop = new AtomicBoolean(), timing = new AtomicBoolean();
	static final AtomicInteger filled = new AtomicInteger();
	static volatile long sections;

	static native void hold(byte[] a, int ms);

	static final class Node {
		Node next;
		long val;
	}

	static final class Allocator extends Thread {
		final Node[] table = new Node[(int) (LIVE_BYTES / (LIST_LEN * 24))];
		long rng, seq, n;
		long[] lat = new long[1 << 16];
		Node cur;
		int inList;

		Allocator(long id) {
			rng = 0x9e37 + id;
		}

		void allocOne() {
			Node x = new Node();

			x.next = cur;
			x.val = seq;
			cur = x;
			if (++inList < LIST_LEN)
				return;
			inList = 0;
			if (seq < table.length) {
				table[(int) seq] = cur;
			} else {
				rng = rng * 6364136223846793005L + 1442695040888963407L;
				if (Long.remainderUnsigned(rng >>> 33, REPLACE_EVERY) == 0)
					table[(int) Long.remainderUnsigned(rng >>> 20, table.length)] = cur;
			}
			seq++;
			cur = null;
		}

		public void run() {
			while (seq < table.length)
				allocOne();
			filled.incrementAndGet();
			while (!stop.get()) {
				boolean timed = timing.get();
				long t0 = System.nanoTime();

				for (int i = 0; i < BATCH; i++)
					allocOne();
				if (timed && timing.get()) {
					if (n == lat.length)
						lat = Arrays.copyOf(lat, 2 * lat.length);
					lat[(int) n++] = System.nanoTime() - t0;
				}
			}
		}
	}

	static double ms(long ns) {
		return ns / 1e6;
	}

	static long pct(long[] v, int n, double p) {
		int i = (int) Math.ceil(p / 100 * n) - 1;

		return v[Math.max(0, Math.min(n - 1, i))];
	}

	public static void main(String[] args) throws Exception {
		System.load(System.getProperty("critstall.lib"));
		int holdMs = Integer.parseInt(args[0]);
		double secs = Double.parseDouble(args[1]);
		Allocator[] a = { new Allocator(0), new Allocator(1) };
		Thread pinner = new Thread(() -> {
			while (!stop.get()) {
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

		for (Allocator x : a)
			x.start();
		while (filled.get() < a.length)
			Thread.sleep(5);
		Thread.sleep(1000);	// warm-up: JIT, first touches
		System.gc();
		timing.set(true);
		pinner.start();
		Thread.sleep((long) (secs * 1000));
		stop.set(true);
		pinner.join();
		for (Allocator x : a)
			x.join();
		int n = (int) (a[0].n + a[1].n), over10 = 0, over50 = 0;
		long[] all = new long[n];

		System.arraycopy(a[0].lat, 0, all, 0, (int) a[0].n);
		System.arraycopy(a[1].lat, 0, all, (int) a[0].n, (int) a[1].n);
		Arrays.sort(all);
		for (long v : all) {
			over10 += v > 10_000_000L ? 1 : 0;
			over50 += v > 50_000_000L ? 1 : 0;
		}
		System.out.printf("RESULT batches=%d p50=%.4f p99=%.4f p999=%.4f max=%.3f over10=%d over50=%d sections=%d%n",
				  n, ms(pct(all, n, 50)), ms(pct(all, n, 99)), ms(pct(all, n, 99.9)),
				  ms(n > 0 ? all[n - 1] : 0), over10, over50, sections);
	}
}
