package io.sealpipe.internal;

import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * Deterministic text-like bytes for tests and benchmarks of the compress-then-encrypt pipeline:
 * sentences of words drawn with a Zipf-like frequency from a fixed vocabulary of made-up
 * words, with punctuation, numbers and line breaks, so that Snappy compresses it about as much
 * as ordinary English text or logs (to roughly half). The same seed gives the same bytes.
 */
public final class TextLikeData {
    private static final String[] SYLLABLES = {
        "ka", "lo", "mi", "ren", "to", "sha", "vel", "or", "in", "da", "que", "tri", "an", "es", "po", "lu",
        "nar", "is", "com", "ter", "al", "be", "sto", "ri", "ment", "ur", "fa", "gen", "ho", "ix",
    };
    private static final int VOCABULARY = 4096;

    private final SplittableRandom random;
    private final byte[][] words = new byte[VOCABULARY][];
    private final double[] cumulative = new double[VOCABULARY];

    public TextLikeData(long seed) {
        random = new SplittableRandom(seed);
        SplittableRandom wordRandom = new SplittableRandom(0x5ea1_91be); // the same vocabulary for every seed
        double total = 0;
        for (int i = 0; i < VOCABULARY; i++) {
            StringBuilder w = new StringBuilder();
            int syllables = 1 + wordRandom.nextInt(1 + Math.min(3, i / 64));
            for (int s = 0; s < syllables; s++) {
                w.append(SYLLABLES[wordRandom.nextInt(SYLLABLES.length)]);
            }
            words[i] = w.toString().getBytes(StandardCharsets.US_ASCII);
            total += 1.0 / Math.pow(i + 1, 1.05);
            cumulative[i] = total;
        }
        for (int i = 0; i < VOCABULARY; i++) {
            cumulative[i] /= total;
        }
    }

    /** {@code n} bytes of text-like data for {@code seed}. */
    public static byte[] generate(long seed, int n) {
        byte[] b = new byte[n];
        new TextLikeData(seed).fill(b, 0, n);
        return b;
    }

    /** Fills b[off, off + len) with the next text-like bytes. */
    public void fill(byte[] b, int off, int len) {
        int end = off + len;
        int p = off;
        int line = 0;
        boolean sentenceStart = true;
        while (p < end) {
            byte[] w;
            int roll = random.nextInt(100);
            if (roll < 3) {
                w = Integer.toString(random.nextInt(100_000)).getBytes(StandardCharsets.US_ASCII);
            } else {
                w = words[pick()];
            }
            for (int i = 0; i < w.length && p < end; i++, line++) {
                byte c = w[i];
                b[p++] = sentenceStart && i == 0 && c >= 'a' && c <= 'z' ? (byte) (c - 32) : c;
            }
            sentenceStart = false;
            if (p < end) {
                int r = random.nextInt(100);
                if (r < 8) {
                    b[p++] = '.';
                    sentenceStart = true;
                } else if (r < 13 && p < end) {
                    b[p++] = ',';
                }
            }
            if (p < end) {
                if (line > 72) {
                    b[p++] = '\n';
                    line = 0;
                } else {
                    b[p++] = ' ';
                    line++;
                }
            }
        }
    }

    private int pick() {
        double u = random.nextDouble();
        int lo = 0;
        int hi = VOCABULARY - 1;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (cumulative[mid] < u) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
