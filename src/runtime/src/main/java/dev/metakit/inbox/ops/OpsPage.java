package dev.metakit.inbox.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.metakit.inbox.config.ConfigurationException;
import dev.metakit.inbox.config.ContextBean;
import dev.metakit.inbox.config.Required;
import dev.metakit.inbox.config.SecretSettings;
import dev.metakit.inbox.feed.FeedMaintenance;
import dev.metakit.inbox.reconcile.ReconcileResult;
import dev.metakit.inbox.reconcile.AccountReconcile;
import dev.metakit.inbox.secret.RotationException;
import dev.metakit.inbox.secret.WebhookSecrets;
import dev.metakit.inbox.worker.InboxToPositionRoutes;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.RoutingContext;
import org.apache.camel.CamelContext;
import org.apache.camel.ProducerTemplate;
import org.apache.camel.StartupListener;
import org.apache.camel.component.platform.http.main.ManagementHttpServer;
import org.apache.camel.component.platform.http.vertx.VertxPlatformHttpRouter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;

/**
 * The ops page on the management server (next to {@code /observe/health}): {@code GET /ops} is a static page, its
 * data and buttons are {@code /ops/api/*}, every one of which wants {@code Authorization: Bearer METAKIT_OPS_TOKEN}.
 * Off unless {@code METAKIT_OPS_ENABLED=true}; enabled without a token of 16 characters or more stops startup.
 * Mounted once the context has started, on camel-main's management router; a host without camel-main's management
 * server gets one WARN line and no page.
 */
public class OpsPage extends ContextBean {
    private static final Logger LOG = LoggerFactory.getLogger(OpsPage.class);
    static final int MIN_TOKEN_LENGTH = 16;
    /** the bean of routes/beans.camel.yaml that holds the webhook secret and rotates it */
    static final String WEBHOOK_SECRETS_BEAN = "webhookSecrets";

    private Boolean enabled;
    private String token;
    private String path = "/ops";
    private DataSource dataSource;
    private String dataSourceBean;
    private final ObjectMapper json = new ObjectMapper();
    private ProducerTemplate producer;

    /** A misconfiguration stops startup. */
    @Override
    protected void checkSettings() {
        if (!Required.setting(enabled, "metakit.ops.enabled")) {
            return;
        }
        setToken(SecretSettings.read(getCamelContext(), SecretSettings.OPS_TOKEN, token));
        if (token == null || token.length() < MIN_TOKEN_LENGTH) {
            throw new ConfigurationException("METAKIT_OPS_TOKEN of at least " + MIN_TOKEN_LENGTH
                    + " characters is required when METAKIT_OPS_ENABLED=true");
        }
    }

    /** Mounts once the context has fully started: camel-main's management server is up by then. */
    @Override
    protected void begin() throws Exception {
        if (!enabled) {
            return;
        }
        getCamelContext().addStartupListener(new StartupListener() {
            @Override
            public void onCamelContextStarted(CamelContext context, boolean alreadyStarted) {
            }

            @Override
            public void onCamelContextFullyStarted(CamelContext context, boolean alreadyStarted) {
                mount();
            }
        });
    }

    void mount() {
        CamelContext camelContext = getCamelContext();
        ManagementHttpServer server = camelContext.hasService(ManagementHttpServer.class);
        if (server == null || server.getRouter() == null) {
            LOG.warn("Ops page not served: no camel-main management server (camel.management.enabled) in this runtime");
            return;
        }
        producer = camelContext.createProducerTemplate();
        VertxPlatformHttpRouter router = server.getRouter();
        byte[] html = resource("ops/index.html");
        router.route(HttpMethod.GET, path).handler(ctx -> ctx.response()
                .putHeader("Content-Type", "text/html; charset=utf-8")
                .putHeader("Cache-Control", "no-store")
                .putHeader("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline';"
                        + " script-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
                .end(io.vertx.core.buffer.Buffer.buffer(html)));
        router.route(HttpMethod.GET, path + "/api/summary").blockingHandler(ctx -> api(ctx, () ->
                new OpsQueries(dataSource()).summary()), false);
        router.route(HttpMethod.POST, path + "/api/requeue").blockingHandler(ctx -> api(ctx, () -> {
            String key = ctx.request().getParam("key");
            InboxMaintenance m = new InboxMaintenance(dataSource());
            return Map.of("requeued", key == null || key.isBlank() ? m.requeueFailed() : m.requeueFailedRow(key));
        }), false);
        router.route(HttpMethod.POST, path + "/api/replay").blockingHandler(ctx -> api(ctx, () ->
                Map.of("replayed", new InboxMaintenance(dataSource())
                        .replayAccount(Long.parseLong(ctx.request().getParam("account"))))), false);
        router.route(HttpMethod.POST, path + "/api/feed/replay").blockingHandler(ctx -> api(ctx, () -> {
            long account = Long.parseLong(ctx.request().getParam("account"));
            String from = ctx.request().getParam("fromSeq");
            long fromSeq = from == null || from.isBlank() ? 1 : Long.parseLong(from);
            return Map.of("replayed", new FeedMaintenance(dataSource()).replayAccount(account, fromSeq));
        }), false);
        router.route(HttpMethod.POST, path + "/api/reconcile").blockingHandler(ctx -> api(ctx, () -> {
            long account = Long.parseLong(ctx.request().getParam("account"));
            Object result = producer.requestBody(InboxToPositionRoutes.RECONCILE_ACCOUNT,
                    AccountReconcile.asked(account, "manual"));
            String words = result instanceof ReconcileResult r ? r.inWords() : String.valueOf(result);
            LOG.info("Ops page: reconcile of account {} asked for: {}", account, words);
            return Map.of("account", account, "result", words);
        }), false);
        router.route(HttpMethod.GET, path + "/api/webhook-secret").blockingHandler(ctx -> api(ctx, () ->
                webhookSecrets().status()), false);
        router.route(HttpMethod.POST, path + "/api/webhook-secret/rotate").blockingHandler(ctx -> api(ctx, () -> {
            LOG.info("Ops page: webhook secret rotation asked for");
            return webhookSecrets().rotate("ops page");
        }), false);
        LOG.info("Ops page on the management port at {} (token required)", path);
    }

    private interface Call {
        Object run() throws Exception;
    }

    private void api(RoutingContext ctx, Call call) {
        String auth = ctx.request().getHeader("Authorization");
        byte[] given = (auth == null ? "" : auth).getBytes(StandardCharsets.UTF_8);
        byte[] expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
        if (!MessageDigest.isEqual(given, expected)) {
            reply(ctx, 401, Map.of("error", "token required"));
            return;
        }
        try {
            reply(ctx, 200, call.run());
        } catch (RotationException e) {
            // a rotation refused or failed: its message says what happened and what to do, never a secret
            LOG.warn("Ops page call {} failed: {}", ctx.request().path(), e.getMessage());
            reply(ctx, e.busy() ? 409 : 502, Map.of("error", e.getMessage()));
        } catch (NumberFormatException e) {
            reply(ctx, 400, Map.of("error", "account and fromSeq must be whole numbers"));
        } catch (Exception e) {
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            // a message for the person at the page; an exception without one is named by its kind, never "null"
            String error = root.getMessage() != null ? root.getMessage() : root.getClass().getSimpleName();
            LOG.warn("Ops page call {} failed: {}", ctx.request().path(), error);
            reply(ctx, 502, Map.of("error", error));
        }
    }

    private void reply(RoutingContext ctx, int status, Object body) {
        try {
            ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json")
                    .putHeader("Cache-Control", "no-store").end(json.writeValueAsString(body));
        } catch (IOException e) {
            ctx.response().setStatusCode(500).end();
        }
    }

    private DataSource dataSource() {
        if (dataSource == null && dataSourceBean != null) {
            dataSource = getCamelContext().getRegistry().lookupByNameAndType(dataSourceBean, DataSource.class);
        }
        return dataSource;
    }

    private WebhookSecrets webhookSecrets() {
        WebhookSecrets bean = getCamelContext().getRegistry().lookupByNameAndType(WEBHOOK_SECRETS_BEAN,
                WebhookSecrets.class);
        if (bean == null) {
            throw new IllegalStateException("no " + WEBHOOK_SECRETS_BEAN + " bean (routes/beans.camel.yaml)");
        }
        return bean;
    }

    private static byte[] resource(String name) {
        try (InputStream in = OpsPage.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IllegalStateException(name + " is missing from the classpath");
            }
            return in.readAllBytes();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public void setEnabled(boolean enabled) { this.enabled = enabled; }
    public void setToken(String token) { this.token = token == null ? "" : token.trim(); }
    public void setPath(String path) { this.path = path; }
    public void setDataSource(DataSource dataSource) { this.dataSource = dataSource; }
    /** the DataSource by bean name, looked up when first used (routes/standalone.camel.yaml: inboxDataSource) */
    public void setDataSourceBean(String name) { this.dataSourceBean = name; }
}
