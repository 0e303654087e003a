package dev.metakit.inbox.support;

import dev.metakit.inbox.db.InboxMigrations;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The tests empty every table of their database, so they never take the production settings and never run on a
 * database with data: {@code DATABASE_URL} / {@code METAKIT_DATABASE_URL} are ignored, and
 * {@code METAKIT_TEST_DATABASE_URL} naming a database that holds inbox rows stops the run before anything is touched.
 */
class TestDatabaseSafetyTest {

    @Test
    void aTestJvmGivenOnlyTheProductionVariablesLeavesThatDatabaseAlone() throws Exception {
        String production = databaseWithAnInboxRow();
        Path java = ChildJvm.java();
        ProcessBuilder pb = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                TestDatabaseProbe.class.getName()).redirectErrorStream(true);
        Map<String, String> env = ChildEnvironment.withoutBundleSettings(pb.environment());
        env.put("DATABASE_URL", production);
        env.put("METAKIT_DATABASE_URL", production);
        if (TestDatabase.user() != null) {
            env.put("DATABASE_USER", TestDatabase.user());
            env.put("METAKIT_DATABASE_USER", TestDatabase.user());
        }
        if (TestDatabase.password() != null) {
            env.put("DATABASE_PASSWORD", TestDatabase.password());
            env.put("METAKIT_DATABASE_PASSWORD", TestDatabase.password());
        }
        Process p = pb.start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();

        assertThat(p.exitValue()).as(output).isZero();
        assertThat(output).contains("test database: jdbc:postgresql://").doesNotContain("test database: " + production);
        assertThat(inboxRows(production)).isEqualTo(1);
    }

    @Test
    void aTestDatabaseUrlNamingADatabaseWithInboxRowsStopsTheRunAndTouchesNothing() throws Exception {
        String production = databaseWithAnInboxRow();

        assertThatThrownBy(() -> ExternalTestServer.fromEnvironment(testVariables(production)::get))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("METAKIT_TEST_DATABASE_URL names jdbc:postgresql://")
                .hasMessageContaining("which holds the inbox tables with rows (webhook_inbox)")
                .hasMessageContaining("never run on a database with data");
        assertThat(inboxRows(production)).isEqualTo(1);
    }

    @Test
    void onAnExternalServerTheRunGetsADatabaseOfItsOwnThatIsDroppedAfter() throws Exception {
        String entry = TestDatabase.createDatabase();
        InboxMigrations.migrate(TestDatabase.on(entry, TestDatabase.user(), TestDatabase.password()));
        // an entry database with the schema but no rows is fine: the run never writes there
        ExternalTestServer server = ExternalTestServer.fromEnvironment(testVariables(entry)::get).orElseThrow();

        String own = server.createDatabase();
        String name = own.substring(own.lastIndexOf('/') + 1).replaceAll("\\?.*", "");
        assertThat(name).matches("metakit_test_[0-9a-f]{12}");
        assertThat(databaseExists(name)).isTrue();

        server.dropCreated();
        assertThat(databaseExists(name)).isFalse();
        assertThat(databaseExists(entry.substring(entry.lastIndexOf('/') + 1).replaceAll("\\?.*", ""))).isTrue();
    }

    private static Map<String, String> testVariables(String url) {
        Map<String, String> env = new HashMap<>();
        env.put(ExternalTestServer.URL_VARIABLE, url);
        env.put(ExternalTestServer.USER_VARIABLE, TestDatabase.user());
        env.put(ExternalTestServer.PASSWORD_VARIABLE, TestDatabase.password());
        return env;
    }

    /** A database on the test server standing in for production: the bundle's schema and one inbox row. */
    private static String databaseWithAnInboxRow() throws SQLException {
        String url = TestDatabase.createDatabase();
        InboxMigrations.migrate(TestDatabase.on(url, TestDatabase.user(), TestDatabase.password()));
        try (Connection c = on(url).getConnection(); Statement s = c.createStatement()) {
            s.execute("insert into metakit.webhook_inbox (delivery_key, event, account_id, body) values"
                    + " ('1764670530:production-row', 'position.opened', 1, '{}')");
        }
        return url;
    }

    private static long inboxRows(String url) {
        return Long.parseLong(TestDatabase.strings(on(url), "select count(*) from metakit.webhook_inbox").iterator().next());
    }

    private static boolean databaseExists(String name) {
        return TestDatabase.scalar("select count(*) from pg_database where datname = '" + name + "'") == 1;
    }

    private static DataSource on(String url) {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        ds.setUser(TestDatabase.user());
        ds.setPassword(TestDatabase.password());
        return ds;
    }
}
