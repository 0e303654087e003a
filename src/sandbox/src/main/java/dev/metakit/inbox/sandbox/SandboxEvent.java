package dev.metakit.inbox.sandbox;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/** One webhook event as MetaKit emits it; {@link #body()} is the wire shape the sender serialises once. */
public record SandboxEvent(String event, long accountId, Instant createdAt, Map<String, Object> data) {

    public static final String POSITION_OPENED = "position.opened";
    public static final String POSITION_MODIFIED = "position.modified";
    public static final String POSITION_CLOSED = "position.closed";
    public static final String ACCOUNT_CONNECTED = "account.connected";

    public Map<String, Object> body() {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("event", event);
        body.put("account_id", accountId);
        body.put("created_at", createdAt.toString());
        body.put("data", data);
        return body;
    }

    public byte[] toBytes() {
        return SandboxJson.write(body());
    }
}
