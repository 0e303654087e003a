package dev.metakit.inbox.inbox;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Collection;

/**
 * What names one inbox row: its delivery key and the partition key it was stored with, the signature's t
 * ({@code signed_at}). The worker's statements on rows it holds name both, so that PostgreSQL looks each row up in
 * its own partition (pruned as the statement runs), not the key in every partition of a retained week.
 */
public record InboxKey(String deliveryKey, Instant signedAt) {

    /**
     * The rows {@code k(delivery_key, signed_at)} of a statement, bound by {@link #bind} to two parameters: joined to
     * {@code webhook_inbox} on both columns, a nested loop that probes one partition's primary key per row.
     */
    static final String ROWS = "unnest(?::text[], ?::text[]::timestamptz[]) as k(delivery_key, signed_at)";

    /** Binds {@code keys} to the two parameters of {@link #ROWS} from {@code index}; returns the next index. */
    static int bind(Connection c, PreparedStatement ps, int index, Collection<InboxKey> keys) throws SQLException {
        String[] deliveryKeys = new String[keys.size()];
        String[] signedAt = new String[keys.size()];
        int i = 0;
        for (InboxKey key : keys) {
            deliveryKeys[i] = key.deliveryKey();
            signedAt[i++] = text(key.signedAt());
        }
        Array a = c.createArrayOf("text", deliveryKeys);
        Array b = c.createArrayOf("text", signedAt);
        ps.setArray(index, a);
        ps.setArray(index + 1, b);
        return index + 2;
    }

    /**
     * As text with its offset (Instant's ISO form), whatever the JVM's or the session's time zone; PostgreSQL's
     * infinities (a row stored before the inbox was partitioned has {@code signed_at = '-infinity'}) as pgjdbc reads
     * them, the extremes of {@link OffsetDateTime}, written back as the words.
     */
    static String text(Instant t) {
        if (t.equals(OffsetDateTime.MIN.toInstant())) {
            return "-infinity";
        }
        return t.equals(OffsetDateTime.MAX.toInstant()) ? "infinity" : t.toString();
    }
}
