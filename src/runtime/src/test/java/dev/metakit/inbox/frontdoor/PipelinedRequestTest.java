package dev.metakit.inbox.frontdoor;

import dev.metakit.inbox.support.RawHttp;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import dev.metakit.inbox.support.TestSignatures;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * A request pipelined behind another (HTTP/1.1 lets a client send the next before the answer) that arrives whole while
 * the one before is being answered has been read: it must not start a read clock, which would run on after its
 * answer and cut the idle keep-alive connection as a slow client.
 */
class PipelinedRequestTest {
    private static final String HOOK = "/hooks/metakit";
    /**
     * metakit.http.request-read-timeout-millis, 10 s by default: a clock wrongly started cuts the connection this long
     * after it started, so a second keeps the test short; every request here is sent whole at once.
     */
    private static final long READ_TIMEOUT_MILLIS = 1_000;

    @Test
    void aRequestThatArrivesWholeWhileTheOneBeforeIsAnsweredLeavesTheConnectionOpen() throws Exception {
        TestDatabase.truncateAll();
        assumeThat(Path.of("/proc/net/tcp6")).as("the server's unread bytes are read from Linux's socket tables")
                .exists();
        try (RunningInbox inbox = RunningInbox.start(Map.of(
                "camel.main.routes-include-pattern", RunningInbox.onlyRoutes("beans", "ingest"),
                "metakit.http.request-read-timeout-millis", String.valueOf(READ_TIMEOUT_MILLIS)));
             RawHttp http = new RawHttp(inbox.httpPort())) {
            try (Connection lock = TestDatabase.dataSource().getConnection(); Statement s = lock.createStatement()) {
                // the first delivery waits in its insert, read whole and not yet answered, until this lock goes
                lock.setAutoCommit(false);
                s.execute("lock table webhook_inbox in share mode");
                http.send(signedRequest(1));
                await().atMost(Duration.ofSeconds(10)).until(() -> TestDatabase.scalar(
                        "select count(*) from pg_stat_activity where wait_event_type = 'Lock'"
                                + " and query ilike '%webhook_inbox%'") > 0);

                http.send(signedRequest(2));
                await().atMost(Duration.ofSeconds(10)).until(
                        () -> unreadByServer(inbox.httpPort(), http.localPort()).orElse(-1) == 0);
                lock.rollback();
            }

            assertThat(http.read()).isEqualTo(new RawHttp.Answer(200, "stored"));
            assertThat(http.read()).isEqualTo(new RawHttp.Answer(200, "stored"));
            assertThat(http.closedWithin(Duration.ofMillis(3 * READ_TIMEOUT_MILLIS)))
                    .as("the idle connection is closed as if a request were read slowly").isFalse();
            http.send(signedRequest(3));
            assertThat(http.read()).isEqualTo(new RawHttp.Answer(200, "stored"));
            assertThat(inbox.metrics()).doesNotContainPattern(
                    "metakit_http_connections_cut_total\\{[^}]*reason=\"slow\"[^}]*} [1-9]");
        }
    }

    private static String signedRequest(long ticket) {
        byte[] body = ("{\"event\":\"position.opened\",\"account_id\":2,\"data\":{\"ticket\":" + ticket + "}}")
                .getBytes(StandardCharsets.UTF_8);
        String signature = TestSignatures.header(RunningInbox.SECRET, System.currentTimeMillis() / 1000, body);
        return RawHttp.head(HOOK, "X-MetaKit-Signature: " + signature, "X-MetaKit-Event: position.opened",
                "Content-Length: " + body.length) + new String(body, StandardCharsets.ISO_8859_1);
    }

    /**
     * The bytes the kernel holds for the server's end of the connection that the server has not read yet (Linux's
     * socket tables; Java's sockets are IPv6 ones unless IPv4 is preferred): none means the front door has taken in
     * all that was sent.
     */
    private static OptionalLong unreadByServer(int serverPort, int clientPort) {
        String server = String.format(Locale.ROOT, ":%04X", serverPort);
        String client = String.format(Locale.ROOT, ":%04X", clientPort);
        return Stream.of("/proc/net/tcp", "/proc/net/tcp6").map(Path::of).filter(Files::exists)
                .flatMap(PipelinedRequestTest::lines)
                .map(line -> line.trim().split("\\s+"))
                .filter(f -> f.length > 4 && f[1].endsWith(server) && f[2].endsWith(client))
                .mapToLong(f -> Long.parseLong(f[4].substring(f[4].indexOf(':') + 1), 16))
                .findFirst();
    }

    private static Stream<String> lines(Path table) {
        try {
            return Files.readAllLines(table).stream().skip(1);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
