package io.sealpipe.cli;

import io.sealpipe.gcm.GcmStreams;
import io.sealpipe.hadoop.EnvelopeKms;
import io.sealpipe.internal.Envelope;
import io.sealpipe.internal.hadoop.EnvelopeWrapping;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;

/**
 * {@code sealpipe rewrap}: the data keys of envelope files wrapped again under their key's
 * current version, as {@code hdfs crypto -reencryptZone} does for a zone's files. Each data key
 * is re-encrypted by the KMS ({@link EnvelopeKms#rewrap}: Hadoop's {@code REENCRYPT_EEK}, AWS
 * KMS's {@code ReEncrypt}; the data key never leaves it) once, however many files it sealed.
 * Under Hadoop's KMS the new form is checked before any file changes: the KMS must unwrap it to a
 * key that matches the file's key commitment. Under AWS KMS nothing is unwrapped: {@code
 * ReEncrypt} decrypts the old form, authenticated under its encryption context, and encrypts
 * the same data key under the same context inside the KMS, so the data key never reaches this
 * process (and the rewrap needs no {@code kms:Decrypt}); the file system's readers authenticate
 * every chunk under the key the new form unwraps to. A file's message (every chunk) is copied
 * byte for byte behind its new envelope into a hidden file beside it, which then replaces the
 * file in one rename: a run killed at any point leaves each file as it was or rewrapped, both
 * readable, and at most a hidden {@code .NAME.sealpipe-rewrap-*} file (never a whole envelope
 * file under a name a job reads). Needs hadoop-common on the class path.
 */
final class HadoopRewrap {
    /** What happened to one file. */
    enum Outcome { REWRAPPED, CURRENT, NOT_ENVELOPE, RESTORED, FAILED }

    /** The hidden copy of {@code NAME} that a run makes: {@code .NAME.sealpipe-rewrap-UUID}. */
    private static final java.util.regex.Pattern COPY = java.util.regex.Pattern.compile(
            "\\.(.+)\\.sealpipe-rewrap-[0-9a-f-]{36}");

    private final EnvelopeKms kms;
    private final Configuration conf;
    private final boolean dryRun;
    private final PrintWriter out;
    private final PrintWriter err;
    private final Map<ByteBuffer, Envelope> rewrapped = new HashMap<>(); // by the old wrapped form
    private final Map<Outcome, Integer> counts = new HashMap<>();

    private HadoopRewrap(EnvelopeKms kms, Configuration conf, boolean dryRun, PrintWriter out,
            PrintWriter err) {
        this.kms = kms;
        this.conf = conf;
        this.dryRun = dryRun;
        this.out = out;
        this.err = err;
    }

    /**
     * Rewraps every envelope file at or under {@code paths} with {@code kms}.
     *
     * @return whether every envelope file is now under its key's current version (or would be, with {@code dryRun})
     */
    static boolean run(HadoopEnvelopes.Kms kmsNamed, String[] paths, boolean dryRun, PrintWriter out, PrintWriter err)
            throws IOException {
        Configuration conf = new Configuration();
        EnvelopeKms kms = HadoopEnvelopes.open(kmsNamed);
        try {
            HadoopRewrap rewrap = new HadoopRewrap(kms, conf, dryRun, out, err);
            for (String path : paths) {
                rewrap.tree(new Path(path));
            }
            out.println((dryRun ? "would rewrap " : "rewrapped ") + rewrap.count(Outcome.REWRAPPED) + ", current "
                    + rewrap.count(Outcome.CURRENT) + ", not envelope files " + rewrap.count(Outcome.NOT_ENVELOPE)
                    + ", failed " + rewrap.count(Outcome.FAILED)
                    + (rewrap.count(Outcome.RESTORED) > 0 ? ", restored " + rewrap.count(Outcome.RESTORED) : ""));
            return rewrap.count(Outcome.FAILED) == 0;
        } finally {
            kms.close();
        }
    }

    private int count(Outcome outcome) {
        return counts.getOrDefault(outcome, 0);
    }

    private void tree(Path root) throws IOException {
        FileSystem fs = root.getFileSystem(conf);
        FileStatus status = fs.getFileStatus(root);
        if (status.isFile()) {
            file(fs, status);
            return;
        }
        RemoteIterator<org.apache.hadoop.fs.LocatedFileStatus> files = fs.listFiles(root, true);
        java.util.List<FileStatus> copies = new java.util.ArrayList<>();
        while (files.hasNext()) {
            FileStatus file = files.next();
            if (COPY.matcher(file.getPath().getName()).matches()) {
                copies.add(file); // a killed run's: below
            } else if (!file.getPath().getName().startsWith(".")) { // hidden: checksums
                file(fs, file);
            }
        }
        for (FileStatus copy : copies) {
            leftover(fs, copy);
        }
    }

    private void file(FileSystem fs, FileStatus status) {
        Path path = status.getPath();
        Outcome outcome;
        String note;
        try {
            String[] what = new String[1];
            outcome = rewrap(fs, status, what);
            note = what[0];
        } catch (IOException | RuntimeException e) {
            outcome = Outcome.FAILED;
            note = e.getMessage();
            err.println("sealpipe: rewrap: " + path + ": " + e.getMessage());
        }
        counts.merge(outcome, 1, Integer::sum);
        if (outcome != Outcome.FAILED) {
            out.println(label(outcome) + " " + path + (note == null ? "" : " (" + note + ")"));
        }
    }

    private String label(Outcome outcome) {
        return switch (outcome) {
            case REWRAPPED -> dryRun ? "would rewrap" : "rewrapped";
            case CURRENT -> "current";
            case NOT_ENVELOPE -> "skipped";
            case RESTORED -> dryRun ? "would restore" : "restored";
            case FAILED -> "failed";
        };
    }

    /**
     * A copy that a killed run left: put back in place if its file is gone (a rename that
     * deletes the file first, as on object stores and the local file system, was cut between its
     * two steps), removed if the file is there (the copy was never renamed: the file is as it was).
     */
    private void leftover(FileSystem fs, FileStatus copy) {
        java.util.regex.Matcher name = COPY.matcher(copy.getPath().getName());
        name.matches();
        Path file = new Path(copy.getPath().getParent(), name.group(1));
        try {
            if (fs.exists(file)) {
                if (!dryRun) {
                    fs.delete(copy.getPath(), false);
                }
                out.println((dryRun ? "would remove " : "removed ") + copy.getPath() + " (a killed run's copy; "
                        + file.getName() + " is whole)");
                return;
            }
            byte[] first = new byte[(int) Math.min(copy.getLen(), Envelope.LENGTH + GcmStreams.HEADER_LENGTH)];
            try (FSDataInputStream in = fs.open(copy.getPath())) {
                in.readFully(0, first);
            }
            if (first.length < Envelope.LENGTH + GcmStreams.HEADER_LENGTH || !Envelope.startsWithMagic(first)) {
                throw new IOException("a killed run's copy that is no envelope file: left as it is");
            }
            Envelope.parse(first);
            if (!dryRun && !fs.rename(copy.getPath(), file)) {
                throw new IOException("cannot rename it to " + file);
            }
            counts.merge(Outcome.RESTORED, 1, Integer::sum);
            out.println(label(Outcome.RESTORED) + " " + file + " (from a killed run's copy)");
        } catch (IOException | RuntimeException e) {
            counts.merge(Outcome.FAILED, 1, Integer::sum);
            err.println("sealpipe: rewrap: " + copy.getPath() + ": " + e.getMessage());
        }
    }

    private Outcome rewrap(FileSystem fs, FileStatus status, String[] note) throws IOException {
        Path path = status.getPath();
        long length = status.getLen();
        byte[] first = new byte[(int) Math.min(length, Envelope.LENGTH + GcmStreams.HEADER_LENGTH)];
        try (FSDataInputStream in = fs.open(path)) {
            in.readFully(0, first);
        }
        if (!Envelope.startsWithMagic(first)) {
            note[0] = "not an envelope file";
            return Outcome.NOT_ENVELOPE;
        }
        if (first.length < Envelope.LENGTH + GcmStreams.HEADER_LENGTH) {
            throw new IOException("it begins with an envelope but is cut short (" + length + " bytes): left as it is");
        }
        Envelope old = Envelope.parse(first);
        Envelope renewed = renewed(old, Arrays.copyOfRange(first, Envelope.LENGTH, first.length));
        if (renewed == null) {
            note[0] = old.versionName();
            return Outcome.CURRENT;
        }
        note[0] = old.versionName() + " -> " + renewed.versionName();
        if (!dryRun) {
            replace(fs, status, first, renewed.bytes());
        }
        return Outcome.REWRAPPED;
    }

    /**
     * The envelope of {@code old}'s data key wrapped under the key's current version, checked to
     * unwrap to the key that matches {@code header}; null if {@code old} is under it already. One
     * re-encryption per data key.
     */
    private Envelope renewed(Envelope old, byte[] header) throws IOException {
        ByteBuffer id = old.wrappedIdentity();
        if (rewrapped.containsKey(id)) {
            Envelope known = rewrapped.get(id);
            return known == null ? null : known.withContent(old.compressed());
        }
        EnvelopeWrapping.checkKind(old, kms, "left as it is");
        EnvelopeKms.WrappedKey again;
        try {
            again = kms.rewrap(EnvelopeWrapping.wrappedKey(old));
        } catch (IOException | RuntimeException e) {
            throw new IOException("the KMS " + kms.location() + " could not re-encrypt the data key of key '"
                    + old.keyName() + "': " + e.getMessage(), e);
        }
        if (again.versionName().equals(old.versionName())) {
            rewrapped.put(id, null);
            return null;
        }
        Envelope renewed = old.rewrapped(again.versionName(), again.iv(), again.wrapped());
        if (kms.rewrapKeepsDataKey()) {
            rewrapped.put(id, renewed); // proven inside the KMS (AWS's ReEncrypt): the data key never out
            return renewed;
        }
        byte[] dataKey = HadoopEnvelopes.unwrap(kms, renewed);
        try {
            GcmStreams check = GcmStreams.builder().key(dataKey).context(renewed.context()).build();
            try {
                if (!check.matchesHeader(header)) {
                    throw new IOException("the KMS re-encrypted the data key of key '" + old.keyName() + "' ("
                            + old.versionName() + ") to one that does not open the file: left as it is");
                }
            } finally {
                check.destroy();
            }
        } finally {
            Arrays.fill(dataKey, (byte) 0);
        }
        rewrapped.put(id, renewed);
        return renewed;
    }

    /**
     * Writes {@code envelope} and the message after the old one into a hidden file beside the
     * file (with its permission, replication and block size), checks that the file did not change
     * meanwhile (its first bytes, its length and its time), then renames the copy over it.
     */
    private void replace(FileSystem fs, FileStatus status, byte[] first, byte[] envelope) throws IOException {
        Path path = status.getPath();
        long length = status.getLen();
        Path temporary = new Path(path.getParent(), "." + path.getName() + ".sealpipe-rewrap-" + UUID.randomUUID());
        boolean renamed = false;
        try {
            try (OutputStream to = fs.create(temporary, status.getPermission(), false, 64 * 1024, status.getReplication(),
                    status.getBlockSize(), null); InputStream from = fs.open(path)) {
                byte[] again = from.readNBytes(first.length);
                if (!Arrays.equals(first, again)) {
                    throw new IOException("it changed while it was rewrapped (another writer?): left as it is");
                }
                to.write(envelope);
                to.write(again, Envelope.LENGTH, again.length - Envelope.LENGTH);
                long copied = again.length + from.transferTo(to);
                if (copied != length) {
                    throw new IOException("it changed while it was read (" + copied + " bytes, not " + length + "):"
                            + " left as it is");
                }
            }
            FileStatus now = fs.getFileStatus(path);
            if (now.getLen() != length || now.getModificationTime() != status.getModificationTime()) {
                throw new IOException("it changed while it was rewrapped (another writer?): left as it is");
            }
            if (!java.util.Objects.equals(fs.getFileStatus(temporary).getOwner(), status.getOwner())) {
                try {
                    fs.setOwner(temporary, status.getOwner(), status.getGroup());
                } catch (IOException e) {
                    err.println("sealpipe: rewrap: " + path + ": its owner " + status.getOwner() + " could not be kept ("
                            + e.getMessage() + "): run rewrap as the files' owner or a superuser");
                }
            }
            TestHooks.reached(TestHooks.Step.REWRAP_COPIED, java.nio.file.Path.of(path.getName()));
            FileContext.getFileContext(path.toUri(), conf).rename(temporary, path, Options.Rename.OVERWRITE);
            renamed = true;
        } finally {
            if (!renamed) {
                fs.delete(temporary, false);
            }
        }
    }
}
