package dev.metakit.inbox.metakit;

import java.time.Instant;

/**
 * What the consumer reads from a webhook body ({@code ticket} is {@code data.ticket}): a doorbell, not state.
 * Every field may be null; which events count as trade events is configuration, not decided here.
 */
public record WebhookEvent(String event, Long accountId, Instant createdAt, Long ticket) {
}
