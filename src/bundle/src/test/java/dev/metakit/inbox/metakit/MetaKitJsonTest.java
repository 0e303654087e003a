package dev.metakit.inbox.metakit;

import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MetaKitJsonTest {

    private final MetaKitJson json = new MetaKitJson();

    @Test
    void webhookBodyGivesEventAccountTimeAndTicketIgnoringUnknownFields() {
        WebhookEvent e = json.webhookEvent("""
                {"event":"position.closed","account_id":2,"created_at":"2026-12-02T10:15:30Z","novel":{"x":[1]},
                 "data":{"ticket":99302156,"symbol":"EURUSD","type":"buy","volume":0.10,"price_open":1.08450,
                         "sl":0,"tp":0,"brand_new":true}}
                """.getBytes(StandardCharsets.UTF_8));
        assertThat(e).isEqualTo(new WebhookEvent("position.closed", 2L, Instant.parse("2026-12-02T10:15:30Z"),
                99302156L));
    }

    @Test
    void webhookBodyFieldsThatAreAbsentOrNullAreNull() {
        assertThat(json.webhookEvent("{}")).isEqualTo(new WebhookEvent(null, null, null, null));
        assertThat(json.webhookEvent("{\"event\":\"webhook.test\",\"account_id\":null,\"data\":null}"))
                .isEqualTo(new WebhookEvent("webhook.test", null, null, null));
        assertThat(json.webhookEvent("{\"event\":\"account.connected\",\"data\":{}}").ticket()).isNull();
    }

    @Test
    void badJsonIsMalformedWithAShortReasonThatNeverQuotesTheBody() {
        assertThatThrownBy(() -> json.webhookEvent("{\"event\": s3cr3t-token"))
                .isInstanceOf(MalformedPayloadException.class)
                .hasMessageStartingWith("not valid JSON")
                .message().doesNotContain("s3cr3t");
        assertThatThrownBy(() -> json.webhookEvent(new byte[0])).isInstanceOf(MalformedPayloadException.class);
        assertThatThrownBy(() -> json.webhookEvent("[1,2]")).isInstanceOf(MalformedPayloadException.class)
                .hasMessage("webhook body is not a JSON object");
    }

    @Test
    void wrongTypesAreMalformedNamingTheField() {
        assertMalformed(() -> json.webhookEvent("{\"account_id\":\"abc\"}"), "account_id: not a number");
        assertMalformed(() -> json.webhookEvent("{\"account_id\":2.5}"), "account_id: not an integer");
        assertMalformed(() -> json.webhookEvent("{\"created_at\":\"yesterday\"}"), "created_at: not an ISO-8601 time");
        assertMalformed(() -> json.webhookEvent("{\"data\":{\"ticket\":true}}"), "data.ticket: not a number");
        assertMalformed(() -> json.positions("[{\"symbol\":\"EURUSD\"}]"), "positions[0].ticket: missing");
        assertMalformed(() -> json.deals("{\"error\":\"x\"}"), "deals: expected a JSON array");
    }

    @Test
    void theExceptionCarriesWhatIsWrongSoNoCallerReadsItsMessage() {
        assertThat(malformed(() -> json.webhookEvent("{\"event\": x")))
                .extracting(MalformedPayloadException::defect, MalformedPayloadException::field)
                .containsExactly(MalformedPayloadException.Defect.NOT_JSON, null);
        assertThat(malformed(() -> json.webhookEvent(new byte[0])).defect())
                .isEqualTo(MalformedPayloadException.Defect.NOT_JSON);
        assertThat(malformed(() -> json.webhookEvent("[1,2]")).defect())
                .isEqualTo(MalformedPayloadException.Defect.NOT_OBJECT);
        assertThat(malformed(() -> json.webhookEvent("{\"data\":{\"ticket\":1.5}}")))
                .extracting(MalformedPayloadException::defect, MalformedPayloadException::field)
                .containsExactly(MalformedPayloadException.Defect.BAD_TICKET, "data.ticket");
        assertThat(malformed(() -> json.webhookEvent("{\"account_id\":\"x\"}")))
                .extracting(MalformedPayloadException::defect, MalformedPayloadException::field)
                .containsExactly(MalformedPayloadException.Defect.FIELD, "account_id");
        assertThat(malformed(() -> json.webhookEvent("{\"data\":7}")).field()).isEqualTo("data");
        assertThat(malformed(() -> json.positions("[{\"symbol\":\"EURUSD\"}]")).field())
                .isEqualTo("positions[0].ticket");
    }

    private static MalformedPayloadException malformed(Runnable read) {
        try {
            read.run();
        } catch (MalformedPayloadException e) {
            return e;
        }
        throw new AssertionError("no MalformedPayloadException");
    }

    @Test
    void positionDecimalsAreExactAndKeepTheirScale() {
        var positions = json.positions("""
                [{"ticket":99302156,"symbol":"EURUSD","type":"buy","volume":0.10,"price_open":1.08450,
                  "sl":0,"tp":0,"profit":-12.34,"swap":0.00,"time":"2026-12-02T10:15:30Z","magic":7},
                 {"ticket":1,"symbol":"XAUUSD","volume":12345678901234567.123456789012345678}]
                """);
        assertThat(positions).hasSize(2);
        ApiPosition p = positions.get(0);
        assertThat(p.ticket()).isEqualTo(99302156L);
        assertThat(p.priceOpen()).isEqualTo(new BigDecimal("1.08450"));
        assertThat(p.volume()).isEqualTo(new BigDecimal("0.10"));
        assertThat(p.sl()).isEqualByComparingTo(BigDecimal.ZERO);
        assertThat(p.tp()).isEqualByComparingTo(BigDecimal.ZERO);
        assertThat(p.profit()).isEqualTo(new BigDecimal("-12.34"));
        assertThat(p.time()).isEqualTo(Instant.parse("2026-12-02T10:15:30Z"));
        ApiPosition q = positions.get(1);
        assertThat(q.volume()).isEqualTo(new BigDecimal("12345678901234567.123456789012345678"));
        assertThat(q.type()).isNull();
        assertThat(q.sl()).isNull();
        assertThat(q.time()).isNull();
    }

    @Test
    void dealsMapEveryFieldAndNormaliseEntry() {
        var deals = json.deals("""
                [{"ticket":5,"position_id":99302156,"order":77,"symbol":"EURUSD","type":"sell","entry":"OUT_BY",
                  "volume":0.1,"price":1.08550,"profit":0.1,"commission":-0.2,"swap":0,"time":"2026-12-02T11:00:00.250+01:00",
                  "comment":"ignored"},
                 {"ticket":"6","position_id":99302156,"order":null,"entry":"in"}]
                """.getBytes(StandardCharsets.UTF_8));
        assertThat(deals.get(0)).isEqualTo(new ApiDeal(5, 99302156, 77L, "EURUSD", "sell", "out_by",
                new BigDecimal("0.1"), new BigDecimal("1.08550"), new BigDecimal("0.1"), new BigDecimal("-0.2"),
                new BigDecimal("0"), Instant.parse("2026-12-02T10:00:00.250Z")));
        assertThat(deals.get(0).isClosing()).isTrue();
        assertThat(deals.get(1).ticket()).isEqualTo(6);
        assertThat(deals.get(1).order()).isNull();
        assertThat(deals.get(1).isOpening()).isTrue();
        assertThat(deals.get(0).profit().add(new BigDecimal("0.2"))).isEqualByComparingTo("0.3");
    }

    @Test
    void webhooksListGivesStatusAndTime() {
        var hooks = json.webhooks("""
                [{"id":"wh_1","url":"https://x/hook","lastDeliveryStatus":"failed","lastDeliveryAt":"2026-12-02T10:15:30Z","secret":"nope"},
                 {"id":"wh_2","url":"https://y/hook","lastDeliveryStatus":null,"lastDeliveryAt":null}]
                """);
        assertThat(hooks).containsExactly(
                new ApiWebhook("wh_1", "https://x/hook", "failed", Instant.parse("2026-12-02T10:15:30Z")),
                new ApiWebhook("wh_2", "https://y/hook", null, null));
        assertThat(hooks.get(0).lastDeliveryFailed()).isTrue();
        assertThat(hooks.get(1).lastDeliveryFailed()).isFalse();
    }

    @Test
    void emptyArraysAreEmptyLists() {
        assertThat(json.positions("[]")).isEmpty();
        assertThat(json.deals(" [ ] ".getBytes(StandardCharsets.UTF_8))).isEmpty();
    }

    @Test
    void errorBodyGivesItsMessageAndNeverThrows() {
        assertThat(json.errorMessage("{\"error\":\"unknown account\",\"code\":404}")).contains("unknown account");
        assertThat(json.errorMessage("<html>bad gateway</html>")).isEmpty();
        assertThat(json.errorMessage((byte[]) null)).isEmpty();
        assertThat(json.errorMessage("{\"error\":42}")).isEmpty();
        assertThat(json.errorMessage("{\"error\":\"" + "x".repeat(1000) + "\"}").orElseThrow()).hasSizeLessThan(400);
    }

    private static void assertMalformed(ThrowingCallable parse, String message) {
        assertThatThrownBy(parse).isInstanceOf(MalformedPayloadException.class).hasMessage(message);
    }
}
