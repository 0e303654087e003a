package dev.metakit.inbox.frontdoor;

import org.apache.camel.CamelContext;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Camel and Vert.x internals the front door touches (CamelAndVertxInternals) are where it expects them in the
 * Camel version of the BOM: an upgrade that moves one fails here, naming it, rather than at a user's first request.
 */
class FrontDoorInternalsTest {
    @Test
    void everyInternalTheFrontDoorTouchesIsThereInTheBomsCamelVersion() {
        assertThat(CamelAndVertxInternals.missing())
                .as("internals missing in Camel %s", CamelContext.class.getPackage().getImplementationVersion())
                .isEmpty();
    }

    @Test
    void aMovedInternalIsReportedWithWhyTheFrontDoorUsesIt() {
        var renamed = new CamelAndVertxInternals.Internal("the answers stay Camel's",
                "org.apache.camel.component.platform.http.vertx.VertxPlatformHttpSupport", "writeResponseRenamed");
        var gone = new CamelAndVertxInternals.Internal("an impl class", "io.vertx.core.impl.NoSuchInternal", null);
        assertThat(CamelAndVertxInternals.missing(java.util.List.of(renamed, gone)))
                .hasSize(2)
                .anySatisfy(m -> assertThat(m).contains("VertxPlatformHttpSupport#writeResponseRenamed()",
                        "the answers stay Camel's"))
                .anySatisfy(m -> assertThat(m).contains("io.vertx.core.impl.NoSuchInternal", "an impl class"));
    }
}
