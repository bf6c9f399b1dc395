// SPDX-License-Identifier: MIT
// The JDK anchor of bench/iobench: FileChannel.read of a file into a heap
// ByteBuffer (the JDK copies through a temporary direct buffer) and into a
// direct ByteBuffer, block bytes at a time, total bytes each (wrapping
// around the file). Prints "heapGBps directGBps".
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

public class IoRead {
    static double run(FileChannel ch, ByteBuffer b, long size, long total) throws IOException {
        long t0 = System.nanoTime(), pos = 0;
        for (long done = 0; done < total; ) {
            b.clear();
            int n = ch.read(b, pos);
            if (n <= 0) throw new IOException("short read");
            done += n;
            pos = (pos + n) % size;
        }
        return (double) total / (System.nanoTime() - t0);
    }

    public static void main(String[] a) throws IOException {
        int block = Integer.parseInt(a[1]);
        long total = Long.parseLong(a[2]);
        try (FileChannel ch = FileChannel.open(Path.of(a[0]), StandardOpenOption.READ)) {
            long size = ch.size();
            ByteBuffer heap = ByteBuffer.allocate(block), direct = ByteBuffer.allocateDirect(block);
            run(ch, heap, size, Math.min(total, 64L << 20));      // warm-up
            run(ch, direct, size, Math.min(total, 64L << 20));
            double h = run(ch, heap, size, total);
            double d = run(ch, direct, size, total);
            System.out.printf("%.3f %.3f%n", h, d);
        }
    }
}
