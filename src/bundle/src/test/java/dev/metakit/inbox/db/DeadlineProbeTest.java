package dev.metakit.inbox.db;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** A check that hangs is reported down within the deadline, and never holds more than one thread. */
class DeadlineProbeTest {
    private static final long DEADLINE_MILLIS = 2000;

    @Test
    void aCheckThatAnswersIsReportedAsItAnswers() {
        assertThat(new DeadlineProbe("db", Duration.ofMillis(500), () -> null).probe().up()).isTrue();
        DeadlineProbe.Outcome down = new DeadlineProbe("db", Duration.ofMillis(500), () -> "refused").probe();
        assertThat(down.up()).isFalse();
        assertThat(down.reason()).isEqualTo("refused");
        DeadlineProbe.Outcome failed = new DeadlineProbe("db", Duration.ofMillis(500), () -> {
            throw new IllegalStateException("boom");
        }).probe();
        assertThat(failed.up()).isFalse();
        assertThat(failed.reason()).isEqualTo("db: boom");
    }

    @Test
    void aHangingCheckIsReportedDownWithinTheDeadlineAndProbesMeanwhileShareTheOneAttempt() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger started = new AtomicInteger();
        DeadlineProbe probe = new DeadlineProbe("db", Duration.ofMillis(DEADLINE_MILLIS), () -> {
            started.incrementAndGet();
            release.await(30, TimeUnit.SECONDS);
            return null;
        });

        long t0 = System.nanoTime();
        DeadlineProbe.Outcome first = probe.probe();
        long firstMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        long t1 = System.nanoTime();
        DeadlineProbe.Outcome second = probe.probe();
        long secondMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t1);

        assertThat(first.up()).isFalse();
        assertThat(first.reason()).startsWith("db check timed out after " + DEADLINE_MILLIS + " ms");
        assertThat(firstMillis).isGreaterThanOrEqualTo(DEADLINE_MILLIS - 10);
        // the attempt is still running and already past its deadline: the next probe answers down without waiting
        // for a deadline of its own (less than one: a bound that holds whatever the machine's speed, short of a
        // pause of seconds)
        assertThat(second.up()).isFalse();
        assertThat(second.reason()).startsWith("db check timed out after " + DEADLINE_MILLIS + " ms");
        assertThat(secondMillis).isLessThan(DEADLINE_MILLIS);
        assertThat(started).hasValue(1);

        release.countDown();
        // no result is kept: once that attempt ended, a probe runs the check again and reports what it finds now
        org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> probe.probe().up());
        assertThat(started.get()).isGreaterThanOrEqualTo(2);
    }
}
