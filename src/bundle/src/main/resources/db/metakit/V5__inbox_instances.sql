-- Liveness of the worker instances (InstanceLiveness): one row per boot, its heartbeat on the database's clock. A claim
-- names the boot that made it (claim_token): it is free for others at once when that boot stops beating, and every
-- outcome write checks it, so a boot whose claims were taken over (it was paused) writes nothing for them.
create table inbox_instances (
    boot_token   uuid        not null,
    -- METAKIT_INSTANCE_ID (default the host name): the same across restarts where the platform keeps it
    instance_id  text        not null,
    started_at   timestamptz not null default now(),
    heartbeat_at timestamptz not null default now(),
    constraint inbox_instances_pk primary key (boot_token)
);

create index inbox_instances_instance_idx on inbox_instances (instance_id);

-- the boot that claimed the row; null: unclaimed, or claimed before this column (then its lease alone frees it)
alter table webhook_inbox add column claim_token uuid;
