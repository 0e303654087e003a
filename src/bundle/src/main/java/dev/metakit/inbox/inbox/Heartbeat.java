package dev.metakit.inbox.inbox;

import java.time.Duration;

/**
 * A boot's heartbeat ({@code inbox_instances}), as seen by what else the boot holds by liveness: the change feed's
 * accounts ({@code feed_owners}) are this boot's while it beats, and the others' once its last beat is
 * {@link #deadAfter()} old. The worker's heartbeat is the one there is.
 */
public interface Heartbeat {
    /** This boot, its heartbeat running from now on (if nothing started it yet). */
    Claimant beatingBoot();

    /** How long after this boot's last heartbeat the others take over what it holds. */
    Duration deadAfter();
}
