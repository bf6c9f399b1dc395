// SPDX-License-Identifier: MIT
//
// StallLoad: the allocating threads of the stall benches on HotSpot
// (CritStall.java, JniBench.java; pinbench.c's and jnibench.c's workload on
// kgc). Each keeps its share of the live set in a table of 16-node lists
// (1 in 64 new lists replaces a random entry) and times batches of 1000
// node allocations while `timing` is set. Not a program of its own: the
// two benches compile and load it from the same directory.
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

final class StallLoad {
	static final int LIST_LEN = 16, REPLACE_EVERY = 64, BATCH = 1000;
	static final AtomicBoolean stop = new AtomicBoolean(), timing = new AtomicBoolean();
	static final AtomicInteger filled = new AtomicInteger();

	static final class Node {
		Node next;
		long val;
	}

	static final class Allocator extends Thread {
		final Node[] table;
		long rng, seq, n;
		long[] lat = new long[1 << 16];
		Node cur;
		int inList;

		Allocator(long id, long liveBytes) {
			rng = 0x9e37 + id;
			table = new Node[(int) (liveBytes / (LIST_LEN * 24))];	// in kgc's 24-byte nodes
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

	// n allocators of liveBytes each, started; returns once their live sets are built
	static Allocator[] start(int n, long liveBytes) throws InterruptedException {
		Allocator[] a = new Allocator[n];

		for (int i = 0; i < n; i++)
			(a[i] = new Allocator(i, liveBytes)).start();
		while (filled.get() < n)
			Thread.sleep(5);
		return a;
	}

	// after stop is set: joins them; every timed batch latency (ns), sorted
	static long[] join(Allocator[] a) throws InterruptedException {
		int n = 0, at = 0;

		for (Allocator x : a) {
			x.join();
			n += (int) x.n;
		}
		long[] all = new long[n];

		for (Allocator x : a) {
			System.arraycopy(x.lat, 0, all, at, (int) x.n);
			at += (int) x.n;
		}
		Arrays.sort(all);
		return all;
	}

	static double ms(long ns) {
		return ns / 1e6;
	}

	static long pct(long[] v, int n, double p) {
		int i = (int) Math.ceil(p / 100 * n) - 1;

		return v[Math.max(0, Math.min(n - 1, i))];
	}
}
