package dev.metakit.example.camelmain;

import org.apache.camel.main.Main;

/**
 * An application on camel-main that runs metakit-inbox as a part of itself: application.properties says where the
 * bundle's routes come from and what the host serves; the bundle's settings come from the environment.
 */
public final class InboxHost {
    private InboxHost() {
    }

    public static void main(String[] args) throws Exception {
        new Main(InboxHost.class).run(args);
    }
}
