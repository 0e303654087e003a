package dev.metakit.inbox.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.metakit.inbox.support.ChildEnvironment;
import dev.metakit.inbox.support.ChildJvm;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The log format is chosen at JVM start by METAKIT_LOG_FORMAT, so each case runs a child JVM with the bundle's config. */
class JsonLogsTest {
    private final ObjectMapper mapper = new ObjectMapper();

    @Test
    void withMetakitLogFormatJsonEveryLineIsOneJsonObjectWithLevelLoggerMessageAndStackTrace() throws Exception {
        List<String> lines = runProbe("json");
        assertThat(lines).hasSize(2);
        List<JsonNode> events = new ArrayList<>();
        for (String line : lines) {
            events.add(mapper.readTree(line));
        }
        assertThat(events.get(0).get("message").asText()).isEqualTo("Reconciled account 2: 1 position opened");
        assertThat(events.get(0).get("log.level").asText()).isEqualTo("INFO");
        assertThat(events.get(0).get("log.logger").asText()).isEqualTo("dev.metakit.inbox.reconcile");
        assertThat(events.get(0).get("@timestamp").asText()).isNotBlank();
        JsonNode warn = events.get(1);
        assertThat(warn.get("log.level").asText()).isEqualTo("WARN");
        assertThat(warn.get("message").asText()).contains("account 2, tickets [77]");
        assertThat(warn.get("error.type").asText()).isEqualTo("java.lang.IllegalStateException");
        assertThat(warn.get("error.stack_trace").asText()).contains("connection reset");
    }

    @Test
    void byDefaultLinesAreTextForHumans() throws Exception {
        List<String> lines = runProbe(null);
        assertThat(lines.get(0)).matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  \\[main\\] reconcile - Reconciled account 2: 1 position opened");
        assertThat(String.join("\n", lines)).contains("Caused by: java.io.IOException: connection reset");
    }

    private static List<String> runProbe(String format) throws IOException, InterruptedException {
        Path java = ChildJvm.java();
        ProcessBuilder pb = new ProcessBuilder(java.toString(), "-cp", System.getProperty("java.class.path"),
                JsonLogProbe.class.getName());
        ChildEnvironment.withoutBundleSettings(pb.environment());
        if (format != null) {
            pb.environment().put("METAKIT_LOG_FORMAT", format);
        }
        pb.redirectErrorStream(false);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(err).isZero();
        assertThat(err).as("log4j status errors").isBlank();
        return out.lines().filter(l -> !l.isBlank()).toList();
    }
}
