package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.StoredKeys;
import dev.metakit.inbox.inbox.Claimant;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class WorkerCountersTest {
    private final WorkerCounters counters = new WorkerCounters();

    @Test
    void everyReasonIsCountedApartFromTheFirstRead() {
        for (PoisonReason reason : PoisonReason.values()) {
            assertThat(counters.deadLettered(reason)).as("%s before any row", reason).isZero();
        }
        counters.addDeadLettered(PoisonReason.BAD_TICKET, 2);
        counters.addDeadLettered(PoisonReason.NOT_JSON, 1);

        assertThat(counters.deadLettered(PoisonReason.BAD_TICKET)).isEqualTo(2);
        assertThat(counters.deadLettered(PoisonReason.NOT_JSON)).isEqualTo(1);
        assertThat(counters.deadLettered(PoisonReason.MALFORMED)).isZero();
    }

    @Test
    void onlyTheRowsAnotherBootHoldsAreFencedAndSaidTakenOver() throws Exception {
        TestDatabase.truncateAll();
        Claimant self = ClaimedRows.beatingBoot("counters-self").self();
        Claimant other = ClaimedRows.beatingBoot("counters-other").self();
        ClaimedRows.trade("c-1", 1, 100);
        ClaimedRows.trade("c-2", 1, 100);
        ClaimedRows.claimAll(other, Duration.ofMinutes(2));
        ClaimedRows.trade("c-3", 2, 200);
        ClaimedRows.claimAll(self, Duration.ofMinutes(2));
        ClaimedRows.CLAIMS.markProcessed(self, StoredKeys.of("c-3"));

        List<String> lines;
        try (LogCapture log = LogCapture.atOrAbove(Level.INFO)) {
            counters.fencedIfShort(self, StoredKeys.of("c-3"), 1, "all written", ClaimedRows.CLAIMS);
            counters.fencedIfShort(self, StoredKeys.of("c-1", "c-2", "c-3"), 0, "two taken over, one settled",
                    ClaimedRows.CLAIMS);
            lines = log.lines();
        }

        assertThat(counters.fenced()).as("rows another boot holds").isEqualTo(2);
        assertThat(lines).filteredOn(line -> line.contains("another instance took them over")).singleElement()
                .asString().startsWith("WARN").contains("no longer holds 2 of 3", "two taken over, one settled");
        assertThat(lines).filteredOn(line -> line.contains("already settled or given back")).singleElement()
                .asString().startsWith("INFO").contains("1 of 3");
    }
}
