package dev.metakit.inbox.feed;

import org.apache.camel.Exchange;
import org.apache.camel.Message;
import org.apache.camel.spi.ExchangeFormatter;

/**
 * The default outlet's line per change: {@code change 1:35 account 1 seq 35 opened ticket 99300070}. Camel's own
 * {@code Exchange[Headers: ..., Body: ...]} line (the whole position as JSON) buried everything else the run prints;
 * the body is the same JSON any real outlet receives, so the log does not need to repeat it.
 */
public class ChangeLine implements ExchangeFormatter {
    @Override
    public String format(Exchange exchange) {
        Message m = exchange.getMessage();
        String id = m.getHeader(FeedHeaders.CHANGE_ID, String.class);
        String seq = id == null ? "?" : id.substring(id.indexOf(':') + 1);
        return "change " + id + " account " + m.getHeader(FeedHeaders.ACCOUNT_ID) + " seq " + seq + " "
                + m.getHeader(FeedHeaders.CHANGE_KIND) + " ticket " + m.getHeader(FeedHeaders.TICKET);
    }
}
