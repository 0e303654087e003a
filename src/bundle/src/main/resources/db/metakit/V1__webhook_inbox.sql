-- Every genuine delivery, stored before it is acknowledged. The primary key is the dedupe key (t:v1).
create table webhook_inbox (
    delivery_key    text        not null,
    event           text,
    account_id      bigint,
    body            text,
    -- the raw bytes, only when the body is not storable as text (invalid UTF-8 or a NUL byte)
    body_raw        bytea,
    received_at     timestamptz not null default now(),
    processed_at    timestamptz,
    attempts        integer     not null default 0,
    next_attempt_at timestamptz not null default now(),
    claimed_by      text,
    claimed_until   timestamptz,
    failed_at       timestamptz,
    last_error      text,
    constraint webhook_inbox_pk primary key (delivery_key),
    constraint webhook_inbox_body_present_chk check (body is not null or body_raw is not null)
);

-- what the worker polls: rows neither processed nor failed
create index webhook_inbox_pending_idx on webhook_inbox (next_attempt_at)
    where processed_at is null and failed_at is null;
