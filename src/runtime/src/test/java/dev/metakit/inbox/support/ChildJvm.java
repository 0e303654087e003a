package dev.metakit.inbox.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A program the tests run in a JVM of their own (the Kafka broker, Kafka Connect), on a classpath of its own
 * ({@link MavenClasspath}), its output appended to a log file.
 */
public final class ChildJvm {
    /**
     * The system property naming the {@code java} executable every child process runs on (the shaded jar, ./run.sh's
     * {@code java}, the probes, Kafka); unset or empty: the test JVM's own. CI sets it to a newer JDK for a second
     * pass of the process tests, so the standalone runtime is tested on the JDK ./run.sh prefers as well as on 17.
     */
    public static final String JAVA_PROPERTY = "metakit.it.java";

    private static String version;

    private ChildJvm() {
    }

    /** The {@code java} executable of every child process: {@value #JAVA_PROPERTY} when set, else java.home's. */
    public static Path java() {
        return javaFrom(System.getProperty(JAVA_PROPERTY));
    }

    static Path javaFrom(String configured) {
        if (configured == null || configured.isBlank()) {
            return Path.of(System.getProperty("java.home"), "bin", "java");
        }
        Path java = Path.of(configured);
        if (!Files.isRegularFile(java) || !Files.isExecutable(java)) {
            throw new IllegalStateException(JAVA_PROPERTY + "=" + configured
                    + " is not an executable file: name a JDK's bin/java");
        }
        return java;
    }

    /**
     * The {@code java.version} of {@link #java()}, as that JVM reports it (for failure messages: which Java the child
     * ran on). Asked once per test JVM.
     */
    public static synchronized String javaVersion() {
        if (version == null) {
            version = versionOf(java());
        }
        return version;
    }

    private static String versionOf(Path java) {
        try {
            Process p = new ProcessBuilder(java.toString(), "-XshowSettings:properties", "-version")
                    .redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException(java + " -version failed (" + JAVA_PROPERTY + "): " + out.strip());
            }
            return out.lines().map(String::strip).filter(l -> l.startsWith("java.version = ")).findFirst()
                    .map(l -> l.substring("java.version = ".length()))
                    .orElseThrow(() -> new IllegalStateException(java + " reports no java.version (" + JAVA_PROPERTY
                            + ")"));
        } catch (IOException e) {
            throw new UncheckedIOException(java + " does not run (" + JAVA_PROPERTY + ")", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * The JIT setting of every JVM the tests start (the shaded jar, ./run.sh, the Kafka broker, Kafka Connect): the
     * C1 compiler only. A build starts about 30 of them, each living seconds to a minute on the two cores the test
     * JVMs share; C2's compiling costs such a JVM more CPU than it saves (a boot of the jar to ready: about 11 s of
     * CPU, 7 s with C1 only). It changes what gets compiled when, not what the program does.
     */
    public static final List<String> OPTIONS = List.of("-XX:TieredStopAtLevel=1");

    /**
     * What ./run.sh and the image give the jar, and docs/deployment.md an operator's {@code java -jar}: Java 24+ warns
     * on stderr when Netty calls sun.misc.Unsafe's memory methods; this lets it, quietly (Java 17 ignores it).
     */
    public static final List<String> JAR_OPTIONS = List.of("-Dsun.misc.unsafe.memory.access=allow");

    /** Starts {@code java -Xmx384m <OPTIONS> -cp <classpath> <args...>} in {@code dir}. */
    public static Process start(Path dir, Path log, String classpath, List<String> args) {
        List<String> command = new ArrayList<>(List.of(java().toString(), "-Xmx384m"));
        command.addAll(OPTIONS);
        command.addAll(List.of("-cp", classpath));
        command.addAll(args);
        try {
            return new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** SIGTERM, 20 s to stop cleanly, then SIGKILL. */
    static void stop(Process process) throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
