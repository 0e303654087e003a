package dev.metakit.inbox.feed;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.metakit.inbox.sandbox.Convergence;
import dev.metakit.inbox.sandbox.DeliveryLog;
import dev.metakit.inbox.sandbox.DeliverySchedule;
import dev.metakit.inbox.sandbox.Sandbox;
import dev.metakit.inbox.sandbox.SandboxFaults;
import dev.metakit.inbox.sandbox.SandboxSettings;
import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.KafkaBroker;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The change feed into a real Kafka broker, the route file pointed at it by editing its outlet endpoint only. The
 * sandbox trades under heavy faults while the publishing instance (the shaded jar) is killed with kill -9 and
 * restarted and the broker is down for a while. Read back from the topic, per account: the seqs arrive in order
 * without a gap, every repeat has an id already seen, and the state folded from the changes equals the positions
 * table, which equals the sandbox's truth.
 *
 * <p>{@code mvn verify} runs a short version (20 s of trading, broker down 8 s); {@code bench/feed-kafka.sh} runs the
 * full one (60 s, broker down 20 s) through the system properties {@code metakit.feed.it.seconds} and
 * {@code metakit.feed.it.broker-down-seconds}.
 */
class ChangeFeedKafkaIT {
    private static final String TOPIC = "metakit-changes";
    private static final int ACCOUNTS = 5;
    private static final String OUTLET_LINE =
            "uri: \"log:dev.metakit.inbox.feed.outlet?exchangeFormatter=#bean:changeLine\"";
    private static final List<String> FEED_FIELDS = List.of("status", "symbol", "type", "volume", "priceOpen",
            "openedAt", "sl", "tp", "closedAt", "closeDealTicket", "closePrice", "profit");

    @TempDir
    Path workDir;

    private final ObjectMapper json = new ObjectMapper();
    private KafkaBroker broker;
    private Sandbox sandbox;
    private InboxProcess consumer;

    @AfterEach
    void stop() throws Exception {
        // closed in reverse: the sandbox, the consumer, then the broker (a null one is skipped)
        try (KafkaBroker b = broker; InboxProcess c = consumer; Sandbox s = sandbox) {
            // closing is all
        }
    }

    @Test
    void underHeavyFaultsAKillNineOfThePublisherAndABrokerOutageEveryAccountsChangesArriveInOrderWithoutGaps()
            throws Exception {
        int seconds = Integer.getInteger("metakit.feed.it.seconds", 20);
        int brokerDownSeconds = Integer.getInteger("metakit.feed.it.broker-down-seconds", 8);
        // false: the sandbox's faults only, no kill -9 and no broker outage (how BENCHMARKS.md measures the lag)
        boolean outages = Boolean.parseBoolean(System.getProperty("metakit.feed.it.outages", "true"));
        double rate = 10;
        TestDatabase.truncateAll();
        broker = new KafkaBroker(Files.createDirectories(workDir.resolve("kafka"))).start();
        broker.createTopic(TOPIC, 1);

        Path routes = routesWithKafkaOutlet(broker.bootstrapServers());
        int apiPort = RunningInbox.freePort();
        consumer = new InboxProcess(Files.createDirectories(workDir.resolve("consumer")),
                "http://127.0.0.1:" + apiPort, Map.of(
                "CAMEL_MAIN_ROUTESINCLUDEPATTERN", "file:" + routes + "/*.camel.yaml",
                "METAKIT_ACCOUNTS", LongStream.rangeClosed(1, ACCOUNTS).mapToObj(Long::toString)
                        .collect(Collectors.joining(",")),
                // as SandboxedInbox: lost deliveries are repaired by a periodic reconcile within the test's patience
                "METAKIT_RECONCILE_INTERVAL", "2s",
                "METAKIT_STATUS_INTERVAL", "1s",
                "METAKIT_WORKER_POLL_INTERVAL_MILLIS", "200",
                "METAKIT_WORKER_BACKOFF_BASE_MILLIS", "100",
                "METAKIT_WORKER_BACKOFF_MAX_MILLIS", "1000",
                // the rows the killed process had claimed are taken over within the test's patience
                "METAKIT_WORKER_LEASE_SECONDS", "5"));
        // heavy, without its secret rotation: the consumer is another process, which an in-test rotation cannot
        // reach (SecretRotationTest covers rotation)
        SandboxFaults faults = SandboxFaults.heavy().withRotation(0, Duration.ofMinutes(2));
        sandbox = new Sandbox(SandboxSettings.builder().seed(20261203).accounts(ACCOUNTS).faults(faults)
                .deliverySchedule(DeliverySchedule.contract().scaled(0.2)).apiPort(apiPort)
                .operations((long) (rate * seconds)).operationsPerSecond(rate)
                .webhookUrl(consumer.webhookUri().toString()).webhookSecret(RunningInbox.SECRET).build());
        consumer.env("METAKIT_API_KEY", sandbox.apiKey());

        consumer.start();
        sandbox.start();
        long began = System.nanoTime();
        if (outages) {
            await().atMost(Duration.ofSeconds(seconds)).until(() -> elapsed(began) >= seconds / 4.0
                    && TestDatabase.scalar("select count(*) from position_changes where published_at is not null") > 0);
            long publishedBeforeKill = TestDatabase.scalar(
                    "select count(*) from position_changes where published_at is not null");
            consumer.kill();
            consumer.start();
            System.out.printf("FEED kafka: publisher killed (kill -9) at %.1f s after %d changes published, ready again"
                    + " at %.1f s%n", seconds / 4.0, publishedBeforeKill, elapsed(began));

            broker.kill();
            double brokerDownAt = elapsed(began);
            // the outage itself, not a wait for a condition
            Thread.sleep(Duration.ofSeconds(brokerDownSeconds).toMillis());
            long writtenWhileDown = TestDatabase.scalar(
                    "select count(*) from position_changes where published_at is null");
            broker.start();
            System.out.printf("FEED kafka: broker down from %.1f s for %d s (%d changes waiting when it came back)%n",
                    brokerDownAt, brokerDownSeconds, writtenWhileDown);
        }
        await().atMost(Duration.ofSeconds(seconds * 3L)).until(sandbox::trafficDone);
        assertThat(sandbox.quiesce(Duration.ofSeconds(60))).as("sandbox deliveries settle").isTrue();
        AtomicReference<Convergence.Report> report = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            report.set(Convergence.check(sandbox.truth(), TestDatabase.dataSource()));
            assertThat(report.get().differences()).as("positions that differ from the sandbox's truth").isEmpty();
        });
        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500)).until(() ->
                TestDatabase.scalar("select count(*) from position_changes where published_at is null") == 0);
        long changes = TestDatabase.scalar("select count(*) from position_changes");

        List<JsonNode> received = readTopic(changes);
        Map<Long, List<JsonNode>> byAccount = new TreeMap<>();
        for (JsonNode change : received) {
            byAccount.computeIfAbsent(change.get("accountId").asLong(), a -> new ArrayList<>()).add(change);
        }
        long repeats = 0;
        for (long account = 1; account <= ACCOUNTS; account++) {
            List<JsonNode> feed = byAccount.getOrDefault(account, List.of());
            long lastSeq = TestDatabase.scalar("select coalesce(max(last_seq), 0) from position_change_seqs"
                    + " where account_id = " + account);
            repeats += assertInOrderWithoutGaps(account, feed, lastSeq);
            assertThat(fold(feed)).as("account %d: the state folded from its changes", account)
                    .isEqualTo(positionsTable(account));
        }
        DeliveryLog.Stats stats = sandbox.deliveries().stats();
        Map<String, Long> sources = TestDatabase.strings(TestDatabase.dataSource(),
                "select source || '=' || count(*) from position_changes group by source").stream()
                .collect(Collectors.toMap(s -> s.split("=")[0], s -> Long.parseLong(s.split("=")[1])));
        System.out.printf("FEED kafka: %d s trading, %d operations; deliveries %d (%d lost, %d duplicated, %d given up);"
                        + " %d changes %s, %d records read back (%d repeats), %d positions compared; lag p50 %s ms,"
                        + " p99 %s ms%n",
                seconds, sandbox.truth().operations(), stats.deliveries(), stats.lost(), stats.duplicated(),
                stats.givenUp(), changes, sources, received.size(), repeats, report.get().compared(),
                lagMillis(0.5), lagMillis(0.99));
        assertThat(changes).isGreaterThan(ACCOUNTS * 5L);
        assertThat(stats.lost()).isPositive();
        assertThat(stats.duplicated()).isPositive();
    }

    /** Returns the number of repeats; fails on a gap, a seq out of order, or a repeat of an id not seen before. */
    private static long assertInOrderWithoutGaps(long account, List<JsonNode> feed, long lastSeq) {
        Set<String> seen = new HashSet<>();
        long highest = 0;
        long repeats = 0;
        for (JsonNode change : feed) {
            long seq = change.get("seq").asLong();
            String id = change.get("id").asText();
            assertThat(id).isEqualTo(account + ":" + seq);
            if (seq == highest + 1) {
                highest = seq;
                seen.add(id);
            } else {
                assertThat(seq).as("account %d: seq %d after %d (a gap)", account, seq, highest).isLessThanOrEqualTo(highest);
                assertThat(seen).as("account %d: a repeat has an id already seen", account).contains(id);
                repeats++;
            }
        }
        assertThat(highest).as("account %d: every change arrived", account).isEqualTo(lastSeq);
        return repeats;
    }

    /** What a downstream that dedupes by id holds: per ticket, the position of its last change. */
    private Map<Long, Map<String, String>> fold(List<JsonNode> feed) {
        Map<Long, Map<String, String>> state = new TreeMap<>();
        Set<String> applied = new HashSet<>();
        for (JsonNode change : feed) {
            if (!applied.add(change.get("id").asText())) {
                continue;
            }
            JsonNode p = change.get("position");
            Map<String, String> fields = new TreeMap<>();
            for (String f : FEED_FIELDS) {
                JsonNode v = p.get(f);
                fields.put(f, v == null || v.isNull() ? null : normal(v.isNumber() ? v.decimalValue() : v.asText()));
            }
            state.put(p.get("ticket").asLong(), fields);
        }
        return state;
    }

    private static Map<Long, Map<String, String>> positionsTable(long account) throws Exception {
        Map<Long, Map<String, String>> table = new TreeMap<>();
        try (Connection c = TestDatabase.dataSource().getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select * from positions where account_id = " + account)) {
            while (rs.next()) {
                Map<String, String> fields = new TreeMap<>();
                fields.put("status", rs.getString("status"));
                fields.put("symbol", rs.getString("symbol"));
                fields.put("type", rs.getString("type"));
                fields.put("volume", normal(rs.getBigDecimal("volume")));
                fields.put("priceOpen", normal(rs.getBigDecimal("price_open")));
                fields.put("openedAt", normal(rs.getObject("opened_at", java.time.OffsetDateTime.class)));
                fields.put("sl", normal(rs.getBigDecimal("sl")));
                fields.put("tp", normal(rs.getBigDecimal("tp")));
                fields.put("closedAt", normal(rs.getObject("closed_at", java.time.OffsetDateTime.class)));
                fields.put("closeDealTicket", normal(rs.getObject("close_deal_ticket")));
                fields.put("closePrice", normal(rs.getBigDecimal("close_price")));
                fields.put("profit", "closed".equals(rs.getString("status"))
                        ? normal(rs.getBigDecimal("close_profit")) : null);
                table.put(rs.getLong("ticket"), fields);
            }
        }
        return table;
    }

    private static String normal(Object v) {
        if (v == null) {
            return null;
        }
        if (v instanceof BigDecimal d) {
            return d.stripTrailingZeros().toPlainString();
        }
        if (v instanceof java.time.OffsetDateTime t) {
            return t.toInstant().toString();
        }
        if (v instanceof String s && s.matches("\\d{4}-\\d\\d-\\d\\dT.*Z")) {
            return java.time.Instant.parse(s).toString();
        }
        return v.toString();
    }

    /** Every record of the topic, in partition order, once at least {@code atLeast} distinct ids were read. */
    private List<JsonNode> readTopic(long atLeast) throws Exception {
        Map<String, Object> config = new HashMap<>();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        List<JsonNode> out = new ArrayList<>();
        Set<String> ids = new HashSet<>();
        try (KafkaConsumer<String, String> kafka = new KafkaConsumer<>(config)) {
            TopicPartition partition = new TopicPartition(TOPIC, 0);
            kafka.assign(List.of(partition));
            kafka.seekToBeginning(List.of(partition));
            long end = kafka.endOffsets(List.of(partition)).get(partition);
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while ((kafka.position(partition) < end || ids.size() < atLeast) && System.nanoTime() < deadline) {
                for (ConsumerRecord<String, String> r : kafka.poll(Duration.ofMillis(500))) {
                    JsonNode change = json.readTree(r.value());
                    Header id = r.headers().lastHeader("MetaKitChangeId");
                    assertThat(id).as("header MetaKitChangeId").isNotNull();
                    assertThat(new String(id.value(), StandardCharsets.UTF_8)).isEqualTo(change.get("id").asText());
                    out.add(change);
                    ids.add(change.get("id").asText());
                }
                end = kafka.endOffsets(List.of(partition)).get(partition);
            }
        }
        assertThat(ids).as("distinct changes read back").hasSize((int) atLeast);
        return out;
    }

    /** The routes as shipped, with one line changed: the outlet endpoint. */
    private Path routesWithKafkaOutlet(String bootstrap) throws Exception {
        Path dir = Files.createDirectories(workDir.resolve("routes"));
        try (Stream<Path> files = Files.list(RunningInbox.basedir().resolve("routes"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".camel.yaml")).toList()) {
                String text = Files.readString(f);
                if (f.getFileName().toString().equals("changes.camel.yaml")) {
                    assertThat(text).contains(OUTLET_LINE);
                    text = text.replace(OUTLET_LINE, "uri: \"kafka:" + TOPIC + "?brokers=" + bootstrap + "\"");
                }
                Files.writeString(dir.resolve(f.getFileName()), text);
            }
        }
        return dir;
    }

    private static String lagMillis(double fraction) {
        return String.valueOf(TestDatabase.scalar("select coalesce(percentile_cont(" + fraction + ") within group"
                + " (order by extract(epoch from published_at - reconciled_at) * 1000), 0)::bigint"
                + " from position_changes"));
    }

    private static double elapsed(long since) {
        return (System.nanoTime() - since) / 1e9;
    }
}
