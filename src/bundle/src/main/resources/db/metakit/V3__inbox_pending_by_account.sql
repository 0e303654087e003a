-- A claim takes whole accounts (InboxQueue): the due rows of the accounts in a batch, found by account.
create index webhook_inbox_pending_account_idx on webhook_inbox (account_id, next_attempt_at)
    where processed_at is null and failed_at is null;
