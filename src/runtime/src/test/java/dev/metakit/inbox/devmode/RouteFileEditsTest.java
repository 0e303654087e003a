package dev.metakit.inbox.devmode;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxFixture;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.Metrics;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestSignatures;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static dev.metakit.inbox.support.TestEvents.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The edits docs/routes.md walks an integrator through, each saved into a running bundle's watched route files (as
 * {@code ./run.sh} runs it) with deliveries arriving throughout the save: every answer is 2xx (a load-shed 503 of a
 * machine that does not keep up aside, counted as such by the inbox), the edit takes effect, and what the edit did not
 * touch goes on (the feed publishes what was written before and after the save).
 */
class RouteFileEditsTest {
    private static final String OUTLET_TO = "uri: \"log:dev.metakit.inbox.feed.outlet?exchangeFormatter=#bean:changeLine\"";

    @RegisterExtension
    final InboxFixture fixture = new InboxFixture();
    private final FakeMetaKit metakit = fixture.metakit();

    @Test
    void theOutletPointedAtAFolderPublishesEveryChangeThereFromTheSaveOn(@TempDir Path routes, @TempDir Path feed)
            throws Exception {
        SavedRouteFiles files = new SavedRouteFiles(routes);
        RunningInbox inbox = files.start(fixture, Map.of());
        metakit.open(3, 10, "0.10", "0", "1.09000", fixture.t0());
        inbox.deliver(event("position.opened", 3, 10), "position.opened");
        awaitPublished(1);

        try (LogCapture errors = LogCapture.atOrAbove(Level.ERROR)) {
            List<String> answers = files.answersWhileLessShed(() -> files.saveAndAwaitReload("changes.camel.yaml",
                    text -> text.replace(OUTLET_TO,
                            "uri: \"file:" + feed + "?fileName=${header.MetaKitChangeId}.json\"")));
            assertThat(answers).isNotEmpty().allMatch(a -> a.startsWith("200"));
            assertThat(errors.lines()).isEmpty();
        }

        metakit.open(3, 11, "0.10", "0", "1.09000", fixture.t0());
        assertThat(inbox.deliver(event("position.opened", 3, 11), "position.opened").body()).isEqualTo("stored");
        awaitPublished(2);
        try (Stream<Path> written = Files.list(feed)) {
            assertThat(written.map(p -> p.getFileName().toString())).containsExactly("3:2.json");
        }
    }

    @Test
    void savingTheFeedsFileUnchangedKeepsTheFeedPublishing(@TempDir Path routes) throws Exception {
        SavedRouteFiles files = new SavedRouteFiles(routes);
        RunningInbox inbox = files.start(fixture, Map.of());
        metakit.open(3, 10, "0.10", "0", "1.09000", fixture.t0());
        inbox.deliver(event("position.opened", 3, 10), "position.opened");
        awaitPublished(1);

        List<String> answers = files.answersWhileLessShed(() -> files.saveAndAwaitReload("changes.camel.yaml",
                text -> text));
        assertThat(answers).isNotEmpty().allMatch(a -> a.startsWith("200"));

        metakit.open(3, 11, "0.10", "0", "1.09000", fixture.t0());
        assertThat(inbox.deliver(event("position.opened", 3, 11), "position.opened").body()).isEqualTo("stored");
        awaitPublished(2);
    }

    @Test
    void aStepAddedToTheIngestRouteRunsOnceForEachStoredDeliveryAndForNoOther(@TempDir Path routes,
                                                                             @TempDir Path audit) throws Exception {
        SavedRouteFiles files = new SavedRouteFiles(routes);
        RunningInbox inbox = files.start(fixture, Map.of());

        List<String> answers = files.answersWhile(() -> files.saveAndAwaitReload("ingest.camel.yaml",
                text -> text.replace(DOORBELL, DOORBELL + TAP.formatted(audit))));
        // the ingest route itself is swapped: for that moment MetaKit is told to retry
        assertThat(answers).isNotEmpty().allMatch(a -> a.startsWith("200") || a.startsWith("503 Retry-After:1"));

        List<byte[]> deliveries = List.of(event("position.opened", 4, 1), event("position.opened", 4, 2),
                event("position.opened", 4, 3));
        for (byte[] d : deliveries) {
            assertThat(answerRetried(inbox, d)).isEqualTo("200 stored");
        }
        // MetaKit's retry of a delivery it had its 2xx for: the same bytes under the same signature
        byte[] again = event("position.opened", 4, 4);
        String signature = TestSignatures.header(RunningInbox.SECRET, System.currentTimeMillis() / 1000, again);
        assertThat(answer(inbox.post(again, signature, "position.opened"))).isEqualTo("200 stored");
        assertThat(answer(inbox.post(again, signature, "position.opened"))).isEqualTo("200 duplicate");
        assertThat(inbox.post(deliveries.get(1), "t=1,v1=00", "position.opened").statusCode()).isEqualTo(400);

        List<String> newKeys = keys("where account_id = 4");
        assertThat(newKeys).hasSize(4);
        await().atMost(Duration.ofSeconds(20)).until(() -> auditedKeys(audit).containsAll(newKeys));
        // one file per stored delivery: none for the duplicate, the forgery, or twice for any
        List<String> audited = auditedKeys(audit);
        assertThat(audited).as(() -> listing(audit) + " answers " + answers).doesNotHaveDuplicates();
        assertThat(keys("")).containsAll(audited);
    }

    @Test
    void theFullReconcilesPeriodEditedInItsFileIsThePeriodThatRuns(@TempDir Path routes) throws Exception {
        SavedRouteFiles files = new SavedRouteFiles(routes);
        // the test settings put the full reconcile an hour apart: the route file's period is the one that counts
        files.start(fixture, Map.of());
        long before = periodicRuns();

        List<String> answers = files.answersWhileLessShed(() -> files.saveAndAwaitReload("reconcile.camel.yaml",
                text -> text.replace("trigger.repeatInterval: \"{{metakit-millis:metakit.reconcile.interval}}\"",
                        "trigger.repeatInterval: 2000")));
        assertThat(answers).isNotEmpty().allMatch(a -> a.startsWith("200"));

        await().atMost(Duration.ofSeconds(30)).until(() -> periodicRuns() >= before + 3);
        // once per period across instances: the database saw no two runs closer than nine tenths of it
        assertThat(TestDatabase.scalar("select count(*) from (select started_at - lag(started_at) over (order by"
                + " started_at) as gap from reconcile_runs where trigger = 'periodic') g"
                + " where gap < interval '1800 milliseconds'")).isZero();
    }

    /**
     * The filter docs/routes.md shows, saved while deliveries arrive: the ingest route itself is swapped, so for that
     * moment the front door answers 503 with Retry-After (MetaKit retries), and nothing else: no ERROR, no other
     * answer, and every delivery answered "stored" has its row. A dropped delivery is answered 200 and stores nothing;
     * the meters count the answer, not the row.
     */
    @Test
    void anEventFilterAnswersTheEventsItDrops200AndStoresNoneAndTheMetersCountTheAnswer(@TempDir Path routes)
            throws Exception {
        SavedRouteFiles files = new SavedRouteFiles(routes);
        RunningInbox inbox = files.start(fixture, Map.of());

        List<String> answers;
        try (LogCapture log = LogCapture.atOrAbove(Level.WARN)) {
            answers = files.answersWhile(() -> files.saveAndAwaitReload("ingest.camel.yaml",
                    text -> text.replace(VERIFY, VERIFY + FILTER)));
            assertThat(answers).isNotEmpty().allMatch(a -> a.startsWith("200 ") || a.startsWith("503 Retry-After:1"));
            assertThat(log.lines()).noneMatch(l -> l.startsWith("ERROR"))
                    .noneMatch(l -> l.contains("Reload") || l.contains("RouteFiles"));
        }
        // the load's deliveries (account 1, webhook.test events): stored before the filter ran, ignored after. A
        // delivery whose commit came after its deadline was answered 503 and keeps its row (docs/architecture.md: a
        // loaded machine's; MetaKit's retry is answered duplicate), so the rows lie between the two counts
        long acked = answers.stream().filter(a -> a.equals("200 stored")).count();
        long refused = answers.stream().filter(a -> a.startsWith("503")).count();
        assertThat(TestDatabase.scalar("select count(*) from webhook_inbox where account_id = 1"))
                .isBetween(acked, acked + refused);
        System.out.printf("saving ingest.camel.yaml: %d answers, %d of them 503 with Retry-After, over %d ms%n",
                answers.size(), answers.stream().filter(a -> a.startsWith("503")).count(), files.refusedForMillis());

        long rows = TestDatabase.scalar("select count(*) from webhook_inbox");
        String before = inbox.metrics();
        byte[] test = "{\"event\":\"webhook.test\",\"account_id\":1,\"data\":{}}".getBytes(StandardCharsets.UTF_8);
        assertThat(answerRetried(inbox, test, "webhook.test")).isEqualTo("200 ignored");
        assertThat(TestDatabase.scalar("select count(*) from webhook_inbox")).isEqualTo(rows);
        String after = inbox.metrics();
        for (String meter : List.of("metakit_webhook_accepted_total", "metakit_webhook_stored_total")) {
            assertThat(Metrics.value(after, meter)).as(meter).isEqualTo(Metrics.value(before, meter) + 1);
        }
        assertThat(answerRetried(inbox, event("position.opened", 4, 1))).isEqualTo("200 stored");
        assertThat(TestDatabase.scalar("select count(*) from webhook_inbox")).isEqualTo(rows + 1);
    }

    /** an integrator's filter after the signature check (docs/routes.md): test events answered 200, not stored */
    private static final String FILTER = """
                    - filter:
                        id: drop-test-events
                        simple: "${header.X-MetaKit-Event} == 'webhook.test'"
                        steps:
                          - setBody:
                              constant: "ignored"
                          - stop: {}
            """;

    private static final String DOORBELL = """
                                  - process:
                                      ref: inboxDoorbell
            """;
    /** an audit copy of each delivery stored now, in the "stored" branch after the doorbell (docs/routes.md) */
    private static final String TAP = """
                                  - setHeader:
                                      name: MetaKitAudit
                                      simple: "${exchangeProperty.metakitDeliveryKey}"
                                  - wireTap:
                                      uri: "file:%s?fileName=${exchangeId}_${header.MetaKitAudit}"
            """;
    private static final String VERIFY = """
                    - process:
                        id: verify-signature
                        ref: webhookVerification
            """;

    private static String answerRetried(RunningInbox inbox, byte[] delivery) {
        return answerRetried(inbox, delivery, "position.opened");
    }

    /**
     * The answer to a delivery as MetaKit ends up with it: a 503 with Retry-After (the route swapped by a save; an
     * editor's save may reload a file twice) is sent again, with the same signature, as MetaKit retries.
     */
    private static String answerRetried(RunningInbox inbox, byte[] delivery, String event) {
        String signature = TestSignatures.header(RunningInbox.SECRET, System.currentTimeMillis() / 1000, delivery);
        String[] answer = new String[1];
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(200)).until(() -> {
            HttpResponse<String> r = inbox.post(delivery, signature, event);
            answer[0] = r.statusCode() + " " + r.body();
            return r.statusCode() != 503 || r.headers().firstValue("Retry-After").isEmpty();
        });
        return answer[0];
    }

    private static String answer(HttpResponse<String> response) {
        return response.statusCode() + " " + response.body();
    }

    private static String listing(Path dir) {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().toList().toString();
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    private static List<String> auditedKeys(Path dir) throws java.io.IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).map(n -> n.substring(n.indexOf('_') + 1)).toList();
        }
    }

    private static List<String> keys(String where) {
        String all = TestDatabase.text("select string_agg(delivery_key, ' ') from webhook_inbox " + where);
        return all == null ? List.of() : List.of(all.split(" "));
    }

    private static long periodicRuns() {
        return TestDatabase.scalar("select count(*) from reconcile_runs where trigger = 'periodic'");
    }

    private static void awaitPublished(long n) {
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() ->
                TestDatabase.scalar("select count(*) from position_changes where published_at is not null") == n);
    }
}
