-- The webhook signing secret when the bundle rotates it (WebhookSecretStore): every instance reads it here. Secrets are
-- AES-GCM ciphertexts (nonce || ciphertext+tag) under METAKIT_WEBHOOK_SECRET_KEY; key_id names that key (a
-- fingerprint, never the key), so that a wrong key is told apart from damaged data. One row per MetaKit webhook.
create table webhook_secrets (
    webhook_id      text        not null,
    -- increases with every stored rotation: the instances reload the row when it changes
    generation      bigint      not null,
    key_id          text        not null,
    current_secret  bytea       not null,
    -- the secret before the last rotation, accepted until previous_until (MetaKit's window), then dropped
    previous_secret bytea,
    previous_until  timestamptz,
    stored_at       timestamptz not null default now(),
    constraint webhook_secrets_pk primary key (webhook_id),
    constraint webhook_secrets_previous_ck check ((previous_secret is null) = (previous_until is null))
);

-- A rotation in progress (the claim that makes it one at a time across instances, written before MetaKit is asked)
-- and the last one's outcome. state: 'idle' (never rotated), 'calling' (the claim is taken, MetaKit asked or about to
-- be, nothing stored yet), 'done', 'failed'. A 'calling' row older than a few minutes is a rotation whose instance
-- stopped before it could store what MetaKit answered: WebhookSecrets reports it.
create table webhook_secret_rotations (
    webhook_id   text        not null,
    state        text        not null,
    trigger      text        not null,
    claimed_by   text        not null,
    claimed_at   timestamptz not null default now(),
    finished_at  timestamptz,
    -- why the last rotation failed, in words without any secret
    last_error   text,
    constraint webhook_secret_rotations_pk primary key (webhook_id),
    constraint webhook_secret_rotations_state_ck check (state in ('idle', 'calling', 'done', 'failed'))
);
