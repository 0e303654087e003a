package dev.metakit.inbox.devmode;

import dev.metakit.inbox.support.InboxFixture;
import dev.metakit.inbox.support.RunningInbox;
import org.apache.camel.spi.CamelEvent;
import org.apache.camel.support.EventNotifierSupport;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import static org.awaitility.Awaitility.await;

/**
 * A running bundle whose route files are a copy in a folder it watches, as {@code ./run.sh} runs it (the four
 * {@code CAMEL_MAIN_ROUTESRELOAD*} settings): a test saves an edit into that folder as an integrator would, with
 * deliveries arriving throughout the save.
 */
final class SavedRouteFiles {
    private final Path routes;
    private final AtomicInteger reloads = new AtomicInteger();
    private RunningInbox inbox;
    /**
     * How the inbox answers a delivery it shed (not stored in time: the machine did not keep up), the same answer as
     * any refusal of the inbox's own: only its count ({@link RunningInbox#shedCount}) tells it from another.
     */
    private static final String SHED = "503 Retry-After:1 inbox unavailable, retry later";
    /** when the last {@link #answersWhile}'s first and last answer other than 2xx came (System.nanoTime), if any */
    private volatile long firstRefusedAt;
    private volatile long lastRefusedAt;

    SavedRouteFiles(Path routes) throws IOException {
        this.routes = routes;
        RunningInbox.copyRouteFiles(routes);
    }

    /** The settings run.sh exports for the route files, plus {@code overrides}. */
    static Map<String, String> watching(Path routes, Map<String, String> overrides) {
        Map<String, String> settings = new LinkedHashMap<>();
        settings.put("camel.main.routes-include-pattern", "file:" + routes + "/*.camel.yaml");
        settings.put("camel.main.routes-reload-enabled", "true");
        settings.put("camel.main.routes-reload-directory", routes.toString());
        settings.put("camel.main.routes-reload-pattern", "*.camel.yaml");
        settings.put("camel.main.routes-reload-remove-all-routes", "false");
        settings.putAll(overrides);
        return settings;
    }

    /** The bundle against the fixture's MetaKit double, reading and watching this folder. */
    RunningInbox start(InboxFixture fixture, Map<String, String> overrides) throws Exception {
        inbox = fixture.start(watching(routes, overrides));
        EventNotifierSupport reloaded = new EventNotifierSupport() {
            @Override
            public void notify(CamelEvent event) {
                if (event instanceof CamelEvent.RouteReloadedEvent) {
                    reloads.incrementAndGet();
                }
            }
        };
        inbox.camelContext().getManagementStrategy().addEventNotifier(reloaded);
        reloaded.start();
        return inbox;
    }

    Path file(String name) {
        return routes.resolve(name);
    }

    String read(String name) throws IOException {
        return Files.readString(file(name), StandardCharsets.UTF_8);
    }

    /** Edits one file in place: the text the integrator saves. */
    void edit(String name, UnaryOperator<String> edit) throws IOException {
        String before = read(name);
        String after = edit.apply(before);
        Files.writeString(file(name), after, StandardCharsets.UTF_8);
    }

    /** Saves, then waits until the running bundle has reloaded that file's routes (each reloaded route counts). */
    void saveAndAwaitReload(String name, UnaryOperator<String> edit) throws IOException {
        int before = reloads.get();
        edit(name, edit);
        await().atMost(Duration.ofSeconds(30)).until(() -> reloads.get() > before);
    }

    /**
     * Posts distinct signed deliveries one after the other while {@code during} runs, and for a second after it, and
     * returns every answer: its status, Retry-After when it has one, and body ({@code 200 stored},
     * {@code 503 Retry-After:1 ...}).
     */
    List<String> answersWhile(ThrowingRunnable during) throws Exception {
        List<String> answers = new CopyOnWriteArrayList<>();
        firstRefusedAt = 0;
        lastRefusedAt = 0;
        AtomicInteger n = new AtomicInteger();
        var running = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread load = new Thread(() -> {
            while (running.get() && n.get() < 20_000) {
                byte[] body = ("{\"event\":\"webhook.test\",\"account_id\":1,\"n\":" + n.incrementAndGet()
                        + ",\"at\":" + System.nanoTime() + ",\"data\":{}}").getBytes(StandardCharsets.UTF_8);
                try {
                    var response = inbox.postSigned(body, "webhook.test");
                    answers.add(response.statusCode() + " " + response.headers().firstValue("Retry-After")
                            .map(r -> "Retry-After:" + r + " ").orElse("") + response.body());
                    if (response.statusCode() / 100 != 2) {
                        lastRefusedAt = System.nanoTime();
                        firstRefusedAt = firstRefusedAt == 0 ? lastRefusedAt : firstRefusedAt;
                    }
                } catch (IOException e) {
                    answers.add("io " + e);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "deliveries-during-save");
        load.start();
        try {
            during.run();
            long until = System.nanoTime() + Duration.ofSeconds(1).toNanos();
            while (System.nanoTime() < until && load.isAlive()) {
                load.join(100);
            }
        } finally {
            running.set(false);
            load.join(30_000);
        }
        return answers;
    }

    /**
     * {@link #answersWhile}'s answers less those load shedding gave, which a loaded machine gives whatever the save
     * does: taken out when the inbox counted as many deliveries shed as there are such answers; else (one of them was
     * another refusal) every answer stays, for the test to see.
     */
    List<String> answersWhileLessShed(ThrowingRunnable during) throws Exception {
        double shedBefore = inbox.shedCount();
        List<String> answers = answersWhile(during);
        long shed = answers.stream().filter(SHED::equals).count();
        if (shed == 0 || shed != inbox.shedCount() - shedBefore) {
            return answers;
        }
        return answers.stream().filter(a -> !a.equals(SHED)).toList();
    }

    /**
     * From the first to the last answer other than 2xx during the last {@link #answersWhile} (0 when none): what a
     * save cost on this machine, for a test to print (never to assert: it is the machine's speed).
     */
    long refusedForMillis() {
        return firstRefusedAt == 0 ? 0 : (lastRefusedAt - firstRefusedAt) / 1_000_000;
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }
}
