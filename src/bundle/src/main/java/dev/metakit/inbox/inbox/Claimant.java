package dev.metakit.inbox.inbox;

import java.util.UUID;

/**
 * Who claims inbox rows: the instance (its {@code METAKIT_INSTANCE_ID}, stable across restarts where the platform keeps
 * it) and this boot of it. A claim is the boot's: the token is what every outcome write checks.
 */
public record Claimant(String instanceId, UUID bootToken) {

    /** A new boot of {@code instanceId}: a fresh random token. */
    public static Claimant newBoot(String instanceId) {
        return new Claimant(instanceId, UUID.randomUUID());
    }
}
