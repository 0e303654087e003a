package dev.metakit.inbox.db;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A health check that answers within its deadline whatever the thing it checks does. A database whose packets are
 * dropped (the socket open, nothing coming back) makes a JDBC call wait for the socket timeout, 30 s or more: the
 * check runs on a thread of its own and a probe waits for it at most {@code deadline} from the moment that attempt
 * started. An attempt still running then is reported down, "timed out after N ms", never as its last good answer.
 * <p>
 * At most one attempt runs at a time: a probe that arrives while one is running waits for that one (within the same
 * deadline, counted from when it started) instead of starting another, so a black hole holds at most one thread, and
 * probes queued behind each other (Camel's management server runs them one after the other) still each answer at
 * once. No result is kept: the first probe after an attempt ended starts a new one. Plain Java, no Camel: a host's
 * own health endpoint (Spring Boot Actuator) can call {@link #probe()} too.
 */
public final class DeadlineProbe {
    /** What a check tells: null when up, else why it is down (one line). */
    @FunctionalInterface
    public interface Check {
        String downReason() throws Exception;
    }

    /** One answer: up, or down with its reason. */
    public record Outcome(boolean up, String reason) {
        static Outcome of(String downReason) {
            return new Outcome(downReason == null, downReason);
        }
    }

    private record Attempt(long startNanos, CompletableFuture<Outcome> result) {
    }

    private final String name;
    private final Check check;
    private final long deadlineMillis;
    private final ThreadPoolExecutor runner;
    private Attempt running; // guarded by this

    public DeadlineProbe(String name, Duration deadline, Check check) {
        this.name = name;
        this.check = check;
        this.deadlineMillis = deadline.toMillis();
        // one thread, gone when idle: nothing to stop when the bean goes
        runner = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "health-" + name);
            t.setDaemon(true);
            return t;
        });
        runner.allowCoreThreadTimeOut(true);
    }

    public long deadlineMillis() {
        return deadlineMillis;
    }

    /** The check's answer, within the deadline (plus scheduling): up, or down with one line saying why. */
    public Outcome probe() {
        Attempt attempt = attempt();
        long left = attempt.startNanos() + TimeUnit.MILLISECONDS.toNanos(deadlineMillis) - System.nanoTime();
        try {
            return attempt.result().get(Math.max(0, left), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            long runningFor = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - attempt.startNanos());
            return Outcome.of(name + " check timed out after " + deadlineMillis + " ms (running for " + runningFor
                    + " ms)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Outcome.of(name + " check interrupted");
        } catch (ExecutionException e) {
            return Outcome.of(name + " check failed: " + e.getCause());
        }
    }

    private synchronized Attempt attempt() {
        if (running == null || running.result().isDone()) {
            running = new Attempt(System.nanoTime(), CompletableFuture.supplyAsync(this::runCheck, runner));
        }
        return running;
    }

    private Outcome runCheck() {
        try {
            return Outcome.of(check.downReason());
        } catch (Exception e) {
            String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            return Outcome.of(name + ": " + message.lines().findFirst().orElse(message));
        }
    }
}
