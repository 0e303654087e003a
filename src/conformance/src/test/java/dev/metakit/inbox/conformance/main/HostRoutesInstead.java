package dev.metakit.inbox.conformance.main;

import org.apache.camel.builder.RouteBuilder;

/** A host's RouteBuilder of its own named where the bundle's belongs: the bundle's Java routes are left out. */
public class HostRoutesInstead extends RouteBuilder {
    @Override
    public void configure() {
        from("direct:host-own").routeId("host-own").log("host route");
    }
}
