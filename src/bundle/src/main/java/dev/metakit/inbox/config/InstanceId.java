package dev.metakit.inbox.config;

import java.io.IOException;
import java.net.InetAddress;

/** {@code metakit.instance-id}: this instance's name among the others, the host's name when the setting is blank. */
public final class InstanceId {
    private InstanceId() {
    }

    /** The setting, trimmed; blank or null: {@code HOSTNAME}, else the local host's name, else {@code localhost}. */
    public static String of(String setting) {
        if (setting != null && !setting.isBlank()) {
            return setting.trim();
        }
        String host = System.getenv("HOSTNAME");
        if (host != null && !host.isBlank()) {
            return host;
        }
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return "localhost";
        }
    }
}
