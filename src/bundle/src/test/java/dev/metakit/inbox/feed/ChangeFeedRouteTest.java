package dev.metakit.inbox.feed;

import dev.metakit.inbox.support.FakeMetaKit;
import dev.metakit.inbox.support.InboxFixture;
import dev.metakit.inbox.support.RunningInbox;
import dev.metakit.inbox.support.TestDatabase;
import org.apache.camel.spi.CamelEvent;
import org.apache.camel.support.EventNotifierSupport;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.Logger;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Property;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import static dev.metakit.inbox.support.TestEvents.event;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The bundle as shipped (routes/changes.camel.yaml with its default log outlet), fed by real reconciles. */
class ChangeFeedRouteTest {
    private static final String OUTLET_LOGGER = "dev.metakit.inbox.feed.outlet";

    private final List<String> outletLines = Collections.synchronizedList(new ArrayList<>());
    private final List<String> outletBodies = Collections.synchronizedList(new ArrayList<>());
    private final AbstractAppender capture = new AbstractAppender("feed-outlet-capture", null, null, true,
            Property.EMPTY_ARRAY) {
        @Override
        public void append(LogEvent event) {
            outletLines.add(event.getMessage().getFormattedMessage());
        }
    };
    @RegisterExtension
    final InboxFixture fixture = new InboxFixture();
    private final FakeMetaKit metakit = fixture.metakit();
    private RunningInbox inbox;

    @BeforeEach
    void start() {
        capture.start();
        ((Logger) LogManager.getLogger(OUTLET_LOGGER)).addAppender(capture);
    }

    @AfterEach
    void stop() {
        ((Logger) LogManager.getLogger(OUTLET_LOGGER)).removeAppender(capture);
    }

    @Test
    void theDefaultOutletLogsOneLinePerChangeInOrderWithItsIdAndMarksItPublished() throws Exception {
        metakit.open(3, 10, "0.10", "0", "1.09000", fixture.t0());
        inbox = fixture.start(Map.of());
        recordOutletBodies();
        inbox.postSigned(event("position.opened", 3, 10), "position.opened");
        awaitPublished(1);

        metakit.close(3, 10);
        metakit.deal(3, 900, 10, "out", "0.10", "1.08500", "5.00", fixture.t0().plusSeconds(10));
        inbox.postSigned(event("position.closed", 3, 10), "position.closed");
        awaitPublished(2);

        // a short line per change: the body (the position as JSON) is what a real outlet gets, not the log
        assertThat(outletLines).containsExactly("change 3:1 account 3 seq 1 opened ticket 10",
                "change 3:2 account 3 seq 2 closed ticket 10");
        assertThat(outletBodies).hasSize(2);
        assertThat(outletBodies.get(0)).contains("\"kind\":\"opened\"", "\"source\":\"event\"");
        assertThat(outletBodies.get(1)).contains("\"kind\":\"closed\"", "\"closeDealTicket\":900");
        assertThat(inbox.metrics()).contains("metakit_feed_changes_written_total 2.0",
                "metakit_feed_changes_published_total 2.0");
    }

    /** What the outlet endpoint itself is handed, as any endpoint put in place of the log would be. */
    private void recordOutletBodies() throws Exception {
        EventNotifierSupport sendings = new EventNotifierSupport() {
            @Override
            public void notify(CamelEvent event) {
                if (event instanceof CamelEvent.ExchangeSendingEvent sending
                        && sending.getEndpoint().getEndpointUri().startsWith("log://" + OUTLET_LOGGER)) {
                    outletBodies.add(sending.getExchange().getMessage().getBody(String.class));
                }
            }
        };
        inbox.camelContext().getManagementStrategy().addEventNotifier(sendings);
        sendings.start();
    }

    private static void awaitPublished(long n) {
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() ->
                TestDatabase.scalar("select count(*) from position_changes where published_at is not null") == n);
    }
}
