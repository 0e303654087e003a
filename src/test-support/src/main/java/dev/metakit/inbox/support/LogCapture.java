package dev.metakit.inbox.support;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

/** Collects the log lines at or above a level that the whole process writes while it is open. */
public final class LogCapture extends AbstractAppender implements AutoCloseable {
    private final Level threshold;
    private final Predicate<String> keep;
    private final List<Line> lines = new CopyOnWriteArrayList<>();
    private final AtomicLong seen = new AtomicLong();

    private LogCapture(Level threshold, Predicate<String> keep) {
        super("test-capture-" + System.nanoTime(), null, null, true, Property.EMPTY_ARRAY);
        this.threshold = threshold;
        this.keep = keep;
    }

    public static LogCapture atOrAbove(Level threshold) {
        return keeping(threshold, line -> true);
    }

    /**
     * Counts every line at or above {@code threshold} and keeps only those that {@code keep} accepts: for a log too
     * large to hold (every logger at TRACE).
     */
    public static LogCapture keeping(Level threshold, Predicate<String> keep) {
        LogCapture capture = new LogCapture(threshold, keep);
        capture.start();
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        context.getConfiguration().getRootLogger().addAppender(capture, null, null);
        context.updateLoggers();
        return capture;
    }

    @Override
    public void append(LogEvent event) {
        if (event.getLevel().isMoreSpecificThan(threshold)) {
            seen.incrementAndGet();
            String line = event.getLevel() + " " + event.getLoggerName() + " - "
                    + event.getMessage().getFormattedMessage()
                    + (event.getThrown() == null ? "" : " " + event.getThrown());
            if (keep.test(line)) {
                lines.add(new Line(line, event.getContextData().toMap()));
            }
        }
    }

    /** A line kept, "LEVEL logger - message", and its logging context (MDC) when it was written. */
    public record Line(String text, Map<String, String> context) {
    }

    /** The lines kept, in the order they were written. */
    public List<String> lines() {
        return lines.stream().map(Line::text).toList();
    }

    /** The lines kept with their logging context, in the order they were written. */
    public List<Line> linesWithContext() {
        return List.copyOf(lines);
    }

    /** How many lines at or above the threshold were written, kept or not. */
    public long seen() {
        return seen.get();
    }

    @Override
    public void close() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        context.getConfiguration().getRootLogger().removeAppender(getName());
        context.updateLoggers();
        stop();
    }
}
