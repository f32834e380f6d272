package io.sealpipe.internal;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The envelope of a sealed file ({@code io.sealpipe.hadoop.SealedFileSystem}) whose key is a data key wrapped by a KMS (envelope mode,
 * docs/FORMAT.md "Envelope files"): the first {@value #LENGTH} bytes of the stored file, before
 * the chunked-encryption message. It names the KMS kind, the key and the key version that
 * wrapped the data key, and holds the wrapped data key and its IV; the message after it is
 * sealed under the unwrapped data key with the envelope's first bytes, through the key name, as
 * its context ({@link #context()}). So a changed kind, content or key name fails the key
 * commitment like a wrong key, and so does a changed wrapped key, IV or version (the KMS then
 * unwraps another key, or refuses), while a rewrap (the same data key wrapped again, under the
 * key's current version) replaces those three without touching a chunk.
 *
 * <pre>
 * offset  bytes  field
 * 0       8      magic 89 53 50 45 4E 56 0D 0A ("\x89SPENV\r\n")
 * 8       1      format version: 1
 * 9       1      KMS kind, 1 to 255: 1 a Hadoop KeyProvider's encrypted key
 *                (KeyProviderCryptoExtension), 2 an AWS KMS ciphertext blob; 3 to 127 kept for
 *                sealpipe, 128 to 255 for a user's own KMS client
 * 10      1      content: 0 the file's bytes, 1 Snappy-compressed with a frame index
 * 11      1      data key length in bytes: 32 (Cobblestone-256)
 * 12      2+n    key name, UTF-8, n = 1..255 (big-endian length first)
 *         2+n    key version name that wrapped the data key, UTF-8, n = 1..255
 *         2+n    IV of the wrapped data key, n = 0..64
 *         2+n    wrapped data key, n = 1..256
 *         ...    zero bytes up to offset 512 (the fields together fit in it)
 * 512            the chunked-encryption message (Cobblestone-256 under the data key; its
 *                context, the envelope's bytes 0 to 14 + n of the key name)
 * </pre>
 *
 * A fixed length, so that a file's plaintext length follows from its stored length alone:
 * {@code GcmStreams.plaintextLength(stored - 512)}. Parsing is strict: any other magic, version,
 * kind 0, content or key length, a field out of its bounds, or a non-zero byte in the padding is
 * refused; a kind that this sealpipe has no client for is read (to show it), and refused when the
 * file system unwraps. Immutable; its arrays are copies.
 */
public final class Envelope {
    /** The bytes of every envelope of version 1. */
    public static final int LENGTH = 512;
    /** The first bytes of every envelope: a direct-key file starts with a random salt instead. */
    public static final byte[] MAGIC = {(byte) 0x89, 'S', 'P', 'E', 'N', 'V', '\r', '\n'};
    public static final int VERSION = 1;
    /** A data key wrapped by a Hadoop {@code KeyProviderCryptoExtension} (a KMS, or a keystore). */
    public static final int KIND_HADOOP = 1;
    /** A data key wrapped by AWS KMS ({@code GenerateDataKey}): the ciphertext blob, no IV. */
    public static final int KIND_AWS = 2;
    /** The first kind that is a user's own (docs/FORMAT.md, "Envelope files"). */
    public static final int KIND_USER_FIRST = 128;
    public static final int CONTENT_PLAIN = 0;
    public static final int CONTENT_SNAPPY = 1;
    /** The data key length: Cobblestone-256. */
    public static final int DATA_KEY_BYTES = 32;

    private static final int FIXED = 12;
    private static final int MAX_NAME = 255;
    private static final int MAX_IV = 64;
    private static final int MAX_WRAPPED = 256;

    private final int kind;
    private final boolean compressed;
    private final String keyName;
    private final String versionName;
    private final byte[] iv;
    private final byte[] wrappedKey;
    private final byte[] bytes; // the whole envelope, as stored

    private Envelope(int kind, boolean compressed, String keyName, String versionName, byte[] iv, byte[] wrappedKey,
            byte[] bytes) {
        this.kind = kind;
        this.compressed = compressed;
        this.keyName = keyName;
        this.versionName = versionName;
        this.iv = iv;
        this.wrappedKey = wrappedKey;
        this.bytes = bytes;
    }

    /**
     * The envelope of a new file.
     *
     * @throws IOException if a field is out of its bounds (a KMS answer this format cannot hold)
     */
    public static Envelope of(int kind, boolean compressed, String keyName, String versionName, byte[] iv,
            byte[] wrappedKey) throws IOException {
        check(kind >= 1 && kind <= 255, "the KMS kind is 1 to 255, not " + kind);
        byte[] name = utf8(keyName);
        byte[] version = utf8(versionName);
        check(name.length >= 1 && name.length <= MAX_NAME, "the key name is 1 to 255 bytes of UTF-8, not " + name.length);
        check(version.length >= 1 && version.length <= MAX_NAME,
                "the key version name is 1 to 255 bytes of UTF-8, not " + version.length);
        check(iv.length <= MAX_IV, "the wrapped key's IV is at most 64 bytes, not " + iv.length);
        check(wrappedKey.length >= 1 && wrappedKey.length <= MAX_WRAPPED,
                "the wrapped key is 1 to 256 bytes, not " + wrappedKey.length);
        int total = FIXED + 8 + name.length + version.length + iv.length + wrappedKey.length;
        check(total <= LENGTH, "the envelope's fields take " + total + " bytes, more than its " + LENGTH
                + " (a shorter key name, or a KMS whose wrapped keys are shorter)");
        ByteBuffer out = ByteBuffer.allocate(LENGTH);
        out.put(MAGIC).put((byte) VERSION).put((byte) kind)
                .put((byte) (compressed ? CONTENT_SNAPPY : CONTENT_PLAIN)).put((byte) DATA_KEY_BYTES);
        for (byte[] field : new byte[][] {name, version, iv, wrappedKey}) {
            out.putShort((short) field.length).put(field);
        }
        return new Envelope(kind, compressed, keyName, versionName, iv.clone(), wrappedKey.clone(), out.array());
    }

    /** Whether {@code stored} (a file's first bytes) begins with the envelope's magic. */
    public static boolean startsWithMagic(byte[] stored) {
        return stored.length >= MAGIC.length && Arrays.equals(stored, 0, MAGIC.length, MAGIC, 0, MAGIC.length);
    }

    /**
     * Reads the envelope in {@code stored}'s first {@value #LENGTH} bytes.
     *
     * @throws IOException saying what is wrong, if they are no envelope this version knows
     */
    public static Envelope parse(byte[] stored) throws IOException {
        check(stored.length >= LENGTH, "the envelope is cut short: " + stored.length + " of its " + LENGTH + " bytes");
        check(startsWithMagic(stored), "it does not begin with an envelope's magic bytes");
        ByteBuffer in = ByteBuffer.wrap(stored, 0, LENGTH);
        in.position(MAGIC.length);
        int version = in.get() & 0xff;
        check(version == VERSION, "its envelope is of format version " + version + ", which this sealpipe does not know"
                + " (it reads version " + VERSION + "): read it with a newer sealpipe");
        int kind = in.get() & 0xff;
        check(kind != 0, "its envelope names KMS kind 0, which no sealpipe writes");
        int content = in.get() & 0xff;
        check(content == CONTENT_PLAIN || content == CONTENT_SNAPPY, "its envelope names content " + content
                + ", which this sealpipe does not know (0 plain, 1 snappy)");
        int keyBytes = in.get() & 0xff;
        check(keyBytes == DATA_KEY_BYTES, "its envelope names a data key of " + keyBytes + " bytes, not "
                + DATA_KEY_BYTES);
        String name = string(field(in, 1, MAX_NAME, "key name"), "key name");
        String versionName = string(field(in, 1, MAX_NAME, "key version name"), "key version name");
        byte[] iv = field(in, 0, MAX_IV, "IV");
        byte[] wrapped = field(in, 1, MAX_WRAPPED, "wrapped key");
        while (in.hasRemaining()) {
            check(in.get() == 0, "its envelope has a non-zero byte in its padding, at offset " + (in.position() - 1));
        }
        return new Envelope(kind, content == CONTENT_SNAPPY, name, versionName, iv, wrapped,
                Arrays.copyOf(stored, LENGTH));
    }

    private static byte[] field(ByteBuffer in, int min, int max, String what) throws IOException {
        check(in.remaining() >= 2, "its envelope ends before its " + what);
        int length = in.getShort() & 0xffff;
        check(length >= min && length <= max, "its envelope's " + what + " is " + length + " bytes, not " + min + " to "
                + max);
        check(length <= in.remaining(), "its envelope's " + what + " of " + length + " bytes runs past its end");
        byte[] field = new byte[length];
        in.get(field);
        return field;
    }

    private static String string(byte[] utf8, String what) throws IOException {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(utf8)).toString();
        } catch (CharacterCodingException e) {
            throw new IOException("its envelope's " + what + " is not UTF-8");
        }
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static void check(boolean ok, String what) throws IOException {
        if (!ok) {
            throw new IOException(what);
        }
    }

    public int kind() {
        return kind;
    }

    /**
     * The AWS KMS encryption context of every data key of kind {@value #KIND_AWS} under {@code
     * keyName} (the key as configured): {@code {"sealpipe": "sealed-file", "sealpipe:key": keyName}}.
     */
    public static java.util.Map<String, String> awsEncryptionContext(String keyName) {
        return java.util.Map.of("sealpipe", "sealed-file", "sealpipe:key", keyName);
    }

    /** What KMS kind {@code kind} is, for messages: "1, a Hadoop KeyProvider". */
    public static String describeKind(int kind) {
        return kind + switch (kind) {
            case KIND_HADOOP -> ", a Hadoop KeyProvider";
            case KIND_AWS -> ", AWS KMS";
            default -> kind >= KIND_USER_FIRST ? ", a user's own KMS client" : ", unknown to this sealpipe";
        };
    }

    public boolean compressed() {
        return compressed;
    }

    public String keyName() {
        return keyName;
    }

    public String versionName() {
        return versionName;
    }

    public byte[] iv() {
        return iv.clone();
    }

    public byte[] wrappedKey() {
        return wrappedKey.clone();
    }

    /** The {@value #LENGTH} bytes as stored. */
    public byte[] bytes() {
        return bytes.clone();
    }

    /**
     * The message's context: the envelope's first {@code 14 + n} bytes (magic, version, kind,
     * content, data key length, and the key name with its length), which a rewrap keeps.
     */
    public byte[] context() {
        return Arrays.copyOf(bytes, FIXED + 2 + keyName.getBytes(StandardCharsets.UTF_8).length);
    }

    /** The same data key wrapped anew (a rewrap): the same kind, content and key name. */
    public Envelope rewrapped(String newVersionName, byte[] newIv, byte[] newWrappedKey) throws IOException {
        return of(kind, compressed, keyName, newVersionName, newIv, newWrappedKey);
    }

    /** The same wrapped data key with the other content: for a writer whose files differ only in that. */
    public Envelope withContent(boolean compressed) throws IOException {
        return compressed == this.compressed ? this : of(kind, compressed, keyName, versionName, iv, wrappedKey);
    }

    /**
     * What identifies the wrapped data key (kind, key, version, IV, wrapped bytes), whatever the
     * content: the key of the cache of unwrapped data keys.
     */
    public ByteBuffer wrappedIdentity() {
        byte[] whole = bytes.clone();
        whole[10] = 0; // the content byte
        return ByteBuffer.wrap(whole).asReadOnlyBuffer();
    }

    @Override
    public String toString() {
        return "Envelope(" + keyName + ", " + versionName + (compressed ? ", snappy" : "") + ")";
    }
}
