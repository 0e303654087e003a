package dev.metakit.inbox.worker;

import dev.metakit.inbox.inbox.InboxClaims;
import dev.metakit.inbox.metakit.MetaKitApiException;
import org.junit.jupiter.api.Test;

import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/** When the worker asks MetaKit whether it answers again, and what its answer sets off. */
class ApiReturnProbeTest {
    private static final MetaKitApiException HTTP_500 = new MetaKitApiException(500, null, "MetaKit API 500");

    private final AtomicBoolean answers = new AtomicBoolean();
    private final AtomicInteger questions = new AtomicInteger();
    private final AtomicInteger wakes = new AtomicInteger();
    private final ApiReturnProbe probe = new ApiReturnProbe(() -> {
        questions.incrementAndGet();
        return answers.get();
    }, wakes::incrementAndGet);

    @Test
    void metaKitIsAskedOnlyOnceItsOwnFailuresCameAsManyTimesInARowAsTheCanaryWaitsFor() {
        for (int i = 1; i < InboxClaims.CANARY_AFTER_FAILURES; i++) {
            probe.failed(HTTP_500);
        }
        probe.askIfArmed();
        assertThat(questions).as("a hiccup: the accounts' own retries").hasValue(0);

        probe.wentThrough();
        probe.failed(HTTP_500);
        probe.askIfArmed();
        assertThat(questions).as("a reconcile went through between: the count starts again").hasValue(0);

        failInARow();
        probe.askIfArmed();
        probe.askIfArmed();
        assertThat(questions).as("asked every round while MetaKit does not answer").hasValue(2);
        assertThat(wakes).hasValue(0);
    }

    @Test
    void theFirstAnswerWakesTheAccountsOnceAndAnotherWakeWaitsForAReconcileToGoThrough() {
        failInARow();
        answers.set(true);
        probe.askIfArmed();
        assertThat(wakes).hasValue(1);
        assertThat(probe.armed()).isFalse();

        // an account failing on its own while MetaKit answers: woken once, then its own backoff
        failInARow();
        probe.askIfArmed();
        assertThat(wakes).hasValue(1);
        assertThat(questions).hasValue(1);

        probe.wentThrough();
        failInARow();
        probe.askIfArmed();
        assertThat(wakes).as("a new streak after a reconcile went through").hasValue(2);
    }

    @Test
    void aWakeTheDatabaseRefusedIsTriedAgainAtTheNextRound() {
        AtomicInteger tries = new AtomicInteger();
        ApiReturnProbe refused = new ApiReturnProbe(() -> true, () -> {
            if (tries.incrementAndGet() == 1) {
                throw new SQLException("the database is down");
            }
            return 3;
        });
        failInARow(refused);
        refused.askIfArmed();
        assertThat(refused.armed()).isTrue();
        refused.askIfArmed();
        assertThat(tries).hasValue(2);
        assertThat(refused.armed()).isFalse();
    }

    @Test
    void onlyMetaKitsOwnFailuresThatEndWhenItAnswersArmIt() {
        assertThat(ApiReturnProbe.onMetaKit(HTTP_500)).isTrue();
        assertThat(ApiReturnProbe.onMetaKit(new RuntimeException("route failed",
                new MetaKitApiException(503, null, "MetaKit API 503")))).isTrue();
        assertThat(ApiReturnProbe.onMetaKit(new ConnectException("refused"))).isTrue();
        assertThat(ApiReturnProbe.onMetaKit(new SocketTimeoutException("read timed out"))).isTrue();

        assertThat(ApiReturnProbe.onMetaKit(new MetaKitApiException(503, Duration.ofSeconds(30), "MetaKit API 503")))
                .as("MetaKit said when to come back").isFalse();
        assertThat(ApiReturnProbe.onMetaKit(new MetaKitApiException(429, Duration.ofSeconds(1), "MetaKit API 429")))
                .isFalse();
        assertThat(ApiReturnProbe.onMetaKit(new MetaKitApiException(401, null, "MetaKit API 401"))).isFalse();
        assertThat(ApiReturnProbe.onMetaKit(new MetaKitApiException(404, null, "MetaKit API 404"))).isFalse();
        assertThat(ApiReturnProbe.onMetaKit(new SQLException("connection lost", "08006",
                new java.io.EOFException()))).as("our database, whatever it wraps").isFalse();
        assertThat(ApiReturnProbe.onMetaKit(new IllegalStateException("a bug of ours"))).isFalse();
        RuntimeException first = new RuntimeException("first");
        RuntimeException second = new RuntimeException("second", first);
        first.initCause(second);
        assertThat(ApiReturnProbe.onMetaKit(first)).as("causes that loop back: a bounded walk").isFalse();
    }

    private void failInARow() {
        failInARow(probe);
    }

    private static void failInARow(ApiReturnProbe probe) {
        for (int i = 0; i < InboxClaims.CANARY_AFTER_FAILURES; i++) {
            probe.failed(HTTP_500);
        }
    }
}
