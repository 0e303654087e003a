package dev.metakit.inbox.ingest;

import org.apache.camel.Exchange;
import org.apache.camel.spi.IdempotentRepository;
import org.apache.camel.support.service.ServiceSupport;

import dev.metakit.inbox.worker.InboxQueue;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.util.concurrent.CompletableFuture;

/**
 * The inbox as an idempotent repository: recording a key IS inserting its delivery's row, in the same statement
 * ({@code ON CONFLICT DO NOTHING}), so a key can never exist without its row and a retry of a delivery that was not
 * committed is never mistaken for a duplicate. The shipped ingest route stores through {@link InboxStore}
 * ({@link #submit}), which waits for the commit without holding a thread; {@link #add(Exchange, String)} serves a
 * route of an integrator's that uses Camel's {@code idempotentConsumer} with this repository, and blocks its thread
 * until the commit.
 */
public class InboxRepository extends ServiceSupport implements IdempotentRepository {
    /** Exchange property holding the {@link Delivery} that {@link #add(Exchange, String)} stores. */
    public static final String DELIVERY_PROPERTY = "metakitDelivery";
    /** Exchange property holding the delivery key alone (the idempotent consumer's expression). */
    public static final String DELIVERY_KEY_PROPERTY = "metakitDeliveryKey";

    private DataSource dataSource;
    private long commitTimeoutMillis = 2000;
    private int maxBatch = 256;
    private int writers = 2;
    private InboxWriter writer;

    @Override
    public boolean add(Exchange exchange, String key) {
        Delivery delivery = exchange.getProperty(DELIVERY_PROPERTY, Delivery.class);
        if (delivery == null || !delivery.key().equals(key)) {
            throw new IllegalStateException("no verified delivery for key " + key + " on the exchange");
        }
        return writer().store(delivery);
    }

    /**
     * Hands a verified delivery to the group commit without waiting: see {@link InboxWriter#submit(Delivery)}.
     */
    public CompletableFuture<Boolean> submit(Delivery delivery) {
        if (delivery == null) {
            throw new IllegalStateException("no verified delivery on the exchange");
        }
        return writer().submit(delivery);
    }

    /** A key alone cannot be recorded: the inbox stores a delivery together with its key, never a bare key. */
    @Override
    public boolean add(String key) {
        throw new UnsupportedOperationException("the inbox records a key only with its delivery: use add(exchange, key)");
    }

    @Override
    public boolean contains(String key) {
        try {
            return new InboxQueue(dataSource).contains(key);
        } catch (SQLException e) {
            throw new InboxUnavailableException("inbox lookup failed: " + e.getMessage(), e);
        }
    }

    /**
     * Deliveries are never removed through the idempotent repository: a committed row is the only record of an event
     * MetaKit will not send again. The route sets {@code removeOnFailure: false}; retention prunes processed rows.
     */
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
}
