-- Where an account's backlog was settled whole. A retry that goes through after an account's reconciles failed is one
-- reconcile for every row the account had waiting: it reads the account's deals over the window those rows can name
-- (as a full reconcile does) instead of each row's ticket, and then every pending row of the account with
-- next_attempt_at at or before `through` is settled by it. The claim reads from `through` on (one index bound, so an
-- outage's backlog costs a claim nothing once it is settled), and the worker marks those rows processed in the
-- background, in batches.
create table inbox_account_settled (
    account_id bigint primary key,
    through    timestamptz not null
);
