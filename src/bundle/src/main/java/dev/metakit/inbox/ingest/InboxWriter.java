package dev.metakit.inbox.ingest;

import dev.metakit.inbox.inbox.InboxIntake;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Group commit for the ack path. Each caller hands over one delivery and blocks until the statement that holds its
 * row has committed; concurrent deliveries are gathered into one multi-row
 * {@code INSERT ... ON CONFLICT DO NOTHING RETURNING delivery_key}, so the database does one commit for many
 * requests. A caller learns whether its key was new or a duplicate; if its batch fails, or the commit does not
 * come within the timeout, it gets {@link InboxUnavailableException} and must not acknowledge. At a moderate rate,
 * where deliveries would rarely meet in the queue, a small batch waits a moment for company
 * ({@link CommitGathering}).
 * <p>
 * The timeout counts from the delivery's arrival (the HTTP request's), so the time it queued before it reached the
 * writers counts too: a delivery that waited past it is refused before its commit ({@link InboxOverloadedException}),
 * and one whose commit does not come in time is answered 503 at the deadline. While the oldest delivery waiting for
 * the writers has waited longer than half the timeout ({@link #saturated()}), the database is not keeping up: new
 * deliveries are better refused at once than queued behind a wait they would not survive.
 */
public final class InboxWriter implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(InboxWriter.class);

    private final DataSource dataSource;
    private final long timeoutMillis;
    private final int maxBatch;
    private final BlockingQueue<Pending> queue;
    private final List<Thread> writers = new ArrayList<>();
    private volatile boolean running = true;
    /** when the last batch failed ({@link #failureClock}), 0 after a success */
    private volatile long lastFailureNanos;
    /** the clock of the fail-fast window: System.nanoTime, or a test's */
    private final LongSupplier failureClock;
    private static final long FAIL_FAST_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** PostgreSQL's SQLSTATE for a statement cancelled (here: by its query timeout, the batch's deadline) */
    private static final String QUERY_CANCELED = "57014";
    private final long saturatedAfterNanos;
    /** each writer's batch under way, for the deadline watch (an insert can hang on a connection the network lost) */
    private final AtomicReferenceArray<List<Pending>> underWay;
    /** how often the deadline watch looks: a delivery past its deadline is answered 503 at most this late */
    private static final long WATCH_PERIOD_MILLIS = 10;
    private final Thread deadlineWatch;
    private final LateInsertCancels lateInsertCancels = new LateInsertCancels();
    private final CommitGathering gathering = new CommitGathering();
    /**
     * One writer takes from the queue at a time: while it gathers company for a small batch the others wait their
     * turn instead of splitting the arrivals into batches as small (the insert itself runs outside it)
     */
    private final ReentrantLock takeTurn = new ReentrantLock();

    private record Pending(Delivery delivery, long arrivalNanos, long deadlineNanos,
                           CompletableFuture<Boolean> stored) {
    }

    public InboxWriter(DataSource dataSource, long timeoutMillis, int maxBatch, int writerThreads) {
        this(dataSource, timeoutMillis, maxBatch, writerThreads, System::nanoTime);
    }

    InboxWriter(DataSource dataSource, long timeoutMillis, int maxBatch, int writerThreads, LongSupplier failureClock) {
        this.failureClock = failureClock;
        this.dataSource = dataSource;
        this.timeoutMillis = timeoutMillis;
        this.saturatedAfterNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMillis) / 2;
        this.maxBatch = maxBatch;
        this.queue = new ArrayBlockingQueue<>(Math.max(1024, maxBatch * writerThreads * 8));
        this.underWay = new AtomicReferenceArray<>(writerThreads);
        for (int i = 0; i < writerThreads; i++) {
            int index = i;
            Thread t = new Thread(() -> writeLoop(index), "inbox-writer-" + i);
            t.setDaemon(true);
            t.start();
            writers.add(t);
        }
        deadlineWatch = new Thread(this::watchDeadlines, "inbox-deadlines");
        deadlineWatch.setDaemon(true);
        deadlineWatch.start();
    }

    /**
     * Commits the delivery's row, or finds it already there, blocking the caller until then. The timeout counts from
     * {@code arrivalNanos} ({@code System.nanoTime()}), when the delivery arrived.
     *
     * @return true if this call stored it, false if the key was already in the inbox
     * @throws InboxUnavailableException if it is not committed within the timeout
     */
    public boolean store(Delivery delivery, long arrivalNanos) {
        if (writers.contains(Thread.currentThread())) {
            // asked on a writer's own thread (a route resumed there after a commit, inserting once more): queued, it
            // could wait for itself; it is written here, as a batch of its own
            Pending alone = new Pending(delivery, arrivalNanos,
                    arrivalNanos + TimeUnit.MILLISECONDS.toNanos(timeoutMillis), new CompletableFuture<>());
            writeBatch(new ArrayList<>(List.of(alone)));
            return await(alone.stored());
        }
        return await(submit(delivery, arrivalNanos));
    }

    private static boolean await(CompletableFuture<Boolean> stored) {
        try {
            return stored.get();
        } catch (ExecutionException e) {
            throw unavailable(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InboxUnavailableException("interrupted while waiting for the inbox commit");
        }
    }

    /**
     * Hands the delivery to the writers without waiting. The future completes when the statement that holds its row
     * has committed (true: stored by this call, false: the key was already there), or exceptionally with
     * {@link InboxUnavailableException} when its batch fails, the database failed a batch within the last second,
     * or the commit does not come within the timeout (counted from {@code arrivalNanos}, when the delivery arrived):
     * then the delivery must not be acknowledged.
     */
    public CompletableFuture<Boolean> submit(Delivery delivery, long arrivalNanos) {
        long now = System.nanoTime();
        long failedAt = lastFailureNanos;
        if (failedAt != 0 && failureClock.getAsLong() - failedAt < FAIL_FAST_NANOS) {
            // the database just failed a batch: answer at once instead of holding a request for the timeout;
            // after the window the next deliveries probe it again
            return CompletableFuture.failedFuture(new InboxUnavailableException("inbox database unavailable"));
        }
        long deadline = arrivalNanos + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        long left = deadline - now;
        if (left <= 0) {
            // it waited past the bound before its insert started: its answer must go now, and no commit is spent on it
            return CompletableFuture.failedFuture(new InboxOverloadedException("waited "
                    + TimeUnit.NANOSECONDS.toMillis(now - arrivalNanos) + " ms for the inbox: not stored within "
                    + timeoutMillis + " ms"));
        }
        Pending pending = new Pending(delivery, arrivalNanos, deadline, new CompletableFuture<>());
        if (!running || !queue.offer(pending)) {
            return CompletableFuture.failedFuture(new InboxUnavailableException("inbox is not accepting writes"));
        }
        gathering.arrived();
        // answered 503 at its deadline by the deadline watch if its commit has not come by then (one watch for all
        // deliveries: a timer per delivery cost more than the rest of its hand-off)
        return pending.stored();
    }

    /**
     * Whether the oldest delivery waiting for the writers has waited longer than half the timeout: the database is not
     * keeping up with the arrivals, and a delivery queued now would wait longer still. Costs a peek at the queue.
     */
    public boolean saturated() {
        Pending oldest = queue.peek();
        return oldest != null && System.nanoTime() - oldest.arrivalNanos() > saturatedAfterNanos;
    }

    /** the failure a caller of {@link #submit} sees, as the unchecked exception the route answers 503 for */
    static InboxUnavailableException unavailable(Throwable failure) {
        Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        if (cause instanceof InboxUnavailableException u) {
            return u;
        }
        return new InboxUnavailableException("inbox commit failed: " + cause.getMessage(), cause);
    }

    private void writeLoop(int index) {
        List<Pending> batch = new ArrayList<>(maxBatch);
        while (running) {
            try {
                if (!takeBatch(batch)) {
                    continue;
                }
                underWay.set(index, List.copyOf(batch));
                writeBatch(batch);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (RuntimeException e) {
                LOG.error("Inbox writer failed unexpectedly; its batch is answered as unavailable", e);
                batch.forEach(p -> p.stored().completeExceptionally(e));
            } finally {
                underWay.set(index, null);
                batch.clear();
            }
        }
    }

    /** Fills {@code batch} from the queue in this writer's turn; false if nothing came within 200 ms. */
    private boolean takeBatch(List<Pending> batch) throws InterruptedException {
        if (!takeTurn.tryLock(200, TimeUnit.MILLISECONDS)) {
            return false;
        }
        try {
            Pending first = queue.poll(200, TimeUnit.MILLISECONDS);
            if (first == null) {
                return false;
            }
            batch.add(first);
            queue.drainTo(batch, maxBatch - 1);
            gathering.gather(queue, batch, maxBatch, first.deadlineNanos());
            return true;
        } finally {
            takeTurn.unlock();
        }
    }

    /**
     * Answers 503 every delivery whose deadline passed without its commit: those under way (an insert is cancelled at
     * its batch's first deadline, but a connection the network lost may hold it longer) and those still waiting for a
     * writer (all of them busy or stuck). Completing a delivery twice is harmless: the first answer stands.
     */
    private void watchDeadlines() {
        while (running) {
            try {
                Thread.sleep(WATCH_PERIOD_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            long now = System.nanoTime();
            gathering.sample(now);
            for (int i = 0; i < underWay.length(); i++) {
                List<Pending> batch = underWay.get(i);
                if (batch != null) {
                    for (Pending p : batch) {
                        if (now - p.deadlineNanos() > 0 && !p.stored().isDone()) {
                            p.stored().completeExceptionally(late());
                        }
                    }
                }
            }
            lateInsertCancels.sendAgainWhereLate(now);
            Pending oldest;
            while ((oldest = queue.peek()) != null && now - oldest.deadlineNanos() > 0) {
                if (queue.remove(oldest)) {
                    oldest.stored().completeExceptionally(late());
                }
            }
        }
    }

    private InboxOverloadedException late() {
        return new InboxOverloadedException("inbox commit took longer than " + timeoutMillis + " ms");
    }

    private void writeBatch(List<Pending> batch) {
        long now = System.nanoTime();
        // one entry per key: a retry racing its own original inside one batch is a duplicate of it
        Map<String, List<Pending>> byKey = new LinkedHashMap<>();
        for (Pending p : batch) {
            if (now - p.deadlineNanos() > 0) {
                // its caller has already been answered 503; skipping it keeps a recovering database unloaded
                p.stored().completeExceptionally(new InboxOverloadedException("expired before its commit"));
                continue;
            }
            byKey.computeIfAbsent(p.delivery().key(), k -> new ArrayList<>(1)).add(p);
        }
        if (byKey.isEmpty()) {
            return;
        }
        try {
            Set<String> inserted = insert(byKey);
            lastFailureNanos = 0;
            long committedAt = System.nanoTime();
            for (Map.Entry<String, List<Pending>> e : byKey.entrySet()) {
                boolean isNew = inserted.contains(e.getKey());
                List<Pending> waiting = e.getValue();
                for (int i = 0; i < waiting.size(); i++) {
                    Pending p = waiting.get(i);
                    if (committedAt - p.deadlineNanos() > 0) {
                        // committed, but past the bound: answered 503 (MetaKit's retry meets the row as a duplicate)
                        p.stored().completeExceptionally(late());
                    } else {
                        p.stored().complete(i == 0 && isNew);
                    }
                }
            }
        } catch (SQLException e) {
            if (QUERY_CANCELED.equals(e.getSQLState())) {
                // cancelled at the batch's first deadline: the database answers, it is only not keeping up
                LOG.debug("Inbox batch of {} deliveries cancelled at its deadline", byKey.size());
                InboxOverloadedException late = new InboxOverloadedException("not committed within " + timeoutMillis
                        + " ms of arrival");
                byKey.values().forEach(list -> list.forEach(p -> p.stored().completeExceptionally(late)));
                return;
            }
            batchFailed(byKey, e);
        } catch (RuntimeException e) {
            batchFailed(byKey, e);
        }
    }

    private void batchFailed(Map<String, List<Pending>> byKey, Exception e) {
        lastFailureNanos = failureClock.getAsLong();
        LOG.warn("Inbox batch of {} deliveries not committed: {}", byKey.size(), e.getMessage());
        byKey.values().forEach(list -> list.forEach(p -> p.stored().completeExceptionally(e)));
    }

    private Set<String> insert(Map<String, List<Pending>> byKey) throws SQLException {
        int n = byKey.size();
        String[] keys = new String[n];
        String[] events = new String[n];
        Long[] accounts = new Long[n];
        String[] texts = new String[n];
        byte[][] raws = new byte[n][];
        Long[] signedAt = new Long[n];
        String[] traceParents = new String[n];
        int i = 0;
        long firstDeadline = Long.MAX_VALUE;
        for (List<Pending> list : byKey.values()) {
            Delivery d = list.get(0).delivery();
            firstDeadline = i == 0 ? list.get(0).deadlineNanos()
                    : earlier(firstDeadline, list.get(0).deadlineNanos());
            keys[i] = d.key();
            events[i] = d.event();
            accounts[i] = d.accountId();
            texts[i] = asStorableText(d.body());
            raws[i] = texts[i] == null ? d.body() : null;
            signedAt[i] = d.signedAt().getEpochSecond();
            traceParents[i] = d.traceParent();
            i++;
        }
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            // cancelled at the batch's first deadline: no commit for a delivery already answered 503
            try (LateInsertCancels.Running ignored = lateInsertCancels.begin(c, n, firstDeadline)) {
                return InboxIntake.insert(c, TimeUnit.NANOSECONDS.toMillis(firstDeadline - System.nanoTime()), keys,
                        events, accounts, texts, raws, signedAt, traceParents);
            }
        }
    }

    private static long earlier(long a, long b) {
        return a - b < 0 ? a : b;
    }

    /** The body as text when PostgreSQL can hold it losslessly as text, else null (it goes to body_raw). */
    static String asStorableText(byte[] body) {
        for (byte b : body) {
            if (b == 0) {
                return null;
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(body)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }

    @Override
    public void close() {
        running = false;
        deadlineWatch.interrupt();
        for (Thread t : writers) {
            try {
                t.join(TimeUnit.MILLISECONDS.toMillis(timeoutMillis + 1000));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        lateInsertCancels.close();
        Pending p;
        while ((p = queue.poll()) != null) {
            p.stored().completeExceptionally(new InboxUnavailableException("shutting down"));
        }
    }
}
