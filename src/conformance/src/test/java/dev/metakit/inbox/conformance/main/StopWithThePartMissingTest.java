package dev.metakit.inbox.conformance.main;

import dev.metakit.inbox.conformance.GivenSecrets;
import dev.metakit.inbox.conformance.RuntimeParts;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A camel-main host that left the bundle's RouteBuilder out (its own named instead) stops as a complete one does:
 * without a WARN or ERROR line (no graceful-shutdown timeout waited out for the periodic reconcile, whose route is
 * missing) and without a thread of the bundle's schedules left running to keep the JVM alive.
 */
class StopWithThePartMissingTest {
    private final GivenSecrets secrets = GivenSecrets.random();
    private RuntimeParts parts;

    @AfterEach
    void close() throws Exception {
        if (parts != null) {
            parts.close();
        }
    }

    @Test
    void aHostWithoutTheBundlesRouteBuilderStopsQuietlyAndLeavesNoScheduleRunning() throws Exception {
        parts = RuntimeParts.start(secrets);
        Properties settings = new Properties();
        settings.putAll(parts.settings());
        settings.put("camel.main.routes-builder-classes", HostRoutesInstead.class.getName());
        CamelMainHost host = CamelMainHost.start(parts.port(), settings);
        // started, and the periodic reconcile's first run (at startup) has met the missing route
        await().atMost(Duration.ofSeconds(30)).until(() -> host.log().contains("metakit-inbox is incomplete"));
        long before = host.log().lines().count();

        host.main.stop();

        List<String> warnings = host.log().lines().skip(before)
                .filter(line -> line.contains(" WARN ") || line.contains(" ERROR ")).toList();
        assertThat(warnings).as("WARN or ERROR lines while stopping").isEmpty();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(Thread.getAllStackTraces().keySet()
                .stream().filter(Thread::isAlive).filter(t -> !t.isDaemon())
                .map(Thread::getName).filter(name -> name.contains("Quartz") || name.contains("_Worker-")).toList())
                .as("non-daemon Quartz threads after the stop").isEmpty());
    }
}
