package dev.metakit.inbox.support;

import dev.metakit.inbox.worker.AccountWork;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Who did what in the inbox, recorded by triggers on the test database while several instances share it: every claim
 * of a row (with whether another claim's lease on it was still running), every lease renewal, every outcome written
 * (processed, failed, retry: the claim given back with a later attempt) with the claim the row was under at that
 * moment, every row marked processed under no claim (settled: a catch-up's backlog, or a row it read along), and
 * every {@code reconcile_runs} row opened, each with the {@code application_name} of the connection that did it
 * (see {@link TestDatabase#jdbcUrl(String)}). Test-only tables, dropped again by {@link #close()}.
 */
public final class InboxAudit implements AutoCloseable {

    public static InboxAudit install() {
        InboxAudit audit = new InboxAudit();
        audit.close();
        TestDatabase.exec("""
                create table test_inbox_audit (
                    seq           bigserial   primary key,
                    delivery_key  text        not null,
                    kind          text        not null,
                    instance      text        not null,
                    claimed_by    text,
                    -- the claim made (kind claim), or the claim the row was under when written (every other kind)
                    claim         text,
                    prev_claim    text,
                    account_id    bigint,
                    at            timestamptz not null default clock_timestamp(),
                    -- one claim statement's rows share it
                    tx_at         timestamptz not null default now(),
                    prev_claimed_by text,
                    prev_until    timestamptz,
                    -- a claim while an unexpired lease of another claim held the row: the row worked twice at once
                    lease_live    boolean     not null default false)""");
        TestDatabase.exec("""
                create table test_run_audit (
                    run_id   bigint primary key,
                    instance text   not null)""");
        // a claim's identity: the boot token where the schema has one (claim_token), else the claiming instance's id
        TestDatabase.exec("""
                create function test_inbox_audit() returns trigger language plpgsql as $$
                declare
                    new_claim text := coalesce(to_jsonb(new)->>'claim_token', new.claimed_by);
                    old_claim text := coalesce(to_jsonb(old)->>'claim_token', old.claimed_by);
                    pending   boolean := new.processed_at is null and new.failed_at is null;
                    -- what else the update did to the row under its previous claim, in this order
                    kinds     text[] := '{}';
                begin
                    if new.attempts > old.attempts or (new_claim is not null and new_claim is distinct from old_claim)
                    then
                        insert into test_inbox_audit (delivery_key, kind, instance, account_id, claimed_by, claim,
                                                      prev_claimed_by, prev_claim, prev_until, lease_live)
                        values (new.delivery_key, 'claim', current_setting('application_name'), new.account_id,
                                new.claimed_by, new_claim,
                                old.claimed_by, old_claim, old.claimed_until,
                                old.claimed_by is not null and old.claimed_until >= now());
                    elsif pending and new_claim is not null and new_claim = old_claim
                          and new.claimed_until > old.claimed_until then
                        kinds := kinds || 'renew'::text;
                    end if;
                    -- under no claim: a catch-up answered for it (its account's settled backlog, or a row it read
                    -- along)
                    if new.processed_at is not null and old.processed_at is null then
                        kinds := kinds || (case when old_claim is null then 'settled' else 'processed' end);
                    end if;
                    if new.failed_at is not null and old.failed_at is null then
                        kinds := kinds || 'failed'::text;
                    end if;
                    -- a claim given back with a later attempt (a backoff or a retry), not a bare release
                    if pending and old_claim is not null and new_claim is null
                       and new.next_attempt_at > old.next_attempt_at then
                        kinds := kinds || 'retry'::text;
                    end if;
                    insert into test_inbox_audit (delivery_key, kind, instance, account_id, prev_claimed_by, prev_claim)
                    select new.delivery_key, kind, current_setting('application_name'), new.account_id,
                           old.claimed_by, old_claim
                      from unnest(kinds) with ordinality as k(kind, n) order by n;
                    return new;
                end $$""");
        TestDatabase.exec("""
                create trigger test_inbox_audit after update on webhook_inbox
                   for each row execute function test_inbox_audit()""");
        TestDatabase.exec("""
                create function test_run_audit() returns trigger language plpgsql as $$
                begin
                    insert into test_run_audit values (new.run_id, current_setting('application_name'));
                    return new;
                end $$""");
        TestDatabase.exec("""
                create trigger test_run_audit after insert on reconcile_runs
                   for each row execute function test_run_audit()""");
        return audit;
    }

    /**
     * How often two instances worked the same account at once (different rows of it: a claim takes an account's due
     * rows, and rows that arrive meanwhile are due for anyone), counted as overlapping pairs of one instance's claim
     * of an account until the last of those rows was processed.
     */
    public static long accountOverlaps() {
        return TestDatabase.scalar("""
                with spans as (
                    select c.instance, c.account_id, c.tx_at, min(c.at) as from_at, max(p.at) as to_at
                      from test_inbox_audit c
                      join test_inbox_audit p on p.delivery_key = c.delivery_key and p.kind = 'processed'
                                             and p.instance = c.instance
                     where c.kind = 'claim'
                     group by 1, 2, 3)
                select count(*) from spans a join spans b
                    on a.account_id = b.account_id and a.instance < b.instance
                   and a.from_at < b.to_at and b.from_at < a.to_at""");
    }

    /** The longest a claim held a row before the same instance marked it processed, in milliseconds. */
    public static long longestHoldMillis() {
        return TestDatabase.scalar("""
                select coalesce(max(extract(epoch from p.at - c.at) * 1000), 0)::bigint
                  from test_inbox_audit c join test_inbox_audit p
                    on p.delivery_key = c.delivery_key and p.kind = 'processed' and p.instance = c.instance
                 where c.kind = 'claim'""");
    }

    /**
     * Writes made under a claim the writing instance never made: a renewal or an outcome (processed, failed, retry) by
     * an instance whose claim on the row had been taken over (or given up), one line each. Empty when every write
     * came from the holder of the row's claim at that moment.
     */
    public static java.util.List<String> writesWithoutTheClaim() {
        return java.util.List.copyOf(TestDatabase.strings(TestDatabase.dataSource(), """
                select o.kind || ' of ' || o.delivery_key || ' by ' || o.instance || ' at ' || o.at
                       || ' under claim ' || coalesce(o.prev_claim, 'none')
                  from test_inbox_audit o
                 where o.kind in ('renew', 'processed', 'failed', 'retry')
                   and not exists (select 1 from test_inbox_audit c
                                    where c.kind = 'claim' and c.delivery_key = o.delivery_key
                                      and c.instance = o.instance and c.claim = o.prev_claim and c.seq < o.seq)"""));
    }

    /**
     * Rows marked processed under no claim that no committed catch-up of their account answered for, one line each:
     * such a row must be at or before its account's settle time ({@code inbox_account_settled.through}), or within
     * the time after it that the catch-up read along ({@link AccountWork#SETTLE_MARGIN}). Empty when every such write
     * was a catch-up's.
     */
    public static java.util.List<String> settledWithoutACatchUp() {
        return java.util.List.copyOf(TestDatabase.strings(TestDatabase.dataSource(), """
                select o.kind || ' of ' || o.delivery_key || ' by ' || o.instance || ' at ' || o.at
                  from test_inbox_audit o join webhook_inbox w on w.delivery_key = o.delivery_key
                 where o.kind = 'settled'
                   and not exists (select 1 from inbox_account_settled s
                                    where s.account_id = w.account_id
                                      and w.next_attempt_at <= s.through + interval '%d milliseconds')"""
                .formatted(AccountWork.SETTLE_MARGIN.toMillis())));
    }

    /**
     * How many rows were marked processed exactly once, under a claim or settled by a catch-up: with several instances
     * a row marked twice, or not at all, is missing from the count.
     */
    public static long rowsProcessedOnce() {
        return TestDatabase.scalar("""
                select count(*) from (select delivery_key from test_inbox_audit
                                       where kind in ('processed', 'settled') group by 1 having count(*) = 1) once""");
    }

    /** What happened to these rows, one line per event: for a failure message. */
    public static String history(java.util.Collection<String> keys) {
        StringBuilder out = new StringBuilder();
        try (Connection c = TestDatabase.dataSource().getConnection();
             java.sql.PreparedStatement ps = c.prepareStatement("""
                     select delivery_key, kind, instance, account_id, claimed_by, at, tx_at, prev_claimed_by,
                            prev_until, lease_live
                       from test_inbox_audit where delivery_key = any(?) order by delivery_key, seq""")) {
            ps.setArray(1, c.createArrayOf("text", keys.toArray()));
            try (java.sql.ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    for (int i = 1; i <= 10; i++) {
                        out.append(i == 1 ? "\n" : " ").append(rs.getString(i));
                    }
                }
            }
        } catch (SQLException e) {
            out.append("(no history: ").append(e.getMessage()).append(')');
        }
        return out.toString();
    }

    @Override
    public void close() {
        TestDatabase.exec("drop trigger if exists test_inbox_audit on webhook_inbox");
        TestDatabase.exec("drop trigger if exists test_run_audit on reconcile_runs");
        TestDatabase.exec("drop function if exists test_inbox_audit()");
        TestDatabase.exec("drop function if exists test_run_audit()");
        TestDatabase.exec("drop table if exists test_inbox_audit, test_run_audit");
    }

}
