package dev.metakit.inbox.routefiles;

import org.snakeyaml.engine.v2.exceptions.Mark;
import org.snakeyaml.engine.v2.exceptions.MarkedYamlEngineException;

import java.util.Optional;

/**
 * A route file that does not load, in one line: the file, the line and column, and the parser's words, found in the
 * failure Camel reports (whose own message, "Error pre-parsing resource", names only the file).
 */
public final class RouteFileError {
    private RouteFileError() {
    }

    /** The failure's YAML problem in one line, if a route file's YAML is what failed. */
    public static Optional<String> describe(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof MarkedYamlEngineException yaml) {
                return Optional.of(describe(yaml));
            }
        }
        return Optional.empty();
    }

    private static String describe(MarkedYamlEngineException yaml) {
        Optional<Mark> mark = yaml.getProblemMark().or(yaml::getContextMark);
        String where = mark.map(m -> "route file " + shortName(m.getName()) + ", line " + (m.getLine() + 1)
                + ", column " + (m.getColumn() + 1)).orElse("a route file");
        // the problem is what to fix; the context ("while scanning ...") is the parser's own state
        return where + ": " + oneLine(yaml.getProblem() != null ? yaml.getProblem() : yaml.getContext());
    }

    /** A resource's location as a path: {@code file:/app/routes/ingest.camel.yaml} is /app/routes/ingest.camel.yaml. */
    static String shortName(String location) {
        return location == null ? "?" : location.startsWith("file:") ? location.substring("file:".length()) : location;
    }

    private static String oneLine(String text) {
        return String.valueOf(text).replaceAll("\\s*\\R\\s*", " ").strip();
    }
}
