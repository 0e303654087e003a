package dev.metakit.inbox.springboot;

import org.springframework.boot.context.properties.ConfigurationProperties;

import java.time.Duration;

/**
 * The bundle's settings ({@code metakit.*}) as a Spring Boot host sets them: in application.yaml, or from the
 * environment by Boot's relaxed binding ({@code METAKIT_WEBHOOK_SECRET} for {@code metakit.webhook.secret}). The
 * bundle's route files read the same keys as Camel placeholders; binding them here refuses a wrong value at startup
 * and gives an IDE the list, the types and these descriptions. Defaults are those of the standalone run
 * (metakit-defaults.properties). {@code metakit.retention} and its sub-keys are described in
 * additional-spring-configuration-metadata.json (a key that is also a prefix does not bind to a class).
 */
@ConfigurationProperties(prefix = "metakit", ignoreUnknownFields = true)
public class MetakitProperties {
    /** The bundle's route files, loaded into the host's CamelContext (a comma-separated list of Camel resources). */
    private String routeFiles = "classpath:routes/*.camel.yaml";
    /** Development mode: a missing webhook secret or API key is generated or faked instead of refused. */
    private boolean devMode = false;
    /** The largest webhook body accepted, in bytes; a larger one is answered 413. */
    private long maxBodyBytes = 1_048_576;
    /** The MetaKit event types the worker reconciles an account for (a comma-separated list of patterns). */
    private String tradeEvents = "position.*";
    /** This instance's identity across restarts, for the worker's leases (empty: the host name). */
    private String instanceId = "";
    /** Accounts the periodic full reconcile covers besides those seen in deliveries (comma-separated ids). */
    private String accounts = "";
    private final Webhook webhook = new Webhook();
    private final Http http = new Http();
    private final Database database = new Database();
    private final Inbox inbox = new Inbox();
    private final Api api = new Api();
    private final Worker worker = new Worker();
    private final Reconcile reconcile = new Reconcile();
    private final Status status = new Status();
    private final Metrics metrics = new Metrics();
    private final Feed feed = new Feed();
    private final Ops ops = new Ops();
    private final Routes routes = new Routes();

    /** Where MetaKit posts and how a delivery is verified. */
    public static class Webhook {
        /** The path MetaKit posts to, on the host's server port. */
        private String path = "/hooks/metakit";
        /** The webhook signing secret (required unless dev-mode). Never logged. */
        private String secret = "";
        /** The previous secret, accepted during a rotation. Never logged. */
        private String secretPrevious = "";
        /** How far a delivery's signed timestamp may be from now, in seconds, past or future. */
        private int toleranceSeconds = 300;
        /**
         * The key (32 random bytes in base64) the rotated secret is stored under, AES-GCM encrypted, in the bundle's
         * database; the same on every instance. A secret: never logged.
         */
        private String secretKey = "";
        /** The MetaKit webhook a rotation rotates (empty: the only one MetaKit lists for the API key). */
        private String id = "";
        /** Rotate the stored secret this often (a duration; empty: never); one instance of all rotates per period. */
        private String rotateEvery = "";

        public String getPath() { return path; }
        public void setPath(String path) { this.path = path; }
        public String getSecret() { return secret; }
        public void setSecret(String secret) { this.secret = secret; }
        public String getSecretPrevious() { return secretPrevious; }
        public void setSecretPrevious(String secretPrevious) { this.secretPrevious = secretPrevious; }
        public int getToleranceSeconds() { return toleranceSeconds; }
        public void setToleranceSeconds(int toleranceSeconds) { this.toleranceSeconds = toleranceSeconds; }
        public String getSecretKey() { return secretKey; }
        public void setSecretKey(String secretKey) { this.secretKey = secretKey; }
        public String getId() { return id; }
        public void setId(String id) { this.id = id; }
        public String getRotateEvery() { return rotateEvery; }
        public void setRotateEvery(String rotateEvery) { this.rotateEvery = rotateEvery; }
    }

    /** The front door's rules; under Boot the starter applies those with an equivalent to the embedded Tomcat. */
    public static class Http {
        /** The standalone run's Vert.x worker threads; unused under Boot (server.tomcat.threads.max sizes Tomcat). */
        private int workerThreads = 128;
        /** A request must be read whole within this many milliseconds (Tomcat's connection timeout). */
        private long requestReadTimeoutMillis = 10_000;
        /** An idle keep-alive connection is closed after this many seconds (Tomcat's keep-alive timeout). */
        private int idleTimeoutSeconds = 60;
        /** The most connections the server holds open (Tomcat's max connections). */
        private int maxConnections = 1024;
        /** The standalone run's memory budget for half-sent bodies; Tomcat has no equivalent. */
        private long maxPendingBodyBytes = 64L * 1024 * 1024;

        public int getWorkerThreads() { return workerThreads; }
        public void setWorkerThreads(int workerThreads) { this.workerThreads = workerThreads; }
        public long getRequestReadTimeoutMillis() { return requestReadTimeoutMillis; }
        public void setRequestReadTimeoutMillis(long millis) { this.requestReadTimeoutMillis = millis; }
        public int getIdleTimeoutSeconds() { return idleTimeoutSeconds; }
        public void setIdleTimeoutSeconds(int seconds) { this.idleTimeoutSeconds = seconds; }
        public int getMaxConnections() { return maxConnections; }
        public void setMaxConnections(int maxConnections) { this.maxConnections = maxConnections; }
        public long getMaxPendingBodyBytes() { return maxPendingBodyBytes; }
        public void setMaxPendingBodyBytes(long bytes) { this.maxPendingBodyBytes = bytes; }
    }

    /**
     * The inbox database: by default a pool of the bundle's own on the host's database ({@code spring.datasource.url},
     * {@code username}, {@code password}), so a burst of webhooks cannot take the connections the host's requests need,
     * nor the reverse.
     */
    public static class Database {
        /**
         * A DataSource bean of the host the bundle uses instead of a pool of its own, by name ({@code dataSource} is
         * Boot's spring.datasource pool, then shared with the host's requests). Empty: a pool of the bundle's own.
         */
        private String dataSourceBean = "";
        /** The JDBC URL of the bundle's pool (default: spring.datasource.url, the host's database). */
        private String url = "";
        /** The user of url (default: spring.datasource.username). */
        private String user = "";
        /** The password of url (default: spring.datasource.password). Never logged. */
        private String password = "";
        /** The embedded PostgreSQL's data directory (standalone run only). */
        private String embeddedDir = "data/postgres";
        /** The size of the bundle's own pool, besides the host's pool (Boot's default: 10). */
        private int poolSize = 16;
        /** The schema of the bundle's tables and migration history (created when absent), beside the host's. */
        private String schema = "metakit";

        public String getDataSourceBean() { return dataSourceBean; }
        public void setDataSourceBean(String dataSourceBean) { this.dataSourceBean = dataSourceBean; }
        public String getUrl() { return url; }
        public void setUrl(String url) { this.url = url; }
        public String getUser() { return user; }
        public void setUser(String user) { this.user = user; }
        public String getPassword() { return password; }
        public void setPassword(String password) { this.password = password; }
        public String getEmbeddedDir() { return embeddedDir; }
        public void setEmbeddedDir(String embeddedDir) { this.embeddedDir = embeddedDir; }
        public int getPoolSize() { return poolSize; }
        public void setPoolSize(int poolSize) { this.poolSize = poolSize; }
        public String getSchema() { return schema; }
        public void setSchema(String schema) { this.schema = schema; }
    }

    /** The inbox writer's group commit. */
    public static class Inbox {
        /** A delivery not committed within this many milliseconds is answered 503 (MetaKit retries it). */
        private long commitTimeoutMillis = 2000;
        /** The most deliveries one commit carries. */
        private int maxBatch = 256;
        /** Writer threads, each with a connection of its own. */
        private int writers = 2;

        public long getCommitTimeoutMillis() { return commitTimeoutMillis; }
        public void setCommitTimeoutMillis(long millis) { this.commitTimeoutMillis = millis; }
        public int getMaxBatch() { return maxBatch; }
        public void setMaxBatch(int maxBatch) { this.maxBatch = maxBatch; }
        public int getWriters() { return writers; }
        public void setWriters(int writers) { this.writers = writers; }
    }

    /** MetaKit's REST API, which the reconcile reads. */
    public static class Api {
        /** The API's base URL. */
        private String url = "https://api.metakit.dev";
        /** The API key (required unless dev-mode). Never logged. */
        private String key = "";
        /** The most API calls in flight at once. */
        private int concurrency = 8;
        /** The connect timeout of an API call, in milliseconds. */
        private long connectTimeoutMillis = 3000;
        /** The read timeout of an API call, in milliseconds. */
        private long readTimeoutMillis = 15_000;
        /**
         * The endpoint of the route that makes one MetaKit GET (metakit-api-get of the bundle's metakit-api.camel.yaml),
         * which the route and the bundle's Java both read. Change it only for a route of your own that replaces it.
         */
        private String getEndpoint = "direct:metakit-get";

        public String getUrl() { return url; }
        public void setUrl(String url) { this.url = url; }
        public String getKey() { return key; }
        public void setKey(String key) { this.key = key; }
        public int getConcurrency() { return concurrency; }
        public void setConcurrency(int concurrency) { this.concurrency = concurrency; }
        public long getConnectTimeoutMillis() { return connectTimeoutMillis; }
        public void setConnectTimeoutMillis(long millis) { this.connectTimeoutMillis = millis; }
        public long getReadTimeoutMillis() { return readTimeoutMillis; }
        public void setReadTimeoutMillis(long millis) { this.readTimeoutMillis = millis; }
        public String getGetEndpoint() { return getEndpoint; }
        public void setGetEndpoint(String getEndpoint) { this.getEndpoint = getEndpoint; }
    }

    /** The worker that drains the inbox. */
    public static class Worker {
        /** How often the worker polls the inbox besides the doorbell, in milliseconds. */
        private long pollIntervalMillis = 1000;
        /** How long the doorbell waits to gather rings into one claim, in milliseconds. */
        private long coalesceMillis = 50;
        /** The most rows one claim hands to the reconcile. */
        private int batchSize = 500;
        /** The most rows one claim reads. */
        private int claimMaxRows = 5000;
        /** How long a claimed row stays this instance's without a heartbeat, in seconds. */
        private int leaseSeconds = 120;
        /** How often this instance says it is alive, in milliseconds. */
        private long heartbeatMillis = 1000;
        /** After how long without a heartbeat another instance takes over, in milliseconds. */
        private long deadAfterMillis = 5000;
        /** Attempts before a row is set aside as failed. */
        private int maxAttempts = 8;
        /** The first retry's delay, in milliseconds (doubling). */
        private long backoffBaseMillis = 1000;
        /** The longest retry delay, in milliseconds. */
        private long backoffMaxMillis = 300_000;
        /** Accounts reconciled at once. */
        private int concurrency = 8;

        public long getPollIntervalMillis() { return pollIntervalMillis; }
        public void setPollIntervalMillis(long millis) { this.pollIntervalMillis = millis; }
        public long getCoalesceMillis() { return coalesceMillis; }
        public void setCoalesceMillis(long millis) { this.coalesceMillis = millis; }
        public int getBatchSize() { return batchSize; }
        public void setBatchSize(int batchSize) { this.batchSize = batchSize; }
        public int getClaimMaxRows() { return claimMaxRows; }
        public void setClaimMaxRows(int claimMaxRows) { this.claimMaxRows = claimMaxRows; }
        public int getLeaseSeconds() { return leaseSeconds; }
        public void setLeaseSeconds(int leaseSeconds) { this.leaseSeconds = leaseSeconds; }
        public long getHeartbeatMillis() { return heartbeatMillis; }
        public void setHeartbeatMillis(long millis) { this.heartbeatMillis = millis; }
        public long getDeadAfterMillis() { return deadAfterMillis; }
        public void setDeadAfterMillis(long millis) { this.deadAfterMillis = millis; }
        public int getMaxAttempts() { return maxAttempts; }
        public void setMaxAttempts(int maxAttempts) { this.maxAttempts = maxAttempts; }
        public long getBackoffBaseMillis() { return backoffBaseMillis; }
        public void setBackoffBaseMillis(long millis) { this.backoffBaseMillis = millis; }
        public long getBackoffMaxMillis() { return backoffMaxMillis; }
        public void setBackoffMaxMillis(long millis) { this.backoffMaxMillis = millis; }
        public int getConcurrency() { return concurrency; }
        public void setConcurrency(int concurrency) { this.concurrency = concurrency; }
    }

    /** The periodic full reconcile. */
    public static class Reconcile {
        /** How often every known account is reconciled (ISO-8601, e.g. PT5M). */
        private Duration interval = Duration.ofMinutes(5);
        /** Accounts reconciled at once by the full reconcile. */
        private int concurrency = 8;

        public Duration getInterval() { return interval; }
        public void setInterval(Duration interval) { this.interval = interval; }
        public int getConcurrency() { return concurrency; }
        public void setConcurrency(int concurrency) { this.concurrency = concurrency; }
    }

    /** The watch on MetaKit's lastDeliveryStatus. */
    public static class Status {
        /** How often the webhook's delivery status is read (ISO-8601). */
        private Duration interval = Duration.ofMinutes(1);

        public Duration getInterval() { return interval; }
        public void setInterval(Duration interval) { this.interval = interval; }
    }

    /** The bundle's gauges. */
    public static class Metrics {
        /** How often the gauges read from the database are refreshed (ISO-8601). */
        private Duration refresh = Duration.ofSeconds(5);

        public Duration getRefresh() { return refresh; }
        public void setRefresh(Duration refresh) { this.refresh = refresh; }
    }

    /** The change feed of reconciled position changes. */
    public static class Feed {
        /** How often the publisher looks for due changes, in milliseconds. */
        private long pollIntervalMillis = 250;
        /**
         * Publishing rounds at once (each takes every account queued at its start), and accounts handing their changes
         * to the outlet at once.
         */
        private int concurrency = 4;
        /** The first retry's delay after the outlet failed, in milliseconds (doubling). */
        private long backoffBaseMillis = 1000;
        /** The longest retry delay, in milliseconds. */
        private long backoffMaxMillis = 30_000;
        /** How long published changes are kept (ISO-8601). */
        private Duration retention = Duration.ofDays(7);
        /**
         * Who publishes the feed: {@code in-process} (the bundle's publisher, to the outlet route) or {@code external}
         * (off here: Debezium's outbox event router reads position_changes from the WAL; docs/change-feed.md "Past one publisher:
         * Debezium").
         */
        private String publisher = "in-process";
        /**
         * The endpoint of the outlet route (metakit-change-outlet of the bundle's changes.camel.yaml) the publisher
         * sends each change to, which the route and the publisher both read. Change it only for an outlet route of your
         * own that replaces it.
         */
        private String outletEndpoint = "direct:metakit-change-outlet";

        public long getPollIntervalMillis() { return pollIntervalMillis; }
        public void setPollIntervalMillis(long millis) { this.pollIntervalMillis = millis; }
        public int getConcurrency() { return concurrency; }
        public void setConcurrency(int concurrency) { this.concurrency = concurrency; }
        public long getBackoffBaseMillis() { return backoffBaseMillis; }
        public void setBackoffBaseMillis(long millis) { this.backoffBaseMillis = millis; }
        public long getBackoffMaxMillis() { return backoffMaxMillis; }
        public void setBackoffMaxMillis(long millis) { this.backoffMaxMillis = millis; }
        public Duration getRetention() { return retention; }
        public void setRetention(Duration retention) { this.retention = retention; }
        public String getPublisher() { return publisher; }
        public void setPublisher(String publisher) { this.publisher = publisher; }
        public String getOutletEndpoint() { return outletEndpoint; }
        public void setOutletEndpoint(String outletEndpoint) { this.outletEndpoint = outletEndpoint; }
    }

    /** The routes the bundle's guarantees rest on (docs/routes.md "Essential routes"). */
    public static class Routes {
        /**
         * Ids of essential routes this application replaces or leaves out on purpose, comma-separated. Any other one
         * missing or stopped makes readiness DOWN and deliveries are answered 503; an unknown id stops startup.
         */
        private String replaced = "";

        public String getReplaced() { return replaced; }
        public void setReplaced(String replaced) { this.replaced = replaced; }
    }

    /** The ops page: the standalone run's management server only. */
    public static class Ops {
        /** Off under Boot: the page mounts on camel-main's management server. */
        private boolean enabled = false;
        /** The page's bearer token. Never logged. */
        private String token = "";

        public boolean isEnabled() { return enabled; }
        public void setEnabled(boolean enabled) { this.enabled = enabled; }
        public String getToken() { return token; }
        public void setToken(String token) { this.token = token; }
    }

    public String getRouteFiles() { return routeFiles; }
    public void setRouteFiles(String routeFiles) { this.routeFiles = routeFiles; }
    public boolean isDevMode() { return devMode; }
    public void setDevMode(boolean devMode) { this.devMode = devMode; }
    public long getMaxBodyBytes() { return maxBodyBytes; }
    public void setMaxBodyBytes(long maxBodyBytes) { this.maxBodyBytes = maxBodyBytes; }
    public String getTradeEvents() { return tradeEvents; }
    public void setTradeEvents(String tradeEvents) { this.tradeEvents = tradeEvents; }
    public String getInstanceId() { return instanceId; }
    public void setInstanceId(String instanceId) { this.instanceId = instanceId; }
    public String getAccounts() { return accounts; }
    public void setAccounts(String accounts) { this.accounts = accounts; }
    public Webhook getWebhook() { return webhook; }
    public Http getHttp() { return http; }
    public Database getDatabase() { return database; }
    public Inbox getInbox() { return inbox; }
    public Api getApi() { return api; }
    public Worker getWorker() { return worker; }
    public Reconcile getReconcile() { return reconcile; }
    public Status getStatus() { return status; }
    public Metrics getMetrics() { return metrics; }
    public Feed getFeed() { return feed; }
    public Ops getOps() { return ops; }
    public Routes getRoutes() { return routes; }
}
