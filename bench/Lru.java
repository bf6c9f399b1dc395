// SPDX-License-Identifier: MIT
//
// The LRU-cache workload of lru.c for HotSpot, the same structure, sizes,
// keys and phases: per thread a cache of CAP entries (a chained hash table
// and a doubly linked recency list through the entries), each entry holding
// a byte[] value of 16..79 bytes; a request for a key in [0, 2 CAP) moves a
// hit to the front (old entries relinked to new ones) and inserts a miss,
// evicting the least recently used entry. Phases per thread: fill, OPS
// requests as fast as possible (throughput), then - both threads together
// (a barrier) - RATE requests/s for SECS seconds, each request's latency
// measured from its scheduled start.
//
// Prints "RESULT ops_per_s=<n> p50_us=.. p99_us=.. p999_us=.. max_us=.. rate_t0_ms=..
// rate_t1_ms=..", the last two thread 0's fixed-rate phase in JVM uptime (lru.c counts the
// -Xlog:gc pauses that start inside it).
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.locks.LockSupport;

public final class Lru {
	static final int NTHREADS = 2, BITS = 19, CAP = 500000;
	static long ops = 2000000, rate = 20000, secs = 5;

	static final class Entry {
		long key;
		Entry prev, next, hnext;
		byte[] val;
	}

	final Entry[] buckets = new Entry[1 << BITS];
	final Entry head = new Entry();
	int size;
	long sum;

	Lru() {
		head.prev = head.next = head;
	}

	static int hash(long k) {
		return (int) ((k * 0x9E3779B97F4A7C15L) >>> (64 - BITS));
	}

	void unlink(Entry e) {
		e.prev.next = e.next;
		e.next.prev = e.prev;
	}

	void front(Entry e) {
		Entry f = head.next;

		e.next = f;
		e.prev = head;
		f.prev = e;
		head.next = e;
	}

	void evict(Entry v) {
		int i = hash(v.key);

		unlink(v);
		if (buckets[i] == v) {
			buckets[i] = v.hnext;
		} else {
			Entry c = buckets[i];

			while (c.hnext != v)
				c = c.hnext;
			c.hnext = v.hnext;
		}
		size--;
	}

	void request(long key) {
		int i = hash(key);
		Entry e = buckets[i];

		while (e != null && e.key != key)
			e = e.hnext;
		if (e != null) {
			unlink(e);
			front(e);
			sum += e.val[0];
			return;
		}
		e = new Entry();
		e.val = new byte[16 + (int) (key % 64)];
		e.val[0] = (byte) key;
		e.key = key;
		e.hnext = buckets[i];
		buckets[i] = e;
		front(e);
		if (++size > CAP)
			evict(head.prev);
	}

	static long next(long[] rng) {
		rng[0] = rng[0] * 6364136223846793005L + 1442695040888963407L;
		return (rng[0] >>> 33) % (2L * CAP);
	}

	static long[] lat = new long[NTHREADS];
	static long[][] lats = new long[NTHREADS][];
	static long[] tput = new long[NTHREADS];
	static volatile long rateT0, rateT1;	// thread 0's fixed-rate phase, JVM uptime (ms)
	static final CyclicBarrier phase = new CyclicBarrier(NTHREADS);
	// LRU_BUILD_MB (issue 28): thread 1 builds a table of that many MiB (in
	// kgc's layout, BUILD_NODE_BYTES a record) at once instead of its
	// fixed-rate requests, and holds it until thread 0's phase is over
	static final int BUILD_NODE_BYTES = 112, BUILD_BUCKETS = 4096;
	static int buildMb;
	static volatile long buildNs;
	static final CyclicBarrier done = new CyclicBarrier(NTHREADS);

	static Entry[] build(int mb) {
		long n = ((long) mb << 20) / BUILD_NODE_BYTES;
		Entry[] t = new Entry[BUILD_BUCKETS];

		for (long i = 0; i < n; i++) {
			Entry x = new Entry();

			x.key = i;
			x.val = new byte[16 + (int) (i % 64)];
			x.hnext = t[(int) (i % BUILD_BUCKETS)];
			t[(int) (i % BUILD_BUCKETS)] = x;
		}
		return t;
	}

	static void await(CyclicBarrier b) {
		try {
			b.await();
		} catch (Exception e) {
			throw new RuntimeException(e);
		}
	}

	static void work(int id) {
		Lru c = new Lru();
		long[] rng = { 0x1234 + id };
		int n = (int) (rate * secs);
		long[] l = new long[n];

		for (int i = 0; i < CAP; i++)
			c.request(next(rng));
		long t0 = System.nanoTime();
		for (long i = 0; i < ops; i++)
			c.request(next(rng));
		tput[id] = System.nanoTime() - t0;
		try {
			phase.await();	// the other thread's throughput phase is over
		} catch (Exception e) {
			throw new RuntimeException(e);
		}
		if (id == 0)
			rateT0 = ManagementFactory.getRuntimeMXBean().getUptime();
		if (buildMb > 0 && id == 1) {
			long b0 = System.nanoTime();
			Entry[] t = build(buildMb);

			buildNs = System.nanoTime() - b0;
			await(done);	// held until thread 0's phase is over
			lats[id] = new long[0];
			if (t[1].key == 42)
				System.out.print("");
			return;
		}
		long start = System.nanoTime(), interval = 1000000000L / rate;
		for (int i = 0; i < n; i++) {
			long sched = start + i * interval, now;

			// lru.c's SLEEP_AHEAD_NS and WAKE_EARLY_NS
			while ((now = System.nanoTime()) < sched)
				if (sched - now > 20000)
					LockSupport.parkNanos(sched - now - 10000);
			c.request(next(rng));
			l[i] = System.nanoTime() - sched;
		}
		lats[id] = l;
		if (id == 0)
			rateT1 = ManagementFactory.getRuntimeMXBean().getUptime();
		if (buildMb > 0)
			await(done);
		if (c.sum == 42)
			System.out.print("");
	}

	public static void main(String[] args) throws InterruptedException {
		String s = System.getenv("BENCH_SCALE");

		if (s != null && Double.parseDouble(s) > 0) {
			ops = (long) (ops * Double.parseDouble(s));
			secs = Math.max(1, (long) (secs * Double.parseDouble(s)));
		}
		String b = System.getenv("LRU_BUILD_MB");

		buildMb = b != null ? Integer.parseInt(b) : 0;
		Thread[] th = new Thread[NTHREADS];
		for (int i = 0; i < NTHREADS; i++) {
			final int id = i;
			th[i] = new Thread(() -> work(id), "lru");
			th[i].start();
		}
		for (Thread t : th)
			t.join();
		long[] all = new long[lats[0].length + lats[1].length];
		long tmax = 0;
		for (int i = 0, at = 0; i < NTHREADS; at += lats[i].length, i++) {
			System.arraycopy(lats[i], 0, all, at, lats[i].length);
			tmax = Math.max(tmax, tput[i]);
		}
		Arrays.sort(all);
		int n = all.length;
		System.out.printf("RESULT ops_per_s=%.0f p50_us=%.1f p99_us=%.1f p999_us=%.1f max_us=%.1f "
				  + "rate_t0_ms=%d rate_t1_ms=%d build_ms=%.1f%n",
				  NTHREADS * ops / (tmax / 1e9), all[n / 2] / 1e3, all[(int) (n * 0.99)] / 1e3,
				  all[(int) (n * 0.999)] / 1e3, all[n - 1] / 1e3, rateT0, rateT1, buildNs / 1e6);
	}
}
