// SPDX-License-Identifier: MIT
//
// The HotSpot side of bench/jnibench.c: Debian's lz4-java (liblz4-java's jar,
// its natives from liblz4-jni's jni/liblz4-java.so, found through
// -Djava.library.path) called directly - the package-private natives of
// net.jpountz.lz4.LZ4JNI through constant method handles, which C2 inlines to
// a plain call of the native method: exactly the .so functions kgc calls
// through libkgc-jni, with no Java wrapper around them.
//
//   java -cp <out>:<lz4-java.jar> -Djava.library.path=<dir> JniBench ops <secs>
//     throughput of LZ4_compress_limitedOutput and LZ4_decompress_safe on
//     byte[] of 64 KiB and 4 MiB (the same data as jnibench.c), and ns per
//     LZ4_compressBound call; prints
//     "RESULT c64k= d64k= c4m= d4m= (MB/s of uncompressed bytes, median
//      chunk) clen64k= clen4m= bound_best= bound_med= (ns/call)"
//   ... JniBench stall <bytes per call> <secs>
//     two threads allocate 16-node lists in batches of 1000 (a ~50 MB live
//     set, replaced gradually) while a third compresses a byte[] of the given
//     size in a loop (GetPrimitiveArrayCritical in the .so); prints
//     "RESULT batches= p50= p999= max= over50= (ms) mallocs= (M allocations/s)
//      calls= (natives completed)"
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.Arrays;

public final class JniBench {
	static final MethodHandle BOUND, COMP, DECOMP;

	static {
		try {
			Class<?> c = Class.forName("net.jpountz.lz4.LZ4JNI");	// loads the .so, init()
			MethodHandles.Lookup l = MethodHandles.lookup();

			BOUND = l.unreflect(open(c.getDeclaredMethod("LZ4_compressBound", int.class)));
			COMP = l.unreflect(open(c.getDeclaredMethod("LZ4_compress_limitedOutput", byte[].class,
					ByteBuffer.class, int.class, int.class, byte[].class, ByteBuffer.class,
					int.class, int.class)));
			DECOMP = l.unreflect(open(c.getDeclaredMethod("LZ4_decompress_safe", byte[].class,
					ByteBuffer.class, int.class, int.class, byte[].class, ByteBuffer.class,
					int.class, int.class)));
		} catch (ReflectiveOperationException e) {
			throw new ExceptionInInitializerError(e);
		}
	}

	static Method open(Method m) {
		m.setAccessible(true);	// the jar is on the class path: same (unnamed) module
		return m;
	}

	static int bound(int n) throws Throwable {
		return (int) BOUND.invokeExact(n);
	}

	static int compress(byte[] src, int n, byte[] dst) throws Throwable {
		return (int) COMP.invokeExact(src, (ByteBuffer) null, 0, n, dst, (ByteBuffer) null, 0, dst.length);
	}

	static int decompress(byte[] src, int n, byte[] dst) throws Throwable {
		return (int) DECOMP.invokeExact(src, (ByteBuffer) null, 0, n, dst, (ByteBuffer) null, 0, dst.length);
	}

	// jnibench.c's data (xorshift64*, seed 42)
	static byte[] data(int n) {
		byte[] b = new byte[n];
		long s = 42;
		int d = 1, left = 0;

		for (int i = 0; i < n; i++) {
			if (left == 0) {	// a fresh byte, or the start of a copy from up to 64 back
				s ^= s >>> 12;
				s ^= s << 25;
				s ^= s >>> 27;
				long r = s * 0x2545F4914F6CDD1DL;

				if (i < 64 || (r & 3) == 0) {
					b[i] = (byte) (r >>> 16);
					continue;
				}
				d = 1 + (int) ((r >>> 8) & 63);
				left = 4 + (int) ((r >>> 24) & 15);
			}
			b[i] = b[i - d];
			left--;
		}
		return b;
	}

	static final int CHUNKS = 10;

	// median MB/s over CHUNKS chunks of secs/CHUNKS each, after one warm-up chunk
	static double rate(byte[] in, byte[] out, int n, boolean comp, double secs) throws Throwable {
		double[] r = new double[CHUNKS];

		for (int c = -1; c < CHUNKS; c++) {
			long t0 = System.nanoTime(), end = t0 + (long) (secs / CHUNKS * 1e9), bytes = 0;

			do {
				int got = comp ? compress(in, n, out) : decompress(in, n, out);

				if (got <= 0)
					throw new AssertionError((comp ? "compress" : "decompress") + ": " + got);
				bytes += comp ? n : got;
			} while (System.nanoTime() < end);
			if (c >= 0)
				r[c] = bytes / ((System.nanoTime() - t0) / 1e9) / 1e6;
		}
		Arrays.sort(r);
		return r[CHUNKS / 2];
	}

	static String tput(int n, String tag, double secs) throws Throwable {
		byte[] src = data(n), comp = new byte[bound(n)], back = new byte[n];
		int clen = compress(src, n, comp);
		double c = rate(src, comp, n, true, secs);
		double d = rate(comp, back, clen, false, secs);

		if (decompress(comp, clen, back) != n || !Arrays.equals(src, back))
			throw new AssertionError("round trip of " + n + " bytes");
		return String.format("c%s=%.1f d%s=%.1f clen%s=%d ", tag, c, tag, d, tag, clen);
	}

	// ns per call: 20 chunks of secs/20 each after 5 warm-up chunks (C2 compiles the loop);
	// also the fastest batch of 4096 calls (~40 us: one that no other process interrupted)
	static String boundCost(double secs) throws Throwable {
		final int chunks = 20;
		double[] ns = new double[chunks];
		long acc = 0, batch = Long.MAX_VALUE;

		for (int c = -5; c < chunks; c++) {
			long t0 = System.nanoTime(), end = t0 + (long) (secs / chunks * 1e9), calls = 0, t1, b0 = t0;

			do {
				for (int i = 0; i < 4096; i++)
					acc += bound(i);
				calls += 4096;
				t1 = System.nanoTime();
				if (c >= 0 && t1 - b0 < batch)
					batch = t1 - b0;
				b0 = t1;
			} while (t1 < end);
			if (c >= 0)
				ns[c] = (double) (t1 - t0) / calls;
		}
		if (acc == 42)
			System.out.println("unlikely");
		Arrays.sort(ns);
		return String.format("bound_best=%.2f bound_med=%.2f bound_batch=%.2f", ns[0], ns[chunks / 2],
				     batch / 4096.0);
	}

	// ------------------------------------------------------------ stall

	static final long LIVE_BYTES = 25_000_000L;	// per allocating thread (StallLoad)

	static void stall(int size, double secs) throws Throwable {
		long[] calls = { 0 };
		byte[] src = data(size), dst = new byte[bound(size)];	// before the window, as kgc's
		Thread nat = new Thread(() -> {
			try {
				while (!StallLoad.stop.get()) {
					if (compress(src, size, dst) <= 0)
						throw new AssertionError("compress");
					calls[0]++;
				}
			} catch (Throwable e) {
				throw new RuntimeException(e);
			}
		});

		StallLoad.Allocator[] a = StallLoad.start(2, LIVE_BYTES);

		Thread.sleep(500);	// warm-up: JIT, first touches
		System.gc();
		StallLoad.timing.set(true);
		nat.start();
		long t0 = System.nanoTime();
		Thread.sleep((long) (secs * 1000));
		StallLoad.timing.set(false);
		long el = System.nanoTime() - t0;
		StallLoad.stop.set(true);
		nat.join();
		long[] all = StallLoad.join(a);
		int n = all.length, over50 = 0;

		for (long v : all)
			over50 += v > 50_000_000L ? 1 : 0;
		System.out.printf("RESULT batches=%d p50=%.4f p999=%.4f max=%.3f over50=%d mallocs=%.2f calls=%d%n",
				  n, StallLoad.ms(StallLoad.pct(all, n, 50)), StallLoad.ms(StallLoad.pct(all, n, 99.9)),
				  StallLoad.ms(n > 0 ? all[n - 1] : 0), over50,
				  (double) n * StallLoad.BATCH / (el / 1e9) / 1e6, calls[0]);
	}

	public static void main(String[] args) throws Throwable {
		double secs = Double.parseDouble(args[args.length - 1]);

		if (args[0].equals("ops")) {
			String r = tput(64 << 10, "64k", secs) + tput(4 << 20, "4m", secs) + boundCost(secs);

			System.out.println("RESULT " + r);
		} else {
			stall(Integer.parseInt(args[1]), secs);
		}
	}
}
