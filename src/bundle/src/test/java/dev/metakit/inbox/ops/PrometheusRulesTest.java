package dev.metakit.inbox.ops;

import dev.metakit.inbox.support.Prometheus;
import dev.metakit.inbox.support.RunningInbox;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shipped Prometheus rules (ops/prometheus): valid for {@code promtool check rules}, their unit tests green under
 * {@code promtool test rules}, and every alert with what an on-call engineer needs: a severity, a summary, a
 * description and a runbook section that exists in docs/operations.md. What they do against a running instance:
 * {@link PrometheusAlertsTest}.
 */
class PrometheusRulesTest {
    static final Path RULES = RunningInbox.basedir().resolve("ops/prometheus/metakit-inbox.rules.yml");
    static final Path RULES_TESTS = RunningInbox.basedir().resolve("ops/prometheus/metakit-inbox.rules.test.yml");

    @Test
    void promtoolFindsTheRulesValid() throws Exception {
        Run run = promtool("check", "rules", RULES.toString());
        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output()).contains("SUCCESS");
    }

    @Test
    void theRulesPassTheirUnitTests() throws Exception {
        Run run = promtool("test", "rules", RULES_TESTS.toString());
        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output()).contains("SUCCESS");
    }

    @Test
    void everyAlertHasASeveritySummaryDescriptionAndARunbookSectionThatExists() throws Exception {
        String docs = Files.readString(RunningInbox.basedir().resolve("docs/operations.md"));
        List<String> alerts = alertBlocks();
        assertThat(alerts).hasSizeGreaterThanOrEqualTo(10);
        for (String alert : alerts) {
            String name = alert.lines().findFirst().orElseThrow().trim();
            assertThat(alert).as(name).containsPattern("severity: (critical|warning)\\n")
                    .contains("summary: ").contains("description: ")
                    .contains("runbook_url: docs/operations.md#" + name.toLowerCase() + "\n");
            assertThat(docs).as("docs/operations.md has a runbook section for " + name).contains("\n#### " + name + "\n");
        }
    }

    @Test
    void theTimeScaleDividesEveryForAndRangeAndNothingElse() {
        assertThat(Prometheus.timeScaled("expr: rate(x[5m]) > 0 and y[1h] > 300\nfor: 10m\n", 30))
                .isEqualTo("expr: rate(x[10s]) > 0 and y[120s] > 300\nfor: 20s\n");
    }

    /** Each alert's text, from its name to the next rule. */
    static List<String> alertBlocks() throws IOException {
        Matcher m = Pattern.compile("- alert: (.*?)(?=\\n\\s+- (alert|record): |\\z)", Pattern.DOTALL)
                .matcher(Files.readString(RULES));
        List<String> blocks = new ArrayList<>();
        while (m.find()) {
            blocks.add(m.group(1) + "\n");
        }
        return blocks;
    }

    private static Run promtool(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Prometheus.program("promtool").toString()));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(RULES.getParent().toFile()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("promtool finished").isTrue();
        return new Run(p.exitValue(), output);
    }

    private record Run(int exit, String output) {
    }
}
