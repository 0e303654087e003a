package dev.metakit.inbox;

import org.apache.camel.CamelContext;
import org.apache.camel.impl.DefaultCamelContext;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Camel's answer to "is this endpoint left out of tracing", kept per endpoint until the patterns change. */
class ExcludingOnceTracerTest {
    private static final String POLL = "timer://metakit-inbox-poll?period=1000";
    private static final String WEBHOOK = "platform-http:///hooks/metakit?httpMethodRestrict=POST";

    @Test
    void answersAsCamelsPatternsDoAndAgainWhenThePatternsChange() {
        CamelContext context = new DefaultCamelContext();
        ExcludingOnceTracer tracer = new ExcludingOnceTracer();
        assertThat(tracer.exclude(WEBHOOK, context)).as("no patterns").isFalse();

        tracer.setExcludePatterns("seda:inbox-doorbell*,timer:metakit-inbox-poll*");
        for (int i = 0; i < 2; i++) {
            assertThat(tracer.exclude(POLL, context)).isTrue();
            assertThat(tracer.exclude(WEBHOOK, context)).isFalse();
        }

        tracer.setExcludePatterns("platform-http:*");
        assertThat(tracer.exclude(WEBHOOK, context)).isTrue();
        assertThat(tracer.exclude(POLL, context)).isFalse();
    }
}
