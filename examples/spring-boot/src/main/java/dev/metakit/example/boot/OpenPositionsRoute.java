package dev.metakit.example.boot;

import org.apache.camel.builder.RouteBuilder;
import org.springframework.stereotype.Component;

/**
 * The host's own route, in Java DSL, on what the bundle keeps: the open positions of an account as the bundle last
 * reconciled them from MetaKit ({@code positions}, on the bundle's {@code inboxDataSource}), served as JSON on this
 * application's port beside the webhook.
 */
@Component
public class OpenPositionsRoute extends RouteBuilder {
    static final String PATH = "/accounts/{accountId}/open-positions";

    @Override
    public void configure() {
        from("platform-http:" + PATH + "?httpMethodRestrict=GET")
                .routeId("host-open-positions")
                .setBody(constant(""))
                .to("sql:select ticket, symbol, type, volume, price_open, sl, tp from positions"
                        + " where account_id = cast(:#${header.accountId} as bigint) and status = 'open'"
                        + " order by ticket?dataSource=#inboxDataSource")
                .marshal().json()
                .setHeader("Content-Type", constant("application/json"));
    }
}
