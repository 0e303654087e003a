package dev.metakit.inbox.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.metakit.inbox.feed.ChangeLine;
import dev.metakit.inbox.feed.ChangePublisher;
import dev.metakit.inbox.feed.ChangeStore;
import dev.metakit.inbox.feed.FeedChange;
import dev.metakit.inbox.support.KafkaBroker;
import dev.metakit.inbox.support.ShippedProperties;
import dev.metakit.inbox.support.ShippedWorker;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.worker.InboxWorker;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.RouteBuilder;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import javax.sql.DataSource;
import java.lang.management.ManagementFactory;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.IntStream;

/**
 * The feed's publisher into a real Kafka broker (KafkaBroker: KRaft, its own JVM) through camel-kafka with its
 * defaults (acks=all, idempotent producer, 5 requests in flight), keyed by account as docs/change-feed.md's Kafka recipe says,
 * on a pooled DataSource (HikariCP, as the bundle's), polled every 250 ms as the feed's route polls it.
 *
 * <ul>
 * <li>backlog (default): {@code --changes} over {@code --accounts} are written first, then published; prints
 * changes/s and CPU per change, then reads the topic back and checks every account's order ({@code --check false}
 * skips that).</li>
 * <li>steady ({@code --rate R --seconds S}): writers commit R changes/s, one per transaction as reconciles do, while
 * the publisher runs; prints the lag ({@code published_at - reconciled_at}: committed to marked published, after the
 * outlet confirmed) p50/p99/max of the changes written after {@code --warmup} seconds (default 10: a cold JVM's JIT
 * and the producer's first metadata are not the steady state), and of all of them.</li>
 * </ul>
 * {@code --outlet kafka} (default) sends to the broker; {@code log} is the shipped default outlet (a line per change
 * on the console); {@code none} confirms at once, which leaves the publisher's own part of the lag.
 *
 * <pre>bench/feed-throughput.sh [--changes 20000] [--accounts 100] [--concurrency 4] [--partitions 4]
 * bench/feed-throughput.sh --rate 1000 --seconds 30 [--accounts 100]</pre>
 * CPU per change is the CPU time of this JVM (publisher and Kafka client), of the broker's JVM and of PostgreSQL
 * (postmaster and its backends, from /proc) over the publishing, divided by the changes.
 */
public final class FeedKafkaBench {
    private static final String TOPIC = "bench-changes";

    private FeedKafkaBench() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new HashMap<>(Map.of("--changes", "20000", "--accounts", "100", "--concurrency", "4",
                "--partitions", "4", "--rate", "0", "--seconds", "30", "--check", "true", "--warmup", "10",
                "--outlet", "kafka"));
        for (int i = 0; i < args.length; i += 2) {
            if (!o.containsKey(args[i])) {
                throw new IllegalArgumentException("unknown option " + args[i]);
            }
            o.put(args[i], args[i + 1]);
        }
        int accounts = Integer.parseInt(o.get("--accounts"));
        int rate = Integer.parseInt(o.get("--rate"));
        int warmup = rate > 0 ? Integer.parseInt(o.get("--warmup")) : 0;
        String outletKind = o.get("--outlet");
        boolean kafka = outletKind.equals("kafka");
        Path dir = Files.createTempDirectory("feed-kafka-bench");
        try (KafkaBroker broker = kafka ? new KafkaBroker(dir).start() : null;
             HikariDataSource db = pooled()) {
            if (kafka) {
                broker.createTopic(TOPIC, Integer.parseInt(o.get("--partitions")));
            }
            exec(db, "truncate position_changes, position_change_seqs");
            long total;
            long measuredFrom = 0; // steady: the first change (by its number, ticket - 1000) after the warm-up
            if (rate == 0) {
                total = (long) (Integer.parseInt(o.get("--changes")) / accounts) * accounts;
                long t = System.nanoTime();
                exec(db, "insert into position_changes (account_id, seq, ticket, kind, status, symbol, type, volume,"
                        + " price_open, sl, changed, source) select a, n, 1000 + n, 'modified', 'open', 'EURUSD', 'buy',"
                        + " 0.10, 1.0845, 1.08 + n / 100000.0, array['sl'], 'event'"
                        + " from generate_series(1, " + accounts + ") a, generate_series(1, " + total / accounts + ") n");
                exec(db, "vacuum analyze position_changes");
                System.out.printf(Locale.ROOT, "FEED backlog of %d changes written in %.1f s%n", total,
                        (System.nanoTime() - t) / 1e9);
            } else {
                measuredFrom = (long) rate * warmup;
                total = measuredFrom + (long) rate * Integer.parseInt(o.get("--seconds"));
            }
            CamelContext context = ShippedProperties.camelContext(new RouteBuilder() {
                @Override
                public void configure() {
                    errorHandler(noErrorHandler());
                    var route = from("{{metakit.feed.outlet-endpoint}}");
                    switch (outletKind) {
                        case "kafka" -> route.setHeader("kafka.KEY", simple("${header.MetaKitAccountId}", String.class))
                                .to("kafka:" + TOPIC + "?brokers=" + broker.bootstrapServers());
                        // the shipped default outlet (routes/changes.camel.yaml): a line per change on the console
                        case "log" -> route.to("log:dev.metakit.inbox.feed.outlet?exchangeFormatter=#changeLine");
                        // confirms at once: what the publisher itself costs
                        case "none" -> route.process(e -> { });
                        default -> throw new IllegalArgumentException("--outlet kafka, log or none, not " + outletKind);
                    }
                }
            });
            context.getRegistry().bind("changeLine", new ChangeLine());
            // the boot whose heartbeat holds the published accounts (feed_owners), as in the shipped beans
            InboxWorker worker = ShippedWorker.create("feed-kafka-bench");
            worker.start();
            ChangePublisher publisher = new ChangePublisher();
            publisher.setCamelContext(context);
            publisher.setDataSource(db);
            publisher.setHeartbeat(worker);
            publisher.setConcurrency(Integer.parseInt(o.get("--concurrency")));
            publisher.setBackoffBaseMillis(1000);
            publisher.setBackoffMaxMillis(30_000);
            publisher.start();
            context.start();
            long postgres = postmasterPid(db);
            long[] cpu0 = cpu(postgres);
            long started = System.nanoTime();
            ScheduledExecutorService poll = Executors.newSingleThreadScheduledExecutor();
            poll.scheduleAtFixedRate(publisher::publishDue, 0, 250, TimeUnit.MILLISECONDS); // the feed route's poll
            var cpuAfterWarmup = new java.util.concurrent.atomic.AtomicReference<>(cpu0);
            if (warmup > 0) {
                poll.schedule(() -> {
                    cpuAfterWarmup.set(cpu(postgres));
                    return null;
                }, warmup, TimeUnit.SECONDS);
            }
            double writeRate = rate > 0 ? write(db, rate, total, accounts) : 0;
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(rate > 0 ? 5 : 30);
            while (publisher.publishedCount() < total && System.nanoTime() < deadline) {
                Thread.sleep(20); // a benchmark's progress check, not a test
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            long[] cpu1 = cpu(postgres);
            poll.shutdownNow();
            long published = publisher.publishedCount();
            String load = uptime();
            long[] from = cpuAfterWarmup.get();
            long counted = rate > 0 ? total - measuredFrom : published;
            String cpu = String.format(Locale.ROOT, "CPU per change: %.1f us here + %.1f us PostgreSQL + %.1f us broker",
                    (cpu1[0] - from[0]) / 1e3 / counted, (cpu1[1] - from[1]) / 1e3 / counted,
                    (cpu1[2] - from[2]) / 1e3 / counted);
            if (rate == 0) {
                System.out.printf(Locale.ROOT, "FEED backlog: %d of %d changes over %d accounts into %s,"
                                + " concurrency %s: %.1f s, %.0f changes/s, %d failures; %s; load %s%n", published, total,
                        accounts, outletKind, o.get("--concurrency"), seconds, published / seconds,
                        publisher.failureCount(), cpu, load);
            } else {
                System.out.printf(Locale.ROOT, "FEED steady into %s: %.0f changes/s written for %d + %s s over %d"
                                + " accounts, %d of %d published; lag after the %d s warm-up %s (all: %s); %d failures;"
                                + " %s (writers included); load %s%n", outletKind, writeRate, warmup, o.get("--seconds"),
                        accounts, published, total, warmup, lag(db, measuredFrom), lag(db, 0),
                        publisher.failureCount(), cpu, load);
            }
            publisher.stop();
            worker.stop();
            context.stop();
            if (kafka && rate == 0 && Boolean.parseBoolean(o.get("--check"))) {
                checkOrder(broker, Integer.parseInt(o.get("--partitions")), total, accounts);
            }
        }
        System.exit(0);
    }

    /** Commits {@code total} changes at {@code rate} per second, one per transaction. Returns the rate achieved. */
    private static double write(DataSource db, int rate, long total, int accounts) throws Exception {
        AtomicLong next = new AtomicLong();
        long start = System.nanoTime();
        var writers = Executors.newFixedThreadPool(4);
        for (int w = 0; w < 4; w++) {
            writers.execute(() -> {
                try (Connection c = db.getConnection()) {
                    c.setAutoCommit(false);
                    for (long k; (k = next.getAndIncrement()) < total; ) {
                        LockSupport.parkNanos(start + k * 1_000_000_000L / rate - System.nanoTime());
                        ChangeStore.append(c, new FeedChange(0, k % accounts + 1, 0, 1000 + k, "modified", "open",
                                "EURUSD", "buy", new BigDecimal("0.10"), new BigDecimal("1.0845"), null,
                                new BigDecimal("1.08"), null, null, null, null, null, List.of("sl"), "event", null));
                        c.commit();
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        }
        writers.shutdown();
        writers.awaitTermination(1, TimeUnit.HOURS);
        return total / ((System.nanoTime() - start) / 1e9);
    }

    /** The lag's p50/p99/max of the changes numbered {@code from} on (a change's number is its ticket - 1000). */
    private static String lag(DataSource db, long from) throws Exception {
        try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                "select percentile_cont(0.5) within group (order by l), percentile_cont(0.99) within group (order by l),"
                        + " max(l) from (select extract(epoch from published_at - reconciled_at) * 1000 as l"
                        + " from position_changes where published_at is not null and ticket >= " + (1000 + from)
                        + ") x")) {
            rs.next();
            return String.format(Locale.ROOT, "p50 %.0f ms, p99 %.0f ms, max %.0f ms", rs.getDouble(1),
                    rs.getDouble(2), rs.getDouble(3));
        }
    }

    /** Reads the whole topic back: per account the seqs 1..N in order, every repeat of a seq already read. */
    private static void checkOrder(KafkaBroker broker, int partitions, long total, int accounts) {
        long t = System.nanoTime();
        Map<String, Object> config = Map.of(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers(),
                ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class,
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 5000);
        ObjectMapper json = new ObjectMapper();
        long[] top = new long[accounts + 1];
        long records = 0;
        long repeats = 0;
        String violation = null;
        try (KafkaConsumer<String, String> kafka = new KafkaConsumer<>(config)) {
            List<TopicPartition> all = IntStream.range(0, partitions).mapToObj(p -> new TopicPartition(TOPIC, p))
                    .toList();
            kafka.assign(all);
            kafka.seekToBeginning(all);
            Map<TopicPartition, Long> end = kafka.endOffsets(all);
            while (all.stream().anyMatch(p -> kafka.position(p) < end.get(p))) {
                for (ConsumerRecord<String, String> r : kafka.poll(Duration.ofMillis(500))) {
                    JsonNode change = json.readTree(r.value());
                    int account = change.get("accountId").asInt();
                    long seq = change.get("seq").asLong();
                    records++;
                    if (!r.key().equals(Integer.toString(account)) && violation == null) {
                        violation = "record of account " + account + " keyed " + r.key();
                    }
                    if (seq == top[account] + 1) {
                        top[account] = seq;
                    } else if (seq <= top[account]) {
                        repeats++;
                    } else if (violation == null) {
                        violation = account + ":" + seq + " after " + account + ":" + top[account];
                    }
                }
            }
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        long distinct = java.util.Arrays.stream(top).sum();
        System.out.printf(Locale.ROOT, "FEED topic read back in %.1f s: %d records, %d distinct changes of %d, %d"
                        + " repeats; every account in order: %s%n", (System.nanoTime() - t) / 1e9, records, distinct,
                total, repeats, violation == null && distinct == total ? "yes" : "NO (" + violation + ")");
    }

    private static HikariDataSource pooled() {
        TestDatabase.dataSource(); // migrates
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(TestDatabase.jdbcUrl());
        config.setUsername(TestDatabase.user());
        config.setPassword(TestDatabase.password());
        config.addDataSourceProperty("currentSchema", dev.metakit.inbox.db.InboxSchema.DEFAULT);
        config.setMaximumPoolSize(16);
        return new HikariDataSource(config);
    }

    private static void exec(DataSource db, String sql) throws Exception {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static long postmasterPid(DataSource db) throws Exception {
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("select pg_backend_pid()")) {
            rs.next();
            return Long.parseLong(stat(rs.getLong(1))[3]);
        }
    }

    /** CPU nanoseconds so far: this JVM, PostgreSQL (postmaster, its children, its reaped children), the rest. */
    private static long[] cpu(long postmaster) throws Exception {
        long self = ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
                .getProcessCpuTime();
        long pg = 0;
        long others = 0;
        long tick = 10_000_000L; // USER_HZ 100
        java.util.Set<Long> postgres = new java.util.HashSet<>();
        for (Path p : Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            String[] f;
            try {
                f = stat(Long.parseLong(p.getFileName().toString()));
            } catch (Exception gone) {
                continue;
            }
            long pid = Long.parseLong(f[0]);
            long used = (Long.parseLong(f[13]) + Long.parseLong(f[14])) * tick;
            if (pid == postmaster) {
                pg += used + (Long.parseLong(f[15]) + Long.parseLong(f[16])) * tick;
                postgres.add(pid);
            } else if (Long.parseLong(f[3]) == postmaster) {
                pg += used;
                postgres.add(pid);
            }
        }
        for (ProcessHandle h : ProcessHandle.current().descendants().toList()) {
            if (!postgres.contains(h.pid())) {
                others += h.info().totalCpuDuration().map(Duration::toNanos).orElse(0L);
            }
        }
        return new long[] {self, pg, others};
    }

    /** The fields of /proc/PID/stat, the command name (which may hold spaces) folded into one. */
    private static String[] stat(long pid) throws Exception {
        String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
        int close = s.lastIndexOf(')');
        String[] rest = s.substring(close + 2).split(" ");
        String[] out = new String[rest.length + 2];
        out[0] = s.substring(0, s.indexOf(' '));
        out[1] = s.substring(s.indexOf('(') + 1, close);
        System.arraycopy(rest, 0, out, 2, rest.length);
        return out;
    }

    private static String uptime() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).trim();
        } catch (Exception e) {
            return "?";
        }
    }
}
