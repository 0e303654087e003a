-- The change feed's outbox: one row per real transition of a positions row, written in the reconcile transaction
-- that made it (AccountReconciler), published in seq order per account (ChangePublisher).
create table position_changes (
    change_id         bigint      generated always as identity,
    account_id        bigint      not null,
    -- per account: 1, 2, 3, ... without gaps (position_change_seqs)
    seq               bigint      not null,
    ticket            bigint      not null,
    kind              text        not null,
    -- the position as it stands after the change
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
    -- the feed's names of the fields this change set or changed (all known ones for a first sighting)
    changed           text[]      not null,
    source            text        not null,
    reconciled_at     timestamptz not null default now(),
    published_at      timestamptz,
    constraint position_changes_pk primary key (change_id),
    -- two writers of one account can never both hold a seq
    constraint position_changes_account_seq_uq unique (account_id, seq),
    constraint position_changes_kind_chk check (kind in ('opened', 'modified', 'closing', 'closed')),
    constraint position_changes_source_chk check (source in ('event', 'periodic', 'status-watch', 'replay', 'manual'))
);

-- what the publisher reads: per account, its unpublished changes in seq order
create index position_changes_unpublished_idx on position_changes (account_id, seq) where published_at is null;
-- what retention and the lag gauge read
create index position_changes_published_at_idx on position_changes (published_at) where published_at is not null;

-- The last seq given out per account. The upsert that takes the next one locks the account's row until the
-- reconcile commits, so seqs commit in order and none is skipped (a rolled-back reconcile rolls its seqs back too).
create table position_change_seqs (
    account_id bigint not null,
    last_seq   bigint not null,
    constraint position_change_seqs_pk primary key (account_id)
);
