// SPDX-License-Identifier: MIT
// NioEcho - the JDK side of niobench (issue 33): a TCP echo server on one
// thread with a java.nio Selector, each connection's bytes in a heap
// ByteBuffer (ByteBuffer.allocate: the JDK copies through a direct buffer
// of its own on every read and write) or a direct one (allocateDirect).
//   java NioEcho heap|direct SECONDS   serves 127.0.0.1:<any port> (printed)
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;

public class NioEcho {
    public static void main(String[] args) throws Exception {
        boolean direct = args[0].equals("direct");
        long end = System.nanoTime() + Long.parseLong(args[1]) * 1_000_000_000L;
        Selector sel = Selector.open();
        ServerSocketChannel ss = ServerSocketChannel.open();
        ss.bind(new InetSocketAddress("127.0.0.1", 0));
        ss.configureBlocking(false);
        ss.register(sel, SelectionKey.OP_ACCEPT);
        System.out.println("listening on 127.0.0.1:" + ((InetSocketAddress) ss.getLocalAddress()).getPort());
        System.out.flush();
        while (System.nanoTime() < end) {
            if (sel.select(100) == 0)
                continue;
            Iterator<SelectionKey> it = sel.selectedKeys().iterator();
            while (it.hasNext()) {
                SelectionKey k = it.next();
                it.remove();
                if (k.isAcceptable()) {
                    SocketChannel c = ss.accept();
                    if (c == null)
                        continue;
                    c.configureBlocking(false);
                    c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    c.register(sel, SelectionKey.OP_READ,
                               direct ? ByteBuffer.allocateDirect(65536) : ByteBuffer.allocate(65536));
                    continue;
                }
                SocketChannel c = (SocketChannel) k.channel();
                ByteBuffer b = (ByteBuffer) k.attachment();
                if (k.isReadable() && c.read(b) < 0) {
                    k.cancel();
                    c.close();
                    continue;
                }
                b.flip();
                c.write(b);
                if (b.hasRemaining()) {         // the rest when the socket takes it
                    b.compact();
                    k.interestOps(SelectionKey.OP_WRITE);
                } else {
                    b.clear();
                    k.interestOps(SelectionKey.OP_READ);
                }
            }
        }
    }
}
