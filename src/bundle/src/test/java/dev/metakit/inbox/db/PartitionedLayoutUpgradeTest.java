package dev.metakit.inbox.db;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.RecordingFeedOutlet;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestEvents;
import dev.metakit.inbox.support.TestSignatures;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

import static dev.metakit.inbox.db.EarlierInstallUpgradeTest.fillEveryTable;
import static dev.metakit.inbox.db.EarlierInstallUpgradeTest.listAccount7;
import static dev.metakit.inbox.db.EarlierInstallUpgradeTest.ids;
import static dev.metakit.inbox.db.EarlierInstallUpgradeTest.startUpgraded;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static dev.metakit.inbox.support.TestDatabase.strings;
import static dev.metakit.inbox.support.TestDatabase.text;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A database of the layout before the partitioned inbox and feed (V11), with rows in every table, the feed half
 * published and deliveries in every state, upgrades in place at the next start: every row is there, a delivery stored
 * minutes before the upgrade is still a duplicate, the worker drains the pending rows and the feed carries on in seq
 * order with new change ids after the old ones.
 */
class PartitionedLayoutUpgradeTest {
    private static final String SCHEMA = InboxSchema.DEFAULT;

    @Test
    void aPopulatedInboxAndFeedBecomePartitionedInPlaceAndCarryOn(@TempDir Path routes) throws Exception {
        String url = TestDatabase.createDatabase();
        DataSource db = TestDatabase.on(url, TestDatabase.user(), TestDatabase.password());
        Flyway.configure().dataSource(db).locations(InboxMigrations.LOCATION).schemas(SCHEMA).defaultSchema(SCHEMA)
                .table(InboxMigrations.HISTORY_TABLE).target("11").load().migrate();
        fillEveryTable(db, SCHEMA);
        long lastOldChangeId = scalar(db, "select max(change_id) from metakit.position_changes");
        // stored a minute before the upgrade: MetaKit may still send it again, with the same signature
        byte[] recentBody = TestEvents.opened(8, 80);
        long t = Instant.now().minusSeconds(60).getEpochSecond();
        String recentKey = t + ":" + TestSignatures.v1(RunningInbox.SECRET, t, recentBody);
        UUID goneBoot = UUID.randomUUID();
        try (Connection c = db.getConnection(); PreparedStatement s = c.prepareStatement("insert into"
                + " metakit.webhook_inbox (delivery_key, event, account_id, body, received_at, processed_at, failed_at,"
                + " last_error, claimed_by, claim_token, claimed_until) values (?, 'position.opened', ?, ?, ?, ?, ?,"
                + " ?, ?, ?, ?)")) {
            OffsetDateTime now = OffsetDateTime.now();
            insert(s, recentKey, 8, new String(recentBody, StandardCharsets.UTF_8), now.minusSeconds(59), now, null,
                    null, null);
            // received two hours ago: its signature is long refused, it stays where it is
            insert(s, "1764600000:0ld", 8, "{}", now.minusHours(2), null, null, null, null);
            insert(s, "1764600001:f00", 9, "{}", now.minusHours(2), null, now.minusHours(1), "boom", null);
            // claimed by a boot that stopped beating an hour ago (fillEveryTable's old-host has no live row)
            insert(s, "1764600002:c1a", 8, "{}", now.minusHours(2), null, null, null, goneBoot);
        }
        long inboxRows = scalar(db, "select count(*) from metakit.webhook_inbox");

        try (FakeMetaKit metakit = new FakeMetaKit(); RecordingFeedOutlet outlet = new RecordingFeedOutlet()) {
            listAccount7(metakit);
            try (RunningInbox inbox = startUpgraded(metakit, url, routes, outlet.url("partitioned"))) {
                assertThat(strings(db, "select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid"
                        + " where i.inhparent = 'metakit.webhook_inbox'::regclass"))
                        .contains("webhook_inbox_kept", DayPartitions.INBOX.name(DayPartitions.day(Instant.now())));
                assertThat(text(db, "select signed_at = to_timestamp(" + t + ") from metakit.webhook_inbox"
                        + " where delivery_key = '" + recentKey + "'")).isEqualTo("t");
                assertThat(text(db, "select signed_at::text from metakit.webhook_inbox"
                        + " where delivery_key = '1764600000:0ld'")).isEqualTo("-infinity");

                HttpResponse<String> again = inbox.post(recentBody,
                        TestSignatures.header(RunningInbox.SECRET, t, recentBody), "position.opened");
                assertThat(again.statusCode()).isEqualTo(200);
                assertThat(again.body()).as("stored before the upgrade, found after it").isEqualTo("duplicate");

                await().atMost(Duration.ofSeconds(60)).until(() -> ids(outlet, 7).size() >= 3
                        && ids(outlet, 8).size() == 1);
                List<String> account7 = ids(outlet, 7);
                assertThat(account7).as("each change once, in seq order, none already published sent again")
                        .doesNotHaveDuplicates().doesNotContain("7:1", "7:2");
                for (int i = 0; i < account7.size(); i++) {
                    assertThat(account7.get(i)).isEqualTo("7:" + (i + 3));
                }
                await().atMost(Duration.ofSeconds(60)).until(() -> scalar(db, "select count(*) from"
                        + " metakit.webhook_inbox where processed_at is null and failed_at is null") == 0);
                await().atMost(Duration.ofSeconds(30)).until(() -> scalar(db,
                        "select count(*) from metakit.position_changes where published_at is null") == 0);
            }
        }
        assertThat(scalar(db, "select count(*) from metakit.webhook_inbox")).as("every delivery, none twice")
                .isEqualTo(inboxRows);
        assertThat(scalar(db, "select count(*) from metakit.webhook_inbox where failed_at is not null"
                + " and delivery_key = '1764600001:f00'")).as("a dead letter waits for its operator").isOne();
        assertThat(scalar(db, "select count(*) from metakit.position_changes"
                + " where (account_id, seq) in ((7, 1), (7, 2), (7, 3), (7, 4), (8, 1))")).isEqualTo(5);
        assertThat(scalar(db, "select coalesce(min(change_id), " + (lastOldChangeId + 1) + ")"
                + " from metakit.position_changes where account_id = 7 and seq > 4"))
                .as("new changes numbered after the old ones").isGreaterThan(lastOldChangeId);
        assertThat(scalar(db, "select count(*) from metakit.positions where (account_id, ticket) = (7, 70)")).isOne();
        assertThat(scalar(db, "select count(*) from metakit.accounts where account_id in (7, 8)")).isEqualTo(2);
        assertThat(scalar(db, "select count(*) from metakit.reconcile_runs where run_id = 41")).isOne();
        assertThat(scalar(db, "select count(*) from metakit.webhook_endpoints where endpoint_id = 'ep_1'")).isOne();
        assertThat(scalar(db, "select count(*) from metakit.metakit_schema_history where not success")).isZero();
    }

    private static void insert(PreparedStatement s, String key, long account, String body, OffsetDateTime received,
                               OffsetDateTime processed, OffsetDateTime failed, String error, UUID claimedBy)
            throws Exception {
        TestDatabase.bind(s, key, account, body, received, processed, failed, error,
                claimedBy == null ? null : "old-host", claimedBy, claimedBy == null ? null : received.plusHours(3));
        s.execute();
    }
}
