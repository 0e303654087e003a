package dev.metakit.example.boot;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.zaxxer.hikari.HikariDataSource;
import dev.metakit.inbox.sandbox.WebhookSender;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.apache.camel.CamelContext;
import org.apache.camel.ProducerTemplate;
import org.apache.camel.component.platform.http.DefaultPlatformHttpConsumer;
import org.apache.camel.component.platform.http.springboot.SpringBootPlatformHttpConsumer;
import org.apache.camel.builder.RouteBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.actuate.health.HealthContributorRegistry;
import org.springframework.boot.actuate.health.HealthIndicator;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import javax.sql.DataSource;
import java.io.ByteArrayInputStream;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The bundle as a good guest of a Spring Boot host, with the starter's defaults: the host's stream caching and its
 * {@code db} health indicator stay as Boot and Camel Spring Boot leave them; the readiness details the host shows carry
 * none of its secrets; and the bundle's pool of its own means neither the host's requests nor the webhooks can take
 * the connections the other needs.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
// the host stops when the class ends, before its database (the embedded PostgreSQL stops with the JVM)
@DirtiesContext
class HostSettingsAndPoolTest {
    private static final String SECRET = "whsec_never_shown_in_health";
    private static final String API_KEY = "mk_api_key_never_shown_in_health";
    /** the embedded PostgreSQL trusts local connections: any password connects, and none may be shown */
    private static final String DATABASE_PASSWORD = "host_db_password_never_shown";
    /** MetaKit gives up on a delivery after 5 s (docs/metakit-contract.md) */
    private static final Duration METAKIT_TIMEOUT = Duration.ofSeconds(5);
    private static final int WEBHOOK_CONNECTIONS = 64;
    /** requests to the host's own endpoint while the bundle's pool is exhausted: a count, not a time */
    private static final int HOST_REQUESTS = 100;
    /** the status a delivery not answered within MetaKit's timeout is counted as */
    private static final int NOT_ANSWERED_IN_TIME = -1;
    private static final EmbeddedPostgres POSTGRES = TestParts.postgres();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final AtomicLong SEQUENCE = new AtomicLong();

    @LocalServerPort
    int port;
    @Autowired
    DataSource hostDataSource;
    @Autowired
    HealthContributorRegistry health;
    @Autowired
    ProducerTemplate camel;
    @Autowired
    CamelContext camelContext;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        TestParts.hostDataSource(registry, POSTGRES);
        registry.add("spring.datasource.password", () -> DATABASE_PASSWORD);
        registry.add("metakit.webhook.secret", () -> SECRET);
        // no MetaKit here: the deliveries below are of an event the worker stores and does not reconcile
        registry.add("metakit.api.url", () -> "http://127.0.0.1:9/");
        registry.add("metakit.api.key", () -> API_KEY);
    }

    /** A route of the host's own that reads its body twice, as stream caching (Camel Spring Boot's default) allows. */
    @TestConfiguration
    static class HostRoutes {
        @Bean
        RouteBuilder hostReadsItsBodyTwice() {
            return new RouteBuilder() {
                @Override
                public void configure() {
                    from("direct:host-read-twice").routeId("host-read-twice")
                            .setProperty("first", bodyAs(String.class))
                            .setBody(simple("${exchangeProperty.first}|${bodyAs(String)}"));
                    // answers with the name of the thread that ran it
                    from("platform-http:/host/which-thread?httpMethodRestrict=GET").routeId("host-which-thread")
                            .setBody(exchange -> Thread.currentThread().getName());
                }
            };
        }
    }

    @Test
    void aHostRouteReadsAStreamBodyTwiceAsStreamCachingAllows() {
        String answer = camel.requestBody("direct:host-read-twice",
                new ByteArrayInputStream("a host's body".getBytes(StandardCharsets.UTF_8)), String.class);
        assertThat(answer).isEqualTo("a host's body|a host's body");
    }

    @Test
    void theHostsPlatformHttpRoutesKeepCamelSpringBootsExecutorOnlyTheWebhookRunsOnTheRequestThread() throws Exception {
        HttpResponse<String> hostRoute = get(HttpClient.newHttpClient(), "/host/which-thread");
        assertThat(hostRoute.statusCode()).isEqualTo(200);
        assertThat(hostRoute.body()).as("the host's route runs where Camel Spring Boot puts it: its executor")
                .doesNotStartWith("http-nio-");
        assertThat(servingConsumer("host-which-thread").getClass()).isEqualTo(SpringBootPlatformHttpConsumer.class);
        assertThat(servingConsumer("metakit-ingest").getClass().getName())
                .as("the webhook's consumer").endsWith("WebhookOnRequestThread$AnsweredOnRequestThread");
    }

    /** the engine's consumer behind a platform-http route's own (Camel's DefaultPlatformHttpConsumer delegates to it) */
    private Object servingConsumer(String routeId) {
        return ((DefaultPlatformHttpConsumer) camelContext.getRoute(routeId).getConsumer()).getPlatformHttpConsumer();
    }

    @Test
    void theHostsDbIndicatorIsThereBesideTheBundlesOwnCheck() throws Exception {
        assertThat(health.getContributor("db")).as("Boot's db indicator").isInstanceOf(HealthIndicator.class);
        assertThat(((HealthIndicator) health.getContributor("db")).health().getStatus()).isEqualTo(Status.UP);
        assertThat(health.getContributor("metakitInbox")).as("the bundle's indicator").isInstanceOf(HealthIndicator.class);
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(((HealthIndicator) health.getContributor("metakitInbox")).health().getStatus())
                    .isEqualTo(Status.UP);
            HttpResponse<String> readiness = get(HttpClient.newHttpClient(), "/actuator/health/readiness");
            assertThat(readiness.statusCode()).as(readiness.body()).isEqualTo(200);
            assertThat(JSON.readTree(readiness.body()).at("/components/camelHealth/status").asText()).isEqualTo("UP");
        });
    }

    @Test
    void theHealthAHostShowsByDefaultCarriesNoSecret() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        for (String path : List.of("/actuator/health", "/actuator/health/readiness", "/actuator/health/liveness")) {
            HttpResponse<String> answer = get(http, path);
            assertThat(answer.statusCode()).as(path).isIn(200, 503);
            assertThat(answer.body()).as(path).doesNotContain(SECRET, API_KEY, DATABASE_PASSWORD);
        }
    }

    /**
     * The bundle's pool exhausted (the test holds every connection it gives) while 64 connections post webhooks: each
     * of the host's requests, on the host's own pool, is answered 200, and the deliveries are refused (503), stored
     * again once the pool is given back. How fast the host answers is the machine's speed: that figure is the
     * benchmark below.
     */
    @Test
    void theHostsEndpointAnswersEveryRequestWhileTheBundlesPoolIsExhaustedAndSixtyFourConnectionsPostWebhooks()
            throws Exception {
        HttpClient webhooks = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpClient host = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        DataSource bundlePool = camelContext.getRegistry().lookupByNameAndType("inboxDataSource", DataSource.class);
        List<Connection> held = new ArrayList<>();
        List<Integer> hostStatuses = new ArrayList<>();
        List<Integer> statuses = List.of();
        Posting posting = null;
        try {
            holdEveryConnection(bundlePool, held);
            posting = new Posting(webhooks);
            for (int i = 0; i < HOST_REQUESTS; i++) {
                hostStatuses.add(get(host, DatabaseClockController.PATH).statusCode());
            }
        } finally {
            try {
                if (posting != null) {
                    statuses = posting.stop();
                }
            } finally {
                for (Connection c : held) {
                    c.close();
                }
            }
        }
        System.out.printf("host endpoint %s while the bundle's %d connections were held and %d connections posted"
                        + " webhooks: %d requests answered %s; %d deliveries answered %s%n",
                DatabaseClockController.PATH, held.size(), WEBHOOK_CONNECTIONS, hostStatuses.size(),
                new TreeSet<>(hostStatuses), statuses.size(), new TreeSet<>(statuses));
        // 503 once no connection comes in time; a connection the worker gives back meanwhile may store one. How
        // many are answered within MetaKit's 5 s on a loaded machine is its speed, not what this test is about
        assertThat(statuses).as("webhook answers while the bundle's pool is exhausted").isNotEmpty()
                .allMatch(s -> s == 200 || s == 503 || s == NOT_ANSWERED_IN_TIME);
        assertThat(held).as("connections of the bundle's pool held").isNotEmpty();
        assertThat(hostStatuses).as("the host's answers").hasSize(HOST_REQUESTS).allMatch(s -> s == 200);
        await().atMost(Duration.ofSeconds(30)).ignoreException(HttpTimeoutException.class)
                .untilAsserted(() -> assertThat(postDelivery(webhooks).statusCode())
                .as("a delivery once the bundle's pool is given back").isEqualTo(200));
    }

    /**
     * Benchmark, not a test (run with {@code -Dmetakit.bench=host-endpoint}; BENCHMARKS.md): the host endpoint's
     * latency, p50 and p99, over 5 s while 64 connections post webhooks to the bundle on its own pool.
     */
    @Test
    @EnabledIfSystemProperty(named = "metakit.bench", matches = "host-endpoint")
    void benchmarkTheHostsEndpointLatencyWhileSixtyFourConnectionsPostWebhooks() throws Exception {
        HttpClient webhooks = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        HttpClient host = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        get(host, DatabaseClockController.PATH); // the host's first request (Spring MVC's lazy start) is not measured
        List<Long> latencies = new ArrayList<>();
        Posting posting = new Posting(webhooks);
        List<Integer> statuses;
        try {
            long end = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (System.nanoTime() < end) {
                long start = System.nanoTime();
                HttpResponse<String> answer = get(host, DatabaseClockController.PATH);
                latencies.add(System.nanoTime() - start);
                assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            }
        } finally {
            statuses = posting.stop();
        }
        Collections.sort(latencies);
        long p99Millis = TimeUnit.NANOSECONDS.toMillis(latencies.get((int) Math.ceil(latencies.size() * 0.99) - 1));
        long p50Millis = TimeUnit.NANOSECONDS.toMillis(latencies.get(latencies.size() / 2));
        System.out.printf("BENCH host endpoint %s while %d connections posted webhooks: p50 %d ms, p99 %d ms over %d"
                        + " requests; %d deliveries sent (%d 200, %d 503, %d not answered in 5 s); load average %.1f on %d"
                        + " cores%n",
                DatabaseClockController.PATH, WEBHOOK_CONNECTIONS, p50Millis, p99Millis, latencies.size(),
                statuses.size(), statuses.stream().filter(s -> s == 200).count(),
                statuses.stream().filter(s -> s == 503).count(),
                statuses.stream().filter(s -> s == NOT_ANSWERED_IN_TIME).count(),
                ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage(),
                Runtime.getRuntime().availableProcessors());
    }

    /** Takes connections from {@code pool} until it has none left to give (its wait for one times out). */
    private static void holdEveryConnection(DataSource pool, List<Connection> held) {
        while (true) {
            try {
                held.add(pool.getConnection());
            } catch (SQLException exhausted) {
                return;
            }
        }
    }

    /** {@value #WEBHOOK_CONNECTIONS} connections posting deliveries, each as soon as its last one was answered. */
    private final class Posting {
        private final AtomicBoolean posting = new AtomicBoolean(true);
        private final ConcurrentLinkedQueue<Integer> statuses = new ConcurrentLinkedQueue<>();
        private final ExecutorService senders = Executors.newFixedThreadPool(WEBHOOK_CONNECTIONS);
        private final List<Future<?>> runs = new ArrayList<>();

        /** Starts them, and returns once each has had a first delivery answered. */
        Posting(HttpClient webhooks) throws InterruptedException {
            CountDownLatch allPosting = new CountDownLatch(WEBHOOK_CONNECTIONS);
            for (int i = 0; i < WEBHOOK_CONNECTIONS; i++) {
                runs.add(senders.submit((Callable<Void>) () -> {
                    boolean first = true;
                    while (posting.get()) {
                        statuses.add(statusOf(webhooks));
                        if (first) {
                            allPosting.countDown();
                            first = false;
                        }
                    }
                    return null;
                }));
            }
            if (!allPosting.await(30, TimeUnit.SECONDS)) {
                posting.set(false);
                senders.shutdownNow();
                throw new AssertionError("not every connection had a first delivery answered within 30 s");
            }
        }

        private int statusOf(HttpClient webhooks) throws Exception {
            try {
                return postDelivery(webhooks).statusCode();
            } catch (HttpTimeoutException e) {
                return NOT_ANSWERED_IN_TIME;
            }
        }

        /** Stops them, waits for the deliveries under way; returns every answer's status. */
        List<Integer> stop() throws Exception {
            posting.set(false);
            senders.shutdown();
            for (Future<?> run : runs) {
                run.get(30, TimeUnit.SECONDS);
            }
            return List.copyOf(statuses);
        }
    }

    @Test
    void deliveriesAreStoredOrRefusedInTimeWhileTheHostHoldsEveryConnectionOfItsPool() throws Exception {
        int hostPoolSize = ((HikariDataSource) hostDataSource).getMaximumPoolSize();
        List<Connection> held = new ArrayList<>();
        ExecutorService senders = Executors.newFixedThreadPool(16);
        try {
            for (int i = 0; i < hostPoolSize; i++) {
                held.add(hostDataSource.getConnection());
            }
            HttpClient webhooks = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
            List<Future<long[]>> answers = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                answers.add(senders.submit(() -> {
                    long start = System.nanoTime();
                    int status = postDelivery(webhooks).statusCode();
                    return new long[] {status, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start)};
                }));
            }
            long stored = 0;
            for (Future<long[]> answer : answers) {
                long[] statusAndMillis = answer.get(METAKIT_TIMEOUT.toSeconds() + 5, TimeUnit.SECONDS);
                assertThat(statusAndMillis[0]).as("answer").isIn(200L, 503L);
                assertThat(statusAndMillis[1]).as("ms to the answer").isLessThan(METAKIT_TIMEOUT.toMillis());
                stored += statusAndMillis[0] == 200 ? 1 : 0;
            }
            // the bundle's own pool is untouched by the host's: every delivery is stored
            assertThat(stored).as("deliveries stored while the host's pool is exhausted").isEqualTo(16);
        } finally {
            senders.shutdownNow();
            for (Connection c : held) {
                c.close();
            }
        }
    }

    /** a signed delivery of an event the worker stores but does not reconcile (no MetaKit needed), each one new */
    private HttpResponse<String> postDelivery(HttpClient http) throws Exception {
        byte[] body = ("{\"event\":\"account.connected\",\"account_id\":7,\"data\":{\"n\":" + SEQUENCE.incrementAndGet()
                + "}}").getBytes(StandardCharsets.UTF_8);
        long t = System.currentTimeMillis() / 1000;
        return http.send(HttpRequest.newBuilder(URI.create(base() + "/hooks/metakit"))
                        .timeout(METAKIT_TIMEOUT)
                        .header("Content-Type", "application/json")
                        .header("X-MetaKit-Event", "account.connected")
                        .header("X-MetaKit-Signature", "t=" + t + ",v1=" + WebhookSender.sign(SECRET, t, body))
                        .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> get(HttpClient http, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(base() + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private String base() {
        return "http://127.0.0.1:" + port;
    }
}
