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
 * The bundle's migrations keep a history table of their own (metakit_schema_history) beside a host's: an install
 * migrated before that, with V1..V6 in Flyway's default flyway_schema_history, carries on; a host with its own
 * V1..V3 in the same schema keeps them, and neither history meets the other's versions.
 */
class InboxMigrationsTest {

    @Test
    void aDatabaseMigratedByV1ToV6InFlywaysDefaultHistoryCarriesOnWithItsRows() {
        DataSource db = newDatabase();
        int scripts = bundleScripts();
        // an install from before the bundle had its own history: its scripts V1..V6 in Flyway's default table
        Flyway.configure().dataSource(db).locations(InboxMigrations.LOCATION).target("6").load().migrate();
        exec(db, "insert into webhook_inbox (delivery_key, event, account_id, body) values"
                + " ('1764670530:kept', 'position.opened', 1, '{}')");

        MigrateResult result = InboxMigrations.migrate(db);

        assertThat(result.success).isTrue();
        assertThat(result.migrationsExecuted).as("only the scripts after V6: nothing applied twice")
                .isEqualTo(scripts - 6);
        assertThat(scalar(db, "select count(*) from metakit_schema_history where type = 'BASELINE' and version = '6'"))
                .isOne();
        assertThat(scalar(db, "select count(*) from webhook_inbox")).isOne();
        assertThat(scalar(db, "select count(*) from flyway_schema_history where success"))
                .as("the old history is left as it was").isEqualTo(6);
        // and the next start is a no-op on the bundle's own table
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
        assertThat(scalar(db, "select count(*) from webhook_inbox")).isZero();
        assertThat(scalar(db, "select count(*) from flyway_schema_history where success")).isEqualTo(3);
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
