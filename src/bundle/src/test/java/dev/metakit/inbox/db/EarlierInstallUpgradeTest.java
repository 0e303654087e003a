package dev.metakit.inbox.db;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.RecordingFeedOutlet;
import dev.metakit.inbox.support.RecordingFeedOutlet.Receipt;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestEvents;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static dev.metakit.inbox.support.TestDatabase.exec;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static dev.metakit.inbox.support.TestDatabase.strings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A database made by the build before the schema of its own (its tables in public, its history in
 * public.metakit_schema_history, or, older still, in Flyway's shared flyway_schema_history) upgrades in place: the
 * next start moves every table, sequence and the history into the schema, nothing lost, and the feed carries on where
 * it was.
 */
class EarlierInstallUpgradeTest {
    /** routes/changes.camel.yaml's outlet, as shipped; the test points it at its own HTTP endpoint */
    private static final String OUTLET_LINE =
            "uri: \"log:dev.metakit.inbox.feed.outlet?exchangeFormatter=#bean:changeLine\"";
    private static final Map<String, Long> ROWS = new TreeMap<>(Map.ofEntries(Map.entry("webhook_inbox", 2L),
            Map.entry("positions", 1L), Map.entry("accounts", 2L), Map.entry("webhook_endpoints", 1L),
            Map.entry("reconcile_runs", 1L), Map.entry("inbox_account_backoff", 1L), Map.entry("inbox_instances", 1L),
            Map.entry("position_changes", 5L), Map.entry("position_change_seqs", 2L), Map.entry("feed_owners", 2L)));

    @Test
    void anInstallWithItsTablesInPublicMovesIntoTheSchemaAndItsFeedCarriesOnInOrder(@TempDir Path routes)
            throws Exception {
        String url = TestDatabase.createDatabase();
        DataSource db = TestDatabase.on(url, TestDatabase.user(), TestDatabase.password());
        exec(db, "create table public.orders (id bigint primary key)"); // the host's, made before the bundle's
        exec(db, "insert into public.orders values (1)");
        migrateAsTheEarlierBuildDid(db);
        fillEveryTable(db, "public");
        assertThat(scalar(db, "select count(*) from public.metakit_schema_history where version = '0'"))
                .as("the earlier build's baseline row on a schema with a host's table").isOne();

        try (FakeMetaKit metakit = new FakeMetaKit(); RecordingFeedOutlet outlet = new RecordingFeedOutlet()) {
            listAccount7(metakit);
            try (RunningInbox inbox = startUpgraded(metakit, url, routes, outlet.url("upgraded"))) {
                assertThat(strings(db, "select tablename from pg_tables where schemaname = 'public'"))
                        .containsExactly("orders");
                assertThat(strings(db, "select relname from pg_class where relkind = 'S'"
                        + " and relnamespace = 'public'::regnamespace")).as("sequences left behind").isEmpty();
                // the feed: the three changes unpublished at the upgrade, once each and in order, then what the
                // pending delivery's reconcile found, numbered on from there
                await().atMost(Duration.ofSeconds(60)).until(() -> ids(outlet, 7).size() >= 3
                        && ids(outlet, 8).size() == 1);
                assertThat(ids(outlet, 8)).containsExactly("8:1");
                List<String> account7 = ids(outlet, 7);
                assertThat(account7.subList(0, 3)).containsExactly("7:3", "7:4", "7:5");
                assertThat(account7).as("each change once, in seq order, none already published sent again")
                        .doesNotHaveDuplicates().doesNotContain("7:1", "7:2");
                for (int i = 0; i < account7.size(); i++) {
                    assertThat(account7.get(i)).isEqualTo("7:" + (i + 3));
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> scalar(db,
                        "select count(*) from metakit.position_changes where published_at is null") == 0);
                assertThat(strings(db, "select epoch from metakit.feed_owners")).as("taken over from the old boot")
                        .containsExactly("4");
            }
        }
        // every row the earlier install held is there (the running bundle adds its own beside them)
        assertThat(scalar(db, "select count(*) from metakit.webhook_inbox"
                + " where delivery_key in ('1764670530:done', '1764670531:pending')")).isEqualTo(2);
        assertThat(scalar(db, "select count(*) from metakit.position_changes"
                + " where (account_id, seq) in ((7, 1), (7, 2), (7, 3), (7, 4), (8, 1))")).isEqualTo(5);
        assertThat(scalar(db, "select count(*) from metakit.positions where (account_id, ticket) = (7, 70)")).isOne();
        assertThat(scalar(db, "select count(*) from metakit.accounts where account_id in (7, 8)")).isEqualTo(2);
        assertThat(scalar(db, "select count(*) from metakit.webhook_endpoints where endpoint_id = 'ep_1'")).isOne();
        assertThat(scalar(db, "select count(*) from metakit.reconcile_runs where run_id = 41")).isOne();
        assertThat(scalar(db, "select last_seq from metakit.position_change_seqs where account_id = 8")).isOne();
        assertThat(scalar(db, "select count(*) from metakit.webhook_inbox where processed_at is null")).isZero();
        assertThat(scalar(db, "select nextval('metakit.reconcile_runs_run_id_seq')")).isGreaterThan(41);
        assertThat(scalar(db, "select count(*) from metakit.metakit_schema_history where not success")).isZero();
        assertThat(scalar(db, "select count(*) from public.orders")).isOne();
    }

    @Test
    void anInstallWhoseFirstScriptsAreInFlywaysSharedHistoryMovesAndKeepsThatHistoryAsItsOwn() {
        String url = TestDatabase.createDatabase();
        DataSource db = TestDatabase.on(url, TestDatabase.user(), TestDatabase.password());
        // an install from before the bundle had a history table of its own: V1..V6 in Flyway's default one
        Flyway.configure().dataSource(db).locations(InboxMigrations.LOCATION).target("6").load().migrate();
        exec(db, "insert into webhook_inbox (delivery_key, event, account_id, body) values"
                + " ('1764670530:kept', 'position.opened', 1, '{}')");

        MigrateResult result = InboxMigrations.migrate(db);

        assertThat(result.success).isTrue();
        assertThat(result.migrationsExecuted).as("only the scripts after V6").isEqualTo(bundleScripts() - 6);
        assertThat(scalar(db, "select count(*) from metakit.webhook_inbox")).isOne();
        assertThat(strings(db, "select version from metakit.metakit_schema_history where success"))
                .as("V1..V6 as Flyway recorded them, then the rest: no baseline").hasSize((int) bundleScripts())
                .doesNotContain("0");
        assertThat(strings(db, "select tablename from pg_tables where schemaname = 'public'"))
                .containsExactly("flyway_schema_history");
        assertThat(scalar(db, "select count(*) from public.flyway_schema_history where success"))
                .as("the shared history is left as it was: it may be the host's").isEqualTo(6);
        assertThat(InboxMigrations.migrate(db).migrationsExecuted).isZero();
    }

    @Test
    void twoInstancesStartingTogetherOnAnEarlierInstallMoveItOnce() throws Exception {
        String url = TestDatabase.createDatabase();
        DataSource db = TestDatabase.on(url, TestDatabase.user(), TestDatabase.password());
        migrateAsTheEarlierBuildDid(db);
        fillEveryTable(db, "public");
        CountDownLatch go = new CountDownLatch(1);
        Callable<MigrateResult> instance = () -> {
            go.await();
            return InboxMigrations.migrate(TestDatabase.on(url, TestDatabase.user(), TestDatabase.password()));
        };
        ExecutorService both = Executors.newFixedThreadPool(2);
        try {
            List<Future<MigrateResult>> started = new ArrayList<>(List.of(both.submit(instance),
                    both.submit(instance)));
            go.countDown();
            for (Future<MigrateResult> f : started) {
                assertThat(f.get().success).isTrue();
            }
        } finally {
            both.shutdownNow();
        }
        for (Map.Entry<String, Long> table : ROWS.entrySet()) {
            assertThat(scalar(db, "select count(*) from metakit." + table.getKey())).as(table.getKey())
                    .isEqualTo(table.getValue());
        }
        assertThat(strings(db, "select tablename from pg_tables where schemaname = 'public'")).isEmpty();
    }

    /** What the build before the schema of its own ran at every start (InboxMigrations at 0.1.0 before it). */
    private static void migrateAsTheEarlierBuildDid(DataSource db) {
        Flyway.configure().dataSource(db).locations(InboxMigrations.LOCATION).table("metakit_schema_history")
                .baselineOnMigrate(true).baselineVersion("0").baselineDescription("metakit-inbox baseline")
                .connectRetries(0).target("9").load().migrate();
    }

    /**
     * A row in every table, the feed mid-way: account 7's changes 1 and 2 published, 3 and 4 not, account 8's first
     * not; both accounts' feed owned by a boot that stopped beating an hour ago; a delivery of account 7 pending.
     */
    static void fillEveryTable(DataSource db, String schema) throws Exception {
        UUID oldBoot = UUID.randomUUID();
        try (Connection c = db.getConnection()) {
            c.createStatement().execute("set search_path to " + schema);
            c.createStatement().execute("""
                    insert into accounts (account_id, last_reconciled_at) values (7, now() - interval '1 hour'), (8, null);
                    insert into positions (account_id, ticket, status, symbol, type, volume, price_open, sl, tp, profit,
                                           swap, opened_at)
                         values (7, 70, 'open', 'EURUSD', 'buy', 0.10, 1.08450, 0, 0, 0.00, 0.00,
                                 '2026-12-01T10:00:00Z');
                    insert into webhook_endpoints (endpoint_id, url, last_delivery_status) values ('ep_1', 'https://x', 'ok');
                    insert into reconcile_runs (run_id, trigger, accounts_total) values (41, 'periodic', 2);
                    select setval('reconcile_runs_run_id_seq', 41);
                    insert into inbox_account_backoff (account_id, retry_at) values (8, now() - interval '1 hour');
                    insert into position_change_seqs (account_id, last_seq) values (7, 4), (8, 1);
                    """);
            try (PreparedStatement s = c.prepareStatement("insert into inbox_instances (boot_token, instance_id,"
                    + " started_at, heartbeat_at) values (?, 'old-host', now() - interval '2 hours',"
                    + " now() - interval '1 hour')")) {
                s.setObject(1, oldBoot);
                s.execute();
            }
            try (PreparedStatement s = c.prepareStatement("insert into feed_owners (account_id, owner_token,"
                    + " owner_instance, epoch) values (7, ?, 'old-host', 3), (8, ?, 'old-host', 3)")) {
                s.setObject(1, oldBoot);
                s.setObject(2, oldBoot);
                s.execute();
            }
            try (PreparedStatement s = c.prepareStatement("insert into position_changes (account_id, seq, ticket, kind,"
                    + " status, symbol, type, volume, price_open, changed, source, published_at) values"
                    + " (?, ?, ?, ?, 'open', 'EURUSD', 'buy', 0.10, 1.08450, '{volume}', 'event', ?)")) {
                Object[][] changes = {{7, 1, 70, "opened", true}, {7, 2, 70, "modified", true},
                        {7, 3, 70, "modified", false}, {7, 4, 70, "modified", false}, {8, 1, 80, "opened", false}};
                for (Object[] ch : changes) {
                    s.setLong(1, (Integer) ch[0]);
                    s.setLong(2, (Integer) ch[1]);
                    s.setLong(3, (Integer) ch[2]);
                    s.setString(4, (String) ch[3]);
                    s.setObject(5, (Boolean) ch[4] ? java.time.OffsetDateTime.now() : null);
                    s.execute();
                }
            }
            try (PreparedStatement s = c.prepareStatement("insert into webhook_inbox (delivery_key, event, account_id,"
                    + " body, processed_at) values (?, 'position.opened', 7, ?, ?)")) {
                s.setString(1, "1764670530:done");
                s.setString(2, new String(TestEvents.opened(7, 70), StandardCharsets.UTF_8));
                s.setObject(3, java.time.OffsetDateTime.now().minusHours(1));
                s.execute();
                s.setString(1, "1764670531:pending");
                s.setString(2, new String(TestEvents.opened(7, 71), StandardCharsets.UTF_8));
                s.setObject(3, null);
                s.execute();
            }
        }
    }

    /**
     * What MetaKit lists of account 7 after the upgrade: the position {@link #fillEveryTable} holds, and beside it the
     * one the pending delivery of account 7 names.
     */
    static void listAccount7(FakeMetaKit metakit) {
        metakit.open(7, 70, "0.10", "0", "0", Instant.parse("2026-12-01T10:00:00Z"));
        metakit.open(7, 71, "0.20", "0", "0", Instant.parse("2026-12-04T10:00:00Z"));
    }

    /** The inbox on the upgraded database at {@code url}, its feed's outlet pointed at {@code outletUri}. */
    static RunningInbox startUpgraded(FakeMetaKit metakit, String url, Path routes, String outletUri)
            throws Exception {
        return RunningInbox.againstFakeMetaKit(metakit, Map.of(
                "metakit.database.url", url,
                "camel.main.routes-include-pattern", routeFilesWithOutlet(routes, outletUri)));
    }

    /** The project's route files with the feed's outlet pointed at {@code outletUri}. */
    static String routeFilesWithOutlet(Path dir, String outletUri) throws Exception {
        RunningInbox.copyRouteFiles(dir);
        Path changes = dir.resolve("changes.camel.yaml");
        String text = Files.readString(changes);
        assertThat(text).contains(OUTLET_LINE);
        Files.writeString(changes, text.replace(OUTLET_LINE, "uri: \"" + outletUri + "\""));
        return "file:" + dir + "/*.camel.yaml";
    }

    /** The change ids of one account as they first arrived at the outlet. */
    static List<String> ids(RecordingFeedOutlet outlet, long account) {
        return outlet.receipts().stream().filter(r -> r.account() == account).map(Receipt::id).toList();
    }

    private static long bundleScripts() {
        return Flyway.configure().locations(InboxMigrations.LOCATION)
                .dataSource(TestDatabase.on(TestDatabase.createDatabase(), TestDatabase.user(), TestDatabase.password()))
                .load().info().pending().length;
    }
}
