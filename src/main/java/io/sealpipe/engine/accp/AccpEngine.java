package io.sealpipe.engine.accp;

import io.sealpipe.engine.CryptoEngine;
import io.sealpipe.engine.EngineKind;
import io.sealpipe.engine.EngineStatus;

/** Placeholder until the accp engine lands from its branch (same session). */
public final class AccpEngine {
    private AccpEngine() {}

    public static EngineStatus status() {
        return EngineStatus.unavailable(EngineKind.ACCP, "accp engine not merged yet", null);
    }

    public static CryptoEngine get() {
        throw new IllegalStateException("accp engine not merged yet");
    }
}
