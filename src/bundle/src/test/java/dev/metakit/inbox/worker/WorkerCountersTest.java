package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.Claimant;
import org.junit.jupiter.api.Test;

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
    void onlyTheRowsAWriteDidNotTakeAreFenced() {
        Claimant boot = Claimant.newBoot("counters-test");
        counters.fencedIfShort(boot, 3, 3, "all written");
        counters.fencedIfShort(boot, 5, 2, "three taken over");

        assertThat(counters.fenced()).isEqualTo(3);
    }
}
