package dev.metakit.inbox.ingest;

import dev.metakit.inbox.trace.CamelTracing;
import dev.metakit.inbox.trace.LogContext;
import org.apache.camel.Exchange;
import org.apache.camel.spi.IdempotentRepository;
import org.apache.camel.support.ExchangeHelper;
import org.apache.camel.support.service.ServiceSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import dev.metakit.inbox.inbox.InboxIntake;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The inbox as the idempotent repository of the ingest route's {@code idempotentConsumer}: recording a key IS
 * inserting its delivery's row, in the same statement ({@code ON CONFLICT DO NOTHING}), so a key can never exist
 * without its row and a retry of a delivery that was not committed is never mistaken for a duplicate.
 * {@link #add(Exchange, String)} returns when the batch of {@link InboxWriter}'s group commit holding the row has
 * committed (true: stored now; false: the key was there), or throws {@link InboxUnavailableException}, which the route
 * answers 503. The shipped route starts that insert one step earlier ({@link InboxHandOff}, under the exchange property
 * {@code metakitDeliveryKey} that the EIP's key expression reads) and resumes when it has committed, so no thread
 * waits for a commit: {@code add} then returns that insert's outcome. Without the hand-off, or when the EIP asks for
 * another key, {@code add} inserts under the key asked and blocks its thread until that commit.
 *
 * <p>What the EIP's options mean here:
 * <ul>
 *   <li>the key expression: {@code exchangeProperty: metakitDeliveryKey}; a route that wants another key sets that
 *       property before the hand-off. Any other expression is served too (the row stored under the key the EIP
 *       evaluated, after the hand-off's own), on the waiting path, said once in a WARN line;</li>
 *   <li>{@code eager} must stay true: with false the EIP would only check ({@link #contains(Exchange, String)}) and
 *       record the key when the exchange is done, after the answer, a 2xx before the commit. That check refuses, so
 *       the route answers 503 rather than acknowledging before the commit (the hand-off's row is kept, as after any
 *       failure past the store);</li>
 *   <li>{@code removeOnFailure}: {@link #remove(Exchange, String)} keeps the row (see there), so true and false
 *       behave alike.</li>
 * </ul>
 */
public class InboxRepository extends ServiceSupport implements IdempotentRepository {
    private static final Logger LOG = LoggerFactory.getLogger(InboxRepository.class);
    /** Exchange property holding the {@link Delivery} that {@link #add(Exchange, String)} stores. */
    private final CamelTracing tracing = new CamelTracing();
    private final DeliveryLogContext logContext = new DeliveryLogContext();

    public static final String DELIVERY_PROPERTY = "metakitDelivery";
    /** Exchange property holding the delivery key alone (the idempotent consumer's expression). */
    public static final String DELIVERY_KEY_PROPERTY = "metakitDeliveryKey";
    /** Exchange property holding the {@link StagedInsert} of the hand-off, for {@link #add(Exchange, String)}. */
    static final String STAGED_PROPERTY = "metakitInboxInsert";

    private DataSource dataSource;
    private long commitTimeoutMillis = 2000;
    private int maxBatch = 256;
    private int writers = 2;
    private InboxWriter writer;
    private StoreGate gate;
    /** whether the WARN line about the waiting path was written (once per start) */
    private final AtomicBoolean slowPathTold = new AtomicBoolean();

    @Override
    public boolean add(Exchange exchange, String key) {
        StagedInsert staged = exchange.getProperty(STAGED_PROPERTY, StagedInsert.class);
        if (staged != null && staged.key().equals(key)) {
            // the hand-off ran this insert for this exchange under this key and the route resumed after its commit
            return staged.isNew();
        }
        // no hand-off before the EIP, or the EIP's key is not the one staged: insert here and wait for the commit
        // (correct, but a thread waits per delivery), and say once how to keep the route from waiting
        if (slowPathTold.compareAndSet(false, true)) {
            String route = ExchangeHelper.getAtRouteId(exchange) != null ? ExchangeHelper.getAtRouteId(exchange)
                    : exchange.getFromRouteId();
            try (LogContext delivery = logContext.open(exchange)) {
                LOG.warn("Route {}: {}, so each delivery waits for its commit on a thread of its own. {}", route,
                        staged == null ? "no hand-off-to-group-commit before its idempotentConsumer on inboxRepository"
                                : "its idempotentConsumer's key is not " + DELIVERY_KEY_PROPERTY + " (staged "
                                + "by hand-off-to-group-commit)", SLOW_PATH_REMEDY);
            }
        }
        return writer().store(deliveryUnder(exchange, key), arrival(exchange));
    }

    /** what an integrator does to keep the ingest route off the waiting path (docs/routes.md, "The ingest route") */
    static final String SLOW_PATH_REMEDY = "Keep hand-off-to-group-commit before store-in-inbox with the key "
            + "expression exchangeProperty: " + DELIVERY_KEY_PROPERTY + ", and set another key with a setProperty of "
            + DELIVERY_KEY_PROPERTY + " before the hand-off";

    /**
     * Starts the insert {@link #add(Exchange, String)} would make for {@code key}, without waiting: the delivery joins
     * the group commit, and the future completes when the batch holding it has committed (true: stored by this
     * insert; false: the key was there) or fails with what the route answers 503. {@link InboxHandOff} resumes the
     * route then, with the outcome on the exchange for {@code add} to return.
     */
    CompletableFuture<Boolean> insert(Exchange exchange, String key) {
        return writer().submit(deliveryUnder(exchange, key), arrival(exchange));
    }

    /** The outcome of the insert {@link #insert} made for an exchange, for {@link #add(Exchange, String)}. */
    record StagedInsert(String key, boolean isNew) {
    }

    private Delivery deliveryUnder(Exchange exchange, String key) {
        String refusal = gate == null ? null : gate.refusal();
        if (refusal != null) {
            // nothing stored, so MetaKit keeps the delivery and retries (the gate says why: an incomplete bundle, or
            // a stop, which is the design and no fault)
            throw exchange.getContext().isStopping() ? new InboxStoppingException(refusal)
                    : new InboxUnavailableException(refusal);
        }
        Delivery delivery = exchange.getProperty(DELIVERY_PROPERTY, Delivery.class);
        if (delivery == null) {
            throw new IllegalStateException("no verified delivery on the exchange for key " + key
                    + ": the idempotent consumer must come after the signature check");
        }
        if (!delivery.key().equals(key)) {
            // the route's key expression was changed: the row is stored under the key the EIP dedupes on
            // (its signature's t stays the partition key: every retry of the delivery has the same)
            delivery = new Delivery(key, delivery.event(), delivery.accountId(), delivery.body(), delivery.signedAt());
        }
        return tracing.isOn(exchange.getContext()) ? delivery.traced(CamelTracing.spanOf(exchange)) : delivery;
    }

    /** the bound counts from the request's arrival: any wait before the insert is part of the delivery's wait */
    private static long arrival(Exchange exchange) {
        return System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(exchange.getClock().elapsed());
    }

    /**
     * Refuses a delivery at once when the inbox cannot store it within the commit timeout (the route asks before its
     * hand-off to the store threads): the database is not keeping up, and the delivery would only queue behind a wait
     * it would not survive. Answered 503 with Retry-After and counted as shed; MetaKit retries it later.
     */
    public void admit() {
        InboxWriter w = writer;
        if (w != null && w.saturated()) {
            throw new InboxOverloadedException("the inbox is not keeping up: not stored within " + commitTimeoutMillis
                    + " ms");
        }
    }

    /**
     * The EIP asks this only with {@code eager: false}, and then records the key after the exchange is done, which on
     * the HTTP route is after the answer: a 2xx for a row not yet committed. Refused, so such a route answers 503
     * and logs why instead of acknowledging what it has not stored.
     */
    @Override
    public boolean contains(Exchange exchange, String key) {
        throw new IllegalStateException("inboxRepository records a key by inserting its row: the idempotentConsumer "
                + "must be eager (eager: true), or the answer would go out before the commit");
    }

    /** A key alone cannot be recorded: the inbox stores a delivery together with its key, never a bare key. */
    @Override
    public boolean add(String key) {
        throw new UnsupportedOperationException("the inbox records a key only with its delivery: use add(exchange, key)");
    }

    @Override
    public boolean contains(String key) {
        try {
            return new InboxIntake(dataSource).contains(key);
        } catch (SQLException e) {
            throw new InboxUnavailableException("inbox lookup failed: " + e.getMessage(), e);
        }
    }

    /**
     * Keeps the row: what {@code removeOnFailure} removes here is nothing. {@link #add(Exchange, String)} returns only
     * after the commit, so there is never an uncommitted key of this exchange's to take back; and once the row is
     * committed, a copy of the same delivery racing this one (on this instance or another on the same database) may
     * already have been answered 2xx "duplicate" for it. Deleting it would lose a delivery MetaKit will not send
     * again. The failed exchange is answered 503; MetaKit's retry meets the row and is answered "duplicate", which
     * is true. Retention prunes processed rows.
     */
    @Override
    public boolean remove(Exchange exchange, String key) {
        return false;
    }

    /** As {@link #remove(Exchange, String)}: a committed row is never removed through the repository. */
    @Override
    public boolean remove(String key) {
        return false;
    }

    @Override
    public boolean confirm(String key) {
        return true;
    }

    @Override
    public void clear() {
        throw new UnsupportedOperationException("the inbox is never cleared through the idempotent repository");
    }

    private InboxWriter writer() {
        InboxWriter w = writer;
        if (w == null) {
            throw new InboxUnavailableException("inbox is not started");
        }
        return w;
    }

    @Override
    protected void doStart() {
        if (dataSource == null) {
            throw new IllegalStateException("inboxRepository needs a dataSource");
        }
        writer = new InboxWriter(dataSource, commitTimeoutMillis, maxBatch, writers);
        slowPathTold.set(false);
    }

    @Override
    protected void doStop() {
        if (writer != null) {
            writer.close();
            writer = null;
        }
    }

    public void setDataSource(DataSource dataSource) { this.dataSource = dataSource; }
    public void setCommitTimeoutMillis(long millis) { this.commitTimeoutMillis = millis; }
    public void setMaxBatch(int maxBatch) { this.maxBatch = maxBatch; }
    public void setWriters(int writers) { this.writers = writers; }

    /** asked before every insert (the bundle's essentialRoutesCheck); none: always store */
    public void setGate(StoreGate gate) { this.gate = gate; }
}
