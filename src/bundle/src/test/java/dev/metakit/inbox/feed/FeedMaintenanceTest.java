package dev.metakit.inbox.feed;

import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;

import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Replay and retention of the change feed, on the real database. */
class FeedMaintenanceTest {
    private final DataSource db = TestDatabase.dataSource();
    private final FeedMaintenance feed = new FeedMaintenance(db);
    private final Instant now = Instant.now();

    @BeforeEach
    void clean() {
        TestDatabase.truncateAll();
    }

    @Test
    void replayOfAnAccountFromASeqMarksOnlyThoseChangesUnpublished() throws Exception {
        for (long seq = 1; seq <= 5; seq++) {
            change(7, seq, now.minusSeconds(60), now.minusSeconds(50));
        }
        change(8, 1, now.minusSeconds(60), now.minusSeconds(50));

        assertThat(feed.replayAccount(7, 3)).isEqualTo(3);

        assertThat(unpublished()).isEqualTo("7:3,7:4,7:5");
    }

    @Test
    void replaySinceATimeMarksEveryChangeReconciledFromThenUnpublished() throws Exception {
        change(7, 1, now.minus(Duration.ofHours(3)), now.minus(Duration.ofHours(3)));
        change(7, 2, now.minus(Duration.ofHours(1)), now.minus(Duration.ofHours(1)));
        change(8, 1, now.minus(Duration.ofMinutes(30)), now.minus(Duration.ofMinutes(30)));

        assertThat(feed.replayReconciledSince(now.minus(Duration.ofHours(2)))).isEqualTo(2);

        assertThat(unpublished()).isEqualTo("7:2,8:1");
    }

    @Test
    void retentionDeletesOnlyChangesPublishedBeforeTheCutoff() throws Exception {
        change(7, 1, now.minus(Duration.ofDays(9)), now.minus(Duration.ofDays(9)));
        change(7, 2, now.minus(Duration.ofDays(9)), null); // never published: kept whatever its age
        change(7, 3, now.minus(Duration.ofDays(1)), now.minus(Duration.ofDays(1)));

        FeedRetention ops = new FeedRetention();
        ops.setDataSource(db);
        ops.setRetention("P7D");
        ops.setBatchSize(1);
        assertThat(ops.prune()).isEqualTo(1);

        assertThat(scalar("select count(*) from position_changes")).isEqualTo(2);
        assertThat(scalar("select min(seq) from position_changes")).isEqualTo(2);
    }

    @Test
    void aRetentionThatIsNotAPositiveDurationIsRefused() {
        assertThatThrownBy(() -> new FeedRetention().setRetention("PT0S")).isInstanceOf(ConfigurationException.class)
                .hasMessageContaining("METAKIT_FEED_RETENTION");
    }

    @Test
    void replayFromSeqZeroIsRefused() {
        assertThatThrownBy(() -> feed.replayAccount(7, 0)).isInstanceOf(IllegalArgumentException.class);
    }

    static String unpublished() {
        return TestDatabase.strings(TestDatabase.dataSource(), "select string_agg(account_id || ':' || seq, ','"
                + " order by account_id, seq) from position_changes where published_at is null").iterator().next();
    }

    static void change(long account, long seq, Instant reconciledAt, Instant publishedAt) throws SQLException {
        try (Connection c = TestDatabase.dataSource().getConnection(); PreparedStatement s = c.prepareStatement(
                "insert into position_changes (account_id, seq, ticket, kind, status, changed, source, reconciled_at,"
                        + " published_at) values (?, ?, 1, 'opened', 'open', array['status'], 'event', ?, ?)")) {
            s.setLong(1, account);
            s.setLong(2, seq);
            s.setTimestamp(3, java.sql.Timestamp.from(reconciledAt));
            s.setTimestamp(4, publishedAt == null ? null : java.sql.Timestamp.from(publishedAt));
            s.executeUpdate();
        }
    }
}
