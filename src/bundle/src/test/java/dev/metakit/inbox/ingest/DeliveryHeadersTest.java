package dev.metakit.inbox.ingest;

import dev.metakit.inbox.signature.SignatureVerificationException;
import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultMessage;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The delivery's headers on an engine no runtime reader knows (Quarkus's Vert.x, a plain CamelContext's): the message
 * headers as platform-http fills them, the request's own values first and then the query string's under the same
 * name, with the query string itself in CamelHttpRawQuery.
 */
class DeliveryHeadersTest {
    private static final String EVENT = "X-MetaKit-Event";

    private static Message request(String rawQuery, String... values) {
        Message m = new DefaultMessage(new DefaultCamelContext());
        if (values.length == 1) {
            m.setHeader(EVENT, values[0]);
        } else if (values.length > 1) {
            m.setHeader(EVENT, new ArrayList<>(List.of(values)));
        }
        m.setHeader(Exchange.HTTP_RAW_QUERY, rawQuery);
        return m;
    }

    @Test
    void theRequestsOwnHeaderIsTheValue() throws Exception {
        assertThat(DeliveryHeaders.single(request(null, "position.opened"), EVENT)).isEqualTo("position.opened");
    }

    @Test
    void aValueOnlyTheQueryStringGaveIsNoHeader() throws Exception {
        assertThat(DeliveryHeaders.single(request("x-metakit-event=evil", "evil"), EVENT)).isNull();
    }

    @Test
    void theQueryStringsValuesBesideTheRealHeaderAreTakenOutDecoded() throws Exception {
        Message m = request("X-MetaKit-Event=evil+one&other=1&x-METAKIT-event=t%3D1%2Cv1%3D00",
                "position.opened", "evil one", "t=1,v1=00");

        assertThat(DeliveryHeaders.single(m, EVENT)).isEqualTo("position.opened");
    }

    @Test
    void aQueryValueEqualToTheHeadersLeavesTheHeader() throws Exception {
        Message m = request("X-MetaKit-Event=position.opened", "position.opened", "position.opened");

        assertThat(DeliveryHeaders.single(m, EVENT)).isEqualTo("position.opened");
    }

    @Test
    void twoRealHeadersAreRefusedWhateverTheQueryString() {
        Message m = request("X-MetaKit-Event=q", "position.opened", "evil.second", "q");

        assertThatThrownBy(() -> DeliveryHeaders.single(m, EVENT))
                .isInstanceOf(SignatureVerificationException.class)
                .hasMessage("repeated signature or event header");
    }
}
