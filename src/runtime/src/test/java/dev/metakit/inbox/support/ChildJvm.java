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
final class ChildJvm {
    private ChildJvm() {
    }

    /** Starts {@code java -Xmx384m -cp <classpath> <args...>} in {@code dir}. */
    static Process start(Path dir, Path log, String classpath, List<String> args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-Xmx384m", "-cp", classpath));
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
