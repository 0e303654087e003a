#!/usr/bin/env bash
# The worker's claim statement on a benchmark server's database of any size (a filled one: bench/retained-fill.sh),
# an earlier build's beside this one's, one after the other ROUNDS times; figures in BENCHMARKS.md ("At a deployment's
# size").
#
#   BASE_CLASSES=/path/to/earlier/src/bundle/target/classes bench/claim-at-size.sh
#
# Each run inserts ACCOUNTS due rows (one per account) into today's partition, runs each build's claim statement
# (bench/claim/ClaimStatement.java prints it with literal values) under EXPLAIN (ANALYZE, BUFFERS, TIMING OFF) in a
# transaction it rolls back, and deletes its rows after. Where the database has no inbox_pending_since (made by an
# earlier build), the transaction makes it (and its function, inbox_pending_from) with `since` two hours before now:
# the worker's steady state, every earlier row worked. Prints each build's median execution time and the buffers one claim touched.
# BENCH_PGPORT (55439), BENCH_DB (metakit_bench), BENCH_USER / BENCH_PASSWORD (bench / bench): the server
# bench/ingest-bench.sh made; it only ever touches the rows it inserted.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${BASE_CLASSES:?set BASE_CLASSES to an earlier build of src/bundle/target/classes}"
classes=src/bundle/target/classes
[ -f "$classes/dev/metakit/inbox/inbox/InboxClaims.class" ] || mvn -q -o -pl src/bundle -am compile
port=${BENCH_PGPORT:-55439}
rounds=${ROUNDS:-9}
accounts=${ACCOUNTS:-100}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
psql_db() {
  PGPASSWORD=${BENCH_PASSWORD:-bench} psql -h 127.0.0.1 -p "$port" -U "${BENCH_USER:-bench}" \
    -d "${BENCH_DB:-metakit_bench}" -qAtX -v ON_ERROR_STOP=1 "$@"
}
for build in base this; do
  cp=$classes; [ $build = base ] && cp=$BASE_CLASSES
  {
    echo "set search_path = metakit;"
    echo "begin;"
    echo "create table if not exists inbox_pending_since (one boolean primary key default true, since timestamptz);"
    echo "insert into inbox_pending_since (since) select now() - interval '2 hours'"
    echo "  where not exists (select 1 from inbox_pending_since);"
    echo "create or replace function inbox_pending_from() returns timestamptz stable language sql"
    echo "  as \$\$ select coalesce((select since from inbox_pending_since), '-infinity') \$\$;"
    echo "explain (analyze, buffers, timing off)"
    java -cp "$cp" bench/claim/ClaimStatement.java "$accounts"
    echo ";"
    echo "rollback;"
  } > "$work/$build.sql"
done
psql_db -c "set search_path = metakit" -c "insert into webhook_inbox (delivery_key, event, account_id, body, signed_at)
  select 'claim-at-size-' || g, 'position.opened', g, '{}', now() from generate_series(1, $accounts) g" \
  -c "analyze webhook_inbox"
trap 'psql_db -c "delete from metakit.webhook_inbox where delivery_key like '"'"'claim-at-size-%'"'"'"; rm -rf "$work"' EXIT
partitions=$(psql_db -c "select count(*) from pg_inherits where inhparent = 'metakit.webhook_inbox'::regclass")
retained=$(psql_db -c "select sum(greatest(reltuples, 0))::bigint from pg_class c join pg_inherits i
  on c.oid = i.inhrelid where i.inhparent = 'metakit.webhook_inbox'::regclass")
for i in $(seq 1 "$rounds"); do
  for build in base this; do
    plan=$(psql_db -f "$work/$build.sql")
    ms=$(sed -n 's/^Execution Time: \([0-9.]*\) ms$/\1/p' <<< "$plan")
    buffers=$(sed -n 's/^  Buffers: shared hit=\([0-9]*\).*/\1/p' <<< "$plan" | head -1)
    echo "$build $ms $buffers" >> "$work/times"
  done
done
echo "port $port: $partitions partitions of webhook_inbox, ~$retained rows; $accounts accounts a claim; $rounds rounds"
for build in base this; do
  awk -v b=$build '$1 == b {print $2, $3}' "$work/times" | sort -n | awk -v b=$build '{t[NR] = $1; buf = $2}
    END {printf "%-5s median %.2f ms (min %.2f, max %.2f), buffers %s\n", b, t[int((NR + 1) / 2)], t[1], t[NR], buf}'
done
