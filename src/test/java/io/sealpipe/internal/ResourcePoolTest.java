package io.sealpipe.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class ResourcePoolTest {

    @Test
    void lendsEachResourceOnceAndRefusesOneGivenBackTwice() {
        ResourcePool<Object> pool = new ResourcePool<>(List.of(new Object(), new Object()));
        Object first = pool.take();
        Object second = pool.take();
        assertNull(pool.take(), "both are lent");
        pool.give(first);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> pool.give(first));
        assertEquals("a resource was given back to its pool twice", e.getMessage());
        pool.give(second);
        assertEquals(2, pool.drain().size());
    }
}
