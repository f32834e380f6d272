package io.sealpipe.soak;

import io.sealpipe.MemorySeekableChannel;
import io.sealpipe.PositionedInput;
import io.sealpipe.StreamAuthenticationException;
import io.sealpipe.ctr.CryptoInputStream;
import io.sealpipe.ctr.CryptoOutputStream;
import io.sealpipe.ctr.CtrStreams;
import io.sealpipe.gcm.GcmInputStream;
import io.sealpipe.gcm.GcmOutputStream;
import io.sealpipe.gcm.GcmSeekableChannel;
import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.internal.Workers;
import io.sealpipe.soak.SoakData.Message;
import io.sealpipe.soak.SoakStats.Kind;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.stream.Stream;

/**
 * The soak of issue 29, run in a child JVM by {@link SoakTest} (which says how to run it).
 * {@code threads} threads, for {@code seconds}, each doing a seeded sequence of operations on
 * every engine of {@link SoakData#KINDS} that loads, at parallelism 1 and 2, on the messages of
 * {@link SoakData#SIZES}:
 *
 * <ul>
 *   <li>whole-message reads of chunked GCM ({@code GcmStreams.decrypt}) and CTR
 *       ({@code CtrStreams.decrypt}) streams, over an {@code InputStream}, a {@code FileChannel},
 *       another channel, a heap or direct {@code ByteBuffer} and (CTR) a {@link PositionedInput},
 *       with reads of every length from single bytes to 1 MiB and skips;
 *   <li>seeks and reads on a thread's own {@link GcmSeekableChannel} and seekable CTR stream;
 *   <li>positioned reads from many threads at once on shared channels and CTR streams (in slots:
 *       over a {@code FileChannel}, another channel, a heap or direct buffer, a
 *       {@code PositionedInput}), and {@code close()} of those from other threads, each closed one
 *       replaced in its slot by a new one;
 *   <li>{@code close()} of another thread's GCM stream or seekable channel while it reads;
 *   <li>writes of new messages, checked by reading them back on another engine (GCM) or against
 *       the JDK's AES-CTR (CTR), and aborted GCM writes, which every reader must reject.
 * </ul>
 *
 * <p>Every byte read is compared with the plaintext. A read on an object that another thread
 * closed may fail, as closed ({@link SoakStats#saysClosed}); anything else thrown is unexpected.
 * Before the measured run, a warm-up with fewer threads loads and compiles everything; then the
 * heap in use after full collections is measured, the run done, everything closed, and measured
 * again. Prints {@code soak-kind}, {@code soak-unexpected}, {@code soak-mismatch} and a final
 * {@code soak-total} line; exits 0 when it ran to the end, whatever it found (the test judges),
 * and 3 if threads were still busy long after the end (a hang; their stacks are printed).
 *
 * <p>Usage: {@code Soak DIR SECONDS THREADS SEED}. Each thread's operations follow from the seed
 * and its number; which operations meet each other is up to the scheduler.
 */
public final class Soak {
    /** Read and write lengths go up to a bit over 1 MiB (a parallel batch), plus room for an offset. */
    private static final int BUFFER = (1 << 20) + 64 * 1024 + 64;
    private static final int SLOTS = 8;
    /** How long after the end a thread may still be busy before the soak reports a hang. */
    private static final long GRACE_SECONDS = 300;
    private static final int EXIT_HUNG = 3;
    /**
     * {@code -Dsealpipe.soak.closeGcmStreams=false} leaves out {@code close()} of another
     * thread's {@link GcmInputStream} while it reads, to see the rest apart from that stream's
     * known close() races (issue 29's soak report).
     */
    static final boolean CLOSE_GCM_STREAMS = !"false".equals(System.getProperty("sealpipe.soak.closeGcmStreams"));

    private final SoakData data;
    private final SoakStats stats;
    private final int threads;
    private final long seed;
    private final String phase;
    /** Shared objects for positioned reads, closed and replaced by the close operations. */
    private final AtomicReferenceArray<Target> gcmSlots = new AtomicReferenceArray<>(SLOTS);
    private final AtomicReferenceArray<Target> ctrSlots = new AtomicReferenceArray<>(SLOTS);
    /** Per thread: its GCM stream or seekable channel being read, for another thread to close. */
    private final AtomicReferenceArray<Target> reading;
    private final AtomicInteger peakWorkerThreads = new AtomicInteger();

    private Soak(String phase, SoakData data, SoakStats stats, int threads, long seed) {
        this.phase = phase;
        this.data = data;
        this.stats = stats;
        this.threads = threads;
        this.seed = seed;
        this.reading = new AtomicReferenceArray<>(threads);
    }

    /**
     * Something other threads may close: {@link #closing} is set before its close() starts.
     * {@link #object} is what is read, {@link #closer} what closes it (and, for a channel over a
     * {@code PositionedInput}, the file beneath).
     */
    static final class Target {
        final String where;
        final Message message;
        final Object object;
        final Closeable closer;
        volatile boolean closing;

        Target(String where, Message message, Closeable object) {
            this(where, message, object, object);
        }

        Target(String where, Message message, Object object, Closeable closer) {
            this.where = where;
            this.message = message;
            this.object = object;
            this.closer = closer;
        }

        void close() throws IOException {
            closing = true;
            closer.close();
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: Soak DIR SECONDS THREADS SEED");
            System.exit(2);
        }
        Path dir = Path.of(args[0]);
        double seconds = Double.parseDouble(args[1]);
        int threads = Integer.parseInt(args[2]);
        long seed = Long.parseLong(args[3]);
        Files.createDirectories(dir);

        SoakData data = SoakData.create(dir, seed);
        System.out.printf(Locale.ROOT, "soak-start {\"seconds\":%.1f,\"threads\":%d,\"seed\":%d,\"engines\":\"%s\","
                + "\"unavailable\":\"%s\",\"sizes\":\"%s\",\"maxWorkers\":%d,\"processors\":%d,\"cpu\":\"%s\","
                + "\"java\":\"%s\",\"closeGcmStreams\":%b,\"libsealpipe\":\"%s\",\"libasan\":\"%s\"}%n", seconds,
                threads, seed, data.engineIds(),
                SoakStats.json(String.join("; ", data.unavailable)), Arrays.toString(SoakData.SIZES),
                Workers.MAX_THREADS, Runtime.getRuntime().availableProcessors(), SoakStats.json(cpu()),
                System.getProperty("java.vm.version"),
                CLOSE_GCM_STREAMS, mapped("libsealpipe"), mapped("libasan"));
        SoakStats stats = new SoakStats();

        // Warm-up: loads and compiles every path, and fills the JDK's and engines' caches, so that
        // the heap measured next is what the run starts from.
        double warmup = Math.max(2, Math.min(30, seconds / 20));
        Soak warm = new Soak("warm-up", data, stats, Math.min(threads, 8), seed);
        warm.run(warmup, dir);
        long heapStart = usedHeapAfterGc();
        long openAtStart = data.openCiphers();

        Soak soak = new Soak("run", data, stats, threads, seed);
        long started = System.nanoTime();
        boolean finished = soak.run(seconds, dir);
        double ran = (System.nanoTime() - started) / 1e9;
        long heapEnd = usedHeapAfterGc();
        long openAtEnd = data.openCiphers();
        int peakWorkers = Math.max(Workers.largestThreads(),
                Math.max(warm.peakWorkerThreads.get(), soak.peakWorkerThreads.get()));

        stats.print(System.out);
        printLeaks(data);
        System.out.printf(Locale.ROOT, "soak-total {\"seconds\":%.1f,\"warmupSeconds\":%.1f,\"threads\":%d,\"seed\":%d,"
                + "\"engines\":\"%s\",\"ops\":%d,\"bytesChecked\":%d,\"wrongBytes\":%d,\"mismatches\":%d,"
                + "\"closedFailures\":%d,\"unexpected\":%d,\"ciphersMade\":%d,\"ciphersOpenAtStart\":%d,"
                + "\"ciphersLeftOpen\":%d,\"heapStartBytes\":%d,\"heapEndBytes\":%d,\"heapChangePercent\":%.2f,"
                + "\"maxHeapBytes\":%d,\"peakWorkers\":%d,\"maxWorkers\":%d,\"peakJvmThreads\":%d,"
                + "\"finished\":%b}%n",
                ran, warmup, threads, seed, data.engineIds(), stats.total(c -> c.ops), stats.total(c -> c.bytesChecked),
                stats.total(c -> c.wrongBytes), stats.total(c -> c.mismatches), stats.total(c -> c.closedFailures),
                stats.total(c -> c.unexpected), data.ciphersMade(), openAtStart, openAtEnd, heapStart, heapEnd,
                100.0 * (heapEnd - heapStart) / heapStart, Runtime.getRuntime().maxMemory(), peakWorkers,
                Workers.MAX_THREADS,
                ManagementFactory.getThreadMXBean().getPeakThreadCount(), finished);
        System.out.flush();
        System.exit(finished ? 0 : EXIT_HUNG);
    }

    /**
     * The files mapped into this process whose names contain {@code name}, from /proc/self/maps:
     * which libsealpipe.so the engines loaded, and whether the ASan runtime is in (the sanitizer
     * run's test checks both).
     */
    private static String mapped(String name) {
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps"))) {
            return lines.map(l -> l.split("\\s+", 6)).filter(f -> f.length == 6 && f[5].contains(name)).map(f -> f[5])
                    .distinct().collect(java.util.stream.Collectors.joining(";"));
        } catch (IOException e) {
            return "";
        }
    }

    /** The processor's model name, from /proc/cpuinfo where there is one. */
    private static String cpu() {
        try (Stream<String> lines = Files.lines(Path.of("/proc/cpuinfo"))) {
            return lines.filter(l -> l.startsWith("model name")).map(l -> l.substring(l.indexOf(':') + 1).trim())
                    .findFirst()
                    .orElse(System.getProperty("os.arch"));
        } catch (IOException e) {
            return System.getProperty("os.arch");
        }
    }

    /** Where the ciphers never closed were made: a {@code soak-leak} line per place, with its count and an example. */
    private static void printLeaks(SoakData data) {
        Map<String, List<CountingEngine.Made>> bySite = new TreeMap<>();
        for (CountingEngine engine : data.engines) {
            for (CountingEngine.Made made : engine.openSites()) {
                List<String> frames = new ArrayList<>();
                for (StackTraceElement f : made.getStackTrace()) {
                    if (f.getClassName().startsWith("io.sealpipe.") && !f.getClassName().startsWith("io.sealpipe.soak.")
                            && frames.size() < 4) {
                        frames.add(f.getClassName().substring("io.sealpipe.".length()) + "." + f.getMethodName());
                    }
                }
                bySite.computeIfAbsent(String.join(" < ", frames), k -> new ArrayList<>()).add(made);
            }
        }
        for (Map.Entry<String, List<CountingEngine.Made>> e : bySite.entrySet()) {
            CountingEngine.Made first = e.getValue().get(0);
            System.out.printf(Locale.ROOT, "soak-leak {\"count\":%d,\"site\":\"%s\"}%n", e.getValue().size(),
                    e.getKey());
            System.out.println("  first made by " + first.getMessage());
            for (StackTraceElement f : first.getStackTrace()) {
                System.out.println("    at " + f);
            }
        }
    }

    /**
     * The heap in use after full collections: the least of several (a Cleaner's or reference
     * handler's work may free more after the first).
     */
    static long usedHeapAfterGc() {
        long least = Long.MAX_VALUE;
        for (int i = 0; i < 6; i++) {
            System.gc();
            least = Math.min(least, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return least;
    }

    /**
     * Opens the shared objects, runs the threads until {@code seconds} have passed, closes the
     * shared objects. False if a thread was still busy {@value #GRACE_SECONDS} s after the end
     * (their stacks printed).
     */
    private boolean run(double seconds, Path dir) throws IOException, InterruptedException {
        SplittableRandom setup = new SplittableRandom(seed ^ 0x51075L ^ phase.hashCode());
        for (int i = 0; i < SLOTS; i++) {
            gcmSlots.set(i, openSharedGcm(setup, "slot " + i));
            ctrSlots.set(i, openSharedCtr(setup, "slot " + i));
        }
        long end = System.nanoTime() + (long) (seconds * 1e9);
        Thread[] all = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            // Each thread's own sequence, different in the warm-up and the run.
            long threadSeed = (seed * 1_000_003L + i) ^ (phase.equals("run") ? 0 : 0x5EED_0F_3A3AL);
            Worker w = new Worker(i, new SplittableRandom(threadSeed), end, dir.resolve("write-" + i + ".bin"));
            all[i] = new Thread(w, "soak-" + i);
            all[i].start();
        }
        long giveUp = end + TimeUnit.SECONDS.toNanos(GRACE_SECONDS);
        boolean finished = true;
        for (Thread t : all) {
            long left = giveUp - System.nanoTime();
            if (left > 0) {
                TimeUnit.NANOSECONDS.timedJoin(t, left);
            }
            if (t.isAlive()) {
                finished = false;
            }
        }
        if (!finished) {
            System.out.println("soak-hung: threads still busy " + GRACE_SECONDS + " s after the end; all stacks:");
            for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                System.out.println("  thread " + e.getKey().getName() + " (" + e.getKey().getState() + ")");
                for (StackTraceElement f : e.getValue()) {
                    System.out.println("    at " + f);
                }
            }
            return false;
        }
        for (int i = 0; i < SLOTS; i++) {
            closeAtEnd(gcmSlots.getAndSet(i, null), Kind.GCM_CLOSE_SHARED);
            closeAtEnd(ctrSlots.getAndSet(i, null), Kind.CTR_CLOSE_SHARED);
        }
        for (int i = 0; i < threads; i++) {
            closeAtEnd(reading.getAndSet(i, null), Kind.CLOSE_OTHERS_READ); // none: each thread clears its own
        }
        return true;
    }

    private void closeAtEnd(Target t, Kind kind) {
        if (t == null) {
            return;
        }
        try {
            t.close();
        } catch (IOException | RuntimeException e) {
            stats.unexpected(kind, e, "closing at the end: " + t.where);
        }
    }

    /** A shared channel for positioned reads: over a FileChannel, another channel, or a PositionedInput. */
    private Target openSharedGcm(SplittableRandom rng, String slot) throws IOException {
        Message m = data.messages[rng.nextInt(data.messages.length)];
        CountingEngine engine = data.engines.get(rng.nextInt(data.engines.size()));
        int parallelism = 1 + rng.nextInt(2);
        GcmStreams gcm = GcmStreams.builder().key(data.gcmKey).engine(engine).parallelism(parallelism).build();
        try {
            int source = rng.nextInt(4);
            int cached = rng.nextInt(GcmSeekableChannel.MAX_CACHED_CHUNKS + 1);
            int maxRead = maxRead(rng);
            String where = "shared GCM channel (" + slot + ") over " + m + " on " + engine.name() + ", parallelism "
                    + parallelism + ", from ";
            switch (source) {
                case 0 -> {
                    return new Target(where + "a FileChannel", m, gcm.open(FileChannel.open(m.gcmFile)));
                }
                case 1 -> {
                    return new Target(where + "a channel returning at most " + maxRead + " bytes a read", m,
                            gcm.open(new MemorySeekableChannel(m.gcm, maxRead)));
                }
                case 2 -> {
                    return new Target(where + "a PositionedInput over memory (at most " + maxRead + " bytes a read), "
                            + cached + " cached chunks", m, gcm.open(positioned(m.gcm, maxRead), m.gcm.length, cached));
                }
                default -> {
                    // A Hadoop-like input: closing the channel leaves the file open, so the soak
                    // closes both, the file first: reads then fail in the input beneath.
                    FileChannel file = FileChannel.open(m.gcmFile);
                    GcmSeekableChannel channel;
                    try {
                        channel = gcm.open(positioned(file), m.gcm.length, cached);
                    } catch (IOException | RuntimeException e) {
                        file.close();
                        throw e;
                    }
                    return new Target(where + "a PositionedInput over a FileChannel closed first, " + cached
                            + " cached chunks", m, channel, () -> {
                                try (channel) {
                                    file.close();
                                }
                            });
                }
            }
        } finally {
            gcm.destroy(); // channels keep what they need
        }
    }

    /** A shared seekable CTR stream for positioned reads. */
    private Target openSharedCtr(SplittableRandom rng, String slot) {
        Message m = data.messages[rng.nextInt(data.messages.length)];
        CountingEngine engine = data.engines.get(rng.nextInt(data.engines.size()));
        int parallelism = 1 + rng.nextInt(2);
        CtrStreams ctr = ctr(m, engine, parallelism, rng);
        try {
            String where = "shared CTR stream (" + slot + ") over " + m + " on " + engine.name() + ", parallelism "
                    + parallelism + ", from ";
            int maxRead = maxRead(rng);
            return switch (rng.nextInt(5)) {
                case 0 -> new Target(where + "a FileChannel", m, ctr.decrypt(open(m.ctrFile)));
                case 1 -> new Target(where + "a heap ByteBuffer", m, ctr.decrypt(ByteBuffer.wrap(m.ctr)));
                case 2 -> new Target(where + "a direct ByteBuffer", m, ctr.decrypt(m.ctrDirect.duplicate()));
                case 3 -> new Target(where + "a PositionedInput (at most " + maxRead + " bytes a read)", m,
                        ctr.decrypt(positioned(m.ctr, maxRead)));
                default -> new Target(where + "a channel returning at most " + maxRead + " bytes a read", m,
                        ctr.decrypt(new MemorySeekableChannel(m.ctr, maxRead)));
            };
        } finally {
            ctr.destroy();
        }
    }

    private CtrStreams ctr(Message m, CountingEngine engine, int parallelism, SplittableRandom rng) {
        int bufferSize = switch (rng.nextInt(3)) {
            case 0 -> CtrStreams.MIN_BUFFER_SIZE;
            case 1 -> 4096 + rng.nextInt(16) * 16 + rng.nextInt(16);
            default -> CtrStreams.DEFAULT_BUFFER_SIZE;
        };
        return CtrStreams.builder().key(data.ctrKey).iv(m.iv).engine(engine).parallelism(parallelism)
                .bufferSize(bufferSize).build();
    }

    private static FileChannel open(Path file) {
        try {
            return FileChannel.open(file);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Most reads return all they can; some inputs return at most a few bytes a read, as sockets do. */
    private static int maxRead(SplittableRandom rng) {
        return switch (rng.nextInt(4)) {
            case 0 -> 1 + rng.nextInt(100);
            case 1 -> 1000 + rng.nextInt(20_000);
            default -> Integer.MAX_VALUE;
        };
    }

    /** Positioned reads of {@code data}, at most {@code maxRead} bytes at a time. */
    static PositionedInput positioned(byte[] data, int maxRead) {
        return (position, buffer, offset, length) -> {
            if (length == 0) {
                return 0;
            }
            if (position >= data.length) {
                return -1;
            }
            int n = (int) Math.min(Math.min(length, maxRead), data.length - position);
            System.arraycopy(data, (int) position, buffer, offset, n);
            return n;
        };
    }

    /** Positioned reads of a file, as a Hadoop stream's. */
    static PositionedInput positioned(FileChannel file) {
        return (position, buffer, offset, length) -> file.read(ByteBuffer.wrap(buffer, offset, length), position);
    }

    /** Counts the threads of sealpipe's shared pool by name (any other pool with that name too). */
    private static int workerThreadsByName() {
        ThreadGroup root = Thread.currentThread().getThreadGroup();
        while (root.getParent() != null) {
            root = root.getParent();
        }
        Thread[] all = new Thread[root.activeCount() + 16];
        int n = root.enumerate(all, true);
        int workers = 0;
        for (int i = 0; i < n; i++) {
            if (all[i].getName().startsWith(Workers.THREAD_NAME_PREFIX)) {
                workers++;
            }
        }
        return workers;
    }

    /** One soak thread: its own random sequence of operations until the end. */
    private final class Worker implements Runnable {
        private final int id;
        private final SplittableRandom rng;
        private final long end;
        private final Path writeFile;
        private final byte[] buffer = new byte[BUFFER];
        private final ByteBuffer direct = ByteBuffer.allocateDirect(BUFFER);
        private long opNumber;
        /** What the current operation works on, for the report of a failure. */
        private String where;
        /** The object another thread may close during the current operation, or null. */
        private Target closable;

        Worker(int id, SplittableRandom rng, long end, Path writeFile) {
            this.id = id;
            this.rng = rng;
            this.end = end;
            this.writeFile = writeFile;
        }

        @Override
        public void run() {
            while (System.nanoTime() < end) {
                opNumber++;
                where = null;
                closable = null;
                Kind kind = pick();
                CountingEngine.context(() -> describe(kind));
                try {
                    stats.op(kind);
                    switch (kind) {
                        case GCM_READ -> gcmRead();
                        case CTR_READ -> ctrRead();
                        case GCM_SEEK -> gcmSeek();
                        case CTR_SEEK -> ctrSeek();
                        case GCM_POSITIONED -> gcmPositioned();
                        case CTR_POSITIONED -> ctrPositioned();
                        case GCM_WRITE -> gcmWrite(false);
                        case GCM_ABORT -> gcmWrite(true);
                        case CTR_WRITE -> ctrWrite();
                        case GCM_CLOSE_SHARED -> closeShared(gcmSlots, true);
                        case CTR_CLOSE_SHARED -> closeShared(ctrSlots, false);
                        case CLOSE_OTHERS_READ -> closeOthersRead();
                        default -> throw new AssertionError(kind);
                    }
                } catch (Throwable e) {
                    Target t = closable;
                    if (t != null && t.closing && SoakStats.saysClosed(e)) {
                        stats.closedFailure(kind);
                    } else {
                        stats.unexpected(kind, e, describe(kind), t != null && t.closing);
                    }
                    if (e instanceof VirtualMachineError && !(e instanceof InternalError)) {
                        return; // out of memory or the like: reported, and this thread stops
                    }
                } finally {
                    reading.set(id, null); // closed by the operation, or by the thread that took it
                }
                if ((opNumber & 255) == 0) {
                    peakWorkerThreads.accumulateAndGet(workerThreadsByName(), Math::max);
                }
            }
        }

        private String describe(Kind kind) {
            return phase + " thread " + id + ", operation " + opNumber + " (" + kind.id + "), seed " + seed
                    + ": " + where;
        }

        /** The operation mix: mostly reads, positioned reads most of all; writes and closes less often. */
        private Kind pick() {
            int r = rng.nextInt(100);
            if (r < 11) {
                return Kind.GCM_READ;
            } else if (r < 20) {
                return Kind.CTR_READ;
            } else if (r < 29) {
                return Kind.GCM_SEEK;
            } else if (r < 36) {
                return Kind.CTR_SEEK;
            } else if (r < 60) {
                return Kind.GCM_POSITIONED;
            } else if (r < 80) {
                return Kind.CTR_POSITIONED;
            } else if (r < 85) {
                return Kind.GCM_WRITE;
            } else if (r < 87) {
                return Kind.GCM_ABORT;
            } else if (r < 91) {
                return Kind.CTR_WRITE;
            } else if (r < 94) {
                return Kind.GCM_CLOSE_SHARED;
            } else if (r < 97) {
                return Kind.CTR_CLOSE_SHARED;
            }
            return Kind.CLOSE_OTHERS_READ;
        }

        private Message message() {
            return data.messages[rng.nextInt(data.messages.length)];
        }

        private CountingEngine engine() {
            return data.engines.get(rng.nextInt(data.engines.size()));
        }

        private GcmStreams gcm(CountingEngine engine, int parallelism) {
            return GcmStreams.builder().key(data.gcmKey).engine(engine).parallelism(parallelism).build();
        }

        /** Publishes a stream or channel for another thread to close (a third of the time). */
        private void maybePublish(Target t) {
            closable = t;
            boolean leftOut = !CLOSE_GCM_STREAMS && t.object instanceof GcmInputStream;
            if (rng.nextInt(3) == 0 && !leftOut) {
                where += ", published for another thread to close";
                reading.set(id, t);
            }
        }

        // ---- whole-message reads ----

        private void gcmRead() throws IOException {
            Message m = message();
            CountingEngine engine = engine();
            int parallelism = 1 + rng.nextInt(2);
            GcmStreams gcm = gcm(engine, parallelism);
            int source = rng.nextInt(6);
            int maxRead = maxRead(rng);
            where = "GCM stream over " + m + " on " + engine.name() + ", parallelism " + parallelism + ", from "
                    + new String[] {"a ByteArrayInputStream", "Files.newInputStream", "a FileChannel",
                        "a heap ByteBuffer",
                        "a direct ByteBuffer", "a channel returning at most " + maxRead + " bytes a read"}[source];
            GcmInputStream in = switch (source) {
                case 0 -> gcm.decrypt(new ByteArrayInputStream(m.gcm));
                case 1 -> gcm.decrypt(Files.newInputStream(m.gcmFile));
                case 2 -> gcm.decrypt(FileChannel.open(m.gcmFile));
                case 3 -> gcm.decrypt(ByteBuffer.wrap(m.gcm));
                case 4 -> gcm.decrypt(m.gcmDirect.duplicate());
                default -> gcm.decrypt(new MemorySeekableChannel(m.gcm, maxRead));
            };
            gcm.destroy(); // the stream keeps its own copy of the key
            Target t = new Target(where, m, in);
            maybePublish(t);
            try (in) {
                readWhole(Kind.GCM_READ, m, in, in::read);
            }
        }

        private void ctrRead() throws IOException {
            Message m = message();
            CountingEngine engine = engine();
            int parallelism = 1 + rng.nextInt(2);
            CtrStreams ctr = ctr(m, engine, parallelism, rng);
            int source = rng.nextInt(7);
            int maxRead = maxRead(rng);
            where = "CTR stream over " + m + " on " + engine.name() + ", parallelism " + parallelism + ", from "
                    + new String[] {"a ByteArrayInputStream", "Files.newInputStream", "a FileChannel",
                        "a heap ByteBuffer",
                        "a direct ByteBuffer", "a PositionedInput (at most " + maxRead + " bytes a read)",
                        "a channel returning at most " + maxRead + " bytes a read"}[source];
            CryptoInputStream in = switch (source) {
                case 0 -> ctr.decrypt(new ByteArrayInputStream(m.ctr));
                case 1 -> ctr.decrypt(Files.newInputStream(m.ctrFile));
                case 2 -> ctr.decrypt(FileChannel.open(m.ctrFile));
                case 3 -> ctr.decrypt(ByteBuffer.wrap(m.ctr));
                case 4 -> ctr.decrypt(m.ctrDirect.duplicate());
                case 5 -> ctr.decrypt(positioned(m.ctr, maxRead));
                default -> ctr.decrypt(new MemorySeekableChannel(m.ctr, maxRead));
            };
            ctr.destroy();
            try (in) {
                readWhole(Kind.CTR_READ, m, in, in::read);
            }
        }

        /**
         * Reads {@code in} to its end with reads of every length (single bytes, a few bytes,
         * 4 KiB, a chunk, 64 KiB, a MiB, into a direct buffer) and skips, checking every byte
         * and that it ends exactly at the message's end.
         */
        private void readWhole(Kind kind, Message m, InputStream in, BufferRead viaBuffer) throws IOException {
            long pos = 0;
            int size = m.size();
            while (true) {
                int choice = rng.nextInt(9);
                int n;
                if (choice == 0) {
                    int b = in.read();
                    n = b < 0 ? -1 : 1;
                    buffer[0] = (byte) b;
                    if (!checkRead(kind, m, pos, buffer, 0, 1, n)) {
                        return;
                    }
                } else if (choice == 7) {
                    int len = 1 + rng.nextInt(256 * 1024);
                    direct.clear().limit(len);
                    n = viaBuffer.read(direct);
                    if (!checkRead(kind, m, pos, direct, 0, len, n)) {
                        return;
                    }
                } else if (choice == 8) {
                    long skipped = in.skip(rng.nextInt(3) == 0 ? rng.nextInt(64) : rng.nextInt(200_000));
                    if (skipped < 0 || pos + skipped > size) {
                        stats.mismatch(kind, 0, "a skip went from " + pos + " to " + (pos + skipped)
                                + " of " + size + ": "
                                + describe(kind));
                        return;
                    }
                    n = (int) skipped;
                    if (n == 0 && pos < size) {
                        continue; // a skip may skip nothing before the end
                    }
                    if (n == 0) {
                        n = in.read(); // at the end: -1
                        if (!checkRead(kind, m, pos, buffer, 0, 1, n)) {
                            return;
                        }
                    }
                } else {
                    int off = rng.nextInt(64);
                    int len = readLength(choice);
                    n = in.read(buffer, off, len);
                    if (!checkRead(kind, m, pos, buffer, off, len, n)) {
                        return;
                    }
                }
                if (n < 0) {
                    break;
                }
                pos += n;
            }
            if (in.read() != -1 || in.read(buffer, 0, 10) != -1) {
                stats.mismatch(kind, 1, "a read after the end returned data: " + describe(kind));
            }
        }

        private int readLength(int choice) {
            return switch (choice) {
                case 1 -> 1 + rng.nextInt(64);
                case 2 -> 4096;
                case 3 -> 16 * 1024 - 1 + rng.nextInt(3);
                case 4 -> 64 * 1024;
                case 5 -> (1 << 20) + 17;
                default -> 1 + rng.nextInt(300_000);
            };
        }

        // ---- seeks on a thread's own channel or stream ----

        private void gcmSeek() throws IOException {
            Message m = message();
            CountingEngine engine = engine();
            GcmStreams gcm = gcm(engine, 1);
            int source = rng.nextInt(3);
            int maxRead = maxRead(rng);
            int cached = rng.nextInt(GcmSeekableChannel.MAX_CACHED_CHUNKS + 1);
            where = "own GCM channel over " + m + " on " + engine.name() + ", from " + new String[] {"a FileChannel",
                "a channel returning at most " + maxRead + " bytes a read",
                "a PositionedInput (at most " + maxRead + " bytes a read), " + cached + " cached chunks"}[source];
            GcmSeekableChannel channel;
            try {
                channel = switch (source) {
                    case 0 -> gcm.open(FileChannel.open(m.gcmFile));
                    case 1 -> gcm.open(new MemorySeekableChannel(m.gcm, maxRead));
                    default -> gcm.open(positioned(m.gcm, maxRead), m.gcm.length, cached);
                };
            } finally {
                gcm.destroy();
            }
            maybePublish(new Target(where, m, channel));
            try (channel) {
                if (rng.nextInt(4) == 0 && channel.size() != m.size()) {
                    stats.mismatch(Kind.GCM_SEEK, 0, "size() is " + channel.size() + ", not " + m.size() + ": "
                            + describe(Kind.GCM_SEEK));
                }
                for (int round = 1 + rng.nextInt(8); round > 0; round--) {
                    long pos = position(m.size());
                    channel.position(pos);
                    for (int reads = 1 + rng.nextInt(3); reads > 0; reads--) {
                        int len = readLength(1 + rng.nextInt(6));
                        ByteBuffer dst = target(len);
                        int start = dst.position();
                        int n = channel.read(dst);
                        if (!checkRead(Kind.GCM_SEEK, m, pos, dst, start, len, n)) {
                            return;
                        }
                        if (n < 0) {
                            break;
                        }
                        pos += n;
                        if (channel.position() != pos) {
                            stats.mismatch(Kind.GCM_SEEK, 0, "position() is " + channel.position() + " after a read to "
                                    + pos + ": " + describe(Kind.GCM_SEEK));
                            return;
                        }
                    }
                }
            }
        }

        private void ctrSeek() throws IOException {
            Message m = message();
            CountingEngine engine = engine();
            int parallelism = 1 + rng.nextInt(2);
            CtrStreams ctr = ctr(m, engine, parallelism, rng);
            int source = rng.nextInt(4);
            int maxRead = maxRead(rng);
            where = "own CTR stream over " + m + " on " + engine.name() + ", parallelism " + parallelism + ", from "
                    + new String[] {"a FileChannel", "a direct ByteBuffer", "a PositionedInput (at most " + maxRead
                        + " bytes a read)", "a channel returning at most " + maxRead + " bytes a read"}[source];
            CryptoInputStream in = switch (source) {
                case 0 -> ctr.decrypt(FileChannel.open(m.ctrFile));
                case 1 -> ctr.decrypt(m.ctrDirect.duplicate());
                case 2 -> ctr.decrypt(positioned(m.ctr, maxRead));
                default -> ctr.decrypt(new MemorySeekableChannel(m.ctr, maxRead));
            };
            ctr.destroy();
            try (in) {
                for (int round = 1 + rng.nextInt(8); round > 0; round--) {
                    long pos = position(m.size());
                    in.seek(pos);
                    for (int reads = 1 + rng.nextInt(3); reads > 0; reads--) {
                        int off = rng.nextInt(64);
                        int len = readLength(1 + rng.nextInt(6));
                        int n = in.read(buffer, off, len);
                        if (!checkRead(Kind.CTR_SEEK, m, pos, buffer, off, len, n)) {
                            return;
                        }
                        if (n < 0) {
                            break;
                        }
                        pos += n;
                        if (in.getPos() != pos) {
                            stats.mismatch(Kind.CTR_SEEK, 0, "getPos() is " + in.getPos() + " after a read to " + pos
                                    + ": " + describe(Kind.CTR_SEEK));
                            return;
                        }
                    }
                }
            }
        }

        // ---- positioned reads on shared objects ----

        private void gcmPositioned() throws IOException {
            Target t = gcmSlots.get(rng.nextInt(SLOTS));
            closable = t;
            where = t.where;
            GcmSeekableChannel channel = (GcmSeekableChannel) t.object;
            Message m = t.message;
            for (int reads = 1 + rng.nextInt(4); reads > 0; reads--) {
                long pos = position(m.size());
                int len = readLength(1 + rng.nextInt(6));
                int off = rng.nextInt(64);
                boolean right = switch (rng.nextInt(5)) {
                    case 0 -> {
                        ByteBuffer dst = target(len);
                        int start = dst.position();
                        yield checkRead(Kind.GCM_POSITIONED, m, pos, dst, start, len, channel.read(dst, pos));
                    }
                    case 1, 2 -> checkRead(Kind.GCM_POSITIONED, m, pos, buffer, off, len,
                            channel.read(pos, buffer, off, len));
                    case 3 -> {
                        len = (int) Math.min(len, m.size());
                        pos = Math.min(pos, m.size() - len);
                        channel.readFully(pos, buffer, off, len);
                        check(Kind.GCM_POSITIONED, m, pos, buffer, off, len);
                        yield true;
                    }
                    default -> {
                        long size = channel.size();
                        if (size != m.size()) {
                            stats.mismatch(Kind.GCM_POSITIONED, 0, "size() is " + size + ", not " + m.size() + ": "
                                    + describe(Kind.GCM_POSITIONED));
                        }
                        yield size == m.size();
                    }
                };
                if (!right) {
                    return;
                }
            }
        }

        private void ctrPositioned() throws IOException {
            Target t = ctrSlots.get(rng.nextInt(SLOTS));
            closable = t;
            where = t.where;
            CryptoInputStream in = (CryptoInputStream) t.object;
            Message m = t.message;
            for (int reads = 1 + rng.nextInt(4); reads > 0; reads--) {
                long pos = position(m.size());
                int len = readLength(1 + rng.nextInt(6));
                int off = rng.nextInt(64);
                if (rng.nextBoolean()) {
                    if (!checkRead(Kind.CTR_POSITIONED, m, pos, buffer, off, len, in.read(pos, buffer, off, len))) {
                        return;
                    }
                } else {
                    len = (int) Math.min(len, m.size());
                    pos = Math.min(pos, m.size() - len);
                    in.readFully(pos, buffer, off, len);
                    check(Kind.CTR_POSITIONED, m, pos, buffer, off, len);
                }
            }
        }

        // ---- writes ----

        /**
         * Encrypts a message on one engine with writes of every length, then reads it back on
         * another (any engine, any parallelism) and checks it. Aborted ({@code abort}): stops
         * after a part of the message and abandons it; every reader must then reject what was
         * written (authentic chunks before the failure may be returned).
         */
        private void gcmWrite(boolean abort) throws IOException {
            Kind kind = abort ? Kind.GCM_ABORT : Kind.GCM_WRITE;
            Message m = message();
            CountingEngine engine = engine();
            int parallelism = 1 + rng.nextInt(2);
            boolean toMemory = m.size() <= (1 << 20) + 3 && rng.nextBoolean();
            boolean asChannel = rng.nextBoolean();
            long stopAt = abort ? (long) (rng.nextDouble() * (m.size() + 1)) : m.size();
            where = (abort ? "aborted GCM write (after " + stopAt + " bytes) of " : "GCM write of ") + m + " on "
                    + engine.name() + ", parallelism " + parallelism + ", to " + (toMemory ? "memory"
                    : asChannel ? "a FileChannel" : "Files.newOutputStream");
            ByteArrayOutputStream memory = toMemory ? new ByteArrayOutputStream() : null;
            GcmStreams gcm = gcm(engine, parallelism);
            GcmOutputStream out;
            try {
                out = toMemory ? gcm.encrypt(memory) : asChannel ? gcm.encrypt(FileChannel.open(writeFile,
                        StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING))
                        : gcm.encrypt(Files.newOutputStream(writeFile));
            } finally {
                gcm.destroy();
            }
            try (out) {
                write(m, out, stopAt);
                if (abort) {
                    out.abort();
                }
            }
            byte[] sealed = toMemory ? memory.toByteArray() : null;
            long length = toMemory ? sealed.length : Files.size(writeFile);
            if (!abort && length != GcmStreams.ciphertextLength(m.size())) {
                stats.mismatch(kind, Math.abs(length - GcmStreams.ciphertextLength(m.size())), "the message is "
                        + length + " bytes, not " + GcmStreams.ciphertextLength(m.size()) + ": " + describe(kind));
                return;
            }
            CountingEngine reader = engine();
            GcmStreams back = gcm(reader, 1 + rng.nextInt(2));
            where += "; read back on " + reader.name() + ", parallelism " + back.parallelism();
            try (GcmInputStream in = toMemory ? back.decrypt(new ByteArrayInputStream(sealed))
                    : back.decrypt(FileChannel.open(writeFile))) {
                back.destroy();
                if (!abort) {
                    readWhole(kind, m, in, in::read);
                    return;
                }
                try {
                    readWhole(kind, m, in, in::read);
                    stats.mismatch(kind, 1, "an aborted message read to a clean end, with no authentication failure: "
                            + describe(kind));
                } catch (StreamAuthenticationException expected) {
                    // rejected, as it must be
                }
            }
        }

        /** Writes {@code m}'s first {@code stopAt} bytes with writes of every length. */
        private <T extends OutputStream & WritableByteChannel> void write(Message m, T out, long stopAt)
                throws IOException {
            int pos = 0;
            while (pos < stopAt) {
                int left = (int) (stopAt - pos);
                switch (rng.nextInt(6)) {
                    case 0 -> {
                        out.write(m.plain[pos]);
                        pos++;
                    }
                    case 1 -> {
                        int n = Math.min(left, 1 + rng.nextInt(100));
                        out.write(m.plain, pos, n);
                        pos += n;
                    }
                    case 2 -> {
                        int n = Math.min(left, 16 * 1024 - 1 + rng.nextInt(3));
                        out.write(m.plain, pos, n);
                        pos += n;
                    }
                    case 3 -> {
                        int n = Math.min(left, 1 + rng.nextInt((3 << 19)));
                        out.write(m.plain, pos, n);
                        pos += n;
                    }
                    case 4 -> {
                        int n = Math.min(left, 1 + rng.nextInt(256 * 1024));
                        int written = out.write(ByteBuffer.wrap(m.plain, pos, n));
                        pos += written;
                    }
                    default -> {
                        int n = Math.min(left, 1 + rng.nextInt(256 * 1024));
                        direct.clear();
                        direct.put(m.plain, pos, n).flip();
                        while (direct.hasRemaining()) {
                            out.write(direct);
                        }
                        pos += n;
                    }
                }
            }
        }

        /**
         * Encrypts a message with its reference key and IV (a new stream, the same key stream)
         * and checks the ciphertext against the JDK's, byte for byte.
         */
        private void ctrWrite() throws IOException {
            Message m = message();
            CountingEngine engine = engine();
            int parallelism = 1 + rng.nextInt(2);
            boolean toMemory = m.size() <= (1 << 20) + 3 && rng.nextBoolean();
            where = "CTR write of " + m + " on " + engine.name() + ", parallelism " + parallelism + ", to "
                    + (toMemory ? "memory" : "a FileChannel");
            ByteArrayOutputStream memory = toMemory ? new ByteArrayOutputStream() : null;
            CtrStreams ctr = ctr(m, engine, parallelism, rng);
            CryptoOutputStream out;
            try {
                out = toMemory ? ctr.encrypt(memory) : ctr.encrypt(FileChannel.open(writeFile,
                        StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING));
            } finally {
                ctr.destroy();
            }
            try (out) {
                write(m, out, m.size());
            }
            if (toMemory) {
                compareCiphertext(m, memory.toByteArray(), 0, memory.size(), 0);
                if (memory.size() != m.size()) {
                    stats.mismatch(Kind.CTR_WRITE, Math.abs(memory.size() - m.size()), "the ciphertext is "
                            + memory.size() + " bytes, not " + m.size() + ": " + describe(Kind.CTR_WRITE));
                }
                return;
            }
            try (FileChannel file = FileChannel.open(writeFile)) {
                if (file.size() != m.size()) {
                    stats.mismatch(Kind.CTR_WRITE, Math.abs(file.size() - m.size()), "the ciphertext is " + file.size()
                            + " bytes, not " + m.size() + ": " + describe(Kind.CTR_WRITE));
                    return;
                }
                long at = 0;
                while (at < m.size()) {
                    int n = file.read(ByteBuffer.wrap(buffer, 0, (int) Math.min(buffer.length, m.size() - at)), at);
                    compareCiphertext(m, buffer, 0, n, at);
                    at += n;
                }
            }
        }

        private void compareCiphertext(Message m, byte[] b, int off, int n, long at) {
            stats.checked(Kind.CTR_WRITE, n);
            int end = (int) Math.min(m.size(), at + n);
            int mismatch = Arrays.mismatch(b, off, off + (end - (int) at), m.ctr, (int) at, end);
            if (mismatch >= 0) {
                long wrong = 0;
                for (int i = mismatch; i < end - at; i++) {
                    wrong += b[off + i] != m.ctr[(int) at + i] ? 1 : 0;
                }
                stats.mismatch(Kind.CTR_WRITE, wrong, "ciphertext byte " + (at + mismatch) + " differs from the JDK's"
                        + " AES-CTR: " + describe(Kind.CTR_WRITE));
            }
        }

        // ---- closes from other threads ----

        /** Replaces a shared object by a new one and closes it, while other threads may be reading it. */
        private void closeShared(AtomicReferenceArray<Target> slots, boolean gcm) throws IOException {
            int slot = rng.nextInt(SLOTS);
            Target fresh = gcm ? openSharedGcm(rng, "slot " + slot) : openSharedCtr(rng, "slot " + slot);
            Target old = slots.getAndSet(slot, fresh);
            where = "closing the " + old.where;
            old.close();
        }

        /** Closes another thread's GCM stream or channel while it reads (if one has published its own). */
        private void closeOthersRead() throws IOException {
            int from = rng.nextInt(threads);
            for (int i = 0; i < threads; i++) {
                int other = (from + i) % threads;
                if (other == id) {
                    continue;
                }
                Target t = reading.getAndSet(other, null);
                if (t != null) {
                    where = "closing thread " + other + "'s " + t.where;
                    t.close();
                    return;
                }
            }
            where = "no thread was reading a published stream";
        }

        // ---- checks ----

        /** A plaintext position: the start, a chunk border and its neighbours, anywhere, the end and past it. */
        private long position(int size) {
            return switch (rng.nextInt(6)) {
                case 0 -> 0;
                case 1 -> {
                    long border = (long) rng.nextInt(size / (16 * 1024) + 1) * 16 * 1024;
                    yield Math.max(0, border - 2 + rng.nextInt(5));
                }
                case 2 -> Math.max(0, size - rng.nextInt(100));
                case 3 -> size + rng.nextInt(3) * (1 + rng.nextInt(20_000));
                default -> size == 0 ? 0 : rng.nextLong(size);
            };
        }

        /**
         * A heap buffer at an offset into this thread's array, or its direct buffer, with {@code len}
         * bytes of room.
         */
        private ByteBuffer target(int len) {
            if (rng.nextBoolean()) {
                direct.clear().limit(len);
                return direct;
            }
            int off = rng.nextInt(64);
            return ByteBuffer.wrap(buffer, off, len);
        }

        /**
         * Checks the result {@code n} of a read of up to {@code len} bytes at {@code pos}: the end
         * (-1) exactly when {@code pos} is at or past the message's end, else 1 to {@code len}
         * bytes, all of them the plaintext's.
         *
         * @return false after a mismatch (the operation stops there)
         */
        private boolean result(Kind kind, Message m, long pos, int len, int n) {
            String wrong = null;
            if (n < 0 && pos < m.size()) {
                wrong = "returned the end";
            } else if (n >= 0 && pos >= m.size()) {
                wrong = "returned " + n + " bytes, not the end";
            } else if (n == 0 || n > len) {
                wrong = "returned " + n + " bytes for a read of " + len;
            }
            if (wrong != null) {
                stats.mismatch(kind, Math.max(n, 0), "a read at " + pos + " of " + m.size() + " " + wrong + ": "
                        + describe(kind));
                return false;
            }
            return true;
        }

        /**
         * {@link #result} of a read into {@code dst}, which had {@code len} bytes of room from
         * {@code start}, then its bytes.
         */
        private boolean checkRead(Kind kind, Message m, long pos, ByteBuffer dst, int start, int len, int n) {
            if (!result(kind, m, pos, len, n)) {
                return false;
            }
            if (n > 0) {
                if (dst.position() != start + n) {
                    stats.mismatch(kind, 0, "a read returned " + n + " but moved the buffer by "
                            + (dst.position() - start)
                            + ": " + describe(kind));
                    return false;
                }
                check(kind, m, pos, dst.slice(start, n));
            }
            return true;
        }

        /** {@link #result} of a read into {@code b[off, off + len)}, then its bytes. */
        private boolean checkRead(Kind kind, Message m, long pos, byte[] b, int off, int len, int n) {
            if (!result(kind, m, pos, len, n)) {
                return false;
            }
            if (n > 0) {
                check(kind, m, pos, b, off, n);
            }
            return true;
        }

        /** Compares {@code b[off, off + n)} with the plaintext from {@code pos}. */
        private void check(Kind kind, Message m, long pos, byte[] b, int off, int n) {
            check(kind, m, pos, ByteBuffer.wrap(b, off, n).slice());
        }

        /** Compares the bytes between {@code got}'s position and limit with the plaintext from {@code pos}. */
        private void check(Kind kind, Message m, long pos, ByteBuffer got) {
            int n = got.remaining();
            stats.checked(kind, n);
            long beyond = Math.max(0, pos + n - m.size());
            int inside = (int) (n - beyond);
            int first = inside <= 0 ? -1
                    : got.slice(got.position(), inside).mismatch(ByteBuffer.wrap(m.plain, (int) pos, inside));
            if (first >= 0 || beyond > 0) {
                long wrong = beyond;
                for (int i = Math.max(0, first); first >= 0 && i < inside; i++) {
                    wrong += got.get(got.position() + i) != m.plain[(int) pos + i] ? 1 : 0;
                }
                stats.mismatch(kind, wrong, n + " bytes read at " + pos + ": " + wrong + " wrong, the first at "
                        + (first >= 0 ? pos + first : m.size()) + ": " + describe(kind));
            }
        }
    }

    /** {@code read(ByteBuffer)} of the stream being read whole. */
    @FunctionalInterface
    private interface BufferRead {
        int read(ByteBuffer dst) throws IOException;
    }
}
