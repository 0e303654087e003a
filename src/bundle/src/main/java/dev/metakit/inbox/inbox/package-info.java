/**
 * The inbox, the bundle's central table: every statement on {@code webhook_inbox} and {@code inbox_account_backoff}
 * is in this package, by who makes it: the ingest ({@link dev.metakit.inbox.inbox.InboxIntake}), the worker's claims
 * and their outcomes ({@link dev.metakit.inbox.inbox.InboxClaims}), the operators and the ops page
 * ({@link dev.metakit.inbox.inbox.InboxAdmin}); and the liveness of the boots that claim its rows,
 * {@code inbox_instances} ({@link dev.metakit.inbox.inbox.InstanceLiveness}), and what else a boot holds by it
 * ({@link dev.metakit.inbox.inbox.Heartbeat}: the change feed's accounts). It depends on no other feature package:
 * ingest, worker, ops and the feed depend on it.
 */
package dev.metakit.inbox.inbox;
