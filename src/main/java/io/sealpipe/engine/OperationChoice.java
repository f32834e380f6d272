package io.sealpipe.engine;

import java.util.Optional;

/**
 * The engine chosen for one operation, and why.
 *
 * @param operation the operation
 * @param engine the engine that runs it (empty when no engine may: the report's decision says why)
 * @param reason why this engine: the rule that picked it, or the property that forced it
 * @param until the engine that runs the first calls while {@code engine} warms up (jce: until its
 *     intrinsics are compiled and measured at least as fast) or loads (accp); empty when
 *     {@code engine} runs from the first call
 */
public record OperationChoice(Operation operation, Optional<EngineKind> engine, String reason,
        Optional<EngineKind> until) {

    /**
     * One line for people: {@code gcm-seal: accp (openssl-jni until accp has loaded): reason}.
     *
     * @return the choice, the engine of the first calls if any, and the reason
     */
    public String describe() {
        return operation.id() + ": " + engine.map(EngineKind::id).orElse("none")
                + until.map(u -> " (" + u.id() + " until " + engine.map(EngineKind::id).orElse("?")
                        + (engine.orElse(null) == EngineKind.ACCP ? " has loaded)" : " is warm)")).orElse("")
                + ": " + reason;
    }
}
