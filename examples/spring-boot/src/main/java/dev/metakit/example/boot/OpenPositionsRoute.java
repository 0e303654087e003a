package dev.metakit.example.boot;

import org.apache.camel.builder.RouteBuilder;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

import java.util.List;
import java.util.Map;

/**
 * The host's own route, in Java DSL, on what the bundle keeps: the open positions of an account as the bundle last
 * reconciled them from MetaKit ({@code metakit.positions}: the bundle's schema in this application's database),
 * served as JSON on this application's port beside the webhook.
 */
@Component
public class OpenPositionsRoute extends RouteBuilder {
    static final String PATH = "/accounts/{accountId}/open-positions";
    private final JdbcTemplate jdbc;

    public OpenPositionsRoute(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void configure() {
        from("platform-http:" + PATH + "?httpMethodRestrict=GET")
                .routeId("host-open-positions")
                .process(exchange -> exchange.getMessage().setBody(
                        openPositions(exchange.getMessage().getHeader("accountId", Long.class))))
                .marshal().json()
                .setHeader("Content-Type", constant("application/json"));
    }

    private List<Map<String, Object>> openPositions(long accountId) {
        return jdbc.queryForList("select ticket, symbol, type, volume, price_open, sl, tp from metakit.positions"
                + " where account_id = ? and status = 'open' order by ticket", accountId);
    }
}
