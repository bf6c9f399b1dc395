// SPDX-License-Identifier: MIT
// LargeCache (issue 32): the HotSpot side of bench/largecache.c. A cache of
// byte arrays from 256 KiB to 32 MiB (log-uniform sizes) with mixed
// lifetimes (a random entry is evicted until the new one fits under the
// live target, LC_LIVE_PCT of the heap), LC_STEPS insertions; each array's
// first and last bytes carry its step. Same PRNG and sequence as the C side.
// An OutOfMemoryError is counted and the insertion dropped.
// Prints "RESULT time_ms=<t> check=<c> alloc_failures=<n>".
public class LargeCache {
	static long s;
	static long next() {	// xorshift64*, as in largecache.c
		s ^= s >>> 12; s ^= s << 25; s ^= s >>> 27;
		return s * 0x2545F4914F6CDD1DL;
	}
	static long env(String k, long d) {
		String v = System.getenv(k);
		return v != null ? Long.parseLong(v) : d;
	}
	public static void main(String[] a) {
		long heap = env("LC_HEAP_MB", 1024) << 20, target = heap * env("LC_LIVE_PCT", 80) / 100;
		long steps = env("LC_STEPS", 600), fails = 0, live = 0, check = 0;
		int slots = 512;
		byte[][] cache = new byte[slots][];
		s = 0x6b6763L;
		long t0 = System.nanoTime();
		for (long i = 0; i < steps; i++) {
			long r = next() >>> 11;
			int size = (int)(256.0 * 1024 * Math.pow(128.0, (r & 0xffff) / 65536.0));
			while (live + size > target) {
				int v = (int)Long.remainderUnsigned(next(), slots);
				if (cache[v] != null) { live -= cache[v].length; cache[v] = null; }
			}
			int slot = (int)Long.remainderUnsigned(next(), slots);
			if (cache[slot] != null) { live -= cache[slot].length; cache[slot] = null; }
			byte[] b;
			try {
				b = new byte[size];
			} catch (OutOfMemoryError e) {
				fails++;
				continue;
			}
			b[0] = (byte)i; b[size - 1] = (byte)(i >>> 8);
			cache[slot] = b;
			live += size;
		}
		for (int k = 0; k < slots; k++)
			if (cache[k] != null)
				check = check * 31 + (cache[k][0] & 0xff) + ((cache[k][cache[k].length - 1] & 0xff) << 8) + cache[k].length;
		double ms = (System.nanoTime() - t0) / 1e6;
		System.out.printf("RESULT time_ms=%.1f check=%s alloc_failures=%d%n", ms, Long.toUnsignedString(check), fails);
	}
}
