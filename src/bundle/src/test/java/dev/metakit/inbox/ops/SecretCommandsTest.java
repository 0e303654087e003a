package dev.metakit.inbox.ops;

import dev.metakit.inbox.secret.RotationRig;
import dev.metakit.inbox.support.LogCapture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.logging.log4j.Level;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The command line's secret commands against the sandbox and a running instance: the secret of the environment moved
 * into the database, a rotation from a shell that the running instance takes within seconds, back to the
 * environment; what they print holds no secret.
 */
class SecretCommandsTest {
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int run(RotationRig rig, Map<String, String> extra, String command) {
        Map<String, String> env = new HashMap<>();
        env.put("DATABASE_URL", TestDatabase.jdbcUrl());
        env.put("DATABASE_USER", TestDatabase.user());
        if (TestDatabase.password() != null) {
            env.put("DATABASE_PASSWORD", TestDatabase.password());
        }
        env.put("METAKIT_API_URL", rig.sandbox.apiBaseUrl().toString());
        env.put("METAKIT_API_KEY", rig.sandbox.apiKey());
        env.put("METAKIT_WEBHOOK_SECRET_KEY", rig.key);
        env.putAll(extra);
        return InboxCommand.run(new String[] {command}, env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
    }

    @Test
    void storeRotateAndForgetFromTheCommandLineReachTheRunningInstance() throws Exception {
        try (LogCapture logs = LogCapture.atOrAbove(Level.TRACE);
             RotationRig rig = new RotationRig("http://127.0.0.1:9/hooks/metakit", Duration.ofMinutes(5), 0)) {
            assertThat(run(rig, Map.of(), "rotate-secret")).as(out + " " + err).isEqualTo(1);
            assertThat(err.toString()).contains("no webhook secret is stored to rotate from");
            assertThat(rig.sandbox.apiCalls().count("rotate", null)).as("MetaKit not asked").isZero();

            // the move from the environment: the secret in use, stored once
            assertThat(run(rig, Map.of("METAKIT_WEBHOOK_SECRET", RunningInbox.SECRET), "store-secret"))
                    .as(err.toString()).isZero();
            assertThat(out.toString()).contains("stored the webhook secret (generation 1)");
            RunningInbox inbox = rig.start(rig.settings(RunningInbox.freePort()));
            assertThat(rig.postSignedWith(inbox, RunningInbox.SECRET)).isEqualTo(200);

            assertThat(run(rig, Map.of(), "rotate-secret")).as(err.toString()).isZero();
            String newSecret = rig.sandbox.currentSecret();
            assertThat(newSecret).isNotEqualTo(RunningInbox.SECRET);
            assertThat(out.toString()).contains("rotated the webhook secret of wh_1 (generation 2); the previous"
                    + " secret is accepted until ");
            assertThat(rig.storedGeneration()).isEqualTo(2);
            await().atMost(Duration.ofSeconds(5)).until(() -> rig.postSignedWith(inbox, newSecret) == 200);
            assertThat(rig.postSignedWith(inbox, RunningInbox.SECRET)).isEqualTo(200);

            assertThat(run(rig, Map.of("METAKIT_WEBHOOK_SECRET_KEY", ""), "rotate-secret")).isEqualTo(2);
            assertThat(err.toString()).contains("METAKIT_WEBHOOK_SECRET_KEY is required");

            assertThat(run(rig, Map.of(), "forget-secret")).isZero();
            assertThat(out.toString()).contains("deleted 1 stored webhook secret(s)");
            assertThat(rig.storedGeneration()).isZero();

            List<String> secrets = List.of(RunningInbox.SECRET, newSecret, rig.key);
            assertThat(out.toString() + err).doesNotContain(secrets);
            assertThat(logs.lines()).noneMatch(line -> secrets.stream().anyMatch(line::contains));
        }
    }
}
