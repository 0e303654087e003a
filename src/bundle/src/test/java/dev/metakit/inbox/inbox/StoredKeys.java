package dev.metakit.inbox.inbox;

import dev.metakit.inbox.support.TestDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;

/** The keys of rows on the test database, with the signed_at they were stored with, as a claim returns them. */
public final class StoredKeys {
    private StoredKeys() {
    }

    /** The rows of these delivery keys, in this order (one each: the tests' keys are unique). */
    public static List<InboxKey> of(String... deliveryKeys) throws SQLException {
        List<InboxKey> keys = new ArrayList<>();
        try (Connection c = TestDatabase.dataSource().getConnection();
             PreparedStatement ps = c.prepareStatement("select signed_at from webhook_inbox where delivery_key = ?")) {
            for (String key : deliveryKeys) {
                ps.setString(1, key);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) {
                        throw new IllegalStateException("no inbox row " + key);
                    }
                    keys.add(new InboxKey(key, rs.getObject(1, OffsetDateTime.class).toInstant()));
                }
            }
        }
        return keys;
    }
}
