package dev.metakit.inbox.portability;

import dev.metakit.inbox.support.RunningInbox;
import org.junit.jupiter.api.Test;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The route files resolve every {@code {{metakit.*}}} placeholder from the host's configuration: a key the standalone
 * application.properties has and the Spring Boot example's application.yaml lacks stops the host at startup. This
 * says which key, in seconds, before the example's own build does in minutes.
 */
class SpringBootExampleSettingsTest {

    @Test
    void theSpringBootExampleConfiguresEveryMetakitKeyOfApplicationProperties() throws IOException {
        Path base = RunningInbox.basedir();
        Set<String> standalone = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^(metakit\\.[a-z0-9.-]+)\\s*=").matcher(
                Files.readString(base.resolve("application.properties")));
        while (m.find()) {
            standalone.add(m.group(1));
        }
        Object yaml = new Load(LoadSettings.builder().build()).loadFromString(
                Files.readString(base.resolve("examples/spring-boot/src/main/resources/application.yaml")));
        Set<String> host = new TreeSet<>();
        keys("", yaml, host);

        assertThat(standalone).isNotEmpty();
        assertThat(host).as("metakit.* keys of examples/spring-boot/src/main/resources/application.yaml")
                .containsAll(standalone);
    }

    private static void keys(String prefix, Object node, Set<String> into) {
        if (node instanceof Map<?, ?> map) {
            map.forEach((k, v) -> keys(prefix.isEmpty() ? String.valueOf(k) : prefix + "." + k, v, into));
        } else if (prefix.startsWith("metakit.")) {
            into.add(prefix);
        }
    }
}
