package dev.metakit.inbox.docs;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What README.md and docs/*.md claim of the code, read from the pages as they are (nothing here lists a page's
 * claims, so an edit of a page is checked as it stands):
 *
 * <ul>
 *   <li>every {@code metakit.*} setting named in a code span is a key the bundle reads (application.properties, the
 *       starter's own keys) or a name its spans and logging context carry, and where a page gives its default (`key` ... default `value`, or "(`key`, 16)") that is the shipped
 *       default; the environment variables are {@code ConfigurationConsistencyTest}'s;</li>
 *   <li>every command names what exists: a script of the project ({@code ./run.sh}, {@code bench/*.sh}) and each of
 *       its {@code --flags}, a Maven profile ({@code -Pname}) of a pom; every {@code -Dproperty} a page passes is one
 *       a pom ({@code ${name}}) or the code ({@code "name"}) reads, or Maven's, its plugins', the JVM's or Camel's;</li>
 *   <li>every log line a page quotes (a code span of several words after "log", "logs", "line", "WARN" or "ERROR", or
 *       an indented block after a paragraph that introduces a line or a message with a colon) is text the code
 *       writes: each literal part of it (between placeholders such as {@code ...}, {@code N}, {@code <id>} and
 *       numbers) is in the project's sources or in a class of the libraries that log it.</li>
 * </ul>
 */
class DocClaimsTest {
    private static final Path PROJECT = Path.of(System.getProperty("user.dir"));
    private static final Pattern CODE_SPAN = Pattern.compile("`([^`\\n]+)`");
    private static final Pattern KEY = Pattern.compile("(?<![\\w.$/{:-])metakit\\.[a-z][a-z0-9_-]*(?:\\.[a-z][a-z0-9_-]*)*");
    private static final Pattern KEY_DEFAULT = Pattern.compile(
            "`(metakit\\.[a-z0-9.-]+)`[^`.;]{0,12}?\\bdefault(?:s to|:)?\\s+`?([^`,;)\\s]+)`?");
    /** "(`metakit.database.pool-size`, 16)": a key and its default as a number in parentheses. */
    private static final Pattern KEY_NUMBER = Pattern.compile("\\(`(metakit\\.[a-z0-9.-]+)`,\\s+(\\d+)\\)");
    private static final Pattern SCRIPT = Pattern.compile("(?<![\\w/.-])((?:\\./|bench/|ops/|\\.ci/)[\\w./-]*\\.sh|\\./run\\.sh)\\b");
    private static final Pattern PROFILE = Pattern.compile("(?<=\\s)-P([\\w,-]+)");
    private static final Pattern SYSTEM_PROPERTY = Pattern.compile("(?<=[\\s`(])-D([A-Za-z][\\w.-]*)");
    /** Properties of Maven and its plugins, of the JVM and of Camel a page may pass (not the project's own). */
    private static final Pattern MAVENS_OWN = Pattern.compile(
            "(test|it\\.test|skipTests|skipITs|maven\\..*|surefire\\..*|failsafe\\..*|quarkus\\..*|jib\\..*|gpg\\..*"
                    + "|altDeploymentRepository|revision|exec\\..*|jmh\\..*|aether\\..*|sun\\..*|jdk\\..*|java\\..*"
                    + "|camel\\..*)");
    private static final Pattern LOG_INTRO = Pattern.compile("(?i)\\b(logs?|logged|line|warn|error)\\b[^.]{0,60}$");
    /** What a quote puts in place of a value: ..., N, <id>, {x}, numbers, and words holding one (classpath:x/*.yaml, 'x', K=v). */
    private static final Pattern PLACEHOLDER = Pattern.compile(
            "\\.\\.\\.|…|<[^>]*>|\\{[^}]*}|\\bN\\b|\\d+(?:[.,]\\d+)*|\\S*[:/*'=](?=\\S)\\S*");
    /**
     * What introduces a log line shown as an indented block: a paragraph ending in a colon after a word of logging or
     * of a message ("one line saying what to run, for example:", "the exception ... says which setting:")
     */
    private static final Pattern INDENTED_INTRO = Pattern.compile(
            "(?i)\\b(logs?|logged|line|says|saying|names)\\b[^.]{0,80}:\\s*$");
    /** the WARN line "Delivery not stored, ..." */
    private static final Pattern QUOTED_LINE = Pattern.compile("(?i)\\b(?:WARN|ERROR|INFO|DEBUG) lines?\\s+\"([^\"]+)\"");

    @Test
    void everySettingAPageNamesIsAKeyTheBundleReadsWithTheDefaultItShips() throws IOException {
        Properties shipped = new Properties();
        shipped.load(new StringReader(Files.readString(PROJECT.resolve(
                "src/bundle/src/main/resources/META-INF/metakit-inbox-defaults.properties"))));
        Properties starter = new Properties();
        starter.load(new StringReader(Files.readString(PROJECT.resolve(
                "src/spring-boot-starter/src/main/resources/metakit-defaults.properties"))));
        Set<String> keys = new TreeSet<>(shipped.stringPropertyNames());
        keys.addAll(starter.stringPropertyNames());
        Set<String> tables = bundleTables();
        Set<String> traceNames = traceNames();

        List<String> unknown = new ArrayList<>();
        List<String> wrongDefaults = new ArrayList<>();
        for (Path page : pages()) {
            String text = prose(page);
            Matcher span = CODE_SPAN.matcher(text);
            while (span.find()) {
                Matcher key = KEY.matcher(span.group(1));
                while (key.find()) {
                    String name = key.group();
                    boolean prefix = span.group(1).startsWith(name + ".*") || span.group(1).startsWith(name + "*");
                    if (!keys.contains(name) && !tables.contains(name.substring("metakit.".length()))
                            && !traceNames.contains(name) && !prefix && keys.stream().noneMatch(k -> k.startsWith(name + "."))) {
                        unknown.add(name + " in " + PROJECT.relativize(page));
                    }
                }
            }
            for (Pattern defaults : List.of(KEY_DEFAULT, KEY_NUMBER)) {
                wrongDefaults.addAll(statedDefaultsOtherThanShipped(defaults.matcher(text), page, shipped, starter));
            }
        }
        assertThat(unknown).as("settings the bundle does not read").isEmpty();
        assertThat(wrongDefaults).as("defaults other than the shipped ones").isEmpty();
    }

    private static List<String> statedDefaultsOtherThanShipped(Matcher stated, Path page, Properties shipped,
            Properties starter) {
        List<String> wrong = new ArrayList<>();
        while (stated.find()) {
            String value = shipped.getProperty(stated.group(1), starter.getProperty(stated.group(1)));
            if (value != null && !value.equals(stated.group(2))) {
                wrong.add(stated.group(1) + " default " + stated.group(2) + " (ships " + value + ") in "
                        + PROJECT.relativize(page));
            }
        }
        return wrong;
    }

    @Test
    void everyCommandNamesAScriptFlagProfileAndPropertyThatExist() throws IOException {
        String poms = String.join("\n", texts(List.of("pom.xml", "src", "examples", "bench"), "pom.xml"));
        String code = String.join("\n", texts(List.of("src", "examples", "bench", "run.sh", ".ci"), ".java", ".sh", ".xml", ".properties"));
        List<String> wrong = new ArrayList<>();
        for (Path page : pages()) {
            for (String command : commands(page)) {
                String where = " (" + PROJECT.relativize(page) + ": " + command + ")";
                Matcher script = SCRIPT.matcher(command);
                while (script.find()) {
                    Path file = PROJECT.resolve(script.group(1));
                    if (!Files.isRegularFile(file)) {
                        wrong.add("no script " + script.group(1) + where);
                        continue;
                    }
                    String body = Files.readString(file);
                    Matcher flag = Pattern.compile("(?<=\\s)(--[a-z][\\w-]*)").matcher(command.substring(script.end()));
                    while (flag.find()) {
                        if (!body.contains(flag.group(1))) {
                            wrong.add(script.group(1) + " has no " + flag.group(1) + where);
                        }
                    }
                }
                if (command.matches("^(\\S+=\\S*\\s+)*mvn\\b.*")) {
                    Matcher profile = PROFILE.matcher(command);
                    while (profile.find()) {
                        for (String id : profile.group(1).split(",")) {
                            if (!poms.contains("<id>" + id + "</id>")) {
                                wrong.add("no Maven profile " + id + where);
                            }
                        }
                    }
                }
            }
            Matcher property = SYSTEM_PROPERTY.matcher(Files.readString(page));
            while (property.find()) {
                String name = property.group(1);
                if (!MAVENS_OWN.matcher(name).matches() && !poms.contains("${" + name + "}")
                        && !poms.contains("<" + name + ">") && !code.contains("\"" + name + "\"")) {
                    wrong.add("nothing reads -D" + name + " (" + PROJECT.relativize(page) + ")");
                }
            }
        }
        assertThat(wrong).isEmpty();
    }

    @Test
    void everyLogLineAPageQuotesIsTextTheCodeWrites() throws IOException {
        // a message split over string literals joined with + reads as one, its quotes unescaped
        String sources = String.join("\n", texts(List.of("src", "routes", "run.sh"), ".java", ".yaml", ".sh"))
                .replaceAll("\"\\s*\\+\\s*\"", "").replace("\\\"", "\"");
        List<String> missing = new ArrayList<>();
        List<String[]> inLibraries = new ArrayList<>();
        for (Path page : pages()) {
            for (String quoted : quotedLogLines(prose(page))) {
                for (String part : PLACEHOLDER.split(quoted)) {
                    String literal = part.strip();
                    if (literal.length() >= 12 && !writtenBy(sources, literal)) {
                        inLibraries.add(new String[] {literal, quoted + " in " + PROJECT.relativize(page)});
                    }
                }
            }
        }
        for (String[] literal : inLibraries) {
            if (!inClassPath(literal[0])) {
                missing.add(literal[0] + "  (from " + literal[1] + ")");
            }
        }
        assertThat(missing).as("quoted log text found neither in the sources nor in the libraries").isEmpty();
    }

    /** The log lines a page quotes: code spans of several words right after a word of logging, and "..." after one. */
    private static List<String> quotedLogLines(String text) {
        List<String> quoted = new ArrayList<>();
        Matcher span = CODE_SPAN.matcher(text);
        while (span.find()) {
            String candidate = span.group(1);
            String before = text.substring(Math.max(0, span.start() - 80), span.start()).replace('\n', ' ');
            if (candidate.split("\\s+").length >= 4 && LOG_INTRO.matcher(before).find()
                    && !candidate.matches("^(mvn|curl|java|camel|\\./|select|SELECT|kill|docker|openssl)\\b.*")
                    && !candidate.contains("=") && !candidate.contains("{{")) {
                quoted.add(candidate);
            }
        }
        Matcher line = QUOTED_LINE.matcher(text.replace('\n', ' '));
        while (line.find()) {
            quoted.add(line.group(1));
        }
        quoted.addAll(indentedLogLines(text));
        return quoted;
    }

    /**
     * The log lines a page shows as indented blocks after a paragraph that introduces one ({@link #INDENTED_INTRO});
     * a block's lines are one line of the log, wrapped.
     */
    private static List<String> indentedLogLines(String text) {
        List<String> quoted = new ArrayList<>();
        String[] lines = text.split("\n", -1);
        String intro = "";
        for (int i = 0; i < lines.length; i++) {
            boolean blockStarts = lines[i].startsWith("    ") && !lines[i].isBlank() && i > 0 && lines[i - 1].isBlank();
            if (!blockStarts) {
                if (!lines[i].isBlank()) {
                    intro = lines[i];
                }
                continue;
            }
            StringBuilder block = new StringBuilder();
            while (i < lines.length && lines[i].startsWith("    ")) {
                block.append(block.isEmpty() ? "" : " ").append(lines[i].strip());
                i++;
            }
            if (INDENTED_INTRO.matcher(intro).find()) {
                quoted.add(block.toString());
            }
            intro = "";
        }
        return quoted;
    }

    /**
     * Whether the sources write the text: as it is, or as runs of words each in the sources with single words between
     * them in place of the values the code puts there (a role's, a schema's name), at most one word in four.
     */
    static boolean writtenBy(String sources, String literal) {
        if (sources.contains(literal)) {
            return true;
        }
        String[] words = literal.split("\\s+");
        int values = 0;
        int from = 0;
        while (from < words.length) {
            int to = words.length;
            while (to > from && !runInSources(sources, words, from, to)) {
                to--;
            }
            if (to == from) {
                values++;
                from++;
            } else {
                from = to;
            }
        }
        return values * 4 <= words.length;
    }

    private static boolean runInSources(String sources, String[] words, int from, int to) {
        String run = String.join(" ", java.util.Arrays.copyOfRange(words, from, to));
        return run.length() >= 8 && sources.contains(run);
    }

    /** Whether a class on the test class path holds the text as a constant (Camel's own log lines). */
    private static boolean inClassPath(String text) throws IOException {
        byte[] wanted = text.getBytes(StandardCharsets.UTF_8);
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!entry.endsWith(".jar") || !entry.contains("camel")) {
                continue;
            }
            try (ZipFile jar = new ZipFile(entry)) {
                for (ZipEntry e : java.util.Collections.list(jar.entries())) {
                    if (e.getName().endsWith(".class")) {
                        try (InputStream in = jar.getInputStream(e)) {
                            if (indexOf(in.readAllBytes(), wanted) >= 0) {
                                return true;
                            }
                        }
                    }
                }
            }
        }
        return false;
    }

    private static int indexOf(byte[] haystack, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (haystack[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** The bundle's tables (schema-qualified names such as metakit.positions are not settings). */
    /** The names of the bundle's span attributes and logging context (metakit.account.id), which are not settings. */
    private static Set<String> traceNames() throws IOException {
        Set<String> names = new TreeSet<>();
        Pattern literal = Pattern.compile("\"(metakit\\.[a-z][a-z0-9._-]*)\"");
        for (String file : List.of("trace/LogContext.java", "worker/ReconcileSpans.java")) {
            Matcher m = literal.matcher(Files.readString(PROJECT.resolve(
                    "src/bundle/src/main/java/dev/metakit/inbox/" + file)));
            while (m.find()) {
                names.add(m.group(1));
            }
        }
        return names;
    }

    private static Set<String> bundleTables() throws IOException {
        Set<String> tables = new TreeSet<>(Set.of("metakit_schema_history"));
        Pattern create = Pattern.compile("(?i)create\\s+(?:table|sequence|index|view)\\s+(?:if\\s+not\\s+exists\\s+)?(\\w+)");
        try (Stream<Path> sql = Files.walk(PROJECT.resolve("src/bundle/src/main/resources/db"))) {
            for (Path file : sql.filter(p -> p.toString().endsWith(".sql")).toList()) {
                Matcher m = create.matcher(Files.readString(file));
                while (m.find()) {
                    tables.add(m.group(1).toLowerCase());
                }
            }
        }
        return tables;
    }

    /** The commands of a page: the lines of its shell blocks and its code spans that start with a command. */
    private static List<String> commands(Path page) throws IOException {
        List<String> commands = new ArrayList<>();
        boolean inShell = false;
        StringBuilder continued = new StringBuilder();
        for (String line : Files.readAllLines(page)) {
            String trimmed = line.trim();
            if (trimmed.startsWith("```")) {
                inShell = !inShell && trimmed.matches("```(sh|bash|shell|console)?");
                continue;
            }
            if (inShell || line.startsWith("    ") && !trimmed.startsWith("-") && !trimmed.startsWith("<")) {
                if (trimmed.startsWith("#")) {
                    continue;
                }
                continued.append(trimmed.replaceFirst("\\\\$", "")).append(' ');
                if (!trimmed.endsWith("\\")) {
                    commands.add(continued.toString().trim());
                    continued.setLength(0);
                }
            }
        }
        Matcher span = CODE_SPAN.matcher(prose(page));
        while (span.find()) {
            if (span.group(1).matches("^(\\S+=\\S*\\s+)*(mvn|\\./|bench/|bash|sh) .*")) {
                commands.add(span.group(1));
            }
        }
        return commands;
    }

    /** The page without its fenced blocks. */
    private static String prose(Path page) throws IOException {
        StringBuilder text = new StringBuilder();
        boolean fenced = false;
        for (String line : Files.readAllLines(page)) {
            if (line.trim().startsWith("```")) {
                fenced = !fenced;
                continue;
            }
            if (!fenced) {
                text.append(line).append('\n');
            }
        }
        return text.toString();
    }

    private static List<String> texts(List<String> roots, String... endings) throws IOException {
        List<String> texts = new ArrayList<>();
        for (String root : roots) {
            try (Stream<Path> walk = Files.walk(PROJECT.resolve(root))) {
                for (Path file : walk.filter(Files::isRegularFile)
                        .filter(p -> !p.toString().contains("/target") && !p.toString().contains("/node_modules/"))
                        .filter(p -> Stream.of(endings).anyMatch(e -> p.toString().endsWith(e))).toList()) {
                    texts.add(Files.readString(file));
                }
            }
        }
        return texts;
    }

    private static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(PROJECT.resolve("README.md")));
        try (Stream<Path> docs = Files.list(PROJECT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }
}
