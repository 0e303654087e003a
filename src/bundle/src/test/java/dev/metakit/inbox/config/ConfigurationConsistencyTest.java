package dev.metakit.inbox.config;

import dev.metakit.inbox.support.ShippedProperties;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * application.properties, the settings table of docs/configuration.md and the code name every setting the same way:
 * each key is read from the variable Camel derives from it, a few also from one alias ({@link EnvironmentNames}), the
 * table gives each key's default as application.properties has it, and no file speaks of a variable that is neither.
 */
class ConfigurationConsistencyTest {
    private static final Path PROJECT = Path.of(System.getProperty("user.dir"));
    /** {@code {{env:DERIVED:default}}} or {@code {{env:DERIVED:{{env:ALIAS:default}}}}}. */
    private static final Pattern ENV_PLACEHOLDER =
            Pattern.compile("\\{\\{env:([A-Z0-9_]+):(?:\\{\\{env:([A-Z0-9_]+):)?.*");
    /** The page that lists every setting. */
    private static final String SETTINGS_PAGE = "docs/configuration.md";
    /** A row of its table: {@code | `key` | `VARIABLE`[, alias `ALIAS`] | meaning | default |}. */
    private static final Pattern SETTINGS_ROW =
            Pattern.compile("^\\| `([a-z][a-z0-9.-]*)` \\| `([A-Z0-9_]+)`(?:, alias `([A-Z0-9_]+)`)? \\|.*\\| ([^|]+) \\|$");
    /** How the table says that application.properties gives a key no value, and what that means instead. */
    private static final Set<String> NO_VALUE_WORDS = Set.of("unset", "empty", "required, except in the dev run", "required, except in the dev run or with a stored secret", "the only one MetaKit lists", "never",
            "embedded PostgreSQL", "from the URL", "the host name");
    private static final String STARTER_DEFAULTS = "src/spring-boot-starter/src/main/resources/metakit-defaults.properties";
    /** Variables that are not keys, and why. */
    private static final Map<String, String> NOT_KEYS = Map.of(
            "METAKIT_LOG_FORMAT", "read by log4j2.properties when the JVM starts, before any configuration",
            "METAKIT_SANDBOX_SEED", "the sandbox's own knob",
            "METAKIT_SANDBOX_RATE", "the sandbox's own knob",
            "METAKIT_BUILD_DIR", "the bench scripts' build directory",
            "METAKIT_TEST_DATABASE_URL", "the tests' own PostgreSQL (support/ExternalTestServer)",
            "METAKIT_TEST_DATABASE_USER", "the tests' own PostgreSQL (support/ExternalTestServer)",
            "METAKIT_TEST_DATABASE_PASSWORD", "the tests' own PostgreSQL (support/ExternalTestServer)");

    /** key → [derived variable, alias or null], for every key application.properties reads from the environment. */
    private static Map<String, String[]> propertiesVariables() throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(Files.readString(ShippedProperties.file())));
        Map<String, String[]> variables = new TreeMap<>();
        for (String key : p.stringPropertyNames()) {
            Matcher m = ENV_PLACEHOLDER.matcher(p.getProperty(key).trim());
            if (m.matches()) {
                variables.put(key, new String[] {m.group(1), m.group(2)});
            } else {
                assertThat(key).as("a metakit.* key is read from the environment: " + key).doesNotStartWith("metakit.");
            }
        }
        return variables;
    }

    /** key → [derived variable, alias or null, default as written], from the settings table. */
    private static Map<String, String[]> documentedSettings() throws IOException {
        String page = Files.readString(PROJECT.resolve(SETTINGS_PAGE));
        int start = page.indexOf("\n## Settings\n");
        assertThat(start).as(SETTINGS_PAGE + " has a section \"Settings\"").isPositive();
        int end = page.indexOf("\n## ", start + 1);
        String section = page.substring(start, end < 0 ? page.length() : end);
        Map<String, String[]> settings = new TreeMap<>();
        section.lines().map(SETTINGS_ROW::matcher).filter(Matcher::matches)
                .forEach(m -> settings.put(m.group(1), new String[] {m.group(2), m.group(3), m.group(4).trim()}));
        // one table: a blank line inside it would end it, leaving the rows after it as stray text
        String table = section.substring(section.indexOf("\n| key |") + 1);
        assertThat(table.lines().skip(1).takeWhile(l -> l.startsWith("|")).count() - 1)
                .as("rows of the one settings table").isEqualTo(settings.size());
        return settings;
    }

    @Test
    void everyKeyIsReadFromTheVariableCamelDerivesFromItAndAnAliasOnlyWhereEnvironmentNamesHasOne() throws Exception {
        Map<String, String[]> variables = propertiesVariables();
        Map<String, String> aliases = new TreeMap<>();
        variables.forEach((key, names) -> {
            assertThat(names[0]).as(key).isEqualTo(EnvironmentNames.derived(key));
            if (names[1] != null) {
                aliases.put(names[1], key);
            }
        });
        assertThat(aliases).isEqualTo(new TreeMap<>(EnvironmentNames.ALIASES));
    }

    /**
     * key → [derived variable, null] for the keys only a host platform reads (the Spring Boot starter's
     * metakit.route-files): in the starter's defaults, not in application.properties; Boot's relaxed binding reads each
     * from the same derived name.
     */
    private static Map<String, String[]> hostOnlyVariables() throws IOException {
        Set<String> standalone = propertiesKeys();
        Map<String, String[]> variables = new TreeMap<>();
        for (String key : load(STARTER_DEFAULTS).stringPropertyNames()) {
            if (key.startsWith("metakit.") && !standalone.contains(key)) {
                variables.put(key, new String[] {EnvironmentNames.derived(key), null});
            }
        }
        return variables;
    }

    @Test
    void theSettingsTableListsEveryKeyWithTheSameVariablesAsApplicationPropertiesAndTheStartersOwn() throws Exception {
        Map<String, String[]> properties = propertiesVariables();
        Map<String, String[]> hostOnly = hostOnlyVariables();
        assertThat(hostOnly).as("keys only the Spring Boot starter reads").containsOnlyKeys("metakit.route-files");
        properties.putAll(hostOnly);
        Map<String, String[]> documented = documentedSettings();
        assertThat(documented.keySet()).as("keys in " + SETTINGS_PAGE).isEqualTo(properties.keySet());
        properties.forEach((key, names) ->
                assertThat(Arrays.copyOf(documented.get(key), 2)).as(key).containsExactly(names));
    }

    @Test
    void theSettingsTableGivesEachKeyTheDefaultApplicationPropertiesHas() throws Exception {
        Map<String, String> defaults = environmentDefaults();
        // a key only the starter reads has the starter's default
        Properties starter = load(STARTER_DEFAULTS);
        hostOnlyVariables().keySet().forEach(key -> defaults.put(key, starter.getProperty(key)));
        Map<String, String> differing = new TreeMap<>();
        documentedSettings().forEach((key, row) -> {
            String written = row[2].replace("`", "");
            String shipped = defaults.get(key);
            boolean agrees = shipped == null || shipped.isEmpty() ? NO_VALUE_WORDS.contains(written) : shipped.equals(written);
            if (!agrees) {
                differing.put(key, "application.properties '" + shipped + "', " + SETTINGS_PAGE + " '" + row[2] + "'");
            }
        });
        assertThat(differing).as("an empty default is written as one of " + NO_VALUE_WORDS).isEmpty();
    }

    @Test
    void theDerivedNameWinsOverTheAliasEvenEmptyAndTheAliasOverTheDefault() {
        EnvironmentNames.ALIASES.forEach((alias, key) -> {
            String derived = EnvironmentNames.derived(key);
            Map<String, String> both = Map.of(derived, "from-derived", alias, "from-alias");
            assertThat(ShippedProperties.resolver(ShippedProperties.file(), both::get).apply(key)).as(key)
                    .contains("from-derived");
            assertThat(EnvironmentNames.read(key, both::get)).as(key).contains("from-derived");
            Map<String, String> aliasOnly = Map.of(alias, "from-alias");
            assertThat(ShippedProperties.resolver(ShippedProperties.file(), aliasOnly::get).apply(key)).as(key)
                    .contains("from-alias");
            assertThat(EnvironmentNames.read(key, aliasOnly::get)).as(key).contains("from-alias");
            Map<String, String> emptyDerived = Map.of(derived, "", alias, "from-alias");
            assertThat(ShippedProperties.resolver(ShippedProperties.file(), emptyDerived::get).apply(key)).as(key)
                    .contains("");
            assertThat(EnvironmentNames.read(key, emptyDerived::get)).as(key).isEmpty();
        });
    }

    @Test
    void aFormerVariableStopsStartupNamingItsVariableNow() throws Exception {
        Set<String> variables = new TreeSet<>();
        propertiesVariables().values().forEach(names -> variables.add(names[0]));
        assertThat(variables).containsAll(EnvironmentNames.RENAMED.values());
        assertThat(variables).doesNotContainAnyElementsOf(EnvironmentNames.RENAMED.keySet());
        assertThatThrownBy(() -> EnvironmentNames.refuseRenamed(Map.of("METAKIT_DB_POOL_SIZE", "32")::get))
                .isInstanceOf(ConfigurationException.class)
                .hasMessage("METAKIT_DB_POOL_SIZE is now METAKIT_DATABASE_POOL_SIZE: rename it");
    }

    @Test
    void everyKeyTheRoutesAndTheCodeUseIsInApplicationProperties() throws Exception {
        Set<String> known = propertiesKeys();
        Set<String> unknown = new TreeSet<>();
        usedKeys("routes", "src/bundle/src/main/java", "src/runtime/src/main/java").forEach((key, file) -> {
            if (!known.contains(key)) {
                unknown.add(key + " in " + file);
            }
        });
        assertThat(unknown).isEmpty();
    }

    @Test
    void everyKeyTheRoutesUseHasADefaultInTheSpringBootStarterAndTheSameDefaultAsTheStandaloneRun() throws Exception {
        Properties starter = load(STARTER_DEFAULTS);
        assertThat(starter.stringPropertyNames()).containsAll(usedKeys("routes").keySet());
        Map<String, String> differing = new TreeMap<>();
        shippedDefaults().forEach((key, value) -> {
            if (starter.containsKey(key) && !value.equals(starter.getProperty(key))) {
                differing.put(key, value + " / " + starter.getProperty(key));
            }
        });
        // the settings a host platform changes (the starter's defaults file says why): the bundle's own pool on the
        // host's database (spring.datasource.*)
        assertThat(differing).containsOnlyKeys("metakit.database.url", "metakit.database.user",
                "metakit.database.password");
    }

    @Test
    void theBundlesDefaultsAreEveryKeyWithTheStandaloneRunsDefault() throws Exception {
        // the fallback for every metakit.* placeholder in a camel-main, plain CamelContext or Quarkus host: a key
        // missing there fails every such host at its first {{placeholder}}, far from the change that added it
        Properties bundle = load("src/bundle/src/main/resources/" + BundleDefaults.RESOURCE);
        assertThat(new TreeMap<>(bundle)).as("the bundle's defaults against the standalone run's")
                .isEqualTo(new TreeMap<>(shippedDefaults()));
    }

    /** key → its default in application.properties, for every key read from the environment. */
    private static Map<String, String> environmentDefaults() throws IOException {
        Pattern withDefault = Pattern.compile("\\{\\{env:[A-Z0-9_]+:(?:\\{\\{env:[A-Z0-9_]+:)?([^}]*)}}(?:}})?");
        Map<String, String> defaults = new TreeMap<>();
        Properties shipped = new Properties();
        shipped.load(new StringReader(Files.readString(ShippedProperties.file())));
        for (String key : propertiesVariables().keySet()) {
            Matcher m = withDefault.matcher(shipped.getProperty(key).trim());
            defaults.put(key, m.matches() ? m.group(1) : null);
        }
        return defaults;
    }

    /** metakit.* key → its default in application.properties (the value after its environment placeholders). */
    private static Map<String, String> shippedDefaults() throws IOException {
        Pattern withDefault = Pattern.compile("\\{\\{env:[A-Z0-9_]+:(?:\\{\\{env:[A-Z0-9_]+:)?([^}]*)}}(?:}})?");
        Properties shipped = new Properties();
        shipped.load(new StringReader(Files.readString(ShippedProperties.file())));
        Map<String, String> defaults = new TreeMap<>();
        for (String key : shipped.stringPropertyNames()) {
            if (key.startsWith("metakit.")) {
                String standalone = shipped.getProperty(key).trim();
                Matcher m = withDefault.matcher(standalone);
                defaults.put(key, m.matches() ? m.group(1) : standalone);
            }
        }
        return defaults;
    }

    private static Properties load(String file) throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(Files.readString(PROJECT.resolve(file))));
        return p;
    }

    /** key → the first file that uses it as {@code {{key}}} or {@code {{metakit-millis:key}}}. */
    private static Map<String, Path> usedKeys(String... roots) throws IOException {
        Pattern used = Pattern.compile("\\{\\{(?:metakit-millis:)?(metakit\\.[a-z0-9.-]+)(?::[^}]*)?}}");
        Map<String, Path> keys = new TreeMap<>();
        for (Path file : files(roots)) {
            Matcher m = used.matcher(Files.readString(file));
            while (m.find()) {
                keys.putIfAbsent(m.group(1), PROJECT.relativize(file));
            }
        }
        return keys;
    }

    @Test
    void everyVariableTheDocsTheRoutesAndTheCodeNameIsAKeysVariableOrAlias() throws Exception {
        Set<String> known = new TreeSet<>(NOT_KEYS.keySet());
        hostOnlyVariables().values().forEach(names -> known.add(names[0]));
        propertiesVariables().values().forEach(names -> {
            known.add(names[0]);
            if (names[1] != null) {
                known.add(names[1]);
            }
        });
        Pattern variable = Pattern.compile("\\b(?:METAKIT|CAMEL_SERVER|CAMEL_MANAGEMENT)_[A-Z0-9_]*[A-Z0-9]\\b(?!_)");
        Set<String> unknown = new TreeSet<>();
        for (Path file : files("README.md", "BENCHMARKS.md", "docs", "routes", "src/bundle/src/main", "src/runtime/src/main",
                "src/sandbox/src/main", "src/spring-boot-starter/src/main",
                "src/quarkus/runtime/src/main", "src/quarkus/deployment/src/main", "examples/quarkus/src/main",
                "examples/spring-boot/src/main", "run.sh", "bench", "pom.xml")) {
            Matcher m = variable.matcher(Files.readString(file));
            while (m.find()) {
                boolean formerName = EnvironmentNames.RENAMED.containsKey(m.group())
                        && file.endsWith(Path.of("config", "EnvironmentNames.java"));
                if (!known.contains(m.group()) && !formerName) {
                    unknown.add(m.group() + " in " + PROJECT.relativize(file));
                }
            }
        }
        assertThat(unknown).isEmpty();
    }

    private static Set<String> propertiesKeys() throws IOException {
        Properties p = new Properties();
        p.load(new StringReader(Files.readString(ShippedProperties.file())));
        return p.stringPropertyNames();
    }

    private static Iterable<Path> files(String... roots) throws IOException {
        Set<Path> files = new TreeSet<>();
        for (String root : roots) {
            try (Stream<Path> walk = Files.walk(PROJECT.resolve(root))) {
                walk.filter(Files::isRegularFile)
                        .filter(f -> f.toString().matches(".*\\.(java|ya?ml|md|properties|sh|xml)$"))
                        .forEach(files::add);
            }
        }
        return files;
    }
}
