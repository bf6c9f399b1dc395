// SPDX-License-Identifier: MIT
//
// The binary-trees program of the Computer Language Benchmarks Game, single
// threaded, for HotSpot: bintrees.c runs the same on kgc in the same run.
// Depth from BENCH_DEPTH (default 17): a stretch tree of depth+1, a long-lived
// tree of depth, then for d = 4, 6, .. depth: 2^(depth - d + 4) trees of
// depth d built bottom-up and checked.
//
// Prints "RESULT time_ms=<t> check=<sum>": wall time of the work (JVM
// start-up not counted; JIT warm-up is).
public final class BinaryTrees {
	static final class Node {
		Node left, right;
	}

	static Node make(int d) {
		Node n = new Node();

		if (d > 0) {
			n.left = make(d - 1);
			n.right = make(d - 1);
		}
		return n;
	}

	static long check(Node n) {
		return n.left == null ? 1 : 1 + check(n.left) + check(n.right);
	}

	public static void main(String[] args) {
		String s = System.getenv("BENCH_DEPTH");
		int max = s != null ? Integer.parseInt(s) : 17;
		long t0 = System.nanoTime(), sum = 0;

		sum += check(make(max + 1));
		Node longLived = make(max);
		for (int d = 4; d <= max; d += 2) {
			int iters = 1 << (max - d + 4);

			for (int i = 0; i < iters; i++)
				sum += check(make(d));
		}
		sum += check(longLived);
		System.out.printf("RESULT time_ms=%.1f check=%d%n", (System.nanoTime() - t0) / 1e6, sum);
	}
}
