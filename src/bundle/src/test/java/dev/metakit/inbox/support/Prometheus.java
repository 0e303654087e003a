package dev.metakit.inbox.support;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.awaitility.Awaitility.await;

/**
 * A real Prometheus (Debian's {@code prometheus} package), started for a test: on a free port, with a data directory of
 * its own, scraping one target every {@link #SCRAPE_INTERVAL} and evaluating a rules file as often, and queried over
 * its HTTP API. Its log is kept in {@code target/prometheus-<port>.log}.
 */
public final class Prometheus implements AutoCloseable {
    /** the job name the shipped rules expect (ops/prometheus/metakit-inbox.rules.yml) */
    public static final String JOB = "metakit-inbox";
    public static final Duration SCRAPE_INTERVAL = Duration.ofSeconds(1);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path home;
    private final int port;
    private final Process process;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private Prometheus(Path home, int port, Process process) {
        this.home = home;
        this.port = port;
        this.process = process;
    }

    /**
     * Debian's {@code promtool} or {@code prometheus}. Where it is missing the test is SKIPPED with a line saying so,
     * as the ops page's browser test is without chromium; under CI ({@code CI=true}, which .ci/run runs with) it fails:
     * .ci/run installs the package, so its absence there is a broken build, not a machine without it.
     */
    public static Path program(String name) {
        Optional<Path> found = Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .filter(dir -> !dir.isEmpty())
                .map(dir -> Path.of(dir, name)).filter(Files::isExecutable).findFirst();
        if (found.isPresent()) {
            return found.get();
        }
        String missing = name + " is not on the PATH: apt-get install prometheus (Debian's package, 2.42; .ci/run"
                + " installs it)";
        if ("true".equalsIgnoreCase(System.getenv("CI"))) {
            Assertions.fail("CI=true and " + missing);
        }
        Assumptions.abort("SKIPPED: " + missing);
        throw new AssertionError("unreachable");
    }

    /** Starts Prometheus scraping {@code metricsUri} as job {@link #JOB} with {@code rules} loaded; returns once ready. */
    public static Prometheus scraping(URI metricsUri, String rules) throws IOException {
        Path binary = program("prometheus");
        Path home = Files.createTempDirectory("prometheus-");
        Files.writeString(home.resolve("rules.yml"), rules);
        Files.writeString(home.resolve("prometheus.yml"), """
                global:
                  scrape_interval: %1$s
                  scrape_timeout: %1$s
                  evaluation_interval: %1$s
                rule_files:
                  - rules.yml
                scrape_configs:
                  - job_name: %2$s
                    metrics_path: %3$s
                    static_configs:
                      - targets: ["%4$s:%5$d"]
                """.formatted(SCRAPE_INTERVAL.toMillis() + "ms", JOB, metricsUri.getPath(), metricsUri.getHost(),
                metricsUri.getPort()));
        int port = TestPorts.free();
        Path log = RunningInbox.basedir().resolve("target").resolve("prometheus-" + port + ".log");
        Files.createDirectories(log.getParent());
        Process process = new ProcessBuilder(binary.toString(),
                "--config.file=" + home.resolve("prometheus.yml"),
                "--storage.tsdb.path=" + home.resolve("data"),
                "--web.listen-address=127.0.0.1:" + port)
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        Prometheus prometheus = new Prometheus(home, port, process);
        try {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).ignoreExceptions()
                    .until(() -> {
                        if (!process.isAlive()) {
                            throw new IllegalStateException("prometheus exited: " + Files.readString(log));
                        }
                        return prometheus.get("/-/ready").statusCode() == 200;
                    });
        } catch (RuntimeException e) {
            prometheus.close();
            throw e;
        }
        return prometheus;
    }

    /** The active alerts ({@code /api/v1/alerts}): pending and firing; resolved ones are not listed. */
    public List<Alert> alerts() throws IOException, InterruptedException {
        List<Alert> alerts = new ArrayList<>();
        for (JsonNode a : api("/api/v1/alerts").path("alerts")) {
            Map<String, String> labels = JSON.convertValue(a.path("labels"), JSON.getTypeFactory()
                    .constructMapType(Map.class, String.class, String.class));
            alerts.add(new Alert(labels.get("alertname"), a.path("state").asText(), labels));
        }
        return alerts;
    }

    /** Whether an alert of that name is firing with these labels among its own. */
    public boolean firing(String alertname, Map<String, String> labels) throws IOException, InterruptedException {
        return alerts().stream().anyMatch(a -> a.name().equals(alertname) && a.state().equals("firing")
                && a.labels().entrySet().containsAll(labels.entrySet()));
    }

    /** Whether no alert of that name is active (neither pending nor firing). */
    public boolean inactive(String alertname) throws IOException, InterruptedException {
        return alerts().stream().noneMatch(a -> a.name().equals(alertname));
    }

    /** The series an instant query returns now (its {@code data.result}). */
    public JsonNode query(String promql) throws IOException, InterruptedException {
        JsonNode data = api("/api/v1/query?query=" + URLEncoder.encode(promql, StandardCharsets.UTF_8));
        return data.path("result");
    }

    /** The values of a label on the series matching {@code match} ({@code /api/v1/label/<name>/values}). */
    public List<String> labelValues(String label, String match) throws IOException, InterruptedException {
        List<String> values = new ArrayList<>();
        api("/api/v1/label/" + label + "/values?match[]=" + URLEncoder.encode(match, StandardCharsets.UTF_8))
                .forEach(v -> values.add(v.asText()));
        return values;
    }

    /** The scrape target's health as Prometheus last saw it ("up", "down", "unknown"). */
    public String targetHealth() throws IOException, InterruptedException {
        JsonNode targets = api("/api/v1/targets").path("activeTargets");
        return targets.isEmpty() ? "none" : targets.get(0).path("health").asText();
    }

    private JsonNode api(String pathAndQuery) throws IOException, InterruptedException {
        HttpResponse<String> response = get(pathAndQuery);
        JsonNode body = JSON.readTree(response.body());
        if (response.statusCode() != 200 || !"success".equals(body.path("status").asText())) {
            throw new IllegalStateException(pathAndQuery + " answered " + response.statusCode() + ": " + response.body());
        }
        return body.path("data");
    }

    private HttpResponse<String> get(String pathAndQuery) throws IOException, InterruptedException {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery))
                .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    /**
     * The rules with every duration divided by {@code factor}: the {@code for:} of each alert and every range of its
     * expressions ({@code [5m]}), so that a test sees in seconds what production sees in minutes, with the rules'
     * logic unchanged. The scrape and evaluation intervals are the test's own (one second), which the scaled ranges
     * still hold several samples of.
     */
    public static String timeScaled(String rules, int factor) {
        Matcher m = Pattern.compile("(\\bfor: |\\[)(\\d+)([smh])\\b").matcher(rules);
        StringBuilder out = new StringBuilder();
        while (m.find()) {
            long seconds = Long.parseLong(m.group(2)) * switch (m.group(3)) {
                case "s" -> 1;
                case "m" -> 60;
                default -> 3600;
            };
            long scaled = Math.max(1, seconds / factor);
            m.appendReplacement(out, Matcher.quoteReplacement(m.group(1) + scaled + "s"));
        }
        m.appendTail(out);
        return out.toString();
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> paths = Files.walk(home)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One active alert: its name, state (pending, firing) and labels. */
    public record Alert(String name, String state, Map<String, String> labels) {
    }
}
