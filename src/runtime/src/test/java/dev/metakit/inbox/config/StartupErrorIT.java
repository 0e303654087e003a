package dev.metakit.inbox.config;

import dev.metakit.inbox.support.ChildEnvironment;
import dev.metakit.inbox.support.ChildJvm;
import dev.metakit.inbox.support.InboxProcess;
import dev.metakit.inbox.support.RunningInbox;
import org.assertj.core.api.AbstractStringAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The jar as an operator starts it: a missing or unusable setting is one line on stderr and exit code 2. */
class StartupErrorIT {
    @TempDir
    Path workDir;

    private record Outcome(int exitCode, String stderr) {
    }

    private Outcome run(Map<String, String> env) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(ChildJvm.java().toString()));
        command.addAll(ChildJvm.OPTIONS);
        command.addAll(ChildJvm.JAR_OPTIONS);
        command.addAll(List.of("-jar", InboxProcess.jar().toString()));
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        ChildEnvironment.withoutBundleSettings(pb.environment()).putAll(env);
        Process p = pb.start();
        String stderr = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Outcome(p.exitValue(), stderr);
    }

    /** The jar exits with status 2 and says why in one line on stderr: that line, to assert on. */
    private AbstractStringAssert<?> assertStopsWithOneLine(Map<String, String> environment)
            throws Exception {
        Outcome o = run(environment);
        assertThat(o.exitCode()).isEqualTo(2);
        return assertThat(o.stderr().strip().lines()).singleElement().asString();
    }

    @Test
    void aMissingWebhookSecretStopsStartupWithOneLineNamingIt() throws Exception {
        assertStopsWithOneLine(Map.of("HTTP_PORT", "0", "MANAGEMENT_PORT", "0"))
                .startsWith("metakit-inbox: METAKIT_WEBHOOK_SECRET is required");
    }

    @Test
    void anUnusableDatabaseUrlStopsStartupWithOneLineThatHidesThePassword() throws Exception {
        assertStopsWithOneLine(Map.of("METAKIT_WEBHOOK_SECRET", "s", "METAKIT_API_KEY", "k",
                "DATABASE_URL", "postgres://app:topsecretpw@127.0.0.1:1/inbox",
                "HTTP_PORT", "0", "MANAGEMENT_PORT", "0"))
                .startsWith("metakit-inbox: database jdbc:postgresql://127.0.0.1:1/inbox is not usable")
                .doesNotContain("topsecretpw");
    }

    @Test
    void aMissingApiKeyStopsStartupWithOneLineNamingIt() throws Exception {
        assertStopsWithOneLine(Map.of("METAKIT_WEBHOOK_SECRET", "s", "HTTP_PORT", "0", "MANAGEMENT_PORT", "0",
                "METAKIT_DATABASE_EMBEDDED_DIR", workDir.resolve("pg").toString()))
                .startsWith("metakit-inbox: METAKIT_API_KEY is required");
    }

    @Test
    void aDurationGivenAsABareNumberStopsStartupWithOneLineNamingTheSetting() throws Exception {
        assertStopsWithOneLine(Map.of("METAKIT_WEBHOOK_SECRET", "s", "METAKIT_API_KEY", "k", "HTTP_PORT", "0",
                "MANAGEMENT_PORT", "0", "METAKIT_DATABASE_EMBEDDED_DIR", workDir.resolve("pg").toString(),
                "METAKIT_RECONCILE_INTERVAL", "300000"))
                .startsWith("metakit-inbox: metakit.reconcile.interval (METAKIT_RECONCILE_INTERVAL) is not a duration,"
                        + " got '300000'");
    }

    @Test
    void anUnknownLogFormatStopsStartupWithOneLine() throws Exception {
        assertStopsWithOneLine(Map.of("METAKIT_LOG_FORMAT", "jsn", "HTTP_PORT", "0", "MANAGEMENT_PORT", "0"))
                .isEqualTo("metakit-inbox: METAKIT_LOG_FORMAT must be one of text, json, got 'jsn'");
    }

    @Test
    void anUnknownSwitchValueStopsStartupWithOneLine() throws Exception {
        assertStopsWithOneLine(Map.of("METAKIT_OPS_ENABLED", "yes", "HTTP_PORT", "0", "MANAGEMENT_PORT", "0"))
                .isEqualTo("metakit-inbox: metakit.ops.enabled (METAKIT_OPS_ENABLED) must be true or false, got 'yes'");
    }

    @Test
    void aRouteFileWithInvalidYamlStopsStartupWithOneLineNamingItsLine() throws Exception {
        Path routes = Files.createDirectories(workDir.resolve("routes"));
        RunningInbox.copyRouteFiles(routes);
        Path status = routes.resolve("status.camel.yaml");
        String text = Files.readString(status);
        // a tab where the route's id is indented: YAML refuses tabs for indentation
        Files.writeString(status, text.replace("    id: metakit-delivery-status-watch",
                "\t  id: metakit-delivery-status-watch"));
        long line = text.substring(0, text.indexOf("    id: metakit-delivery-status-watch")).lines().count() + 1;
        assertStopsWithOneLine(Map.of("METAKIT_WEBHOOK_SECRET", "s", "METAKIT_API_KEY", "k", "HTTP_PORT", "0",
                "MANAGEMENT_PORT", "0", "METAKIT_DATABASE_EMBEDDED_DIR", workDir.resolve("pg").toString(),
                "CAMEL_MAIN_ROUTESINCLUDEPATTERN", "file:routes/*.camel.yaml"))
                .startsWith("metakit-inbox: route file routes/status.camel.yaml, line " + line + ", column 1: found"
                        + " character '\\t(TAB)' that cannot start any token");
    }

    @Test
    void aVariableAnEarlierVersionReadStopsStartupNamingItsNameNow() throws Exception {
        assertStopsWithOneLine(Map.of("METAKIT_DB_POOL_SIZE", "32", "HTTP_PORT", "0", "MANAGEMENT_PORT", "0"))
                .isEqualTo("metakit-inbox: METAKIT_DB_POOL_SIZE is now METAKIT_DATABASE_POOL_SIZE: rename it");
    }
}
