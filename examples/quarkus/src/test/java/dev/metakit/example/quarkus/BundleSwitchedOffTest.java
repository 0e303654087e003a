package dev.metakit.example.quarkus;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import org.apache.camel.CamelContext;
import org.junit.jupiter.api.Test;

import jakarta.inject.Inject;
import java.net.http.HttpResponse;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Quarkus host with the extension switched off at build time ({@code quarkus.metakit-inbox.enabled=false}, a test
 * profile: the application is built and booted a second time): it starts with nothing of the bundle's, no route, no
 * DataSource of its, no webhook and none of its readiness checks.
 */
@QuarkusTest
@TestProfile(BundleSwitchedOffTest.SwitchedOff.class)
class BundleSwitchedOffTest {
    @Inject
    CamelContext camelContext;

    @Test
    void theApplicationStartsWithNothingOfTheBundle() throws Exception {
        assertThat(camelContext.getRoutes()).isEmpty();
        assertThat(camelContext.getRegistry().lookupByName("inboxDataSource")).isNull();

        assertThat(HostHttp.postSigned("webhook.test", "{\"event\":\"webhook.test\",\"account_id\":1,\"data\":{}}")
                .statusCode()).isEqualTo(404);
        HttpResponse<String> ready = HostHttp.get("/q/health/ready");
        assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
        assertThat(ready.body()).doesNotContain("essential-routes", "inbox-database", "metakit-api-key",
                "webhook-secret");
    }

    public static class SwitchedOff implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.metakit-inbox.enabled", "false");
        }
    }
}
