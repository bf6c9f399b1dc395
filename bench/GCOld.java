// SPDX-License-Identifier: MIT
//
// GCOld for HotSpot: gcold.c runs the same on kgc in the same run (see its
// header for the workload). After Boehm/Detlefs' GCOld.java: per thread a
// live set of perfect binary trees of height HEIGHT in an array, then STEPS
// steps of: STEP_BYTES of short-lived int[DEAD_INTS] garbage through a ring,
// STEP_BYTES / PROMOTE bytes of new subtrees replacing old ones of the same
// height, and MUT swaps of random old subtrees at the same depth. Same
// parameters, node size (32 bytes with compressed oops), PRNG and order of
// operations as gcold.c, so the check value is the same. BENCH_SCALE scales
// the steps.
//
// Prints "RESULT time_ms=<t> check=<c> nodes=<n>": wall time from starting
// the threads to joining them (JVM start-up not counted; JIT warm-up is).
public final class GCOld {
	static final int NTHREADS = 2, HEIGHT = 14, NODE_BYTES = 32;
	// live set in MiB, all threads: GCOLD_LIVE_MB (gcold.c's driver sets it; default 128)
	static final long LIVE_MB = System.getenv("GCOLD_LIVE_MB") != null ? Long.parseLong(System.getenv("GCOLD_LIVE_MB")) : 128;
	static final int STEP_BYTES = 1 << 20, DEAD_INTS = 100, ARR_BYTES = 16 + 4 * DEAD_INTS, RING = 64;
	static final int PROMOTE = 10, MUT = 1000, STEPS = 1000, INSIGNIFICANT = 999;

	static final class Node {
		Node left, right;
		int height, id;
	}

	static long treeBytes(int h) {
		return ((2L << h) - 1) * NODE_BYTES;
	}

	static int bytesToHeight(long b) {
		int h = 0;

		while (treeBytes(h + 1) <= b)
			h++;
		return h;
	}

	static int ntrees() {
		return (int) ((long) LIVE_MB * 1048576 / NTHREADS / treeBytes(HEIGHT));
	}

	final Node[] trees = new Node[ntrees()];
	final int[][] ring = new int[RING][];
	long rng, youngSum, actuallyMut;
	int nextId, where;

	GCOld(int id) {
		rng = 0x5EED0000L + id;
	}

	// 31 bits from a 64-bit LCG, as gcold.c's rnd()
	int rnd() {
		rng = rng * 6364136223846793005L + 1442695040888963407L;
		return (int) (rng >>> 33);
	}

	// bottom-up: left subtree, right subtree, then the node (ids in that order)
	Node make(int h) {
		Node l = null, r = null;

		if (h > 0) {
			l = make(h - 1);
			r = make(h - 1);
		}
		Node n = new Node();
		n.left = l;
		n.right = r;
		n.height = h;
		n.id = nextId++;
		return n;
	}

	void youngAlloc(long bytes) {
		for (long done = 0; done < bytes; done += ARR_BYTES) {
			int slot = (int) (youngSum & (RING - 1));
			int[] a = new int[DEAD_INTS];

			a[0] = (int) (done & 0x7fffffff);
			int[] old = ring[slot];
			youngSum += 1 + (old != null ? old[0] : 0);
			ring[slot] = a;
		}
	}

	void replaceTree(Node full, Node part) {
		int h = part.height, path = rnd();
		Node n = full;

		while (n.left.height > h) {
			n = (path & 1) != 0 ? n.right : n.left;
			path >>>= 1;
		}
		if ((path & 1) != 0)
			n.right = part;
		else
			n.left = part;
	}

	void oldGenAlloc(long bytes) {
		long full = bytes / treeBytes(HEIGHT), partial = bytes % treeBytes(HEIGHT);

		for (long i = 0; i < full; i++) {
			trees[where] = make(HEIGHT);
			where = (where + 1) % trees.length;
		}
		while (partial > INSIGNIFICANT) {
			int h = bytesToHeight(partial);
			Node t = make(h);

			replaceTree(trees[where], t);
			where = (where + 1) % trees.length;
			partial -= treeBytes(h);
		}
	}

	void swapSubtree() {
		int i1 = rnd() % trees.length, i2 = rnd() % trees.length;
		int depth = rnd() % HEIGHT, path = rnd();
		Node a = trees[i1], b = trees[i2], tmp;

		for (int i = 0; i < depth; i++) {
			if ((path & 1) != 0) {
				a = a.right;
				b = b.right;
			} else {
				a = a.left;
				b = b.left;
			}
			path >>>= 1;
		}
		if ((path & 1) != 0) {
			tmp = a.right;
			a.right = b.right;
			b.right = tmp;
		} else {
			tmp = a.left;
			a.left = b.left;
			b.left = tmp;
		}
		actuallyMut++;
	}

	long nodes;

	long treeHash(Node n) {
		if (n == null)
			return 0;
		nodes++;
		long l = treeHash(n.left), r = treeHash(n.right);
		return (l * 31 + r) * 31 + n.id;
	}

	long run(long steps) {
		for (int i = 0; i < trees.length; i++)
			trees[i] = make(HEIGHT);
		for (long s = 0; s < steps; s++) {
			youngAlloc(STEP_BYTES);
			oldGenAlloc(STEP_BYTES / PROMOTE);
			for (int m = 0; m < MUT; m++)
				swapSubtree();
		}
		long check = youngSum;
		for (int i = 0; i < trees.length; i++)
			check += (long) (i + 1) * treeHash(trees[i]);
		return check;
	}

	public static void main(String[] args) throws InterruptedException {
		String s = System.getenv("BENCH_SCALE");
		double scale = s != null && Double.parseDouble(s) > 0 ? Double.parseDouble(s) : 1.0;
		long steps = Math.max(1, (long) (STEPS * scale + 0.5));
		GCOld[] g = new GCOld[NTHREADS];
		long[] checks = new long[NTHREADS];
		Thread[] th = new Thread[NTHREADS];
		long t0 = System.nanoTime();

		for (int i = 0; i < NTHREADS; i++) {
			final int id = i;
			g[i] = new GCOld(i);
			th[i] = new Thread(() -> checks[id] = g[id].run(steps), "gcold");
			th[i].start();
		}
		for (Thread t : th)
			t.join();
		double ms = (System.nanoTime() - t0) / 1e6;
		long check = 0, nodes = 0;
		for (int i = 0; i < NTHREADS; i++) {
			check += checks[i];
			nodes += g[i].nodes;
		}
		if (nodes != (long) NTHREADS * ntrees() * ((2L << HEIGHT) - 1))
			throw new IllegalStateException("live set damaged: " + nodes + " nodes");
		System.out.printf("RESULT time_ms=%.1f check=%s nodes=%d%n", ms, Long.toUnsignedString(check), nodes);
	}
}
