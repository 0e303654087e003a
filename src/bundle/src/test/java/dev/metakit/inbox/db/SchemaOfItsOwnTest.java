package dev.metakit.inbox.db;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Set;

import static dev.metakit.inbox.support.TestDatabase.exec;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static dev.metakit.inbox.support.TestDatabase.strings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The bundle keeps its tables, sequences and migration history in a schema of its own ({@code metakit}, the default
 * of metakit.database.schema), on its own pool and on a host's DataSource alike: a host's tables of the same names in
 * public never meet them, and a host's connections keep their own search_path.
 */
class SchemaOfItsOwnTest {
    private static final Set<String> BUNDLE_TABLES = Set.of("webhook_inbox", "positions", "accounts",
            "webhook_endpoints", "reconcile_runs", "inbox_account_backoff", "inbox_instances", "position_changes",
            "position_change_seqs", "feed_owners", InboxMigrations.HISTORY_TABLE);
    private static final String APP_PASSWORD = "app-password";

    @Test
    void aFreshInstallHasEverythingInTheSchemaAndNothingInPublic() throws Exception {
        String url = TestDatabase.createDatabase();
        DataSource db = TestDatabase.on(url, TestDatabase.user(), TestDatabase.password());

        try (InboxDatabase inbox = ownPool(url)) {
            inbox.start();
            try (Connection c = inbox.getConnection(); Statement s = c.createStatement()) {
                s.execute("insert into webhook_inbox (delivery_key, event, account_id, body)"
                        + " values ('1764670530:fresh', 'position.opened', 1, '{}')");
            }
        }

        assertThat(strings(db, "select tablename from pg_tables where schemaname = 'metakit'"))
                .containsAll(BUNDLE_TABLES);
        assertThat(strings(db, "select relname from pg_class where relnamespace = 'public'::regnamespace"))
                .as("tables, sequences, indexes in public").isEmpty();
        assertThat(strings(db, "select proname from pg_proc where pronamespace = 'public'::regnamespace"))
                .as("functions in public").isEmpty();
        assertThat(strings(db, "select relname from pg_class where relkind = 'S'"
                + " and relnamespace = 'metakit'::regnamespace"))
                .contains("reconcile_runs_run_id_seq", "position_changes_change_id_seq");
        assertThat(scalar(db, "select count(*) from metakit.webhook_inbox")).isOne();
        assertThat(scalar(db, "select count(*) from metakit.metakit_schema_history where version is null"
                + " or version = '0' or type <> 'SQL'")).as("a baseline or schema-creation row").isZero();
        assertThat(scalar(db, "select count(*) from metakit.metakit_schema_history where success"))
                .isEqualTo(bundleScripts());
    }

    @Test
    void hostTablesNamedAccountsPositionsAndWebhookInboxInPublicKeepTheirRowsBesideTheBundlesOnItsOwnPool()
            throws Exception {
        String url = TestDatabase.createDatabase();
        DataSource db = TestDatabase.on(url, TestDatabase.user(), TestDatabase.password());
        hostTables(db);

        try (InboxDatabase inbox = ownPool(url)) {
            inbox.start();
            storeOneDeliveryAndOneAccount(inbox);
        }

        assertHostTablesUntouched(db);
        assertThat(scalar(db, "select count(*) from metakit.webhook_inbox")).isOne();
        assertThat(scalar(db, "select count(*) from metakit.accounts")).isOne();
    }

    @Test
    void onAHostsDataSourceTheBundleUsesItsSchemaAndGivesEveryConnectionBackWithTheHostsSearchPath()
            throws Exception {
        String url = TestDatabase.createDatabase();
        // the host's pool: two connections (Flyway's least), both of them checked after each step
        try (HikariDataSource host = hostPool(url)) {
            hostTables(host);
            List<String> hostPath = searchPaths(host);
            assertThat(hostPath).containsOnly("\"$user\", public");
            try (DefaultCamelContext context = new DefaultCamelContext()) {
                InboxDatabase inbox = HostDataSourceTest.onHostPool(context, host);
                inbox.start();
                assertThat(searchPaths(host)).as("after the migration").isEqualTo(hostPath);

                storeOneDeliveryAndOneAccount(inbox);
                assertThat(searchPaths(host)).isEqualTo(hostPath);
                // a transaction the bundle rolls back, and one it leaves open: the host's path comes back either way
                try (Connection c = inbox.getConnection()) {
                    c.setAutoCommit(false);
                    c.createStatement().execute("delete from webhook_inbox");
                    c.rollback();
                }
                try (Connection c = inbox.getConnection()) {
                    c.setAutoCommit(false);
                    c.createStatement().execute("delete from accounts");
                }
                assertThat(searchPaths(host)).isEqualTo(hostPath);
                assertThat(TestDatabase.scalar(host, "select count(*) from metakit.accounts"))
                        .as("left open, rolled back").isOne();
                inbox.close();
            }
            assertHostTablesUntouched(host);
            assertThat(TestDatabase.scalar(host, "select count(*) from metakit.webhook_inbox")).isOne();
        }
    }

    @Test
    void aRoleThatMayNotCreateTheSchemaStopsStartupWithOneLineSayingWhatToRun() throws Exception {
        String url = TestDatabase.createDatabase();
        DataSource owner = TestDatabase.on(url, TestDatabase.user(), TestDatabase.password());
        String role = loginRole(owner);

        try (InboxDatabase inbox = ownPool(url, role)) {
            assertThatThrownBy(inbox::start).isInstanceOf(ConfigurationException.class)
                    .hasMessage("the database role " + role + " may not create the schema metakit that holds the"
                            + " bundle's tables: as the database's owner run \"create schema metakit authorization "
                            + role + "\" (or \"grant create on database " + url.replaceAll(".*/|\\?.*", "") + " to "
                            + role + "\"), or set metakit.database.schema (METAKIT_DATABASE_SCHEMA) to a schema it may"
                            + " use");
        }

        // what the line says to run is enough
        exec(owner, "create schema metakit authorization " + role);
        try (InboxDatabase inbox = ownPool(url, role)) {
            inbox.start();
            storeOneDeliveryAndOneAccount(inbox);
        }
        assertThat(scalar(owner, "select count(*) from metakit.webhook_inbox")).isOne();
    }

    @Test
    void aSchemaAnOperatorMadeWithoutGrantingItsUseStopsStartupWithOneLineSayingWhatToGrant() throws Exception {
        String url = TestDatabase.createDatabase();
        DataSource owner = TestDatabase.on(url, TestDatabase.user(), TestDatabase.password());
        String role = loginRole(owner);
        exec(owner, "create schema metakit");

        try (InboxDatabase inbox = ownPool(url, role)) {
            assertThatThrownBy(inbox::start).isInstanceOf(ConfigurationException.class)
                    .hasMessage("the database role " + role + " may not use the schema metakit that holds the"
                            + " bundle's tables: as its owner run \"grant usage, create on schema metakit to " + role
                            + "\", or set metakit.database.schema (METAKIT_DATABASE_SCHEMA) to a schema it may use");
        }
    }

    @Test
    void aSchemaThatHoldsTablesOfSomeoneElseIsRefusedInOneLine() throws Exception {
        String url = TestDatabase.createDatabase();
        DataSource db = TestDatabase.on(url, TestDatabase.user(), TestDatabase.password());
        exec(db, "create schema metakit");
        exec(db, "create table metakit.invoices (id bigint)");

        try (InboxDatabase inbox = ownPool(url)) {
            assertThatThrownBy(inbox::start).isInstanceOf(ConfigurationException.class)
                    .hasMessage("the schema metakit holds tables that are not the bundle's [invoices]: set"
                            + " metakit.database.schema (METAKIT_DATABASE_SCHEMA) to a schema of its own");
        }
        assertThat(strings(db, "select tablename from pg_tables where schemaname = 'metakit'"))
                .containsExactly("invoices");
    }

    @Test
    void aSchemaNameThatIsNoPlainIdentifierIsAConfigurationError() {
        for (String bad : List.of("Metakit", "metakit; drop table x", "pg_inbox", "1inbox", "meta-kit")) {
            assertThatThrownBy(() -> new InboxDatabase().setSchema(bad)).as(bad)
                    .isInstanceOf(ConfigurationException.class)
                    .hasMessageStartingWith("metakit.database.schema (METAKIT_DATABASE_SCHEMA) must be a lower-case"
                            + " SQL identifier");
        }
        assertThat(InboxSchema.of(" ").name()).isEqualTo("metakit");
        assertThat(InboxSchema.of("inbox_2").name()).isEqualTo("inbox_2");
    }

    @Test
    void aSchemaOfAnotherNameHoldsTheTablesWhenConfigured() throws Exception {
        String url = TestDatabase.createDatabase();
        DataSource db = TestDatabase.on(url, TestDatabase.user(), TestDatabase.password());
        try (InboxDatabase inbox = ownPool(url)) {
            inbox.setSchema("inbox");
            inbox.start();
            storeOneDeliveryAndOneAccount(inbox);
        }
        assertThat(scalar(db, "select count(*) from inbox.webhook_inbox")).isOne();
        assertThat(scalar(db, "select count(*) from pg_namespace where nspname = 'metakit'")).isZero();
    }

    /** The host's own tables, named as the bundle's are, with rows and columns of the host's. */
    static void hostTables(DataSource host) {
        exec(host, "create table public.accounts (id bigint primary key, owner text)");
        exec(host, "create table public.positions (id bigint primary key, label text)");
        exec(host, "create table public.webhook_inbox (id bigint primary key, source text)");
        exec(host, "insert into public.accounts values (1, 'host')");
        exec(host, "insert into public.positions values (1, 'host')");
        exec(host, "insert into public.webhook_inbox values (1, 'host')");
    }

    static void assertHostTablesUntouched(DataSource host) {
        for (String table : List.of("accounts", "positions", "webhook_inbox")) {
            assertThat(TestDatabase.rows(host, "select * from public." + table)).as(table)
                    .containsExactly(java.util.Map.of("id", 1L, table.equals("accounts") ? "owner"
                            : table.equals("positions") ? "label" : "source", "host"));
        }
    }

    private static void storeOneDeliveryAndOneAccount(DataSource inbox) throws Exception {
        try (Connection c = inbox.getConnection(); Statement s = c.createStatement()) {
            s.execute("insert into webhook_inbox (delivery_key, event, account_id, body)"
                    + " values ('1764670530:beside', 'position.opened', 7, '{}')");
            s.execute("insert into accounts (account_id) values (7)");
        }
    }

    private static InboxDatabase ownPool(String url) {
        InboxDatabase inbox = new InboxDatabase();
        inbox.setCamelContext(new DefaultCamelContext());
        inbox.setUrl(url);
        inbox.setUser(TestDatabase.user());
        inbox.setPassword(TestDatabase.password());
        inbox.setPoolSize(2);
        return inbox;
    }

    /** The bundle's own pool on {@code url} as {@code role}, a role of {@link #loginRole}. */
    private static InboxDatabase ownPool(String url, String role) {
        InboxDatabase inbox = ownPool(url);
        inbox.setUser(role);
        inbox.setPassword(APP_PASSWORD);
        return inbox;
    }

    /** A new login role, with the rights PostgreSQL gives any role on a database: CONNECT and TEMP, not CREATE. */
    private static String loginRole(DataSource owner) {
        String role = "inbox_app_" + Long.toHexString(System.nanoTime());
        exec(owner, "create role " + role + " login password '" + APP_PASSWORD + "'");
        return role;
    }

    private static HikariDataSource hostPool(String url) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setUsername(TestDatabase.user());
        config.setPassword(TestDatabase.password());
        config.setMaximumPoolSize(2);
        return new HikariDataSource(config);
    }

    /** The search_path of each of the pool's two connections, borrowed together. */
    private static List<String> searchPaths(DataSource pool) throws Exception {
        try (Connection a = pool.getConnection(); Connection b = pool.getConnection()) {
            return List.of(searchPath(a), searchPath(b));
        }
    }

    private static String searchPath(Connection c) throws Exception {
        try (Statement s = c.createStatement(); var rs = s.executeQuery("show search_path")) {
            rs.next();
            return rs.getString(1);
        }
    }

    private static long bundleScripts() {
        return org.flywaydb.core.Flyway.configure().locations(InboxMigrations.LOCATION)
                .dataSource(TestDatabase.on(TestDatabase.createDatabase(), TestDatabase.user(), TestDatabase.password()))
                .load().info().pending().length;
    }
}
