package dev.metakit.inbox.worker;

import org.junit.jupiter.api.Test;

import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Outcomes the database cannot take now are kept, in order, and written once it answers, each write once; their
 * accounts stay in hand meanwhile. The "database" here is a switch the test flips: the writes are what is under test.
 */
class OutcomeBufferTest {
    private final WorkInHand workInHand = new WorkInHand(Duration.ofSeconds(30));
    private final OutcomeBuffer buffer = new OutcomeBuffer(workInHand, 1000);
    private final List<String> written = new CopyOnWriteArrayList<>();
    private volatile boolean down;

    @Test
    void anOutcomeTheDatabaseCannotTakeIsKeptItsAccountHeldAndWrittenOnceItAnswers() {
        workInHand.hold(new AccountWork(1, List.of(), List.of()), System.nanoTime());
        down = true;

        buffer.settle(outcome(1L, "backoff", "failed"));
        buffer.recordKept();

        assertThat(buffer.size()).isEqualTo(1);
        assertThat(workInHand.accounts()).as("held while its outcome waits").containsExactly(1L);

        down = false;
        buffer.recordKept();

        assertThat(written).containsExactly("backoff", "failed");
        assertThat(buffer.size()).isZero();
        assertThat(workInHand.accounts()).isEmpty();
    }

    @Test
    void aWriteThatWentThroughIsNotRepeatedAndTheKeptOutcomesKeepTheirOrder() {
        Outcome halfWritten = new Outcome(1L, "account 1", List.of(() -> written.add("first"), () -> {
            if (down) {
                throw new SQLException("connection refused");
            }
            written.add("second");
        }));
        down = true;
        buffer.settle(halfWritten);
        buffer.settle(outcome(2L, "then"));

        down = false;
        buffer.recordKept();

        assertThat(written).containsExactly("first", "second", "then");
    }

    @Test
    void theKeptOutcomesOfWorkGivenUpAreDropped() {
        down = true;
        buffer.settle(outcome(1L, "one"));
        buffer.settle(outcome(2L, "two"));

        buffer.forget(1);
        down = false;
        buffer.recordKept();

        assertThat(written).containsExactly("two");
    }

    private Outcome outcome(Long account, String... writes) {
        List<Outcome.Step> steps = java.util.Arrays.stream(writes).<Outcome.Step>map(w -> () -> {
            if (down) {
                throw new SQLException("connection refused");
            }
            written.add(w);
        }).toList();
        return new Outcome(account, "account " + account, steps);
    }
}
