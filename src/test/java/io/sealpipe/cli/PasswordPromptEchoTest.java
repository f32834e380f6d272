package io.sealpipe.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The /dev/tty password prompt turns echo back on however it ends, also when the JVM is ended
 * (Ctrl-C) while it waits: a shutdown hook that turns echo on is registered while echo is off,
 * and removed once it is back on. A fake terminal and a record of the shutdown hooks stand in for
 * /dev/tty and the JVM's; {@code KeystorePromptTest} presses Ctrl-C on a real pseudo-terminal.
 */
class PasswordPromptEchoTest {

    /** A terminal on which {@code typed} is typed; {@code whileReading} runs at the first read. */
    private static final class FakeTerminal implements KeystorePassword.Terminal {
        boolean echo = true;
        boolean echoCanBeTurnedOff = true;
        final List<String> echoSwitches = new ArrayList<>();
        final StringBuilder shown = new StringBuilder();
        private final byte[] typed;
        private int next;
        Runnable whileReading = () -> {};
        IOException readFailure;

        FakeTerminal(String typed) {
            this.typed = typed.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public boolean echo(boolean on) {
            echoSwitches.add(on ? "on" : "off");
            if (!on && !echoCanBeTurnedOff) {
                return false;
            }
            echo = on;
            return true;
        }

        @Override
        public void write(byte[] bytes) {
            shown.append(new String(bytes, StandardCharsets.UTF_8));
        }

        @Override
        public int read() throws IOException {
            if (next == 0) {
                whileReading.run();
            }
            if (readFailure != null) {
                throw readFailure;
            }
            return next < typed.length ? typed[next++] & 0xff : -1;
        }
    }

    /** The shutdown hooks registered now. */
    private static final class RecordedHooks implements KeystorePassword.ShutdownHooks {
        final List<Thread> registered = new ArrayList<>();

        @Override
        public void add(Thread hook) {
            registered.add(hook);
        }

        @Override
        public void remove(Thread hook) {
            registered.remove(hook);
        }
    }

    @Test
    void whileThePromptWaitsAShutdownHookTurnsEchoBackOn() throws Exception {
        FakeTerminal terminal = new FakeTerminal("secret\n");
        RecordedHooks hooks = new RecordedHooks();
        terminal.whileReading = () -> {
            assertFalse(terminal.echo, "echo is off while the password is typed");
            assertEquals(1, hooks.registered.size(), "a shutdown hook is registered while the prompt waits");
            hooks.registered.get(0).run(); // as the JVM runs it on Ctrl-C (SIGINT), SIGTERM or SIGHUP
            assertTrue(terminal.echo, "the hook turned echo back on");
            terminal.echo = false; // the JVM would halt now; here the prompt goes on
        };
        char[] password = KeystorePassword.prompt(terminal, hooks);
        assertArrayEquals("secret".toCharArray(), password);
        assertTrue(terminal.echo, "echo is on after the prompt");
        assertEquals(List.of(), hooks.registered, "the hook is removed once echo is back on");
        assertEquals("Password of the keystore: \n\n", terminal.shown.toString());
    }

    @Test
    void aFailedReadTurnsEchoBackOnAndRemovesTheHook() {
        FakeTerminal terminal = new FakeTerminal("");
        terminal.readFailure = new IOException("Input/output error");
        RecordedHooks hooks = new RecordedHooks();
        IOException e = assertThrows(IOException.class, () -> KeystorePassword.prompt(terminal, hooks));
        assertEquals("Input/output error", e.getMessage());
        assertTrue(terminal.echo, "echo is on after the failure");
        assertEquals(List.of(), hooks.registered, "no hook left");
    }

    @Test
    void withoutAWayToTurnEchoOffNothingIsAsked() throws Exception {
        FakeTerminal terminal = new FakeTerminal("secret\n");
        terminal.echoCanBeTurnedOff = false;
        RecordedHooks hooks = new RecordedHooks();
        assertNull(KeystorePassword.prompt(terminal, hooks));
        assertEquals("", terminal.shown.toString(), "no prompt");
        assertEquals(List.of(), hooks.registered, "no hook left");
    }
}
