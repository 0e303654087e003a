package dev.metakit.inbox.ingest;

import org.apache.camel.Exchange;
import org.apache.camel.impl.DefaultCamelContext;
import org.apache.camel.support.DefaultExchange;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.InputStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BodyLimitTest {
    private static Exchange with(Object body) {
        Exchange e = new DefaultExchange(new DefaultCamelContext());
        e.getMessage().setBody(body);
        return e;
    }

    private static BodyLimit limit(long bytes) {
        BodyLimit limit = new BodyLimit();
        limit.setMaxBytes(bytes);
        return limit;
    }

    @Test
    void aBodyAtTheLimitPassesAsBytes() throws Exception {
        Exchange e = with(new ByteArrayInputStream(new byte[10]));

        limit(10).process(e);

        assertThat(e.getMessage().getBody()).isInstanceOf(byte[].class);
        assertThat(e.getMessage().getBody(byte[].class)).hasSize(10);
    }

    @Test
    void aBufferedBodyOverTheLimitIsRefused() {
        assertThatThrownBy(() -> limit(10).process(with(new byte[11])))
                .isInstanceOf(BodyTooLargeException.class).hasMessage("body larger than 10 bytes");
    }

    @Test
    void aStreamedBodyIsReadNoFurtherThanOneBytePastTheLimit() throws Exception {
        InputStream large = new ByteArrayInputStream(new byte[1000]);

        assertThatThrownBy(() -> limit(10).process(with(large))).isInstanceOf(BodyTooLargeException.class);
        assertThat(large.available()).isEqualTo(1000 - 11);
    }
}
