-- Who publishes each account's change feed (FeedOwnership): one boot at a time, decided the way the worker's claims
-- are. The owner keeps the account while its boot beats in inbox_instances; once that heartbeat is older than the
-- worker's dead-after (or its row is gone: a clean stop, or a restart of its instance id), another boot may take it,
-- and taking it bumps the epoch. Every "published" mark checks owner and epoch, so a boot that was paused (SIGSTOP, a
-- long GC) and lost the account meanwhile marks nothing for it; the new owner resumes at its first unpublished change.
create table feed_owners (
    account_id     bigint      not null,
    -- inbox_instances.boot_token of the owning boot
    owner_token    uuid        not null,
    -- its METAKIT_INSTANCE_ID, for operators
    owner_instance text        not null,
    -- the fencing token: 1 for the first owner, one more at every change of owner
    epoch          bigint      not null,
    taken_at       timestamptz not null default now(),
    constraint feed_owners_pk primary key (account_id)
);

-- what a clean stop releases and the ops queries count
create index feed_owners_owner_idx on feed_owners (owner_token);
