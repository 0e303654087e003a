package dev.metakit.inbox.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A program the tests run in a JVM of their own (the Kafka broker, Kafka Connect), on a classpath of its own
 * ({@link MavenClasspath}), its output appended to a log file.
 */
public final class ChildJvm {
    private ChildJvm() {
    }

    /**
     * The JIT setting of every JVM the tests start (the shaded jar, ./run.sh, the Kafka broker, Kafka Connect): the
     * C1 compiler only. A build starts about 30 of them, each living seconds to a minute on the two cores the test
     * JVMs share; C2's compiling costs such a JVM more CPU than it saves (a boot of the jar to ready: about 11 s of
     * CPU, 7 s with C1 only). It changes what gets compiled when, not what the program does.
     */
    public static final List<String> OPTIONS = List.of("-XX:TieredStopAtLevel=1");

    /** Starts {@code java -Xmx384m <OPTIONS> -cp <classpath> <args...>} in {@code dir}. */
    static Process start(Path dir, Path log, String classpath, List<String> args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx384m"));
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
