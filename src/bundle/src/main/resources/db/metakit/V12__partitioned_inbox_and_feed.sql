-- The inbox and the change feed partitioned by UTC day, so that retention detaches and drops a whole day
-- (DayPartitions) instead of deleting rows from the hottest tables. Each table has one more partition, *_kept, that
-- covers every time before its first day: the rows that were here before this migration, and the unfinished rows
-- (pending or failed deliveries, unpublished changes) of every day retention has dropped since. The bundle makes the
-- day partitions ahead (7 days, at start and at every retention run); there is no default partition, so a row with no
-- partition for its time fails to insert (the delivery is answered 503, readiness names the missing day).
--
-- The table as it stands becomes the kept partition, in place: no row is copied but those that move to a day.

-- webhook_inbox: partitioned by signed_at, the signature's t, which MetaKit stamps once per event, so every retry of
-- one delivery falls in the same partition and (delivery_key, signed_at) dedupes exactly as delivery_key did. Rows
-- stored before this migration get '-infinity' (a constant default: no rewrite), except those received in the last 15
-- minutes, the only ones a retry can still meet (an older signature is refused): they get their real t, parsed from
-- the key where it has the shape t:v1 (else received_at), and those of today move to today's partition.
alter table webhook_inbox rename to webhook_inbox_kept;
alter table webhook_inbox_kept drop constraint webhook_inbox_pk;
alter index webhook_inbox_pending_account_idx rename to webhook_inbox_kept_pending_account_idx;
alter table webhook_inbox_kept add column signed_at timestamptz not null default '-infinity';
update webhook_inbox_kept
   set signed_at = case when delivery_key ~ '^[0-9]{1,11}:[0-9a-f]+$'
                        then to_timestamp(split_part(delivery_key, ':', 1)::bigint) else received_at end
 where received_at > now() - interval '15 minutes';
alter table webhook_inbox_kept alter column signed_at set default now();
alter table webhook_inbox_kept add constraint webhook_inbox_kept_pk primary key (delivery_key, signed_at);

create temporary table webhook_inbox_moving on commit drop as
    select * from webhook_inbox_kept where signed_at >= date_trunc('day', now(), 'UTC');
delete from webhook_inbox_kept where signed_at >= date_trunc('day', now(), 'UTC');

create table webhook_inbox (
    delivery_key    text        not null,
    event           text,
    account_id      bigint,
    body            text,
    body_raw        bytea,
    received_at     timestamptz not null default now(),
    processed_at    timestamptz,
    attempts        integer     not null default 0,
    next_attempt_at timestamptz not null default now(),
    claimed_by      text,
    claimed_until   timestamptz,
    failed_at       timestamptz,
    last_error      text,
    claim_token     uuid,
    replayed_at     timestamptz,
    -- the verified signature's t: the partition key (the ingest always gives it; the default serves a row a host
    -- writes by hand)
    signed_at       timestamptz not null default now(),
    constraint webhook_inbox_pk primary key (delivery_key, signed_at),
    constraint webhook_inbox_body_present_chk check (body is not null or body_raw is not null)
) partition by range (signed_at);

create index webhook_inbox_pending_account_idx on webhook_inbox (account_id, next_attempt_at)
    where processed_at is null and failed_at is null;
-- the dead letters (the ops page's count and list, requeue): few rows, written only when a row fails
create index webhook_inbox_failed_idx on webhook_inbox (failed_at) where processed_at is null and failed_at is not null;

-- the kept partition up to today (UTC), then today and 7 days ahead
do $$
declare
    first_day timestamptz := date_trunc('day', now(), 'UTC');
begin
    -- the partition constraint, proved by a check, so that attaching it skips the scan
    execute format('alter table webhook_inbox_kept add constraint webhook_inbox_kept_range_ck check (signed_at < %L)',
                   first_day);
    execute format('alter table webhook_inbox attach partition webhook_inbox_kept for values from (minvalue) to (%L)',
                   first_day);
    for d in 0..7 loop
        execute format('create table %I partition of webhook_inbox for values from (%L) to (%L)',
                       'webhook_inbox_p' || to_char((first_day + make_interval(days => d)) at time zone 'UTC', 'YYYYMMDD'),
                       first_day + make_interval(days => d), first_day + make_interval(days => d + 1));
    end loop;
end $$;

insert into webhook_inbox select * from webhook_inbox_moving;

-- position_changes: partitioned by reconciled_at. change_id comes from a sequence (a partitioned table has no identity
-- column here) that continues after the identity's last value. A unique constraint of a partitioned table must hold
-- the partition key, so (account_id, seq) is an index, not a constraint: what keeps an account's seqs unique, gapless
-- and in commit order is the lock of its position_change_seqs row, which every writer takes to get its next seq and
-- holds until its reconcile commits (ChangeOutbox).
do $$
declare
    last_id bigint := (select case when is_called then last_value else 0 end
                         from position_changes_change_id_seq);
begin
    alter table position_changes alter column change_id drop identity;
    last_id := greatest(last_id, (select coalesce(max(change_id), 0) from position_changes));
    create sequence position_changes_change_id_seq;
    if last_id > 0 then
        perform setval('position_changes_change_id_seq', last_id);
    end if;
end $$;
alter table position_changes rename to position_changes_kept;
alter table position_changes_kept drop constraint position_changes_pk;
alter table position_changes_kept drop constraint position_changes_account_seq_uq;
alter index position_changes_unpublished_idx rename to position_changes_kept_unpublished_idx;
alter index position_changes_published_at_idx rename to position_changes_kept_published_at_idx;
alter table position_changes_kept add constraint position_changes_kept_pk primary key (change_id, reconciled_at);
create index position_changes_kept_account_seq_idx on position_changes_kept (account_id, seq);

create table position_changes (
    change_id         bigint      not null default nextval('position_changes_change_id_seq'),
    account_id        bigint      not null,
    -- per account: 1, 2, 3, ... without gaps (position_change_seqs)
    seq               bigint      not null,
    ticket            bigint      not null,
    kind              text        not null,
    status            text        not null,
    symbol            text,
    type              text,
    volume            numeric,
    price_open        numeric,
    opened_at         timestamptz,
    sl                numeric,
    tp                numeric,
    closed_at         timestamptz,
    close_deal_ticket bigint,
    close_price       numeric,
    close_profit      numeric,
    changed           text[]      not null,
    source            text        not null,
    reconciled_at     timestamptz not null default now(),
    published_at      timestamptz,
    payload           json,
    constraint position_changes_pk primary key (change_id, reconciled_at),
    constraint position_changes_kind_chk check (kind in ('opened', 'modified', 'closing', 'closed')),
    constraint position_changes_source_chk check (source in ('event', 'periodic', 'status-watch', 'replay', 'manual'))
) partition by range (reconciled_at);
alter sequence position_changes_change_id_seq owned by position_changes.change_id;

-- an account's changes in seq order (replay, the order check)
create index position_changes_account_seq_idx on position_changes (account_id, seq);
-- what the publisher reads: per account, its unpublished changes in seq order
create index position_changes_unpublished_idx on position_changes (account_id, seq) where published_at is null;
-- what the lag gauge reads
create index position_changes_published_at_idx on position_changes (published_at) where published_at is not null;

-- The kept partition covers the changes reconciled up to the end of the day of the newest (today, or later if a
-- clock ran ahead): none moves, and the day partitions start the day after.
do $$
declare
    first_day timestamptz := date_trunc('day', greatest(now(), (select max(reconciled_at) from position_changes_kept)),
                                        'UTC') + interval '1 day';
begin
    execute format('alter table position_changes_kept add constraint position_changes_kept_range_ck'
                   ' check (reconciled_at < %L)', first_day);
    execute format('alter table position_changes attach partition position_changes_kept'
                   ' for values from (minvalue) to (%L)', first_day);
    for d in 0..6 loop
        execute format('create table %I partition of position_changes for values from (%L) to (%L)',
                       'position_changes_p' || to_char((first_day + make_interval(days => d)) at time zone 'UTC', 'YYYYMMDD'),
                       first_day + make_interval(days => d), first_day + make_interval(days => d + 1));
    end loop;
end $$;
