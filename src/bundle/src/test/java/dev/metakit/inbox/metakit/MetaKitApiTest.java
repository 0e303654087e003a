package dev.metakit.inbox.metakit;

import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;

class MetaKitApiTest {

    private final MetaKitApi api = new MetaKitApi();

    @Test
    void positionsAndWebhooksPathsFollowTheContract() {
        assertThat(api.positionsPath(2)).isEqualTo("/v1/accounts/2/positions");
        assertThat(api.webhooksPath()).isEqualTo("/v1/webhooks");
        assertThat(api.rotatePath("wh 1/x")).isEqualTo("/v1/webhooks/wh%201%2Fx/rotate");
    }

    @Test
    void dealsPathCarriesUrlEncodedUtcInstantsWithSeconds() {
        assertThat(api.dealsPath(2, Instant.parse("2026-12-02T10:15:30Z"), Instant.parse("2026-12-02T11:00:00Z")))
                .isEqualTo("/v1/accounts/2/deals?from=2026-12-02T10%3A15%3A30Z&to=2026-12-02T11%3A00%3A00Z");
    }

    @Test
    void dealsPathLeavesOutANullBound() {
        assertThat(api.dealsPath(7, Instant.parse("2026-12-02T10:15:30Z"), null))
                .isEqualTo("/v1/accounts/7/deals?from=2026-12-02T10%3A15%3A30Z");
        assertThat(api.dealsPath(7, null, Instant.parse("2026-12-02T10:15:30Z")))
                .isEqualTo("/v1/accounts/7/deals?to=2026-12-02T10%3A15%3A30Z");
        assertThat(api.dealsPath(7, null, null)).isEqualTo("/v1/accounts/7/deals");
    }

    @Test
    void dealsPathWidensSubSecondBoundsSoTheWindowNeverShrinks() {
        assertThat(api.dealsPath(1, Instant.parse("2026-12-02T10:15:30.900Z"), Instant.parse("2026-12-02T10:15:31.100Z")))
                .isEqualTo("/v1/accounts/1/deals?from=2026-12-02T10%3A15%3A30Z&to=2026-12-02T10%3A15%3A32Z");
    }
}
