// SPDX-License-Identifier: MIT
//
// GCBench for HotSpot: gcbench.c runs the same on kgc, Boehm and malloc in the
// same run (see its header). After Boehm, Ellis and Kovac's GCBench: a stretch
// tree of depth 18 dropped; a long-lived tree of depth 16 (top-down) and an
// array of 500000 doubles kept live; for d = 4, 6, .. 16, NumIters(d) trees of
// depth d built top-down (Populate) and as many bottom-up (MakeTree), each
// dropped; then a check that the long-lived data survived. A node has two
// references and two ints, as in gcbench.c.
//
// Prints "RESULT time_ms=<t> count=<n>": wall time of the work (JVM start-up
// not counted; JIT warm-up is, as in the original).
public final class GCBench {
	static final int STRETCH_DEPTH = 18, LONG_LIVED_DEPTH = 16, ARRAY_SIZE = 500000;
	static final int MIN_DEPTH = 4, MAX_DEPTH = 16;

	static final class Node {
		Node left, right;
		int i, j;

		Node(Node l, Node r) {
			left = l;
			right = r;
		}

		Node() {
		}
	}

	static long treeSize(int d) {
		return (1L << (d + 1)) - 1;
	}

	static long numIters(int d) {
		return 2 * treeSize(STRETCH_DEPTH) / treeSize(d);
	}

	static void populate(int depth, Node n) {
		if (depth <= 0)
			return;
		depth--;
		n.left = new Node();
		n.right = new Node();
		populate(depth, n.left);
		populate(depth, n.right);
	}

	static Node makeTree(int depth) {
		return depth <= 0 ? new Node() : new Node(makeTree(depth - 1), makeTree(depth - 1));
	}

	static long count(Node n) {
		return n == null ? 0 : 1 + count(n.left) + count(n.right);
	}

	public static void main(String[] args) {
		long t0 = System.nanoTime();
		Node t = makeTree(STRETCH_DEPTH);	// stretch

		t = null;
		Node longLived = new Node();
		populate(LONG_LIVED_DEPTH, longLived);
		double[] array = new double[ARRAY_SIZE];
		for (int i = 0; i < ARRAY_SIZE / 2; i++)
			array[i] = 1.0 / (i + 1);

		for (int d = MIN_DEPTH; d <= MAX_DEPTH; d += 2) {
			long n = numIters(d);

			for (long i = 0; i < n; i++) {
				t = new Node();
				populate(d, t);
				t = null;
			}
			for (long i = 0; i < n; i++) {
				t = makeTree(d);
				t = null;
			}
		}
		long c = count(longLived);
		if (c != treeSize(LONG_LIVED_DEPTH) || array[999] != 1.0 / 1000)
			throw new IllegalStateException("long-lived data damaged (count " + c + ")");
		System.out.printf("RESULT time_ms=%.3f count=%d%n", (System.nanoTime() - t0) / 1e6, c);
	}
}
