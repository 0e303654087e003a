package dev.metakit.inbox.bench;

import dev.metakit.inbox.feed.ChangePublisher;
import dev.metakit.inbox.support.KafkaBroker;
import dev.metakit.inbox.support.ShippedWorker;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.worker.InboxWorker;
import org.apache.camel.CamelContext;
import org.apache.camel.builder.RouteBuilder;
import org.apache.camel.impl.DefaultCamelContext;

import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Locale;

/**
 * Changes per second the feed's publisher sustains into a real Kafka broker (KafkaBroker: 4.1.1, KRaft, its own JVM)
 * through camel-kafka with its defaults (acks=all, idempotent producer), the way routes/changes.camel.yaml sends
 * them once its outlet names Kafka. The outbox is filled first ({@code --changes} over {@code --accounts}), then the
 * publisher drains it, polled as the feed's route polls it (every 250 ms).
 *
 * <pre>bench/feed-throughput.sh [--changes 20000] [--accounts 100] [--concurrency 4]</pre>
 */
public final class FeedKafkaBench {
    private FeedKafkaBench() {
    }

    public static void main(String[] args) throws Exception {
        int changes = 20_000;
        int accounts = 100;
        int concurrency = 4;
        for (int i = 0; i < args.length; i += 2) {
            switch (args[i]) {
                case "--changes" -> changes = Integer.parseInt(args[i + 1]);
                case "--accounts" -> accounts = Integer.parseInt(args[i + 1]);
                case "--concurrency" -> concurrency = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Path dir = Files.createTempDirectory("feed-kafka-bench");
        try (KafkaBroker broker = new KafkaBroker(dir).start()) {
            broker.createTopic("bench-changes", 1);
            DataSource db = TestDatabase.dataSource();
            int perAccount = changes / accounts;
            try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
                s.execute("truncate position_changes, position_change_seqs");
                s.execute("insert into position_changes (account_id, seq, ticket, kind, status, symbol, type, volume,"
                        + " price_open, sl, changed, source) select a, n, 1000 + n, 'modified', 'open', 'EURUSD', 'buy',"
                        + " 0.10, 1.0845, 1.08 + n / 100000.0, array['sl'], 'event'"
                        + " from generate_series(1, " + accounts + ") a, generate_series(1, " + perAccount + ") n");
            }
            CamelContext context = new DefaultCamelContext();
            String outlet = "kafka:bench-changes?brokers=" + broker.bootstrapServers();
            context.addRoutes(new RouteBuilder() {
                @Override
                public void configure() {
                    errorHandler(noErrorHandler());
                    from("direct:metakit-change-outlet").to(outlet);
                }
            });
            context.start();
            // the boot whose heartbeat holds the published accounts (feed_owners), as in the shipped beans
            InboxWorker worker = ShippedWorker.create("feed-kafka-bench");
            worker.start();
            ChangePublisher publisher = new ChangePublisher();
            publisher.setCamelContext(context);
            publisher.setDataSource(db);
            publisher.setInboxWorker(worker);
            publisher.setConcurrency(concurrency);
            publisher.setBackoffBaseMillis(1000);
            publisher.setBackoffMaxMillis(30_000);
            long total = (long) perAccount * accounts;
            long started = System.nanoTime();
            while (publisher.publishedCount() < total) {
                publisher.publishDue();
                Thread.sleep(250); // the feed route's default poll
            }
            double seconds = (System.nanoTime() - started) / 1e9;
            publisher.stop();
            worker.stop();
            context.stop();
            System.out.printf(Locale.ROOT, "FEED throughput: %d changes over %d accounts into Kafka, concurrency %d:"
                            + " %.1f s, %.0f changes/s, %d failures%n", total, accounts, concurrency, seconds,
                    total / seconds, publisher.failureCount());
        }
        System.exit(0);
    }
}
