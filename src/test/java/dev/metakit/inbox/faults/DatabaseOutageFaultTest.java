package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.TestDatabase;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** PostgreSQL stopped under steady ingest: never a 2xx while it is down, fast 503s, recovery without a restart. */
class DatabaseOutageFaultTest {
    @TempDir
    Path dataDir;

    private EmbeddedPostgres postgres;
    private RunningInbox inbox;

    @AfterEach
    void stopAll() throws Exception {
        if (inbox != null) {
            inbox.close();
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    @Test
    void aFiveSecondDatabaseOutageIsAnswered503FastAndIngestRecoversWithoutARestart() throws Exception {
        outage(Duration.ofSeconds(5));
    }

    @Test
    @Tag("fault-long")
    void aTwentySecondDatabaseOutageIsAnswered503FastAndIngestRecoversWithoutARestart() throws Exception {
        outage(Duration.ofSeconds(20));
    }

    private void outage(Duration down) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        postgres = startPostgres(port);
        inbox = RunningInbox.start(Map.of("metakit.database.url", postgres.getJdbcUrl("postgres", "postgres"),
                "metakit.database.user", "postgres", "metakit.database.password", "",
                "camel.main.routes-include-pattern", RunningInbox.onlyRoutes("beans", "ingest")));
        SignedLoad load = new SignedLoad(inbox.webhookUri(), RunningInbox.SECRET, 8, 50, 10).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= 200);

        postgres.close();
        postgres = null;
        long downAt = System.nanoTime();
        await().atMost(down).until(() -> inbox.healthStatus() == 503);
        long healthDownMillis = Duration.ofNanos(System.nanoTime() - downAt).toMillis();
        Pause.until(downAt + down.toNanos());
        assertThat(inbox.healthStatus()).as("health while the database is down").isEqualTo(503);

        long upBegin = System.nanoTime();
        postgres = startPostgres(port);
        long upAt = System.nanoTime();
        await().atMost(Duration.ofSeconds(15)).until(() -> load.count(s -> s.acked() && s.startNanos() > upAt) > 0);
        long firstAckAfterUp = load.results().stream().filter(s -> s.acked() && s.startNanos() > upAt)
                .mapToLong(SignedLoad.Sent::endNanos).min().orElseThrow();
        await().atMost(Duration.ofSeconds(10)).until(() -> inbox.healthStatus() == 200);
        long healthUpMillis = Duration.ofNanos(System.nanoTime() - upAt).toMillis();
        await().atMost(Duration.ofSeconds(10)).until(() -> load.count(s -> s.acked() && s.startNanos() > upAt) >= 200);
        List<SignedLoad.Sent> sent = load.stop();

        List<SignedLoad.Sent> whileDown = sent.stream()
                .filter(s -> s.startNanos() >= downAt && s.endNanos() <= upBegin).toList();
        Set<String> stored = TestDatabase.strings(postgres.getPostgresDatabase(),
                "select delivery_key from webhook_inbox");
        Set<String> ackedButMissing = new HashSet<>(SignedLoad.ackedKeys(sent));
        ackedButMissing.removeAll(stored);
        System.out.printf("FAULT database-outage %ds: sent=%d statuses=%s while-down=%d %s p50=%d ms p99=%d ms "
                        + "max=%d ms; health 503 after %d ms; postgres restart took %d ms; first 2xx %d ms after it "
                        + "was up, health 200 after %d ms; acked-but-missing=%d%n",
                down.toSeconds(), sent.size(), SignedLoad.byStatus(sent), whileDown.size(),
                SignedLoad.byStatus(whileDown), SignedLoad.percentileMicros(whileDown, 50) / 1000,
                SignedLoad.percentileMicros(whileDown, 99) / 1000, SignedLoad.percentileMicros(whileDown, 100) / 1000,
                healthDownMillis, Duration.ofNanos(upAt - upBegin).toMillis(),
                Duration.ofNanos(firstAckAfterUp - upAt).toMillis(), healthUpMillis, ackedButMissing.size());

        assertThat(whileDown).isNotEmpty().allSatisfy(s -> assertThat(s.status()).as("answer while down")
                .isEqualTo(503));
        assertThat(SignedLoad.percentileMicros(whileDown, 100)).as("slowest answer while down, µs")
                .isLessThan(5_000_000);
        assertThat(SignedLoad.percentileMicros(whileDown, 50)).as("median answer while down, µs")
                .isLessThanOrEqualTo(2_500_000);
        assertThat(sent).as("every request answered").noneMatch(s -> s.status() == -1);
        assertThat(Duration.ofNanos(firstAckAfterUp - upAt)).as("first 2xx after the database is back")
                .isLessThan(Duration.ofSeconds(5));
        assertThat(ackedButMissing).as("acked but missing").isEmpty();
    }

    private EmbeddedPostgres startPostgres(int port) throws Exception {
        return EmbeddedPostgres.builder().setDataDirectory(dataDir).setCleanDataDirectory(false).setPort(port).start();
    }
}
