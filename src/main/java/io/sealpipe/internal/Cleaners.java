package io.sealpipe.internal;

import java.lang.ref.Cleaner;

/** The one Cleaner that backstops {@code close()} for objects holding native memory. */
public final class Cleaners {
    private Cleaners() {}

    public static final Cleaner CLEANER = Cleaner.create();
}
