package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** The environment of the "hardware AES off" run, per architecture. */
class SpeedSeedsTest {
    @Test
    void eachArchitectureHidesItsOwnAesInstructionsFromOpenSsl() {
        assertEquals("OPENSSL_ia32cap=~0x200000200000000:~0x0", SpeedSeeds.opensslNoHardwareAes("x86_64"));
        // OPENSSL_ia32cap means nothing to OpenSSL on Arm: there the capability word is OPENSSL_armcap.
        assertEquals("OPENSSL_armcap=0", SpeedSeeds.opensslNoHardwareAes("aarch64"));
        // No known mask: no "off" figure rather than an "off" run that still uses the hardware.
        assertNull(SpeedSeeds.opensslNoHardwareAes("ppc64le"));
    }
}
