package dev.metakit.inbox.config;

import org.apache.camel.CamelContext;
import org.apache.camel.component.properties.PropertiesComponent;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** A secret read with SecretLookup is what its placeholder would have resolved to, from every kind of source. */
class SecretLookupTest {
    private CamelContext context;
    private PropertiesComponent properties;

    @BeforeEach
    void context(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("application.properties");
        Files.writeString(file, String.join("\n",
                "from.file = file-value",
                "from.env.default = {{env:METAKIT_TEST_SURELY_UNSET_VARIABLE:env-default}}",
                "nested.env.default = {{env:METAKIT_TEST_SURELY_UNSET_A:{{env:METAKIT_TEST_SURELY_UNSET_B:inner}}}}",
                "refers.to.other = x-{{from.file}}-y",
                "with.key.default = {{surely.missing.key:key-default}}",
                "overridden = from-the-file",
                "over.initial = from-the-file"));
        context = new DefaultCamelContext();
        properties = (PropertiesComponent) context.getPropertiesComponent();
        properties.setLocation("file:" + file);
        Properties override = new Properties();
        override.put("overridden", "from-the-override");
        override.put("override.only", "override-value");
        properties.setOverrideProperties(override);
        Properties initial = new Properties();
        initial.put("initial.only", "initial-value");
        initial.put("over.initial", "from-the-initial");
        properties.setInitialProperties(initial);
        context.start();
    }

    @AfterEach
    void close() throws Exception {
        context.close();
    }

    @Test
    void everySettingReadsAsItsPlaceholderResolves() {
        for (String key : new String[] {"from.file", "from.env.default", "nested.env.default", "refers.to.other",
                "with.key.default", "overridden", "override.only", "initial.only", "over.initial"}) {
            assertThat(SecretLookup.value(context, key)).as(key)
                    .isEqualTo(context.resolvePropertyPlaceholders("{{" + key + "}}"));
        }
        assertThat(SecretLookup.value(context, "nested.env.default")).isEqualTo("inner");
        assertThat(SecretLookup.value(context, "overridden")).isEqualTo("from-the-override");
        assertThat(SecretLookup.value(context, "over.initial")).isEqualTo("from-the-file");
    }

    @Test
    void aSettingSetNowhereIsEmpty() {
        assertThat(SecretLookup.value(context, "surely.missing.key")).isEmpty();
    }

    @Test
    void aValueGivenToTheBeanWinsOverTheSetting() {
        assertThat(SecretSettings.read(context, "from.file", "given")).isEqualTo("given");
        assertThat(SecretSettings.read(context, "from.file", null)).isEqualTo("file-value");
        assertThat(SecretSettings.read(null, "from.file", null)).isNull();
    }
}
