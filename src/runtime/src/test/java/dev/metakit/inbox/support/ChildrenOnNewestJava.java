package dev.metakit.inbox.support;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Runs a process test class with its children (the jar, ./run.sh's {@code java}, the probes) on the newest JDK 21+
 * under {@code /usr/lib/jvm}, the JDK ./run.sh and the image prefer, so that the standalone runtime is tested on it as
 * well as on the test JVM's (17): a subclass of the process test with this extension runs beside the others in the same
 * build. Where there is no such JDK the class is skipped, saying so; with {@code CI=true} that fails it instead.
 * Failsafe runs one class at a time in a test JVM, so {@value ChildJvm#JAVA_PROPERTY} set for the class's duration is
 * that class's alone.
 */
public final class ChildrenOnNewestJava implements BeforeAllCallback, AfterAllCallback {
    private static final Path JVMS = Path.of("/usr/lib/jvm");
    private static final int OLDEST = 21;
    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(
            ChildrenOnNewestJava.class);
    private static final String BEFORE = "before";

    @Override
    public void beforeAll(ExtensionContext context) {
        Optional<Path> java = newest();
        if (java.isEmpty()) {
            String none = "no JDK " + OLDEST + "+ under " + JVMS + " for the process tests' children";
            if ("true".equals(System.getenv("CI"))) {
                throw new IllegalStateException("CI: " + none + " (required: the runtime is tested on 17 and on the"
                        + " Java ./run.sh prefers)");
            }
            Assumptions.abort(none + ": skipped");
        }
        context.getStore(NAMESPACE).put(BEFORE, Optional.ofNullable(System.getProperty(ChildJvm.JAVA_PROPERTY)));
        System.setProperty(ChildJvm.JAVA_PROPERTY, java.get().toString());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        @SuppressWarnings("unchecked")
        Optional<String> before = context.getStore(NAMESPACE).get(BEFORE, Optional.class);
        if (before == null) {
            return;
        }
        before.ifPresentOrElse(b -> System.setProperty(ChildJvm.JAVA_PROPERTY, b),
                () -> System.clearProperty(ChildJvm.JAVA_PROPERTY));
    }

    /** The {@code bin/java} of the JDK under /usr/lib/jvm with the highest JAVA_VERSION of 21 or more, if any. */
    static Optional<Path> newest() {
        if (!Files.isDirectory(JVMS)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(JVMS)) {
            return homes.flatMap(home -> version(home).filter(v -> v.feature() >= OLDEST)
                            .filter(v -> Files.isExecutable(home.resolve("bin/java")))
                            .map(v -> new Jdk(home.resolve("bin/java"), v)).stream())
                    .max(Comparator.comparing(Jdk::version)).map(Jdk::java);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The JAVA_VERSION of a JDK's {@code release} file. */
    private static Optional<Runtime.Version> version(Path home) {
        try {
            return Files.readAllLines(home.resolve("release")).stream()
                    .filter(l -> l.startsWith("JAVA_VERSION="))
                    .map(l -> l.substring("JAVA_VERSION=".length()).replace("\"", ""))
                    .findFirst().map(Runtime.Version::parse);
        } catch (IOException | IllegalArgumentException notAJdk) {
            return Optional.empty();
        }
    }

    private record Jdk(Path java, Runtime.Version version) {
    }
}
