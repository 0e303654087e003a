package dev.metakit.inbox.ops;

import dev.metakit.inbox.config.ContextBean;
import dev.metakit.inbox.config.Required;
import dev.metakit.inbox.db.InboxDatabase;
import dev.metakit.inbox.feed.ChangePublisher;
import dev.metakit.inbox.inbox.InboxAdmin;
import dev.metakit.inbox.ingest.InboxOverloadedException;
import dev.metakit.inbox.metakit.MetaKitApi;
import dev.metakit.inbox.reconcile.AccountReconciler;
import dev.metakit.inbox.reconcile.DeliveryStatusWatch;
import dev.metakit.inbox.signature.SignatureVerificationException;
import dev.metakit.inbox.worker.InboxWorker;
import dev.metakit.inbox.worker.PoisonReason;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import dev.metakit.inbox.secret.WebhookSecrets;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.camel.CamelContext;
import org.apache.camel.Exchange;
import org.apache.camel.component.micrometer.MicrometerComponent;
import org.apache.camel.health.HealthCheck;
import org.apache.camel.health.HealthCheckHelper;
import org.apache.camel.support.service.ServiceHelper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The bundle's own meters, on the MeterRegistry Camel's {@code micrometer:} endpoints and {@code /observe/metrics}
 * use. Counters and timers that follow exchanges come from {@link MetricsEventNotifier} (no route needs to emit
 * them); the gauges read a snapshot of the inbox that {@link #refresh()} takes, called by a timer route
 * ({@code routes/ops.camel.yaml}), so a scrape never queries the database.
 */
public class InboxMetrics extends ContextBean {
    private static final Logger LOG = LoggerFactory.getLogger(InboxMetrics.class);
    /** the name camel-micrometer and camel-micrometer-prometheus bind their registry under */
    static final String REGISTRY_NAME = "metricsRegistry";
    static final Set<String> KNOWN_STATUSES = Set.of("succeeded", "failed");

    private String webhookPath;
    private DataSource dataSource;
    private InboxWorker inboxWorker;
    private AccountReconciler accountReconciler;
    private ChangePublisher changePublisher;
    private WebhookSecrets webhookSecrets;
    private MetricsEventNotifier notifier;
    private volatile MeterRegistry registry;
    private volatile IngestMeters ingestMeters;
    private MultiGauge endpointStatus;
    private MultiGauge readiness;
    private final Set<String> statusesSeen = new TreeSet<>(KNOWN_STATUSES);

    private volatile InboxAdmin.Backlog backlog = new InboxAdmin.Backlog(0, 0, Duration.ZERO);
    private volatile boolean refreshFailing;
    /** failed refreshes of the readiness gauges in a row that make a WARN (one is a reload's passing race) */
    private static final int READINESS_FAILURES_TOLD = 3;
    /** the metrics refresh's timer thread only */
    private int readinessFailuresInARow;
    private volatile Duration feedLag = Duration.ZERO;

    /** Adds the notifier before the context starts, so Camel turns event notification on for the routes. */
    @Override
    public void startWithContext() throws Exception {
        super.startWithContext();
        notifier = new MetricsEventNotifier(this, getCamelContext().resolvePropertyPlaceholders(MetaKitApi.GET_ENDPOINT));
        getCamelContext().getManagementStrategy().addEventNotifier(notifier);
        if (getCamelContext().isStarted()) {
            ServiceHelper.startService(notifier);
        }
    }

    @Override
    protected void checkSettings() {
        Required.setting(webhookPath, "metakit.webhook.path");
    }

    @Override
    protected void begin() {
    }

    @Override
    public void close() {
        if (notifier != null) {
            getCamelContext().getManagementStrategy().removeEventNotifier(notifier);
            ServiceHelper.stopService(notifier);
            notifier = null;
        }
        super.close();
    }

    /** The registry, once the context runs (until then the metrics service may not have bound it yet). */
    MeterRegistry registry() {
        MeterRegistry r = registry;
        CamelContext camelContext = getCamelContext();
        if (r != null || camelContext == null || !camelContext.isStarted()) {
            return r;
        }
        synchronized (this) {
            if (registry == null) {
                MeterRegistry resolved = resolve(camelContext);
                registerMeters(resolved);
                registerFeedMeters(resolved);
                ingestMeters = new IngestMeters(resolved);
                registry = resolved;
            }
            return registry;
        }
    }

    static MeterRegistry resolve(CamelContext context) {
        MeterRegistry r = context.getRegistry().lookupByNameAndType(REGISTRY_NAME, MeterRegistry.class);
        if (r == null) {
            Set<MeterRegistry> all = context.getRegistry().findByType(MeterRegistry.class);
            if (all.size() == 1) {
                r = all.iterator().next();
            }
        }
        if (r == null) {
            MicrometerComponent micrometer = context.getComponent("micrometer", MicrometerComponent.class);
            r = micrometer == null ? null : micrometer.getMetricsRegistry();
        }
        if (r == null) {
            r = new SimpleMeterRegistry();
            context.getRegistry().bind(REGISTRY_NAME, r);
        }
        return r;
    }

    private void registerMeters(MeterRegistry r) {
        if (inboxWorker != null) {
            FunctionCounter.builder("metakit.inbox.rows.processed", inboxWorker, InboxWorker::processedCount)
                    .description("Inbox rows marked processed by this instance").register(r);
            FunctionCounter.builder("metakit.inbox.rows.retried", inboxWorker, InboxWorker::retriedCount)
                    .description("Inbox rows scheduled for another attempt by this instance").register(r);
            FunctionCounter.builder("metakit.inbox.rows.failed", inboxWorker, InboxWorker::failedCount)
                    .description("Inbox rows marked failed (attempts spent) by this instance").register(r);
            for (PoisonReason reason : PoisonReason.values()) {
                FunctionCounter.builder("metakit.inbox.dead.lettered", inboxWorker, w -> w.deadLetteredCount(reason))
                        .tag("reason", reason.label())
                        .description("Inbox rows failed at their first claim: a body no retry can fix").register(r);
            }
            FunctionCounter.builder("metakit.inbox.rows.fenced", inboxWorker, InboxWorker::fencedCount)
                    .description("Row writes not made: another instance had taken the claim over").register(r);
            Gauge.builder("metakit.inbox.outcomes.unrecorded", inboxWorker, InboxWorker::unrecordedCount)
                    .description("Outcomes kept until the database takes them").register(r);
        }
        Gauge.builder("metakit.inbox.backlog", this, m -> m.backlog.pending())
                .description("Inbox rows neither processed nor failed (refreshed every few seconds; estimated past 10,000)").register(r);
        Gauge.builder("metakit.inbox.failed", this, m -> m.backlog.failed())
                .description("Inbox rows failed and not requeued").register(r);
        Gauge.builder("metakit.inbox.oldest.age", this, m -> m.backlog.oldestPendingAge().toMillis() / 1000.0)
                .baseUnit("seconds").description("How long the oldest unprocessed inbox row has waited since stored or put back").register(r);
        Gauge.builder("metakit.inbox.metrics.stale", this, m -> m.refreshFailing ? 1 : 0)
                .description("1 while the inbox gauges could not be refreshed (database unreachable)").register(r);
        readiness = MultiGauge.builder("metakit.readiness.up")
                .description("1 while the readiness check named by check is UP, 0 while it is not (refreshed every few seconds)")
                .register(r);
        if (dataSource instanceof InboxDatabase database) {
            database.measurePoolOn(r);
        }
        if (webhookSecrets != null) {
            Gauge.builder("metakit.webhook.secret.unsaved", webhookSecrets, WebhookSecrets::unsavedCount)
                    .description("1 while a secret MetaKit rotated to is held in this instance's memory only").register(r);
            Gauge.builder("metakit.webhook.secret.unreadable", webhookSecrets, w -> w.unreadable() ? 1 : 0)
                    .description("1 while the stored webhook secret does not decrypt with METAKIT_WEBHOOK_SECRET_KEY")
                    .register(r);
            Gauge.builder("metakit.webhook.secret.rotation.stale", webhookSecrets, w -> w.staleRotation() ? 1 : 0)
                    .description("1 while a rotation whose instance stopped before storing its secret is unresolved")
                    .register(r);
        }
        endpointStatus = MultiGauge.builder("metakit.webhook.endpoint.status")
                .description("1 for the lastDeliveryStatus MetaKit last reported per webhook endpoint, 0 for the others")
                .register(r);
    }

    /** The change feed's meters (the publisher's stay at zero when a host leaves routes/changes.camel.yaml out). */
    private void registerFeedMeters(MeterRegistry r) {
        if (accountReconciler != null) {
            FunctionCounter.builder("metakit.feed.changes.written", accountReconciler, AccountReconciler::changesWritten)
                    .description("Position changes written to the feed's outbox by this instance's reconciles")
                    .register(r);
        }
        if (changePublisher != null) {
            FunctionCounter.builder("metakit.feed.changes.published", changePublisher, ChangePublisher::publishedCount)
                    .description("Position changes the feed's outlet took from this instance").register(r);
            FunctionCounter.builder("metakit.feed.publish.failures", changePublisher, ChangePublisher::failureCount)
                    .description("Publish attempts that failed: the outlet's error or the database's (the change is sent again)")
                    .register(r);
        }
        // with metakit.feed.publisher=external no row is ever marked published: Debezium's lag is its own metrics'
        if (feedLagMeasured()) {
            Gauge.builder("metakit.feed.lag", this, m -> m.feedLag.toMillis() / 1000.0).baseUnit("seconds")
                    .description("Age of the oldest unpublished position change (0 when none waits)").register(r);
        }
    }

    private boolean feedLagMeasured() {
        return changePublisher == null || changePublisher.isInProcess();
    }

    /** Takes the inbox snapshot the gauges show; called every few seconds by {@code metakit-metrics-refresh}. */
    public void refresh() {
        MeterRegistry r = registry();
        if (r == null) {
            return;
        }
        refreshReadiness();
        try {
            backlog = new InboxAdmin(dataSource).backlog();
            if (feedLagMeasured()) {
                feedLag = ChangePublisher.lag(dataSource);
            }
            Map<String, String> endpoints = DeliveryStatusWatch.statuses(dataSource);
            List<MultiGauge.Row<?>> rows = new ArrayList<>();
            synchronized (statusesSeen) {
                statusesSeen.addAll(endpoints.values());
                endpoints.forEach((endpoint, status) -> {
                    for (String s : statusesSeen) {
                        rows.add(MultiGauge.Row.of(Tags.of("endpoint", endpoint, "status", s), s.equals(status) ? 1 : 0));
                    }
                });
            }
            endpointStatus.register(rows, true);
            if (refreshFailing) {
                LOG.info("Inbox metrics refresh works again");
            }
            refreshFailing = false;
        } catch (SQLException | RuntimeException e) {
            if (!refreshFailing) {
                LOG.warn("Inbox metrics could not be refreshed (gauges keep their last values): {}", e.getMessage());
            }
            refreshFailing = true;
        }
    }

    /**
     * The readiness checks' states as gauges, so that an alert sees what {@code /observe/health/ready} (or a host's
     * readiness probe holding Camel's checks) says, and which check is down. Each check is bounded (the database's
     * answers within 800 ms), so this adds at most that to a refresh.
     */
    private void refreshReadiness() {
        List<MultiGauge.Row<?>> rows = new ArrayList<>();
        Collection<HealthCheck.Result> results;
        try {
            // "full": every check; the default level would list only those that are down
            results = HealthCheckHelper.invokeReadiness(getCamelContext(), "full");
        } catch (RuntimeException e) {
            // Camel's check of a route throws when the route goes between its listing and its look (a reload
            // replacing the route files' routes): the gauges keep their last values, and only a failure that lasts
            // is news
            if (++readinessFailuresInARow == READINESS_FAILURES_TOLD) {
                LOG.warn("Readiness gauges could not be refreshed {} times in a row (they keep their last values): {}",
                        READINESS_FAILURES_TOLD, e.toString());
            }
            return;
        }
        if (readinessFailuresInARow >= READINESS_FAILURES_TOLD) {
            LOG.info("Readiness gauges are refreshed again");
        }
        readinessFailuresInARow = 0;
        for (HealthCheck.Result result : results) {
            HealthCheck check = result.getCheck();
            String name = check.getGroup() == null ? check.getId() : check.getGroup() + "/" + check.getId();
            rows.add(MultiGauge.Row.of(Tags.of("check", name), result.getState() == HealthCheck.State.UP ? 1 : 0));
        }
        readiness.register(rows, true);
    }

    void reconciled(String trigger, boolean ok, long millis) {
        MeterRegistry r = registry();
        if (r == null) {
            return;
        }
        String outcome = ok ? "ok" : "failed";
        Counter.builder("metakit.reconciles").description("Account reconciles by trigger and outcome")
                .tags("trigger", trigger, "outcome", outcome).register(r).increment();
        Timer.builder("metakit.reconcile.duration").description("Duration of one account's reconcile")
                .tags("trigger", trigger, "outcome", outcome).register(r).record(millis, TimeUnit.MILLISECONDS);
    }

    void apiCalled(String endpoint, String status) {
        MeterRegistry r = registry();
        if (r != null) {
            Counter.builder("metakit.api.calls").description("MetaKit REST calls by endpoint kind and HTTP status")
                    .tags("endpoint", endpoint, "status", status).register(r).increment();
        }
    }

    /** One answered delivery of the ingest route: its outcome counter and its ack latency, by HTTP status. */
    void answered(Exchange e) {
        MeterRegistry r = registry();
        IngestMeters m = ingestMeters;
        if (r == null || m == null) {
            return;
        }
        Integer code = e.getMessage().getHeader(Exchange.HTTP_RESPONSE_CODE, Integer.class);
        int status = code != null ? code : e.isFailed() ? 500 : 200;
        m.ack(r, status).record(e.getClock().elapsed(), TimeUnit.MILLISECONDS);
        if (status >= 200 && status < 300) {
            m.accepted.increment();
            (e.getProperty(Exchange.DUPLICATE_MESSAGE, false, Boolean.class) ? m.duplicates : m.stored).increment();
        } else if (e.getProperty(Exchange.EXCEPTION_CAUGHT) instanceof SignatureVerificationException rejected) {
            m.rejected.get(rejected.reason()).increment();
        } else if (e.getProperty(Exchange.EXCEPTION_CAUGHT) instanceof InboxOverloadedException) {
            m.shed.increment();
        } else if (status == 503) {
            m.unavailable.increment();
        }
    }

    /** A client hung up mid-request: a rejection of its own kind, never an error of ours. */
    public void clientClosed() {
        MeterRegistry r = registry();
        if (r != null) {
            Counter.builder("metakit.webhook.rejected").description("Deliveries answered 400, by reason")
                    .tags("reason", "client_closed").register(r).increment();
        }
    }

    /** The standalone run's front door closed a connection itself (reason: slow, connection_limit, body_memory). */
    public void connectionCut(String reason) {
        MeterRegistry r = registry();
        if (r != null) {
            Counter.builder("metakit.http.connections.cut")
                    .description("Connections the webhook server closed itself: slow, connection_limit, body_memory")
                    .tags("reason", reason).register(r).increment();
        }
    }

    /** The ingest route's meters, built once: a lookup per delivery would cost more than the count. */
    private static final class IngestMeters {
        final Counter accepted;
        final Counter stored;
        final Counter duplicates;
        final Counter unavailable;
        final Counter shed;
        final Map<SignatureVerificationException.Reason, Counter> rejected =
                new EnumMap<>(SignatureVerificationException.Reason.class);
        private final Map<Integer, Timer> ackByStatus = new ConcurrentHashMap<>();

        IngestMeters(MeterRegistry r) {
            accepted = Counter.builder("metakit.webhook.accepted")
                    .description("Genuine deliveries answered 2xx (stored + duplicates)").register(r);
            stored = Counter.builder("metakit.webhook.stored")
                    .description("New deliveries committed to the inbox").register(r);
            duplicates = Counter.builder("metakit.webhook.duplicates")
                    .description("Deliveries already in the inbox (MetaKit retries)").register(r);
            unavailable = Counter.builder("metakit.webhook.unavailable")
                    .description("Deliveries answered 503 for a failure: the database failed the insert, or a stop")
                    .register(r);
            shed = Counter.builder("metakit.webhook.shed")
                    .description("Deliveries answered 503 before their commit: the inbox could not store them in time")
                    .register(r);
            for (SignatureVerificationException.Reason reason : SignatureVerificationException.Reason.values()) {
                rejected.put(reason, Counter.builder("metakit.webhook.rejected")
                        .description("Deliveries answered 400, by reason").tags("reason", reason.metricTag()).register(r));
            }
        }

        Timer ack(MeterRegistry r, int status) {
            return ackByStatus.computeIfAbsent(status, s -> Timer.builder("metakit.webhook.ack")
                    .description("From a delivery's arrival to its answer, by HTTP status")
                    .tags("status", String.valueOf(s)).register(r));
        }
    }

    /** true for the webhook's own endpoint: its finished exchanges are the ingest answers counted here */
    boolean isWebhook(org.apache.camel.Endpoint from) {
        return from instanceof org.apache.camel.component.platform.http.PlatformHttpEndpoint http
                && http.getPath().equals(webhookPath);
    }

    /** the path MetaKit posts to ({@code metakit.webhook.path}), so the ingest route may have any id */
    public void setWebhookPath(String webhookPath) {
        this.webhookPath = webhookPath;
    }

    public void setDataSource(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    public void setInboxWorker(InboxWorker inboxWorker) {
        this.inboxWorker = inboxWorker;
    }

    public void setAccountReconciler(AccountReconciler accountReconciler) {
        this.accountReconciler = accountReconciler;
    }

    public void setChangePublisher(ChangePublisher changePublisher) {
        this.changePublisher = changePublisher;
    }

    public void setWebhookSecrets(WebhookSecrets webhookSecrets) {
        this.webhookSecrets = webhookSecrets;
    }
}
