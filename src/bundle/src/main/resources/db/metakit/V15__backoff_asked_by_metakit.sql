-- Whether an account's retry time is one MetaKit asked for (Retry-After) rather than the worker's own backoff. When a
-- retry of an account succeeds after failures, MetaKit answers again: the accounts waiting on a backoff of the worker's
-- choosing are due at once, so an outage's backlog starts draining within a poll of the API's return instead of each
-- account's remaining delay (up to the longest backoff); a time MetaKit asked for is kept.
alter table inbox_account_backoff
    add column asked boolean not null default false;
