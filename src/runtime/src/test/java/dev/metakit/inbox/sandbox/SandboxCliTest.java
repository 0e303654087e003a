package dev.metakit.inbox.sandbox;

import dev.metakit.inbox.support.TestSignatures;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class SandboxCliTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private TestReceiver receiver;

    @AfterEach
    void tearDown() {
        if (receiver != null) {
            receiver.close();
        }
    }

    private int cli(String... args) throws Exception {
        return SandboxCli.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void send_delivers_one_correctly_signed_event_and_exits_0_on_2xx() throws Exception {
        receiver = TestReceiver.always(204);

        int code = cli("send", "--url", receiver.url().toString(), "--secret", "s3cret", "--event",
                "position.closed", "--account", "2", "--ticket", "777");

        assertThat(code).isZero();
        assertThat(receiver.received()).singleElement().satisfies(r -> {
            assertThat(r.event()).isEqualTo("position.closed");
            assertThat(r.signature()).isEqualTo(TestSignatures.header("s3cret", r.t(), r.body()));
            assertThat(r.bodyText()).contains("\"account_id\":2", "\"ticket\":777", "\"volume\":0.10");
        });
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("204");
    }

    @Test
    void send_exits_1_when_the_consumer_does_not_answer_2xx() throws Exception {
        receiver = TestReceiver.always(401);

        assertThat(cli("send", "--url", receiver.url().toString(), "--secret", "s", "--event=webhook.test")).isEqualTo(1);
        assertThat(receiver.received()).hasSize(1);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("401");
    }

    @Test
    void bad_arguments_get_one_clear_error_line_and_exit_2() throws Exception {
        assertThat(cli("send", "--url", "http://127.0.0.1:1/x", "--event", "position.opened")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("--secret is required");
        assertThat(cli("run", "--url", "http://x", "--secret", "s", "--faults", "wild")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("faults must be none, moderate or heavy");
        assertThat(cli("run", "--url", "http://x", "--secret", "s", "--rate", "fast")).isEqualTo(2);
        assertThat(cli("send", "--bogus", "1")).isEqualTo(2);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("unknown option --bogus");
        assertThat(cli("launch")).isEqualTo(2);
    }

    @Test
    void help_prints_the_usage() throws Exception {
        assertThat(cli("--help")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("send", "run", "--faults none|moderate|heavy");
    }

    @Test
    void run_with_a_bounded_count_delivers_every_operation_and_ends() throws Exception {
        receiver = TestReceiver.always(200);

        int code = cli("run", "--url", receiver.url().toString(), "--secret", "s", "--api-port", "0",
                "--rate", "50", "--operations", "10", "--faults", "none");

        assertThat(code).isZero();
        assertThat(receiver.received()).hasSize(10);
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("MetaKit API at http://127.0.0.1:",
                "10 operations");
    }
}
