package dev.metakit.inbox.devmode;

import dev.metakit.inbox.support.InboxFixture;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Readiness read again and again while route files are saved (their routes removed and added by camel-main's reload):
 * every answer is the bundle's UP or DOWN, never a failure of the check itself, and no ERROR is logged.
 */
class ReadinessWhileRoutesReloadTest {
    private static final int SAVES = 6;

    @RegisterExtension
    final InboxFixture fixture = new InboxFixture();

    @Test
    void readinessAnswersUpOrDownWhileRoutesAreSwapped(@TempDir Path routes) throws Exception {
        SavedRouteFiles files = new SavedRouteFiles(routes);
        RunningInbox inbox = files.start(fixture, Map.of());
        List<String> answers = new CopyOnWriteArrayList<>();
        AtomicBoolean saving = new AtomicBoolean(true);
        Thread reader = new Thread(() -> {
            while (saving.get()) {
                try {
                    var ready = inbox.management("/observe/health/ready");
                    answers.add(ready.statusCode() + " " + ready.body());
                } catch (Exception e) {
                    answers.add("no answer: " + e);
                }
            }
        }, "readiness-reader");

        try (LogCapture errors = LogCapture.atOrAbove(Level.ERROR)) {
            reader.start();
            try {
                for (int save = 1; save <= SAVES; save++) {
                    int n = save;
                    files.saveAndAwaitReload("status.camel.yaml", text -> text + "# saved " + n + "\n");
                }
            } finally {
                saving.set(false);
                reader.join();
            }
            await().atMost(Duration.ofSeconds(30)).until(() ->
                    inbox.management("/observe/health/ready").statusCode() == 200);
            assertThat(answers).hasSizeGreaterThan(SAVES).allMatch(a -> a.startsWith("200 ") || a.startsWith("503 "));
            assertThat(errors.lines()).isEmpty();
        }
    }
}
