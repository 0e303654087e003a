package dev.metakit.inbox.config;

import dev.metakit.inbox.db.InboxMigrations;
import dev.metakit.inbox.support.ChildBoot;
import dev.metakit.inbox.support.ChildEnvironment;
import dev.metakit.inbox.support.ChildJvm;
import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.HealthProbe;
import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

import java.io.IOException;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code ./run.sh} as a user runs it, on a copy of the project folder (run.sh, application.properties, routes/, the
 * built jar): without METAKIT_WEBHOOK_SECRET in the environment it asks for the dev run, and sandbox mode follows only
 * when none of the user's own settings is configured anywhere. A database the user configured, in the properties
 * file or through Camel's derived METAKIT_DATABASE_URL, keeps every row; the sandbox only ever recreates its own
 * {@code data/sandbox-postgres}.
 */
class SandboxModeIT {
    private static final Path PROJECT = RunningInbox.basedir();
    private static final String DELIVERY_KEY = "1764670530:users-own-row";

    @TempDir
    Path copy;

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private final int httpPort = RunningInbox.freePort();
    private final int managementPort = RunningInbox.freePort();
    private String usersDatabase;
    private Process run;
    private Path log;

    @BeforeEach
    void usersDatabaseWithARow() throws Exception {
        usersDatabase = TestDatabase.createDatabase();
        InboxMigrations.migrate(TestDatabase.on(usersDatabase, TestDatabase.user(), TestDatabase.password()));
        exec("insert into webhook_inbox (delivery_key, event, account_id, body, processed_at) values ('"
                + DELIVERY_KEY + "', 'webhook.test', 7, '{}', now())");
        log = copy.resolve("run.log");
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (run != null && run.isAlive()) {
            // SIGTERM: a sandbox run, were one started by mistake, stops its embedded PostgreSQL too
            run.destroy();
            if (!run.waitFor(30, TimeUnit.SECONDS)) {
                run.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void databaseApiAndSecretConfiguredOnlyInApplicationPropertiesAreUsedAndTheDatabaseKeepsItsRows()
            throws Exception {
        try (FakeMetaKit metakit = new FakeMetaKit()) {
            String secret = "whsec_users_own_secret_from_the_file";
            projectCopy(Map.of(
                    "metakit.database.url", usersDatabase,
                    "metakit.database.user", TestDatabase.user(),
                    "metakit.database.password", TestDatabase.password() == null ? "" : TestDatabase.password(),
                    "metakit.api.url", metakit.url(),
                    "metakit.api.key", FakeMetaKit.API_KEY,
                    "metakit.webhook.secret", secret));

            startRunSh(Map.of());

            assertThat(rowKeys()).containsExactly(DELIVERY_KEY);
            String output = Files.readString(log);
            assertThat(output).contains("no sandbox mode, this run uses your settings: metakit.database.url"
                    + " (a properties file or -Dmetakit.database.url), metakit.api.url (a properties file"
                    + " or -Dmetakit.api.url)").doesNotContain("SANDBOX MODE").doesNotContain(secret)
                    .contains("Database ready: jdbc:postgresql://");
            assertThat(copy.resolve("data/sandbox-postgres")).doesNotExist();
        }
    }

    @Test
    void theDatabaseInCamelsDerivedEnvironmentVariableIsUsedAndKeepsItsRows() throws Exception {
        projectCopy(Map.of());
        // TestDatabase's URL names its user in the URL (embedded) or needs the derived user/password names too
        Map<String, String> env = new LinkedHashMap<>();
        env.put("METAKIT_DATABASE_URL", usersDatabase);
        if (TestDatabase.user() != null) {
            env.put("METAKIT_DATABASE_USER", TestDatabase.user());
        }
        if (TestDatabase.password() != null) {
            env.put("METAKIT_DATABASE_PASSWORD", TestDatabase.password());
        }

        startRunSh(env);

        assertThat(rowKeys()).containsExactly(DELIVERY_KEY);
        assertThat(Files.readString(log))
                .contains("no sandbox mode, this run uses your settings: metakit.database.url (METAKIT_DATABASE_URL)")
                .doesNotContain("SANDBOX MODE").contains("Database ready: jdbc:postgresql://");
        assertThat(copy.resolve("data/sandbox-postgres")).doesNotExist();
        // the dev run's banner (no secret given) names that database, not the embedded one, and no password
        await().atMost(Duration.ofSeconds(10)).until(() -> Files.readString(log).contains("Dev secret"));
        String banner = Files.readString(log);
        assertThat(banner).contains("Database         : PostgreSQL at jdbc:postgresql://")
                .doesNotContain("Database         : embedded");
        if (TestDatabase.password() != null) {
            assertThat(banner).doesNotContain(TestDatabase.password());
        }
    }

    @Test
    void withNothingConfiguredTheSandboxRunsOnItsOwnDatabaseAndLeavesTheUsersEmbeddedDataAlone() throws Exception {
        projectCopy(Map.of());
        Path usersEmbedded = Files.createDirectories(copy.resolve("data/postgres"));
        Files.writeString(usersEmbedded.resolve("PG_VERSION"), "16\n");

        startRunSh(Map.of());

        assertThat(Files.readString(log)).contains("SANDBOX MODE")
                .contains("Database ready: embedded PostgreSQL, data in data/sandbox-postgres");
        assertThat(copy.resolve("data/sandbox-postgres/PG_VERSION")).exists();
        assertThat(usersEmbedded.resolve("PG_VERSION")).hasContent("16");
    }

    @Test
    void sigtermToTheRunsProcessGroupStopsItWithoutAWarning() throws Exception {
        projectCopy(Map.of());
        // systemd and a shell's kill of a job signal every process of the group, the embedded PostgreSQL's
        // starter included: setsid gives the run a group of its own, as a service manager does
        startRunSh(Map.of(), "setsid");
        // the outlet's first line ("outlet account=<id> - change ..."), the account from the logging context
        Pattern outletLine = Pattern.compile(" outlet account=[0-9]+ - change ");
        await().atMost(Duration.ofSeconds(60)).until(() -> outletLine.matcher(Files.readString(log)).find());
        // the progress line ends with the feed's own check: the changes the outlet got, each account's in order (a
        // change the outlet got twice, at least once being the design, is counted: "1 sent again")
        Pattern feedChecked =
                Pattern.compile("^sandbox: .* \\| feed: [1-9][0-9]* changes, in order: yes(, [0-9]+ sent again)?$");
        await().atMost(Duration.ofSeconds(60)).until(() -> Files.readAllLines(log).stream()
                .anyMatch(line -> feedChecked.matcher(line).matches()));
        assertThat(Files.readAllLines(log)).noneMatch(line -> line.contains("in order: NO"));
        long startedLines = Files.readAllLines(log).size();

        new ProcessBuilder("kill", "-TERM", "--", "-" + run.pid()).inheritIO().start().waitFor();

        assertThat(run.waitFor(60, TimeUnit.SECONDS)).as("the run stops within 60 s of SIGTERM").isTrue();
        List<String> afterSignal = Files.readAllLines(log).stream().skip(startedLines).toList();
        assertThat(afterSignal).anyMatch(line -> line.contains("(metakit-inbox) shutdown in"));
        assertThat(afterSignal).noneMatch(line -> line.contains(" WARN ") || line.contains(" ERROR "));
        // the embedded PostgreSQL stopped after the context, not left running
        assertThat(copy.resolve("data/sandbox-postgres/postmaster.pid")).doesNotExist();
    }

    /** The files ./run.sh needs, the properties file with {@code settings} put in place of the shipped values. */
    private void projectCopy(Map<String, String> settings) throws IOException {
        Files.copy(PROJECT.resolve("run.sh"), copy.resolve("run.sh"));
        StringBuilder properties = new StringBuilder();
        for (String line : Files.readAllLines(PROJECT.resolve("application.properties"))) {
            String key = line.contains("=") && !line.startsWith("#") ? line.substring(0, line.indexOf('=')).trim()
                    : null;
            properties.append(key != null && settings.containsKey(key) ? key + " = " + settings.get(key) : line)
                    .append('\n');
        }
        assertThat(settings.keySet()).allMatch(k -> properties.indexOf(k + " = " + settings.get(k)) >= 0);
        Files.writeString(copy.resolve("application.properties"), properties);
        Files.createDirectories(copy.resolve("routes"));
        try (Stream<Path> routes = Files.list(PROJECT.resolve("routes"))) {
            for (Path route : routes.toList()) {
                Files.copy(route, copy.resolve("routes").resolve(route.getFileName()));
            }
        }
        Files.createDirectories(copy.resolve("src"));
        Files.writeString(copy.resolve("pom.xml"), "");
        // last, so that nothing is newer than the jar and run.sh does not rebuild it
        Files.createDirectories(copy.resolve("target"));
        Files.createSymbolicLink(copy.resolve("target/metakit-inbox.jar"), InboxProcess.jar().toAbsolutePath());
    }

    /** Starts ./run.sh (it asks for the dev run: no METAKIT_WEBHOOK_SECRET here) and waits until it serves. */
    private void startRunSh(Map<String, String> env, String... launcher) throws IOException {
        List<String> command = new ArrayList<>(List.of(launcher));
        command.addAll(List.of("bash", copy.resolve("run.sh").toString()));
        ProcessBuilder pb = new ProcessBuilder(command).directory(copy.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        Map<String, String> environment = ChildEnvironment.withoutBundleSettings(pb.environment());
        // run.sh takes JAVA_HOME first: the child JDK's, so ./run.sh runs on the JVM the process tests run on
        Path javaHome = ChildJvm.java().toRealPath().getParent().getParent();
        environment.put("JAVA_HOME", javaHome.toString());
        environment.put("PATH", javaHome.resolve("bin") + ":" + environment.get("PATH"));
        environment.put("JAVA_OPTS", "-Xmx256m " + String.join(" ", ChildJvm.OPTIONS));
        environment.put("HTTP_HOST", "127.0.0.1");
        environment.put("HTTP_PORT", String.valueOf(httpPort));
        environment.put("MANAGEMENT_HOST", "127.0.0.1");
        environment.put("MANAGEMENT_PORT", String.valueOf(managementPort));
        environment.putAll(env);
        run = pb.start();
        // the context has started (the management port answers from the start of the context's start on), so
        // whatever startup does to a database is done
        // bounded by the CPU the run spends (an embedded PostgreSQL and the jar), not the clock: a loaded machine
        // stretches a boot's wall time many times
        ChildBoot.awaitReady(run, "./run.sh", log, Duration.ofSeconds(120), Duration.ofMillis(200),
                () -> healthStatus() > 0 && Files.readString(log).contains("(metakit-inbox) started in"));
        // run.sh's line saying which Java it runs: the one the process tests' children run on (-Dmetakit.it.java)
        assertThat(Files.readString(log)).contains("Java " + ChildJvm.javaVersion() + " (" + javaHome + ": JAVA_HOME)");
    }

    private int healthStatus() {
        return HealthProbe.status(http, managementPort, Duration.ofSeconds(2));
    }

    private Set<String> rowKeys() {
        return TestDatabase.strings(usersDataSource(), "select delivery_key from webhook_inbox");
    }

    private void exec(String sql) {
        try (Connection c = usersDataSource().getConnection(); Statement s = c.createStatement()) {
            s.execute(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    private PGSimpleDataSource usersDataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(usersDatabase);
        ds.setUser(TestDatabase.user());
        ds.setPassword(TestDatabase.password());
        ds.setCurrentSchema(dev.metakit.inbox.db.InboxSchema.DEFAULT);
        return ds;
    }
}
