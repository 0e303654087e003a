package dev.metakit.inbox.feed;

import java.sql.SQLException;
import java.time.Instant;

/** Lets tests of other packages store a change row the way {@link FeedMaintenanceTest} does. */
public final class FeedMaintenanceTestAccess {
    private FeedMaintenanceTestAccess() {
    }

    public static void change(long account, long seq, Instant reconciledAt, Instant publishedAt) throws SQLException {
        FeedMaintenanceTest.change(account, seq, reconciledAt, publishedAt);
    }
}
