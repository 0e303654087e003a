package dev.metakit.inbox.ops;

import dev.metakit.inbox.support.TestDatabase;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import static dev.metakit.inbox.support.InboxRows.row;
import static dev.metakit.inbox.support.TestDatabase.scalar;
import static org.assertj.core.api.Assertions.assertThat;

class InboxCommandTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void clean() {
        TestDatabase.truncateAll();
    }

    private int run(String... args) {
        Map<String, String> env = new HashMap<>();
        env.put("DATABASE_URL", TestDatabase.jdbcUrl());
        env.put("DATABASE_USER", TestDatabase.user());
        if (TestDatabase.password() != null) {
            env.put("DATABASE_PASSWORD", TestDatabase.password());
        }
        return InboxCommand.run(args, env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void replayOfAnAccountAndATimeRangeQueuesItsRowsAgain() throws Exception {
        row("a1", 2, 5, "processed");
        row("a2", 2, 50, "processed");
        row("b1", 3, 5, "processed");
        String from = java.time.Instant.now().minus(java.time.Duration.ofHours(24)).toString();
        assertThat(run("replay", "--account", "2", "--from", from)).as(err.toString()).isZero();
        assertThat(out.toString()).contains("replayed 1 deliveries");
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is null and delivery_key = 'a1'"))
                .isEqualTo(1);
    }

    @Test
    void requeueFailedPutsFailedRowsBack() throws Exception {
        row("f", 2, 1, "failed");
        assertThat(run("requeue-failed")).isZero();
        assertThat(out.toString()).contains("requeued 1 failed rows");
    }

    @Test
    void replayWithoutAFilterOrWithABadInstantIsAUsageErrorAndChangesNothing() throws Exception {
        row("a1", 2, 5, "processed");
        assertThat(run("replay")).isEqualTo(2);
        assertThat(err.toString()).contains("replay needs --account, --from or --to");
        assertThat(run("replay", "--from", "yesterday")).isEqualTo(2);
        assertThat(err.toString()).contains("--from needs an ISO-8601 UTC instant such as 2026-12-01T00:00:00Z,"
                + " got 'yesterday'").doesNotContain("could not be parsed");
        assertThat(run("replay", "--account", "two")).isEqualTo(2);
        assertThat(err.toString()).contains("--account needs a whole number, got 'two'")
                .doesNotContain("For input string");
        assertThat(run("frobnicate", "--all")).isEqualTo(2);
        assertThat(scalar("select count(*) from webhook_inbox where processed_at is null")).isZero();
    }

    @Test
    void pruneRefusesARetentionShorterThanADay() {
        assertThat(run("prune", "--older-than", "PT1H")).isEqualTo(2);
        assertThat(err.toString()).contains("METAKIT_RETENTION must be at least P1D");
        assertThat(run("prune")).isZero();
        assertThat(out.toString()).contains("pruned 0 processed rows");
    }

    @Test
    void withoutDatabaseUrlItSaysSo() {
        int code = InboxCommand.run(new String[]{"replay", "--all"}, Map.of(),
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
        assertThat(code).isEqualTo(2);
        assertThat(err.toString()).contains("METAKIT_DATABASE_URL (or DATABASE_URL) is required");
    }

    @Test
    void feedReplayOfAnAccountFromASeqMarksItsChangesForPublishingAgain() throws Exception {
        java.time.Instant t = java.time.Instant.now().minusSeconds(60);
        for (long seq = 1; seq <= 3; seq++) {
            dev.metakit.inbox.feed.FeedMaintenanceTestAccess.change(4, seq, t, t);
        }

        assertThat(run("feed-replay", "--account", "4", "--from-seq", "2")).isZero();

        assertThat(out.toString(StandardCharsets.UTF_8)).contains("marked 2 changes");
        assertThat(scalar("select count(*) from position_changes where published_at is null")).isEqualTo(2);
        assertThat(run("feed-replay", "--account", "4")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("feed-replay needs --account with --from-seq");
    }
}
