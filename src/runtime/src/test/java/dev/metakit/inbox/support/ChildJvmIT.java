package dev.metakit.inbox.support;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The process tests' children run on the Java {@code -Dmetakit.it.java} names (CI's second pass: a 21+ JDK), else on
 * the test JVM's: a child says which Java it is, checked against the JDK's own {@code release} file.
 */
class ChildJvmIT {
    @TempDir
    Path dir;

    @Test
    void aChildProcessRunsOnTheConfiguredJava() throws Exception {
        Path log = dir.resolve("probe.log");
        Process probe = ChildJvm.start(dir, log, System.getProperty("java.class.path"),
                List.of(JavaVersionProbe.class.getName()));
        assertThat(probe.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(probe.exitValue()).as(Files.readString(log)).isZero();

        String childVersion = Files.readString(log).strip();
        assertThat(childVersion).isEqualTo(expectedVersion()).isEqualTo(ChildJvm.javaVersion());
        System.out.println("process tests' children run on Java " + childVersion + " (" + ChildJvm.java() + ")");
    }

    /** metakit.it.java's JDK as its release file says, or this JVM's version when the property is not set. */
    private static String expectedVersion() throws Exception {
        String configured = System.getProperty(ChildJvm.JAVA_PROPERTY);
        if (configured == null || configured.isBlank()) {
            return System.getProperty("java.version");
        }
        Path release = Path.of(configured).toRealPath().getParent().getParent().resolve("release");
        return Files.readAllLines(release).stream().filter(l -> l.startsWith("JAVA_VERSION="))
                .map(l -> l.substring("JAVA_VERSION=".length()).replace("\"", "")).findFirst()
                .orElseThrow(() -> new IllegalStateException(release + " has no JAVA_VERSION"));
    }
}
