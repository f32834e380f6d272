package io.sealpipe.it.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on 127.0.0.1 to a local port that passes on every piece a client sends a fixed
 * delay after it arrived (a link with that latency one way), and the answers at once: the KMS
 * tests put it in front of a KMS to add its delay to every request. One copy, in {@code
 * src/it/net-shared}, added to each project's test sources.
 */
public final class DelayingProxy implements AutoCloseable {
    private final ServerSocket server;
    private final ExecutorService threads = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "delaying-proxy");
        t.setDaemon(true);
        return t;
    });

    private final long delayMillis;
    private final AtomicLong connections = new AtomicLong();

    /** A proxy to 127.0.0.1:{@code target} that delays what clients send by {@code delayMillis}. */
    public DelayingProxy(int target, long delayMillis) throws IOException {
        this.delayMillis = delayMillis;
        server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        threads.execute(() -> {
            while (!server.isClosed()) {
                try {
                    Socket client = server.accept();
                    connections.incrementAndGet();
                    Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                    threads.execute(() -> pump(client, upstream, delayMillis));
                    threads.execute(() -> pump(upstream, client, 0));
                } catch (IOException e) {
                    return; // closed
                }
            }
        });
    }

    /** The connections clients made so far. */
    public long connections() {
        return connections.get();
    }

    /** The port on 127.0.0.1 that clients connect to. */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * Copies {@code from} to {@code to}, each piece {@code delayMillis} after it arrived: a
     * delay line, as a link with that latency is (pieces sent together arrive together), not
     * a delay per piece one after the other.
     */
    private void pump(Socket from, Socket to, long delayMillis) {
        BlockingQueue<Object[]> line = new LinkedBlockingQueue<>();
        Object[] end = new Object[0];
        if (delayMillis > 0) {
            threads.execute(() -> {
                try (OutputStream out = to.getOutputStream()) {
                    for (Object[] piece; (piece = line.take()) != end; ) {
                        long due = (Long) piece[0];
                        long wait = due - System.nanoTime();
                        if (wait > 0) {
                            Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000)); // the latency itself
                        }
                        out.write((byte[]) piece[1]);
                        out.flush();
                    }
                } catch (IOException | InterruptedException e) {
                    // the other side closed
                } finally {
                    closeBoth(from, to);
                }
            });
        }
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = from.getInputStream()) {
            OutputStream out = delayMillis > 0 ? null : to.getOutputStream();
            for (int n; (n = in.read(buffer)) > 0; ) {
                if (out == null) {
                    line.add(new Object[] {System.nanoTime() + delayMillis * 1_000_000, Arrays.copyOf(buffer, n)});
                } else {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
        } catch (IOException e) {
            // the other side closed
        } finally {
            if (delayMillis > 0) {
                line.add(end);
            } else {
                closeBoth(from, to);
            }
        }
    }

    private static void closeBoth(Socket a, Socket b) {
        try {
            a.close();
            b.close();
        } catch (IOException e) {
            // closing
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        threads.shutdownNow();
    }
}
