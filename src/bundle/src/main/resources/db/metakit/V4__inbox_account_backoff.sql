-- Per-account backoff (InboxQueue): after a failed reconcile of an account, every pending row of the account waits
-- until retry_at, and so do its rows that arrive before then (the claim skips the account; the ingest insert never
-- reads this table). A retry_at in the past is inert; a successful reconcile deletes it.
create table inbox_account_backoff (
    account_id bigint      not null,
    retry_at   timestamptz not null,
    constraint inbox_account_backoff_pk primary key (account_id)
);
