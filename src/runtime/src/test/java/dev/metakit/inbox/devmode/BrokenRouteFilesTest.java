package dev.metakit.inbox.devmode;

import dev.metakit.inbox.Application;
import dev.metakit.inbox.support.InboxFixture;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static dev.metakit.inbox.support.TestEvents.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

/**
 * Route files an integrator leaves broken, saved into a running bundle (as {@code ./run.sh} runs it) or found at its
 * start: invalid YAML is one line naming the file, the line and the parser's words (a save changes nothing, a start
 * stops); a file left without routes is a file left out: readiness DOWN naming its routes, in the bundle's one line.
 */
class BrokenRouteFilesTest {
    /** a tab where the outlet's settings are indented: YAML refuses tabs for indentation */
    private static final String OUTLET_ID = "            id: change-outlet\n";
    private static final String OUTLET_ID_TABBED = "\t    id: change-outlet\n";
    private static final String STATUS_ROUTE = "metakit-delivery-status-watch";

    @RegisterExtension
    final InboxFixture fixture = new InboxFixture();

    @Test
    void invalidYamlSavedIsOneWarningNamingFileAndLineAndTheRoutesRunOnAsTheyWere(@TempDir Path routes)
            throws Exception {
        SavedRouteFiles files = new SavedRouteFiles(routes);
        RunningInbox inbox = files.start(fixture, Map.of());
        String original = files.read("changes.camel.yaml");
        int line = lineOf(original, OUTLET_ID);

        try (LogCapture warnings = LogCapture.atOrAbove(Level.WARN)) {
            List<String> answers = files.answersWhileLessShed(() -> {
                files.edit("changes.camel.yaml", text -> text.replace(OUTLET_ID, OUTLET_ID_TABBED));
                await().atMost(Duration.ofSeconds(30)).until(() -> !about("changes.camel.yaml", warnings).isEmpty());
            });
            assertThat(answers).isNotEmpty().allMatch(a -> a.startsWith("200"));
            assertThat(about("changes.camel.yaml", warnings)).singleElement().asString()
                    .startsWith("WARN dev.metakit.inbox.routefiles.RouteFiles - route file "
                            + files.file("changes.camel.yaml") + ", line " + line + ", column 1: ")
                    .contains("found character '\\t(TAB)' that cannot start any token")
                    .endsWith("Not reloaded: its routes run as before until the file is saved again")
                    .doesNotContain("\n");
            assertThat(warnings.lines()).noneMatch(l -> l.startsWith("ERROR"))
                    .noneMatch(l -> l.contains("Error reloading routes"));
        }

        // the feed's routes run on as they were: a change written now is published, readiness is UP
        fixture.metakit().open(3, 10, "0.10", "0", "1.09000", fixture.t0());
        assertThat(inbox.postSigned(event("position.opened", 3, 10), "position.opened").body()).isEqualTo("stored");
        awaitPublished(1);
        assertThat(inbox.management("/observe/health/ready").statusCode()).isEqualTo(200);
        // fixed and saved again, the file reloads
        files.saveAndAwaitReload("changes.camel.yaml", text -> original);
    }

    @Test
    void invalidYamlAtStartStopsTheStartWithOneLineNamingFileAndLine(@TempDir Path routes) throws Exception {
        SavedRouteFiles files = new SavedRouteFiles(routes);
        files.edit("changes.camel.yaml", text -> text.replace(OUTLET_ID, OUTLET_ID_TABBED));
        int line = lineOf(files.read("changes.camel.yaml"), OUTLET_ID_TABBED);

        Throwable failure = catchThrowable(() -> files.start(fixture, Map.of()));

        assertThat(failure).isNotNull();
        // what java -jar prints on stderr before it exits with status 2
        assertThat(Application.startupError(failure)).get().asString()
                .startsWith("metakit-inbox: route file " + files.file("changes.camel.yaml") + ", line " + line
                        + ", column 1: found character '\\t(TAB)' that cannot start any token")
                .doesNotContain("\n");
    }

    /** Comments only (its routes deleted), or nothing at all: the file holds no route, as if it were left out. */
    @ParameterizedTest
    @ValueSource(strings = {"# the delivery-status watch is not wanted here\n", ""})
    void aFileLeftWithoutRoutesAtStartIsAnsweredAsAFileLeftOut(String content, @TempDir Path routes)
            throws Exception {
        SavedRouteFiles files = new SavedRouteFiles(routes);
        Files.writeString(files.file("status.camel.yaml"), content);

        try (LogCapture errors = LogCapture.atOrAbove(Level.ERROR);
             RunningInbox inbox = RunningInbox.startUnready(SavedRouteFiles.watching(routes, Map.of()))) {
            await().atMost(Duration.ofSeconds(30)).until(() -> !errors.lines().isEmpty());
            assertThat(errors.lines()).singleElement().asString().startsWith(
                    "ERROR dev.metakit.inbox.ops.EssentialRoutesCheck - metakit-inbox is incomplete, missing: "
                            + STATUS_ROUTE + ". Readiness is DOWN and deliveries are answered 503 until they run:"
                            + " load routes/status.camel.yaml");
            var ready = inbox.management("/observe/health/ready");
            assertThat(ready.statusCode()).isEqualTo(503);
            assertThat(ready.body()).contains(STATUS_ROUTE);
            assertThat(inbox.postSigned(event("position.opened", 4, 1), "position.opened").statusCode())
                    .isEqualTo(503);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"# the delivery-status watch is not wanted here\n", ""})
    void aFileSavedWithoutRoutesRemovesTheRoutesItHeldAndReadinessNamesThem(String content, @TempDir Path routes)
            throws Exception {
        SavedRouteFiles files = new SavedRouteFiles(routes);
        RunningInbox inbox = files.start(fixture, Map.of());
        String original = files.read("status.camel.yaml");

        try (LogCapture errors = LogCapture.atOrAbove(Level.ERROR)) {
            Files.writeString(files.file("status.camel.yaml"), content);
            // the route removed and readiness DOWN naming it (not DOWN for a moment for another reason on a busy
            // machine); readiness names it already while the reload stops it, before the removal
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                var ready = inbox.management("/observe/health/ready");
                return inbox.camelContext().getRoute(STATUS_ROUTE) == null
                        && ready.statusCode() == 503 && ready.body().contains(STATUS_ROUTE);
            });
            await().atMost(Duration.ofSeconds(10)).until(() -> !errors.lines().isEmpty());

            // the file saved with its route again: complete again, and its way back (added, then started) no news
            files.saveAndAwaitReload("status.camel.yaml", text -> original);
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    inbox.management("/observe/health/ready").statusCode() == 200);
            // the bundle's own answer, once, and no other ERROR (readiness read while the route was removed included)
            assertThat(errors.lines()).singleElement()
                    .asString().contains("metakit-inbox is incomplete, missing: " + STATUS_ROUTE + ". Readiness is DOWN");
        }
    }

    /** The warnings and errors that name this route file. */
    private static List<String> about(String file, LogCapture log) {
        return log.lines().stream().filter(l -> l.contains(file)).toList();
    }

    /** The 1-based line of the file on which {@code text} begins. */
    private static int lineOf(String file, String text) {
        int at = file.indexOf(text);
        assertThat(at).isNotNegative();
        return (int) file.substring(0, at).chars().filter(c -> c == '\n').count() + 1;
    }

    private static void awaitPublished(long n) {
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() ->
                TestDatabase.scalar("select count(*) from position_changes where published_at is not null") == n);
    }
}
