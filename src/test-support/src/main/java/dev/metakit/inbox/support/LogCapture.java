package dev.metakit.inbox.support;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Collects the log lines at or above a level that the whole process writes while it is open. */
public final class LogCapture extends AbstractAppender implements AutoCloseable {
    private final Level threshold;
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private LogCapture(Level threshold) {
        super("test-capture-" + System.nanoTime(), null, null, true, Property.EMPTY_ARRAY);
        this.threshold = threshold;
    }

    public static LogCapture atOrAbove(Level threshold) {
        LogCapture capture = new LogCapture(threshold);
        capture.start();
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        context.getConfiguration().getRootLogger().addAppender(capture, null, null);
        context.updateLoggers();
        return capture;
    }

    @Override
    public void append(LogEvent event) {
        if (event.getLevel().isMoreSpecificThan(threshold)) {
            lines.add(event.getLevel() + " " + event.getLoggerName() + " - "
                    + event.getMessage().getFormattedMessage()
                    + (event.getThrown() == null ? "" : " " + event.getThrown()));
        }
    }

    public List<String> lines() {
        return List.copyOf(lines);
    }

    @Override
    public void close() {
        LoggerContext context = (LoggerContext) LogManager.getContext(false);
        context.getConfiguration().getRootLogger().removeAppender(getName());
        context.updateLoggers();
        stop();
    }
}
