package dev.metakit.inbox.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;


/**
 * The shaded jar as its own process ({@code java -jar target/metakit-inbox.jar}), configured only through the
 * environment the way an operator runs it, on the test database and fixed ports so a restart answers where the
 * killed one did. Nothing of the test JVM's own bundle settings reaches it ({@link ChildEnvironment}). Its output goes to a log file under the build directory.
 */
public final class InboxProcess implements AutoCloseable {
    /** eight boots' worth of CPU: a consumer that spent it without answering ready is stuck */
    private static final Duration BOOT_CPU_LIMIT = Duration.ofSeconds(60);
    private final int httpPort = RunningInbox.freePort();
    private final int managementPort = RunningInbox.freePort();
    private final Map<String, String> env = new LinkedHashMap<>();
    private final Path workDir;
    private final Path log;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private Process process;

    public InboxProcess(Path workDir, String metakitUrl, Map<String, String> extraEnv) {
        this.workDir = workDir;
        this.log = jar().getParent().resolve("faults-" + getClass().getSimpleName() + "-" + httpPort + ".log");
        env.put("METAKIT_WEBHOOK_SECRET", RunningInbox.SECRET);
        env.put("DATABASE_URL", TestDatabase.jdbcUrl());
        env.put("DATABASE_USER", TestDatabase.user());
        env.put("DATABASE_PASSWORD", TestDatabase.password() == null ? "" : TestDatabase.password());
        env.put("HTTP_HOST", "127.0.0.1");
        env.put("HTTP_PORT", String.valueOf(httpPort));
        env.put("MANAGEMENT_HOST", "127.0.0.1");
        env.put("MANAGEMENT_PORT", String.valueOf(managementPort));
        env.put("METAKIT_API_URL", metakitUrl);
        env.put("METAKIT_API_KEY", FakeMetaKit.API_KEY);
        env.putAll(extraEnv);
    }

    public static Path jar() {
        String configured = System.getProperty("metakit.test.jar");
        Path jar = configured != null ? Path.of(configured)
                : RunningInbox.basedir().resolve("target").resolve("metakit-inbox.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: process tests run after `package` (mvn verify)");
        }
        return jar;
    }

    /** Sets one more environment variable of the process, for its next start. */
    public InboxProcess env(String name, String value) {
        env.put(name, value);
        return this;
    }

    /** Starts the jar and waits until {@code /observe/health} answers 200. */
    public InboxProcess start() {
        if (process != null && process.isAlive()) {
            throw new IllegalStateException("already running");
        }
        List<String> command = new ArrayList<>(List.of(ChildJvm.java().toString(), "-Xmx256m"));
        command.addAll(ChildJvm.OPTIONS);
        command.addAll(ChildJvm.JAR_OPTIONS);
        command.addAll(List.of("-jar", jar().toString()));
        ProcessBuilder pb = new ProcessBuilder(command)
                .directory(workDir.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        ChildEnvironment.withoutBundleSettings(pb.environment()).putAll(env);
        try {
            process = pb.start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        // a boot of the jar costs about 7 s of CPU (ChildJvm.OPTIONS); on a loaded machine it has taken over two
        // minutes of wall time
        ChildBoot.awaitReady(process, "the consumer (Java " + ChildJvm.javaVersion() + ")", log,
                BOOT_CPU_LIMIT, Duration.ofMillis(100), () -> healthStatus() == 200);
        return this;
    }

    /** Starts the processes side by side (each boot takes a while) and waits until each one's health answers 200. */
    public static void startAll(Collection<InboxProcess> processes) {
        CompletableFuture.allOf(processes.stream().map(p -> CompletableFuture.runAsync(p::start))
                .toArray(CompletableFuture[]::new)).join();
    }

    /** Kills whichever of them still runs. */
    public static void closeAll(Collection<InboxProcess> processes) throws InterruptedException {
        for (InboxProcess p : processes) {
            p.close();
        }
    }

    /** SIGKILL on Linux: no shutdown hook, no graceful stop, in-flight requests cut. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGSTOP: the process stands still (as in a long GC pause or a frozen VM), its sockets and connections open. */
    public void pause() throws IOException, InterruptedException {
        signal("STOP");
    }

    /** SIGCONT after {@link #pause()}: the process goes on where it stood, unaware of the time that passed. */
    public void resume() throws IOException, InterruptedException {
        signal("CONT");
    }

    /**
     * Starves the process until the returned handle is closed: SIGSTOP for {@code stopped}, then SIGCONT for
     * {@code running}, over and over, as a CPU quota or a host with more work than cores does. The cycle runs in a
     * shell loop of its own, so it keeps its pace whatever the test JVM does; closing the handle ends the loop and
     * leaves the process running.
     */
    public AutoCloseable starve(Duration stopped, Duration running) throws IOException {
        long pid = process.pid();
        Process cycle = new ProcessBuilder("bash", "-c", String.format(Locale.ROOT,
                "trap 'kill -CONT %d; exit 0' TERM; while :; do kill -STOP %d; sleep %.3f; kill -CONT %d; sleep %.3f;"
                        + " done", pid, pid, stopped.toMillis() / 1000.0, pid, running.toMillis() / 1000.0))
                .inheritIO().start();
        return () -> {
            cycle.destroy();
            cycle.waitFor(10, TimeUnit.SECONDS);
            resume();
        };
    }

    private void signal(String name) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
        }
    }

    public URI webhookUri() {
        return URI.create("http://127.0.0.1:" + httpPort + "/hooks/metakit");
    }

    public int healthStatus() {
        return HealthProbe.status(http, managementPort, Duration.ofSeconds(2));
    }

    public Path log() {
        return log;
    }

    @Override
    public void close() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
    }
}
