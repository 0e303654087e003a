#!/usr/bin/env bash
# A deployment's retained inbox and change feed, made in the bundle's own layout for the benchmarks at a deployment's
# size (BENCHMARKS.md, "At a deployment's size"): DAYS past UTC days (7: METAKIT_RETENTION's default) of processed
# deliveries, ROWS in all, and of published changes, CHANGES in all, each day a partition as the bundle's retention
# keeps them, the kept partition before the first. Each day is filled as a table of its own and then attached with a
# check that proves its range (no WAL-bound row-by-row index upkeep, no validation scan), one line of progress a day.
#
#   PSQL="psql -h 127.0.0.1 -p 55439 -U metakit -d metakit" ROWS=50000000 CHANGES=5000000 bench/retained-fill.sh
#
# Only on a database the bundle has migrated and nothing else uses: it refuses one whose kept partitions hold rows or
# that already has a partition before today, and it never deletes a row.
set -euo pipefail
ROWS=${ROWS:-50000000}
CHANGES=${CHANGES:-$((ROWS / 10))}
DAYS=${DAYS:-7}
ACCOUNTS=${ACCOUNTS:-1000}
: "${PSQL:?PSQL must say how to reach the database, e.g. psql -h 127.0.0.1 -p 55439 -U metakit -d metakit}"
sql() { $PSQL -qAtX -v ON_ERROR_STOP=1 -c "set search_path = metakit" "$@"; }
log() { echo "$(date -u +%H:%M:%S) $*"; }

today=$(sql -c "select to_char(date_trunc('day', now(), 'UTC') at time zone 'UTC', 'YYYY-MM-DD')")
first=$(date -u -d "$today - $DAYS days" +%Y-%m-%d)
if [ "$(sql -c "select (exists (select 1 from webhook_inbox_kept) or exists (select 1 from position_changes_kept))::int")" != 0 ]; then
  echo "retained-fill: the kept partitions hold rows; it makes a deployment's past only in a database that has none" >&2
  exit 1
fi

if [ "$(sql -c "select count(*) from pg_inherits where inhparent in ('webhook_inbox'::regclass, 'position_changes'::regclass)
                 and inhrelid::regclass::text ~ '_p[0-9]{8}$' and right(inhrelid::regclass::text, 8) < replace('$today', '-', '')")" != 0 ]; then
  echo "retained-fill: the database already has days before today" >&2
  exit 1
fi

# the kept partitions end where the first retained day begins
for t in webhook_inbox:signed_at position_changes:reconciled_at; do
  table=${t%%:*} column=${t#*:}
  sql -c "begin" \
      -c "alter table ${table} detach partition ${table}_kept" \
      -c "drop table ${table}_kept" \
      -c "create table ${table}_kept (like ${table} including defaults including constraints)" \
      -c "alter table ${table}_kept add constraint ${table}_kept_range_ck check (${column} < '${first} 00:00Z')" \
      -c "alter table ${table} attach partition ${table}_kept for values from (minvalue) to ('${first} 00:00Z')" \
      -c "commit"
done

body='{"event": "position.opened", "account_id": 2, "created_at": "2026-12-02T10:15:30Z", "data": {"ticket": 99302156, "symbol": "EURUSD", "type": "buy", "volume": 0.10, "price_open": 1.08450, "sl": 1.08000, "tp": 1.09500, "profit": 0.00, "swap": 0.00, "commission": -0.70, "time": "2026-12-02T10:15:30Z", "magic": 20261202, "comment": "metakit-inbox bench", "login": 5000002, "server": "MetaQuotes-Demo", "position_id": 99302156}}'
payload='{"account_id": 2, "seq": 1, "ticket": 99302156, "kind": "modified", "status": "open", "symbol": "EURUSD", "type": "buy", "volume": 0.10, "price_open": 1.08450, "sl": 1.08000, "tp": 1.09500, "changed": ["sl"]}'
per_day=$((ROWS / DAYS))
changes_per_day=$((CHANGES / DAYS))

# one day of one table: filled on its own, its range proved by a check, attached, the check dropped
attach_day() { # table column day
  local table=$1 column=$2 day=$3 part="$1_p${3//-/}"
  sql -c "alter table ${part} add constraint ${part}_fill_ck check (${column} >= '${day} 00:00Z' and ${column} < '${day} 00:00Z'::timestamptz + interval '1 day')" \
      -c "alter table ${table} attach partition ${part} for values from ('${day} 00:00Z') to ('${day} 00:00Z'::timestamptz + interval '1 day')" \
      -c "alter table ${part} drop constraint ${part}_fill_ck"
}

for n in $(seq 0 $((DAYS - 1))); do
  day=$(date -u -d "$first + $n days" +%Y-%m-%d)
  started=$(date +%s)
  sql -c "create table webhook_inbox_p${day//-/} (like webhook_inbox including defaults including constraints)" \
      -c "insert into webhook_inbox_p${day//-/} (delivery_key, event, account_id, body, received_at, processed_at,
                attempts, next_attempt_at, signed_at)
          select extract(epoch from ts)::bigint || ':' || md5(i || '$day') || md5('$day' || i), 'position.opened',
                 1 + i % $ACCOUNTS, '$body', ts, ts + interval '40 ms', 1, ts, ts
            from generate_series(0, $per_day - 1) i,
                 lateral (select '${day} 00:00Z'::timestamptz + i * (interval '1 day' / $per_day) as ts) x"
  attach_day webhook_inbox signed_at "$day"
  sql -c "create table position_changes_p${day//-/} (like position_changes including defaults including constraints)" \
      -c "insert into position_changes_p${day//-/} (change_id, account_id, seq, ticket, kind, status, symbol, type,
                volume, price_open, opened_at, sl, tp, changed, source, reconciled_at, published_at, payload)
          select nextval('position_changes_change_id_seq'), 1 + g % $ACCOUNTS, 1 + g / $ACCOUNTS, 90000000 + g % 50000,
                 'modified', 'open', 'EURUSD', 'buy', 0.10, 1.08450, ts - interval '1 hour', 1.08000 + (g % 100) / 100000.0,
                 1.09500, array['sl'], 'event', ts, ts + interval '20 ms', '$payload'::json
            from generate_series($n::bigint * $changes_per_day, ($n + 1)::bigint * $changes_per_day - 1) g,
                 lateral (select '${day} 00:00Z'::timestamptz
                                 + (g - $n::bigint * $changes_per_day) * (interval '1 day' / $changes_per_day) as ts) x"
  attach_day position_changes reconciled_at "$day"
  log "day $((n + 1))/$DAYS ($day): $per_day deliveries, $changes_per_day changes in $(( $(date +%s) - started )) s"
done

# today, where the kept partition covered it (the feed's, in a database migrated today)
for t in webhook_inbox position_changes; do
  sql -c "create table if not exists ${t}_p${today//-/} partition of ${t}
          for values from ('${today} 00:00Z') to ('${today} 00:00Z'::timestamptz + interval '1 day')"
done

# the feed's next seq of each account follows the retained ones; statistics for the planner
sql -c "insert into position_change_seqs (account_id, last_seq)
        select account_id, max(seq) from position_changes group by account_id
        on conflict (account_id) do update set last_seq = greatest(position_change_seqs.last_seq, excluded.last_seq)" \
    -c "analyze webhook_inbox" -c "analyze position_changes"
log "retained: $(sql -c "select pg_size_pretty(pg_total_relation_size('webhook_inbox_p${first//-/}')) || ' a day of the inbox, '
       || (select count(*) from pg_inherits where inhparent = 'webhook_inbox'::regclass) || ' inbox partitions'")"
