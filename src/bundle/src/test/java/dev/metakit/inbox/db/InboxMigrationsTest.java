package dev.metakit.inbox.db;

import dev.metakit.inbox.support.TestDatabase;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;

import static dev.metakit.inbox.support.TestDatabase.exec;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bundle's migrations keep a schema and a history table of their own (metakit.metakit_schema_history) beside a
 * host's Flyway on public: whichever runs first, and a host's Flyway added later, neither meets the other's versions
 * or tables. Earlier installs: {@link EarlierInstallUpgradeTest}.
 */
class InboxMigrationsTest {

    @Test
    void aHostsFlywayAddedAfterTheBundleFindsItsSchemaEmptyAndNeedsNoBaseline(@TempDir Path hostMigrations)
            throws Exception {
        DataSource db = newDatabase();
        InboxMigrations.migrate(db);
        Files.writeString(hostMigrations.resolve("V1__accounts.sql"), "create table accounts (id bigint primary key);");

        // Flyway's defaults, as a host's: no baseline-on-migrate, the connection's schema (public)
        MigrateResult host = Flyway.configure().dataSource(db).locations("filesystem:" + hostMigrations).load()
                .migrate();

        assertThat(host.migrationsExecuted).isOne();
        assertThat(scalar(db, "select count(*) from public.accounts")).isZero();
        assertThat(scalar(db, "select count(*) from metakit.accounts")).isZero();
        assertThat(InboxMigrations.migrate(db).migrationsExecuted).isZero();
    }

    @Test
    void aHostWithItsOwnV1ToV3InTheSameSchemaKeepsThemAndGetsTheBundlesTablesBeside(@TempDir Path hostMigrations)
            throws Exception {
        Files.writeString(hostMigrations.resolve("V1__orders.sql"), "create table orders (id bigint primary key);");
        Files.writeString(hostMigrations.resolve("V2__order_lines.sql"),
                "create table order_lines (order_id bigint references orders (id), line int);");
        Files.writeString(hostMigrations.resolve("V3__customers.sql"), "create table customers (id bigint);");
        DataSource db = newDatabase();
        Flyway host = Flyway.configure().dataSource(db).locations("filesystem:" + hostMigrations).load();
        host.migrate();

        MigrateResult bundle = InboxMigrations.migrate(db);

        assertThat(bundle.success).isTrue();
        assertThat(bundle.migrationsExecuted).as("every script of the bundle's despite the host's V1..V3")
                .isEqualTo(bundleScripts());
        assertThat(scalar(db, "select count(*) from metakit.webhook_inbox")).isZero();
        assertThat(scalar(db, "select count(*) from public.flyway_schema_history where success")).isEqualTo(3);
        // the host's Flyway still validates and finds nothing to do: it never sees the bundle's scripts
        host.validate();
        assertThat(host.migrate().migrationsExecuted).isZero();
        // a host migration added later is the host's V4, unaffected by the bundle's V4
        Files.writeString(hostMigrations.resolve("V4__invoices.sql"), "create table invoices (id bigint);");
        assertThat(host.migrate().migrationsExecuted).isOne();
        assertThat(InboxMigrations.migrate(db).migrationsExecuted).isZero();
    }

    private static DataSource newDatabase() {
        return TestDatabase.on(TestDatabase.createDatabase(), TestDatabase.user(), TestDatabase.password());
    }

    /** How many migration scripts the bundle ships: what a new database gets. */
    private static int bundleScripts() {
        return Flyway.configure().dataSource(newDatabase()).locations(InboxMigrations.LOCATION).load().info()
                .pending().length;
    }
}
