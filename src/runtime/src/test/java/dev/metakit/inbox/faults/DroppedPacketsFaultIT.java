package dev.metakit.inbox.faults;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.FaultWindow;
import dev.metakit.inbox.support.TcpProxy;
import dev.metakit.inbox.support.HealthWatch;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.SignedLoad;
import dev.metakit.inbox.support.StoppablePostgres;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A network that drops every packet between the bundle and PostgreSQL for 20 s, sockets left open
 * ({@link TcpProxy}), under steady signed traffic, every setting at its default: each delivery in the freeze
 * answered 503 within MetaKit's wait (its commit timeout is 2 s), health answering at its deadline (800 ms) all along
 * rather than waiting on the network, DOWN with the reason, 2xx again on the thaw, and nothing acked lost. In failsafe
 * with the other long fault tests.
 */
class DroppedPacketsFaultIT {
    private static final Duration FREEZE = Duration.ofSeconds(20);
    /**
     * a probe answered at its 800 ms deadline against one that waited on the frozen network (the socket timeout, 30 s,
     * or the probe's own 10 s); the seconds between are a loaded machine's scheduling and the HTTP round trip
     */
    private static final long HEALTH_ANSWER_BOUND_MILLIS = 5000;
    private static final int ACCOUNTS = 10;

    @TempDir
    Path dataDir;
    private StoppablePostgres postgres;
    private TcpProxy proxy;
    private FakeMetaKit metakit;
    private RunningInbox inbox;

    @BeforeEach
    void start() throws Exception {
        postgres = new StoppablePostgres(dataDir);
        proxy = new TcpProxy(postgres.port());
        metakit = FakeMetaKit.withOnePositionEach(ACCOUNTS);
        inbox = RunningInbox.onServer("jdbc:postgresql://127.0.0.1:" + proxy.port() + "/postgres", metakit);
    }

    @AfterEach
    void stop() throws Exception {
        try (StoppablePostgres p = postgres; FakeMetaKit m = metakit; TcpProxy x = proxy) {
            if (inbox != null) {
                inbox.close();
            }
        }
    }

    @Test
    void twentySecondsOfDroppedPacketsAreAnswered503WithHealthDownWithinItsDeadlineAndLoseNothingAcked()
            throws Exception {
        SignedLoad load = new SignedLoad(inbox.webhookUri(), RunningInbox.SECRET, 4, 25, ACCOUNTS).start();
        await().atMost(Duration.ofSeconds(20)).until(() -> load.count(SignedLoad.Sent::acked) >= 100);
        HealthWatch health = HealthWatch.start(inbox, Duration.ofMillis(250), "/observe/health",
                "/observe/health/ready");

        proxy.freeze();
        long frozeAt = System.nanoTime();
        // no commit can reach the server: a 2xx for a delivery sent during the freeze would be a lie
        FaultWindow.holdUntil(frozeAt + FREEZE.toNanos(), "no 2xx for a delivery sent during the freeze",
                () -> load.count(s -> s.acked() && s.startNanos() > frozeAt) == 0);
        proxy.thaw();
        long thawAt = System.nanoTime();

        await().atMost(Duration.ofSeconds(15)).until(() -> load.count(s -> s.acked() && s.startNanos() > thawAt) >= 50);
        await().atMost(Duration.ofSeconds(10)).until(() -> inbox.healthStatus() == 200);
        long healthUpMillis = Duration.ofNanos(System.nanoTime() - thawAt).toMillis();
        List<HealthWatch.Probe> probes = health.stop();
        List<SignedLoad.Sent> sent = load.stop();
        long slowest503 = inbox.slowestAnswer(503).toMillis();
        Set<String> acked = SignedLoad.ackedKeys(sent);
        Duration drained = FaultChecks.untilProcessed(postgres.dataSource(), acked, Duration.ofSeconds(30));

        List<SignedLoad.Sent> inFreeze = sent.stream()
                .filter(s -> s.startNanos() >= frozeAt && s.endNanos() <= thawAt).toList();
        long firstAckAfterThaw = sent.stream().filter(s -> s.acked() && s.endNanos() > thawAt)
                .mapToLong(SignedLoad.Sent::endNanos).min().orElseThrow();
        List<HealthWatch.Probe> probesInFreeze = probes.stream()
                .filter(p -> p.startNanos() >= frozeAt && p.startNanos() < thawAt).toList();
        // the first second: a check that began before the freeze may still say UP; and a probe answered after the
        // thaw may have run its check on the healed network, so it says nothing about the freeze
        List<HealthWatch.Probe> probesSettled = probesInFreeze.stream()
                .filter(p -> p.startNanos() >= frozeAt + Duration.ofSeconds(1).toNanos())
                .filter(p -> p.startNanos() + Duration.ofMillis(p.millis()).toNanos() <= thawAt).toList();
        Set<String> missing = FaultChecks.missing(postgres.dataSource(), acked);
        System.out.printf("FAULT dropped-packets %ds: sent=%d statuses=%s in-freeze=%d %s p50=%d ms max=%d ms at"
                        + " the client, the slowest 503 %d ms from arrival in the bundle;"
                        + " health probes in freeze=%d statuses=%s p50=%d ms max=%d ms, e.g. %s; first 2xx %d ms after"
                        + " the thaw; health 200 %d ms after it; every acked row processed %d ms after the load"
                        + " stopped; acked-but-missing=%d%n",
                FREEZE.toSeconds(), sent.size(), SignedLoad.byStatus(sent), inFreeze.size(),
                SignedLoad.byStatus(inFreeze), SignedLoad.percentileMicros(inFreeze, 50) / 1000,
                SignedLoad.percentileMicros(inFreeze, 100) / 1000, slowest503, probesInFreeze.size(),
                FaultChecks.probeStatuses(probesInFreeze), FaultChecks.probeMillis(probesInFreeze, 50),
                FaultChecks.probeMillis(probesInFreeze, 100),
                probesSettled.isEmpty() ? "-" : FaultChecks.oneLine(probesSettled.get(0).body()),
                Duration.ofNanos(firstAckAfterThaw - thawAt).toMillis(), healthUpMillis, drained.toMillis(),
                missing.size());

        assertThat(inFreeze).as("deliveries answered during the freeze").isNotEmpty()
                .allSatisfy(s -> assertThat(s.status()).as("answer during the freeze").isEqualTo(503));
        assertThat(slowest503).as("the slowest 503, from arrival to answer in the bundle, ms")
                .isLessThan(FaultChecks.METAKIT_ANSWER_WAIT.toMillis());
        // and none held before the bundle saw it (which its meter cannot time) until the network came back
        assertThat(sent.stream().filter(s -> s.startNanos() >= frozeAt && s.startNanos() < thawAt))
                .as("deliveries sent during the freeze, answered at the client within half the freeze")
                .allSatisfy(s -> assertThat(s.micros()).isLessThan(FREEZE.dividedBy(2).toNanos() / 1000));
        assertThat(probesInFreeze).as("health probes during the freeze, each answered without waiting on the network")
                .hasSizeGreaterThan(40)
                .allSatisfy(p -> assertThat(p.millis()).as(p.path()).isLessThanOrEqualTo(HEALTH_ANSWER_BOUND_MILLIS));
        assertThat(probesSettled).as("health during the freeze: DOWN, saying why").allSatisfy(p -> {
            assertThat(p.status()).as(p.path()).isEqualTo(503);
            assertThat(p.body()).contains("inbox-database").containsAnyOf("timed out after", "database unavailable");
        });
        assertThat(Duration.ofNanos(firstAckAfterThaw - thawAt)).as("first 2xx after the thaw")
                .isLessThan(FaultChecks.RECOVERY_BOUND);
        assertThat(missing).as("acked but missing").isEmpty();
    }
}
