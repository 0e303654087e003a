-- Where the inbox's pending rows begin: no row still to be worked is signed before `since`. The claim looks for work
-- only in the partitions from there on (pruned as it runs), so its cost follows the days that hold pending rows, not
-- the week retained. The worker moves it up to the first partition holding a pending row (never later than two hours
-- before now: a delivery signed within the signature's tolerance lands after it); a replay or a requeue, which makes
-- older rows pending again, moves it back in the same statement.
create table inbox_pending_since (
    one   boolean     not null default true,
    since timestamptz not null,
    constraint inbox_pending_since_pk primary key (one),
    constraint inbox_pending_since_one_chk check (one)
);
insert into inbox_pending_since (since) values ('-infinity');

-- The claim's lower bound as a stable function: PostgreSQL evaluates it as the claim starts and leaves the partitions
-- before it out of the plan's run at once (a subquery's value prunes only as each scan runs, after every partition's
-- scan was set up, which costs with the number of days retained).
create function inbox_pending_from() returns timestamptz stable language sql
    as $$ select coalesce((select since from inbox_pending_since), '-infinity') $$;
