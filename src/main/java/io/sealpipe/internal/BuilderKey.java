package io.sealpipe.internal;

import io.sealpipe.AesKey;

/**
 * The key a builder holds: the caller's {@link AesKey}, by reference (the caller destroys it), or
 * the builder's own copy of bytes given to {@code key(byte[])}. The first instance built takes
 * that copy over, so no copy stays behind in the builder; giving another key wipes it first.
 */
public final class BuilderKey {
    private AesKey key;
    private boolean owned;

    /** The caller's key, by reference. */
    public void set(AesKey key) {
        dropOwned();
        this.key = key;
    }

    /** A copy of {@code bytes}, owned by the builder until an instance takes it. */
    public void copyOf(byte[] bytes) {
        AesKey copy = AesKey.copyOf(bytes);
        dropOwned();
        this.key = copy;
        this.owned = true;
    }

    /** The key as given, for the builder's checks; null if none was given. */
    public AesKey get() {
        return key;
    }

    /**
     * The new instance's own key: the builder's copy itself the first time (later builds copy it
     * from that instance, until it is destroyed), else a copy of the caller's key.
     */
    public AesKey forInstance() {
        if (owned) {
            owned = false;
            return key;
        }
        return KeyAccess.copy(key);
    }

    private void dropOwned() {
        if (owned) {
            key.destroy();
            owned = false;
        }
    }
}
