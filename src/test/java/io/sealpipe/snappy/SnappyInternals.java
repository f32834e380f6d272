package io.sealpipe.snappy;

import java.io.IOException;
import java.io.OutputStream;
import java.util.zip.CRC32C;

/** The Snappy writer's frame compression, replaceable for the failure tests outside this package. */
public final class SnappyInternals {
    private SnappyInternals() {}

    /** Compresses one frame, as {@code SnappyFraming.encodeFrame} does. */
    @FunctionalInterface
    public interface FrameEncoder {
        /** Compresses {@code in[off, off + len)} into {@code frame}, returning the frame's length. */
        int encode(byte[] in, int off, int len, byte[] frame, CRC32C crc) throws IOException;
    }

    /** A compressing stream on {@code out} whose frames {@code encoder} compresses. */
    public static FramedSnappyOutputStream compress(OutputStream out, SnappyStreams params, FrameEncoder encoder) {
        return new FramedSnappyOutputStream(out, params, encoder::encode);
    }
}
