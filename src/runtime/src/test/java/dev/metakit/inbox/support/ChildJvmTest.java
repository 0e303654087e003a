package dev.metakit.inbox.support;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ChildJvmTest {
    @TempDir
    Path dir;

    @Test
    void withoutTheSettingChildrenRunOnTheTestJvmsOwnJava() {
        assertThat(ChildJvm.javaFrom("")).isEqualTo(Path.of(System.getProperty("java.home"), "bin", "java"));
        assertThat(ChildJvm.javaFrom(null)).isEqualTo(Path.of(System.getProperty("java.home"), "bin", "java"));
    }

    @Test
    void aMissingJavaStopsTheChildsStartWithAMessageNamingTheSetting() {
        String missing = dir.resolve("jdk/bin/java").toString();
        assertThatThrownBy(() -> ChildJvm.javaFrom(missing)).isInstanceOf(IllegalStateException.class)
                .hasMessage("metakit.it.java=" + missing + " is not an executable file: name a JDK's bin/java");
    }

    @Test
    void aDirectoryIsNotAJava() {
        assertThatThrownBy(() -> ChildJvm.javaFrom(dir.toString())).hasMessageStartingWith("metakit.it.java=" + dir);
    }
}
