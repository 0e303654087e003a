package dev.metakit.inbox.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

/**
 * The classpath of a program the tests start in a JVM of its own, named by a pom under {@code src/test/<name>/}
 * that is not a module of the build: resolved by Maven ({@code dependency:build-classpath}) once per build folder,
 * apart from the bundle's, so that program's dependencies never meet the bundle's. Test JVMs run side by side
 * (forkCount): a file lock makes the first one resolve it while the others wait, and the file appears whole.
 */
public final class MavenClasspath {
    private MavenClasspath() {
    }

    public static synchronized String of(String name) {
        Path file = buildDir().resolve(name + ".classpath");
        Path mvnLog = buildDir().resolve(name + "-mvn.log");
        try (FileChannel lockFile = FileChannel.open(buildDir().resolve(name + ".classpath.lock"),
                StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             FileLock ignored = lockFile.lock()) {
            if (!Files.isRegularFile(file) || Files.size(file) == 0) {
                Path pom = RunningInbox.basedir().resolve("src/runtime/src/test/" + name + "/pom.xml");
                Path partial = buildDir().resolve(name + ".classpath.partial");
                Process mvn = new ProcessBuilder("mvn", "-B", "-q", "-f", pom.toString(), "dependency:build-classpath",
                        "-Dmdep.outputFile=" + partial).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(mvnLog.toFile())).start();
                if (!mvn.waitFor(5, TimeUnit.MINUTES) || mvn.exitValue() != 0) {
                    mvn.destroyForcibly();
                    throw new IllegalStateException("could not resolve the classpath of " + pom + "; see " + mvnLog);
                }
                Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            }
            return Files.readString(file).trim();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The build folder (metakit.build.dir, else target/): where classpath files and child logs go. */
    static Path buildDir() {
        Path dir = Path.of(System.getProperty("metakit.build.dir",
                RunningInbox.basedir().resolve("target").toString()));
        try {
            return Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
