package dev.metakit.inbox.config;

/** What a failure says in one line: the first line of its root cause's message. */
public final class RootCause {
    private RootCause() {
    }

    /** The first line of the innermost cause's message, or that cause's class name when it has none. */
    public static String message(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
        return message.lines().findFirst().orElse(message);
    }
}
