package dev.metakit.inbox.config;

import com.zaxxer.hikari.HikariDataSource;
import dev.metakit.inbox.db.InboxDatabase;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import org.apache.camel.spi.EventNotifier;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.config.Configurator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * camel-main creates every YAML bean twice (a pre-parse, then the load): a real boot still starts one pool, migrates
 * once and registers one metrics notifier, each boot has its own, and a stop closes the pool at once.
 */
class BeansStartOnceTest {
    /** Hikari's and Flyway's INFO lines count pools started and migrations run; application's log4j2 keeps them WARN */
    private static final List<String> COUNTED = List.of("com.zaxxer.hikari", "org.flywaydb");

    @BeforeEach
    void countPoolsAndMigrations() {
        COUNTED.forEach(logger -> Configurator.setLevel(logger, Level.INFO));
    }

    @AfterEach
    void quietAgain() {
        COUNTED.forEach(logger -> Configurator.setLevel(logger, Level.WARN));
    }

    @Test
    void aBootStartsOnePoolMigratesOnceAndRegistersOneNotifier() throws Exception {
        HikariDataSource pool;
        try (LogCapture log = LogCapture.atOrAbove(Level.INFO); RunningInbox inbox = RunningInbox.start()) {
            assertThat(count(log, "Database ready")).as("database started").isEqualTo(1);
            assertThat(count(log, "metakit-inbox - Start completed")).as("Hikari pools started").isEqualTo(1);
            assertThat(count(log, "Successfully validated")).as("Flyway migrations run").isEqualTo(1);
            long notifiers = inbox.camelContext().getManagementStrategy().getEventNotifiers().stream()
                    .map(EventNotifier::getClass).filter(c -> c.getSimpleName().equals("MetricsEventNotifier")).count();
            assertThat(notifiers).as("metrics notifiers").isEqualTo(1);
            pool = database(inbox).unwrap(HikariDataSource.class);
            assertThat(pool.isClosed()).isFalse();
        }
        assertThat(pool.isClosed()).as("the pool is closed when the bundle stops, not later").isTrue();
    }

    @Test
    void twoBootsInOneJvmEachHaveTheirOwnPool() throws Exception {
        try (RunningInbox first = RunningInbox.start()) {
            HikariDataSource firstPool = database(first).unwrap(HikariDataSource.class);
            HikariDataSource secondPool;
            try (RunningInbox second = RunningInbox.start()) {
                secondPool = database(second).unwrap(HikariDataSource.class);
                assertThat(secondPool).isNotSameAs(firstPool);
            }
            assertThat(secondPool.isClosed()).isTrue();
            try (Connection c = database(first).getConnection()) {
                assertThat(c.isValid(1)).as("the first boot still serves after the second stopped").isTrue();
            }
        }
    }

    private static InboxDatabase database(RunningInbox inbox) {
        return inbox.camelContext().getRegistry().lookupByNameAndType("inboxDataSource", InboxDatabase.class);
    }

    private static long count(LogCapture log, String text) {
        return log.lines().stream().filter(l -> l.contains(text)).count();
    }
}
