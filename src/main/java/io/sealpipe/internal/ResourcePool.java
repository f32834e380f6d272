package io.sealpipe.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * A fixed set of resources (cipher contexts) lent to the workers of one stream: {@link #take()}
 * and {@link #give(Object)} allocate nothing, and {@code take} returns null when all are lent.
 *
 * @param <R> the resource
 */
public final class ResourcePool<R> {
    private final AtomicReferenceArray<R> slots;

    /** A pool holding {@code resources}. */
    public ResourcePool(List<R> resources) {
        slots = new AtomicReferenceArray<>(resources.size());
        for (int i = 0; i < resources.size(); i++) {
            slots.set(i, resources.get(i));
        }
    }

    /** A free resource, or null if all are lent. */
    public R take() {
        for (int i = 0; i < slots.length(); i++) {
            R r = slots.get(i);
            if (r != null && slots.compareAndSet(i, r, null)) {
                return r;
            }
        }
        return null;
    }

    /**
     * Returns a resource that {@link #take()} gave.
     *
     * @throws IllegalStateException if {@code r} is in the pool already (given back twice, which
     *     would lend one cipher context to two threads)
     */
    public void give(R r) {
        for (int i = 0; i < slots.length(); i++) {
            if (slots.get(i) == r) {
                throw new IllegalStateException("a resource was given back to its pool twice");
            }
        }
        for (int i = 0; ; i = (i + 1) % slots.length()) {
            if (slots.get(i) == null && slots.compareAndSet(i, null, r)) {
                return;
            }
        }
    }

    /** Empties the pool and returns what it held (for closing; nothing may be lent then). */
    public List<R> drain() {
        List<R> all = new ArrayList<>(slots.length());
        for (int i = 0; i < slots.length(); i++) {
            R r = slots.getAndSet(i, null);
            if (r != null) {
                all.add(r);
            }
        }
        return all;
    }
}
