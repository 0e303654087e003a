package dev.metakit.inbox.support;

import java.nio.charset.StandardCharsets;
import java.time.Instant;

/** Webhook bodies shaped like MetaKit's position events, for tests that post deliveries. */
public final class TestEvents {
    private TestEvents() {
    }

    /** A position event; {@code created_at} is now, so each call is a distinct delivery. */
    public static byte[] event(String name, long account, long ticket) {
        return ("{\"event\":\"" + name + "\",\"account_id\":" + account + ",\"created_at\":\"" + Instant.now()
                + "\",\"data\":{\"ticket\":" + ticket + ",\"symbol\":\"EURUSD\",\"type\":\"buy\",\"volume\":0.10}}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** The least a position.opened delivery holds: the same bytes each call, so a second post is a duplicate. */
    public static byte[] opened(long account, long ticket) {
        return ("{\"event\":\"position.opened\",\"account_id\":" + account + ",\"data\":{\"ticket\":" + ticket + "}}")
                .getBytes(StandardCharsets.UTF_8);
    }
}
