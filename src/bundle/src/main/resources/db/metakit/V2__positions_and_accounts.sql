-- The reconciled state of every account: the REST API is the source of truth, this table mirrors it.
create table positions (
    account_id        bigint      not null,
    ticket            bigint      not null,
    -- open: listed by the API; closing: no longer listed, closing deal not yet visible; closed: closing deal applied
    status            text        not null,
    symbol            text,
    type              text,
    volume            numeric,
    price_open        numeric,
    sl                numeric,
    tp                numeric,
    profit            numeric,
    swap              numeric,
    opened_at         timestamptz,
    closed_at         timestamptz,
    close_deal_ticket bigint,
    close_price       numeric,
    close_profit      numeric,
    updated_at        timestamptz not null default now(),
    constraint positions_pk primary key (account_id, ticket),
    constraint positions_status_chk check (status in ('open', 'closing', 'closed'))
);

create index positions_unsettled_idx on positions (account_id) where status <> 'closed';

-- Every account the periodic reconcile covers: configured ones and every one named by a delivery.
create table accounts (
    account_id           bigint      not null,
    first_seen_at        timestamptz not null default now(),
    -- when the API snapshot last applied was taken; an older snapshot never overwrites a newer one
    last_snapshot_at     timestamptz,
    last_reconciled_at   timestamptz,
    last_reconcile_error text,
    constraint accounts_pk primary key (account_id)
);

-- The delivery-status watch: what GET /v1/webhooks said last time, per endpoint.
create table webhook_endpoints (
    endpoint_id          text        not null,
    url                  text,
    last_delivery_status text,
    last_delivery_at     timestamptz,
    checked_at           timestamptz not null default now(),
    constraint webhook_endpoints_pk primary key (endpoint_id)
);

-- One row per full reconcile run, with its figures.
create table reconcile_runs (
    run_id          bigserial   not null,
    trigger         text        not null,
    started_at      timestamptz not null default now(),
    finished_at     timestamptz,
    accounts_total  integer     not null default 0,
    accounts_done   integer     not null default 0,
    accounts_failed integer     not null default 0,
    changes         integer     not null default 0,
    constraint reconcile_runs_pk primary key (run_id)
);
