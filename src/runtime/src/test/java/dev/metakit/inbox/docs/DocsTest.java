package dev.metakit.inbox.docs;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The documents a user reads hold together: README.md, BENCHMARKS.md, CHANGELOG.md (when there is one) and
 * docs/*.md.
 *
 * <ul>
 *   <li>Every relative link resolves to a file or folder of the project, and every anchor ({@code page.md#anchor},
 *       {@code #anchor}) to a heading of the page it names, by GitHub's rule for a heading's anchor: lower case,
 *       every character that is not a letter, digit, space, {@code -} or {@code _} dropped, spaces as {@code -}, a
 *       repeated heading suffixed {@code -1}, {@code -2}, ...</li>
 *   <li>Every shell block of the README (a fenced block marked {@code sh}, {@code bash}, {@code shell},
 *       {@code console} or nothing) says on the line before it whether it is run, and by what:
 *       {@code <!-- run by: <path> -->} names the file that runs it (a test, the CI script), which must exist and
 *       contain each of the block's command lines as written; {@code <!-- example -->} marks a block shown, not run
 *       (it needs a real MetaKit, a registry or a host of the reader's). The README has no indented code blocks, so
 *       that no command escapes this rule.</li>
 *   <li>The settings table (docs/configuration.md) against the settings the code reads is
 *       {@code ConfigurationConsistencyTest}'s.</li>
 * </ul>
 */
class DocsTest {
    private static final Path PROJECT = Path.of(System.getProperty("user.dir"));
    private static final Pattern FENCE = Pattern.compile("^ {0,3}(```+|~~~+)\\s*([\\w-]*).*$");
    private static final Pattern HEADING = Pattern.compile("^ {0,3}#{1,6}\\s+(.*?)\\s*#*\\s*$");
    private static final Pattern LINK = Pattern.compile("!?\\[([^\\]]*)]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern INLINE_CODE = Pattern.compile("(`+)(?:(?!\\1).)+?\\1");
    private static final Pattern RUN_BY = Pattern.compile("^<!-- run by: (\\S+) -->$");
    private static final String EXAMPLE = "<!-- example -->";
    private static final Set<String> SHELL = Set.of("", "sh", "bash", "shell", "console");

    @Test
    void everyRelativeLinkAndAnchorResolves() throws IOException {
        List<String> broken = new ArrayList<>();
        Map<Path, Set<String>> anchors = new HashMap<>();
        for (Path page : pages()) {
            for (String target : links(Files.readString(page))) {
                if (target.matches("^[a-zA-Z][a-zA-Z0-9+.-]*:.*")) {
                    continue; // https:, mailto: and the like: not the project's
                }
                int hash = target.indexOf('#');
                String path = hash < 0 ? target : target.substring(0, hash);
                String anchor = hash < 0 ? null : target.substring(hash + 1);
                Path file = path.isEmpty() ? page : page.getParent().resolve(path).normalize();
                String where = PROJECT.relativize(page) + ": (" + target + ")";
                if (!file.startsWith(PROJECT) || !Files.exists(file)) {
                    broken.add(where + " names no file of the project");
                } else if (anchor != null && file.toString().endsWith(".md")
                        && !anchors.computeIfAbsent(file, DocsTest::anchorsOf).contains(anchor)) {
                    broken.add(where + " names no heading of " + PROJECT.relativize(file));
                }
            }
        }
        assertThat(broken).isEmpty();
    }

    @Test
    void everyShellBlockOfTheReadmeIsRunByANamedFileOrMarkedAsAnExample() throws IOException {
        List<String> unmarked = new ArrayList<>();
        List<String> lines = Files.readAllLines(PROJECT.resolve("README.md"));
        int shellBlocks = 0;
        for (int i = 0; i < lines.size(); i++) {
            Matcher fence = FENCE.matcher(lines.get(i));
            if (!fence.matches()) {
                continue;
            }
            int end = closingFence(lines, i, fence.group(1));
            if (SHELL.contains(fence.group(2))) {
                shellBlocks++;
                List<String> commands = commandLines(lines.subList(i + 1, end));
                String marker = lineBefore(lines, i);
                Matcher runBy = RUN_BY.matcher(marker);
                String block = "README.md line " + (i + 1) + " " + commands;
                if (runBy.matches()) {
                    Path runner = PROJECT.resolve(runBy.group(1)).normalize();
                    String text = runner.startsWith(PROJECT) && Files.isRegularFile(runner) ? Files.readString(runner) : null;
                    if (text == null) {
                        unmarked.add(block + ": run by " + runBy.group(1) + ", which is not a file of the project");
                    } else {
                        commands.stream().filter(c -> !text.contains(c))
                                .forEach(c -> unmarked.add(block + ": " + runBy.group(1) + " does not run '" + c + "'"));
                    }
                } else if (!marker.equals(EXAMPLE)) {
                    unmarked.add(block + ": neither <!-- run by: <path> --> nor " + EXAMPLE + " on the line before");
                }
            }
            i = end;
        }
        assertThat(shellBlocks).as("the README shows its commands").isPositive();
        assertThat(unmarked).isEmpty();
    }

    @Test
    void theReadmeHasNoIndentedCodeBlock() throws IOException {
        List<String> lines = Files.readAllLines(PROJECT.resolve("README.md"));
        List<String> indented = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher fence = FENCE.matcher(lines.get(i));
            if (fence.matches()) {
                i = closingFence(lines, i, fence.group(1));
            } else if (lines.get(i).startsWith("    ") && (i == 0 || lines.get(i - 1).isBlank())) {
                indented.add("line " + (i + 1) + ": " + lines.get(i).trim());
            }
        }
        assertThat(indented).as("code in the README is fenced, so that its commands are marked").isEmpty();
    }

    @Test
    void anAnchorIsGitHubsSlugOfTheHeading() {
        assertThat(anchorsOf(List.of("# metakit-inbox", "## The endpoint: `POST /hooks/metakit`", "```", "## Not a heading",
                "```", "### Past one publisher: Debezium", "## Run it", "## Run it", "## Kafka (KRaft), 4.1.1 — één")))
                .containsExactly("metakit-inbox", "the-endpoint-post-hooksmetakit", "past-one-publisher-debezium",
                        "run-it", "run-it-1", "kafka-kraft-411--één");
    }

    /** The link targets of a page, outside code blocks and code spans. */
    private static List<String> links(String page) {
        List<String> targets = new ArrayList<>();
        List<String> lines = page.lines().toList();
        for (int i = 0; i < lines.size(); i++) {
            Matcher fence = FENCE.matcher(lines.get(i));
            if (fence.matches()) {
                i = closingFence(lines, i, fence.group(1));
                continue;
            }
            Matcher link = LINK.matcher(INLINE_CODE.matcher(lines.get(i)).replaceAll(""));
            while (link.find()) {
                targets.add(link.group(2));
            }
        }
        return targets;
    }

    private static Set<String> anchorsOf(Path page) {
        try {
            return anchorsOf(Files.readAllLines(page));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** GitHub's anchors of the headings, in order. */
    static Set<String> anchorsOf(List<String> lines) {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher fence = FENCE.matcher(lines.get(i));
            if (fence.matches()) {
                i = closingFence(lines, i, fence.group(1));
                continue;
            }
            Matcher heading = HEADING.matcher(lines.get(i));
            if (heading.matches()) {
                String text = heading.group(1).replaceAll("\\[([^\\]]*)]\\([^)]*\\)", "$1");
                String slug = text.toLowerCase().replaceAll("[^\\p{L}\\p{M}\\p{N}\\p{Pc} -]", "").replace(' ', '-');
                int n = seen.merge(slug, 1, Integer::sum) - 1;
                anchors.add(n == 0 ? slug : slug + "-" + n);
            }
        }
        return anchors;
    }

    /** The index of the line that closes the fence opened at {@code open}, or the last line. */
    private static int closingFence(List<String> lines, int open, String fence) {
        for (int j = open + 1; j < lines.size(); j++) {
            String line = lines.get(j).trim();
            if (line.startsWith(fence) && line.chars().allMatch(c -> c == fence.charAt(0))) {
                return j;
            }
        }
        return lines.size() - 1;
    }

    private static String lineBefore(List<String> lines, int index) {
        for (int j = index - 1; j >= 0; j--) {
            if (!lines.get(j).isBlank()) {
                return lines.get(j).trim();
            }
        }
        return "";
    }

    /** The block's commands: its lines without comments, prompts and line continuations. */
    private static List<String> commandLines(List<String> block) {
        return block.stream().map(String::trim).map(l -> l.replaceFirst("^\\$ ", ""))
                .map(l -> l.replaceFirst("\\s*\\\\$", "")).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
    }

    private static Set<Path> pages() throws IOException {
        Set<Path> pages = new TreeSet<>();
        for (String top : List.of("README.md", "BENCHMARKS.md", "CHANGELOG.md")) {
            if (Files.exists(PROJECT.resolve(top))) {
                pages.add(PROJECT.resolve(top));
            }
        }
        try (Stream<Path> docs = Files.list(PROJECT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).forEach(pages::add);
        }
        assertThat(pages).as("the pages").contains(PROJECT.resolve("README.md"));
        return pages;
    }
}
