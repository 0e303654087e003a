package dev.metakit.inbox.feed;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.metakit.inbox.db.InboxMigrations;
import dev.metakit.inbox.db.InboxSchema;
import dev.metakit.inbox.support.KafkaBroker;
import dev.metakit.inbox.support.KafkaConnect;
import dev.metakit.inbox.support.RunningInbox;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.io.StringReader;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The Debezium recipe of docs/change-feed.md, for real: a PostgreSQL started with the recipe's {@code conf} lines, its {@code sql} run
 * as it stands, a Kafka broker, and a Kafka Connect worker running Debezium 3.6.1's PostgreSQL connector with the
 * recipe's {@code properties} (only the address keys pointed at this test's server). Changes are written as the
 * reconcile writes them ({@link ChangeStore#append} in a transaction of its own, several per transaction at times),
 * from several threads on the same accounts, some transactions rolled back; then a replay marks some unpublished
 * again and retention deletes every row, and one last change per account follows. Read back from the topic, per
 * account: the changes arrive as 1..N in order, keyed by the account id, the header {@code id} is the row's
 * {@code change_id}, {@code eventType} its kind, the value the JSON the in-process publisher sends; nothing else
 * arrives (no rolled-back change, no update, no delete).
 *
 * <p>Kafka Connect and the broker run in JVMs of their own ({@link KafkaConnect}, {@link KafkaBroker}), from Maven
 * artifacts; Debezium is on no classpath of the bundle's. The worker's offsets are a file in the test's temp folder.
 */
class DebeziumOutboxIT {
    private static final String RECIPE_HEADING = "\n## Past one publisher: Debezium\n";
    private static final int ACCOUNTS = 12;
    /** 200 in {@code mvn verify}; bench/debezium-outbox.sh sets more ({@code metakit.debezium.it.transactions}) */
    private static final int TRANSACTIONS = Integer.getInteger("metakit.debezium.it.transactions", 200);
    private static final int WRITERS = 4;

    @TempDir
    Path workDir;

    private final ObjectMapper json = new ObjectMapper();
    private EmbeddedPostgres postgres;
    private CompletableFuture<KafkaBroker> brokerStarting;
    private KafkaBroker broker;
    private KafkaConnect connect;

    @AfterEach
    void stop() throws Exception {
        if (connect != null) {
            connect.close();
        }
        if (broker == null && brokerStarting != null) {
            broker = brokerStarting.get(3, TimeUnit.MINUTES); // a failure before it was taken: still stopped below
        }
        if (broker != null) {
            broker.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void debeziumsOutboxRouterPublishesEveryAccountsChangesInOrderKeyedByAccountWithTheInProcessJson()
            throws Exception {
        long began = System.nanoTime();
        String recipe = debeziumRecipe();
        // the broker starts in its own JVM meanwhile
        brokerStarting = CompletableFuture.supplyAsync(() -> {
            try {
                return new KafkaBroker(Files.createDirectories(workDir.resolve("kafka"))).start();
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        EmbeddedPostgres.Builder server = EmbeddedPostgres.builder().setDataDirectory(workDir.resolve("postgres"))
                .setPort(RunningInbox.freePort());
        codeBlock(recipe, "conf").lines().map(String::trim).filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .forEach(l -> server.setServerConfig(l.substring(0, l.indexOf('=')).trim(),
                        l.substring(l.indexOf('=') + 1).trim()));
        postgres = server.start();
        // connections on the bundle's schema, as the bundle's own are (the recipe's SQL names it)
        DataSource db = postgres.getPostgresDatabase(Map.of("currentSchema", InboxSchema.DEFAULT));
        // the bundle's schema, as the bundle migrates it (its own schema and history table)
        InboxMigrations.migrate(db);
        assertThat(scalarText(db, "show wal_level")).isEqualTo("logical");
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute(codeBlock(recipe, "sql"));
        }

        Properties connector = new Properties();
        connector.load(new StringReader(codeBlock(recipe, "properties")));
        // the recipe's placeholders for a platform's database, this test's server instead
        for (String key : List.of("database.hostname", "database.port", "database.dbname")) {
            assertThat(connector).as("the recipe sets " + key).containsKey(key);
        }
        connector.setProperty("database.hostname", "127.0.0.1");
        connector.setProperty("database.port", Integer.toString(postgres.getPort()));
        connector.setProperty("database.dbname", "postgres");
        String topic = connector.getProperty("transforms.outbox.route.topic.replacement");
        String slot = connector.getProperty("slot.name");

        broker = brokerStarting.get(3, TimeUnit.MINUTES);
        System.out.printf("DEBEZIUM: PostgreSQL and the broker up %.1f s after the start%n",
                (System.nanoTime() - began) / 1e9);
        // more partitions than one, so the key is what keeps an account's changes together
        broker.createTopic(topic, 3);
        long connectStarted = System.nanoTime();
        connect = new KafkaConnect(Files.createDirectories(workDir.resolve("connect")), broker.bootstrapServers(),
                connector).start();
        // snapshot.mode=no_data: what is committed once the slot streams is published
        await().atMost(Duration.ofSeconds(60)).until(() -> "true".equals(scalarText(db,
                "select active::text from pg_replication_slots where slot_name = '" + slot + "'")));
        System.out.printf("DEBEZIUM: connector streaming %.1f s after the worker started%n",
                (System.nanoTime() - connectStarted) / 1e9);

        long writing = System.nanoTime();
        AtomicInteger rolledBack = new AtomicInteger();
        write(db, rolledBack);
        double writeSeconds = (System.nanoTime() - writing) / 1e9;
        // a replay (updates) and retention (deletes) are not events: the publication publishes inserts only
        // as if the in-process publisher had sent them before the switch: marking and replaying are both updates
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.executeUpdate("update position_changes set published_at = now()");
        }
        int replayed = new FeedMaintenance(db).replayReconciledSince(Instant.EPOCH);
        Map<Long, List<String>> expected = inProcessJson(db);
        long pruned = new FeedMaintenance(db).pruneReconciled(Instant.now().plus(1, ChronoUnit.MINUTES), 500);
        assertThat(pruned).as("retention deleted every row").isEqualTo(count(expected));
        // one last change per account, after the update and the delete, so the wait below ends after they would show
        try (Connection c = db.getConnection()) {
            for (long account = 1; account <= ACCOUNTS; account++) {
                ChangeStore.append(c, change(account, 9_000 + account, "opened"));
            }
        }
        Map<Long, List<String>> last = inProcessJson(db);
        expected.forEach((account, changes) -> changes.addAll(last.get(account)));
        Map<Long, Long> changeIds = lastChangeIds(db, expected);
        System.out.printf("DEBEZIUM: %d changes written in %d transactions (%d rolled back) in %.1f s, %d replayed,"
                + " %d pruned%n", count(expected), TRANSACTIONS, rolledBack.get(), writeSeconds, replayed, pruned);

        Map<Long, List<ConsumerRecord<String, String>>> byAccount = readTopic(topic, expected);
        System.out.printf("DEBEZIUM: every change on the topic %.1f s after the writes began, %.1f s after the start%n",
                (System.nanoTime() - writing) / 1e9, (System.nanoTime() - began) / 1e9);
        for (var e : expected.entrySet()) {
            long account = e.getKey();
            List<ConsumerRecord<String, String>> records = byAccount.get(account);
            List<Long> seqs = new ArrayList<>();
            for (ConsumerRecord<String, String> r : records) {
                seqs.add(json.readTree(r.value()).get("seq").asLong());
            }
            assertThat(seqs).as("account %d's seqs in topic order", account)
                    .containsExactlyElementsOf(LongStream.rangeClosed(1, e.getValue().size()).boxed().toList());
            assertThat(records.stream().map(ConsumerRecord::partition).distinct()).as("one partition").hasSize(1);
            for (int i = 0; i < records.size(); i++) {
                ConsumerRecord<String, String> r = records.get(i);
                assertThat(r.value()).as("account %d seq %d: the in-process outlet's JSON", account, i + 1)
                        .isEqualTo(e.getValue().get(i));
                var body = json.readTree(r.value());
                assertThat(body.get("id").asText()).isEqualTo(account + ":" + (i + 1));
                assertThat(header(r, "eventType")).isEqualTo(body.get("kind").asText());
                long changeId = Long.parseLong(header(r, "id"));
                if (i == records.size() - 1) {
                    assertThat(changeId).as("account %d's last change id", account).isEqualTo(changeIds.get(account));
                }
                assertThat(changeId).as("change ids rise with seq").isGreaterThan(i == 0 ? 0
                        : Long.parseLong(header(records.get(i - 1), "id")));
            }
        }
    }

    /**
     * {@link #TRANSACTIONS} transactions from {@link #WRITERS} threads, each appending 1 to 3 changes of one
     * account as a reconcile does; every tenth rolls back after its appends (its seqs are taken back with it).
     */
    private void write(DataSource db, AtomicInteger rolledBack) throws Exception {
        ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
        List<Future<?>> done = new ArrayList<>();
        AtomicInteger next = new AtomicInteger();
        for (int w = 0; w < WRITERS; w++) {
            int writer = w;
            done.add(writers.submit(() -> {
                Random random = new Random(20261203L + writer);
                int t;
                while ((t = next.getAndIncrement()) < TRANSACTIONS) {
                    long account = 1 + random.nextInt(ACCOUNTS);
                    try (Connection c = db.getConnection()) {
                        c.setAutoCommit(false);
                        for (int n = 1 + random.nextInt(3); n > 0; n--) {
                            ChangeStore.append(c, change(account, 1000 * account + random.nextInt(50),
                                    random.nextBoolean() ? "opened" : "modified"));
                        }
                        if (t % 10 == 9) {
                            c.rollback();
                            rolledBack.incrementAndGet();
                        } else {
                            c.commit();
                        }
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        writers.shutdown();
    }

    private static FeedChange change(long account, long ticket, String kind) {
        return new FeedChange(0, account, 0, ticket, kind, "open", "EURUSD", ticket % 2 == 0 ? "buy" : "sell",
                new BigDecimal("0.10"), new BigDecimal("1.08450"), Instant.parse("2026-12-03T07:01:02.345678Z"),
                ticket % 3 == 0 ? null : new BigDecimal("1.07"), null, null, null, null, null,
                List.of("status", "volume", "priceOpen"), "event", null);
    }

    /** Per account, in seq order, the body the in-process publisher sends for each change (ChangePublisher.send). */
    private Map<Long, List<String>> inProcessJson(DataSource db) throws Exception {
        Map<Long, List<String>> out = new TreeMap<>();
        try (Connection c = db.getConnection()) {
            for (long account = 1; account <= ACCOUNTS; account++) {
                List<String> bodies = new ArrayList<>();
                for (FeedChange change : ChangeStore.unpublished(c, account, Integer.MAX_VALUE)) {
                    bodies.add(json.writeValueAsString(change.toJson()));
                }
                assertThat(bodies).as("account %d has changes", account).isNotEmpty();
                out.put(account, bodies);
            }
        }
        return out;
    }

    private static Map<Long, Long> lastChangeIds(DataSource db, Map<Long, List<String>> expected) throws SQLException {
        Map<Long, Long> out = new HashMap<>();
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select account_id, seq, change_id from position_changes")) {
            while (rs.next()) {
                assertThat(rs.getLong("seq")).isEqualTo(expected.get(rs.getLong("account_id")).size());
                out.put(rs.getLong("account_id"), rs.getLong("change_id"));
            }
        }
        assertThat(out).hasSize(ACCOUNTS);
        return out;
    }

    /** Every record of the topic, per key, in partition order; waits until every account's last change is in. */
    private Map<Long, List<ConsumerRecord<String, String>>> readTopic(String topic, Map<Long, List<String>> expected) {
        Map<Long, List<ConsumerRecord<String, String>>> byAccount = new TreeMap<>();
        List<ConsumerRecord<String, String>> all = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false"), new StringDeserializer(), new StringDeserializer())) {
            List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                    .map((PartitionInfo p) -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long total = count(expected);
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ZERO).until(() -> {
                consumer.poll(Duration.ofMillis(500)).forEach(all::add);
                return all.size() >= total && lastSeqsIn(all, expected);
            });
            // anything more (a repeat, an update or a delete as an event) has had the same time to arrive
            consumer.poll(Duration.ofSeconds(2)).forEach(all::add);
        }
        for (ConsumerRecord<String, String> r : all) {
            byAccount.computeIfAbsent(Long.parseLong(r.key()), k -> new ArrayList<>()).add(r);
        }
        assertThat(byAccount.keySet()).as("keys: the account ids").isEqualTo(expected.keySet());
        assertThat(all).as("records on the topic").hasSize((int) count(expected));
        return byAccount;
    }

    private boolean lastSeqsIn(List<ConsumerRecord<String, String>> records, Map<Long, List<String>> expected) {
        return expected.entrySet().stream().allMatch(e -> records.stream().anyMatch(r ->
                r.key().equals(Long.toString(e.getKey()))
                        && r.value().contains("\"seq\":" + e.getValue().size() + ",")));
    }

    private static long count(Map<Long, List<String>> expected) {
        return expected.values().stream().mapToLong(List::size).sum();
    }

    private static String header(ConsumerRecord<String, String> r, String name) {
        Header h = r.headers().lastHeader(name);
        assertThat(h).as("header " + name).isNotNull();
        return new String(h.value(), StandardCharsets.UTF_8);
    }

    private static String scalarText(DataSource db, String sql) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        }
    }

    /** The Debezium section of docs/change-feed.md. */
    private static String debeziumRecipe() throws Exception {
        String page = Files.readString(RunningInbox.basedir().resolve("docs/change-feed.md"));
        int start = page.indexOf(RECIPE_HEADING);
        assertThat(start).as("docs/change-feed.md has the Debezium recipe").isPositive();
        int end = page.indexOf("\n## ", start + 1);
        return page.substring(start, end < 0 ? page.length() : end);
    }

    /** The one fenced block of the given language in the recipe. */
    private static String codeBlock(String recipe, String language) {
        Matcher m = Pattern.compile("\n```" + language + "\n(.*?)\n```\n", Pattern.DOTALL).matcher(recipe);
        assertThat(m.find()).as("the recipe has a " + language + " block").isTrue();
        String block = m.group(1);
        assertThat(m.find()).as("one " + language + " block").isFalse();
        return block;
    }
}
