// SPDX-License-Identifier: MIT
//
// The churn benchmark's workload (churn.c) for HotSpot: the same two threads,
// tables of linked lists, list length, replacement rate and RNG, so its
// collectors (G1 above all, the model for kgc) can be measured on this
// machine in the same run as kgc and Boehm. A node is 40 bytes here too
// (12-byte header, two compressed references, two longs, padding).
//
// Prints "RESULT time_ms=<t>": wall time from starting the threads to
// joining them (JVM start-up is not counted; JIT warm-up is).
public final class Churn {
	static final int NTHREADS = 2, LIST_LEN = 32, REPLACE_EVERY = 4;

	static final class Node {
		Node next, head;
		long a, b;
	}

	static long slotsPerThread, stepsPerThread;

	public static void main(String[] args) throws InterruptedException {
		double scale = 1.0;
		String s = System.getenv("BENCH_SCALE");

		if (s != null && Double.parseDouble(s) > 0)
			scale = Double.parseDouble(s);
		long listBytes = LIST_LEN * 40L;
		long liveBytes = (long) (100e6 * scale), totalBytes = (long) (2e9 * scale);

		slotsPerThread = liveBytes / listBytes;
		stepsPerThread = (totalBytes - liveBytes) / listBytes;

		Thread[] th = new Thread[NTHREADS];
		long t0 = System.nanoTime();

		for (int i = 0; i < NTHREADS; i++) {
			final long id = i;
			th[i] = new Thread(() -> work(id), "churn");
			th[i].start();
		}
		for (Thread t : th)
			t.join();
		System.out.printf("RESULT time_ms=%.1f%n", (System.nanoTime() - t0) / 1e6);
	}

	static void work(long id) {
		long rng = 0x1234 + id, check = 0;
		Node[] table = new Node[(int) slotsPerThread];

		for (long s = 0; s < slotsPerThread + stepsPerThread; s++) {
			Node head = null, tail = null;

			for (int i = 0; i < LIST_LEN; i++) {
				Node n = new Node();

				n.next = head;
				n.a = s;
				n.b = i;
				head = n;
				if (tail == null)
					tail = n;
				n.head = tail;
			}
			if (s < slotsPerThread) {
				table[(int) s] = head;
			} else {
				rng = rng * 6364136223846793005L + 1442695040888963407L;
				if (Long.remainderUnsigned(rng >>> 33, REPLACE_EVERY) == 0)
					table[(int) Long.remainderUnsigned(rng >>> 20, slotsPerThread)] = head;
			}
		}
		for (Node l : table)
			for (Node n = l; n != null; n = n.next)
				check++;
		if (check != slotsPerThread * LIST_LEN)
			throw new IllegalStateException("live set damaged: " + check + " nodes");
	}
}
