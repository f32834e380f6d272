package io.sealpipe.it.net;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The TCP sockets that a process and its descendants listen on, read from Linux's {@code /proc}:
 * the processes' open sockets ({@code /proc/PID/fd}) matched by inode with the listening entries
 * of {@code /proc/net/tcp} and {@code /proc/net/tcp6}. The Hadoop and Spark tests use it to show
 * where the servers they start (in the test JVM, and in the JVMs it starts: application masters
 * and containers, executors, the KMS) accept connections, and which network interfaces there are.
 * One copy, in {@code src/it/net-shared}, added to each project's test sources.
 */
public final class Listeners {
    /** A listening socket, the address it is bound to (an IPv4-mapped IPv6 address as IPv4), and its process. */
    public record Listener(long pid, String command, String address, int port) {
        public boolean onLoopbackAddress() {
            return address.equals("127.0.0.1");
        }

        public boolean inProcess(String mainClass) {
            return command.contains(mainClass);
        }

        @Override
        public String toString() {
            String main = command.length() > 120 ? "..." + command.substring(command.length() - 120) : command;
            return address + ":" + port + " (pid " + pid + ": " + main + ")";
        }
    }

    private static final String LISTEN = "0A";

    private Listeners() {}

    /**
     * This process's network interfaces besides the loopback that are up or have an address,
     * each with its addresses: none in a network namespace with only the loopback (as the YARN
     * tests run, see {@code src/it/loopback-only/bin/java}), where a server bound to the wildcard
     * address is reached only over the loopback.
     */
    public static List<String> interfacesBesidesLoopback() {
        List<String> others = new ArrayList<>();
        try {
            for (NetworkInterface nic : NetworkInterface.networkInterfaces().toList()) {
                if (!nic.isLoopback() && (nic.isUp() || nic.inetAddresses().findAny().isPresent())) {
                    others.add(nic.getName() + (nic.isUp() ? " (up) " : " ") + nic.inetAddresses().toList());
                }
            }
        } catch (SocketException e) {
            throw new UncheckedIOException(e);
        }
        return others;
    }

    /** The listening sockets of process {@code rootPid} and of every process it started, directly or not, that still runs. */
    public static List<Listener> of(long rootPid) {
        ProcessHandle root = ProcessHandle.of(rootPid).orElseThrow(() -> new IllegalArgumentException("no process " + rootPid));
        List<ProcessHandle> processes = new ArrayList<>();
        processes.add(root);
        root.descendants().forEach(processes::add);
        Map<String, ProcessHandle> owners = new HashMap<>();
        for (ProcessHandle process : processes) {
            for (String inode : socketInodes(process.pid())) {
                owners.put(inode, process);
            }
        }
        List<Listener> listeners = new ArrayList<>();
        for (String table : List.of("/proc/net/tcp", "/proc/net/tcp6")) {
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of(table));
            } catch (NoSuchFileException noIpv6) {
                continue;
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            // "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ..."
            for (String line : lines.subList(1, lines.size())) {
                String[] fields = line.trim().split("\\s+");
                ProcessHandle owner = owners.get(fields[9]);
                if (fields[3].equals(LISTEN) && owner != null) {
                    String[] local = fields[1].split(":");
                    String command = commandLine(owner.pid());
                    listeners.add(new Listener(owner.pid(), command, address(local[0]), Integer.parseInt(local[1], 16)));
                }
            }
        }
        return listeners;
    }

    /**
     * A process's whole command line, its arguments joined by spaces, from {@code
     * /proc/PID/cmdline} ({@code ProcessHandle.Info} cuts a long one short: a JVM's class path
     * can hide its main class), or "?" if the process has ended.
     */
    private static String commandLine(long pid) {
        try {
            byte[] bytes = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "cmdline"));
            return new String(bytes, StandardCharsets.UTF_8).replace('\0', ' ').trim();
        } catch (NoSuchFileException ended) {
            return "?";
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The inodes of the sockets a process has open (none if it has ended). */
    private static List<String> socketInodes(long pid) {
        List<String> inodes = new ArrayList<>();
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "fd"))) {
            for (Path fd : fds) {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (target.startsWith("socket:[")) {
                        inodes.add(target.substring("socket:[".length(), target.length() - 1));
                    }
                } catch (NoSuchFileException closed) {
                    // Closed since it was listed.
                }
            }
        } catch (NoSuchFileException ended) {
            // The process ended since it was listed.
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return inodes;
    }

    /** An address of /proc/net/tcp (8 hex digits) or tcp6 (32): 32-bit words, each in the host's (little-endian) order. */
    private static String address(String hex) {
        byte[] bytes = new byte[hex.length() / 2];
        for (int word = 0; word < bytes.length / 4; word++) {
            for (int b = 0; b < 4; b++) {
                int at = (word * 4 + 3 - b) * 2;
                bytes[word * 4 + b] = (byte) Integer.parseInt(hex.substring(at, at + 2), 16);
            }
        }
        try {
            return InetAddress.getByAddress(bytes).getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(hex, e);
        }
    }
}
