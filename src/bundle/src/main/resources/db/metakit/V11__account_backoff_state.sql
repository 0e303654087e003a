-- An account backing off is one row of state: its retry time, how many reconciles of it failed in a row (a committed
-- reconcile deletes the row) and the last error. Its pending rows are not rewritten when it fails: the claim finds
-- work by account (webhook_inbox_pending_account_idx) and leaves an account out while its retry_at is ahead.
alter table inbox_account_backoff
    add column failures   integer not null default 0,
    add column last_error text;

-- The claim no longer reads pending rows in next_attempt_at order across accounts (that read past every row of the
-- accounts backing off); rows without an account are found through webhook_inbox_pending_account_idx too (account_id
-- is null). One index fewer to write for every stored delivery.
drop index if exists webhook_inbox_pending_idx;
