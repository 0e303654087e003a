package dev.metakit.example.boot;

import dev.metakit.inbox.conformance.GivenSecrets;
import dev.metakit.inbox.conformance.RestartablePostgres;
import dev.metakit.inbox.sandbox.Sandbox;
import org.apache.camel.CamelContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import java.util.zip.GZIPInputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * This Spring Boot host keeps every secret it gives the bundle out of its log with the root logger at TRACE. Not the
 * default: the log level (TRACE instead of INFO) is what the test is about.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "logging.file.name=" + SecretsAtTraceBootTest.LOG_FILE,
        "logging.level.root=TRACE"})
@DirtiesContext
class SecretsAtTraceBootTest {
    static final String LOG_FILE = "target/boot-trace.log";
    private static final GivenSecrets SECRETS = GivenSecrets.random();
    private static final String ROTATION_KEY = rotationKey();
    private static final RestartablePostgres POSTGRES = new RestartablePostgres();
    private static final Sandbox SANDBOX = metakit();

    static {
        deleteLogsOfEarlierRuns();
    }

    @Autowired
    CamelContext camelContext;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("spring.datasource.url", POSTGRES::jdbcUrl);
        registry.add("spring.datasource.username", () -> RestartablePostgres.USER);
        registry.add("spring.datasource.password", SECRETS::databasePassword);
        registry.add("metakit.webhook.secret", SECRETS::webhookSecret);
        registry.add("metakit.webhook.secret-previous", SECRETS::previousSecret);
        registry.add("metakit.webhook.secret-key", () -> ROTATION_KEY);
        registry.add("metakit.api.url", () -> SANDBOX.apiBaseUrl().toString());
        registry.add("metakit.api.key", SECRETS::apiKey);
        registry.add("metakit.ops.token", SECRETS::opsToken);
        registry.add("metakit.accounts", () -> "1");
    }

    @Test
    void noSecretAppearsInAnyLogLineWithTheRootLoggerAtTrace() throws Exception {
        // the periodic reconcile's first round calls MetaKit with the API key
        await().atMost(Duration.ofSeconds(60)).until(() -> SANDBOX.apiCalls().total() > 0);
        camelContext.stop();

        List<String> secrets = new ArrayList<>(SECRETS.all());
        secrets.add(ROTATION_KEY);
        // logback gzips a rolled file on a thread of its own: an archive still being written reads short, so the log is
        // read again until every archive is whole
        AtomicReference<List<String>> read = new AtomicReference<>();
        await().atMost(Duration.ofSeconds(30)).ignoreExceptionsMatching(
                        e -> e instanceof IOException || e instanceof UncheckedIOException)
                .until(() -> {
                    read.set(logLines());
                    return true;
                });
        List<String> log = read.get();
        List<String> holding = log.stream().filter(line -> secrets.stream().anyMatch(line::contains)).toList();
        assertThat(log.size()).as("log lines written at TRACE").isGreaterThan(1000);
        // the one exception (docs/architecture.md "The same promises in every runtime"): Apache HttpClient, which the
        // MetaKit API calls go through, writes every request header it sends at DEBUG, the Authorization header too
        assertThat(holding).as("log lines holding a secret, but HttpClient's request headers")
                .allSatisfy(line -> assertThat(line)
                        .matches(".* DEBUG .* org\\.apache\\.hc\\.client5\\.http\\.(headers|wire) *: .*")
                        .contains("Authorization: Bearer " + SECRETS.apiKey()));
    }

    @AfterAll
    static void stop() throws IOException {
        SANDBOX.close();
        POSTGRES.close();
    }

    /**
     * Every line of the host's log: Boot's file appender rolls the file over at 10 MB, which TRACE reaches within the
     * test, so the lines are in the file and in its gzipped archives beside it.
     */
    private static List<String> logLines() throws IOException {
        Path log = Path.of(LOG_FILE);
        List<String> lines = new ArrayList<>();
        try (Stream<Path> files = Files.list(log.toAbsolutePath().getParent())) {
            for (Path archive : files.filter(f -> f.getFileName().toString().startsWith(log.getFileName() + "."))
                    .filter(f -> f.getFileName().toString().endsWith(".gz")).sorted().toList()) {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(
                        new GZIPInputStream(Files.newInputStream(archive)), StandardCharsets.UTF_8))) {
                    in.lines().forEach(lines::add);
                }
            }
        }
        lines.addAll(Files.readAllLines(log));
        return lines;
    }

    /** The log of an earlier run of this test, archives too, is not this run's. */
    private static void deleteLogsOfEarlierRuns() {
        Path log = Path.of(LOG_FILE);
        try (Stream<Path> files = Files.exists(log.toAbsolutePath().getParent())
                ? Files.list(log.toAbsolutePath().getParent()) : Stream.empty()) {
            for (Path earlier : files.filter(f -> f.getFileName().toString().startsWith(log.getFileName().toString()))
                    .toList()) {
                Files.delete(earlier);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String rotationKey() {
        byte[] key = new byte[32];
        new SecureRandom().nextBytes(key);
        return Base64.getEncoder().encodeToString(key);
    }

    private static Sandbox metakit() {
        try {
            return SECRETS.metakit(URI.create("http://127.0.0.1:9/hooks/metakit"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
