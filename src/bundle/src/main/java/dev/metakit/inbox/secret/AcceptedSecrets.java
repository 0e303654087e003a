package dev.metakit.inbox.secret;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The secrets an instance accepts: the current one, and the previous one until {@code previousUntil} (MetaKit's
 * window plus the signature tolerance). Its {@code toString} leaves the secrets out.
 */
public record AcceptedSecrets(long generation, String current, String previous, Instant previousUntil) {
    /** What a delivery verified at {@code now} may be signed with, current first. */
    public List<String> at(Instant now) {
        List<String> secrets = new ArrayList<>(2);
        secrets.add(current);
        if (previousAcceptedAt(now)) {
            secrets.add(previous);
        }
        return secrets;
    }

    public boolean previousAcceptedAt(Instant now) {
        return previous != null && previousUntil != null && now.isBefore(previousUntil);
    }

    @Override
    public String toString() {
        return "AcceptedSecrets[generation=" + generation + ", previousUntil=" + previousUntil + "]";
    }
}
