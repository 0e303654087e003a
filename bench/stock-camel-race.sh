#!/usr/bin/env bash
# The race that a dedupe table beside an inbox table has, and a single insert has not (BENCHMARKS.md).
#
# The stock-Camel baseline (bench/stock-camel/) marks a delivery as seen in camel-sql's JdbcMessageIdRepository (one
# transaction) and then inserts its inbox row with sql: (a second one). This script sends unique signed deliveries
# to it over RACE_CONNS connections, kill -9s it RACE_KILLS times under that load (restarting it each time), then
# re-sends, byte-identical, every delivery that got no 2xx, as MetaKit does, until each got one. It counts:
#   - acked-but-missing: deliveries answered 2xx whose row is not in the inbox table (lost for good: MetaKit stops
#     retrying after a 2xx; here the retry was answered as a duplicate);
#   - orphan dedupe keys: keys in CAMEL_MESSAGEPROCESSED without an inbox row.
# The same run against our consumer (one insert per delivery, its key the primary key: nothing to orphan) shows 0.
#
#   bench/stock-camel-race.sh                        # RACE_RUNS=3 runs per system, stock-camel then ours, alternating
#   RACE_SYSTEMS=stock-camel RACE_RUNS=1 bench/stock-camel-race.sh
#
# Knobs: RACE_SYSTEMS ("stock-camel ours"), RACE_RUNS (3), RACE_CONNS (32), RACE_DURATION seconds of sending (30),
# RACE_KILLS per run (3), RACE_KILL_EVERY seconds between a (re)start being ready and its kill (6); and those of
# bench/ingest-bench.sh (BENCH_DIR, BENCH_PGPORT, OURS_HTTP_PORT, OURS_MGMT_PORT, STOCK_PORT, ...), whose PostgreSQL
# and builds this uses. 127.0.0.1 only.
set -euo pipefail

INGEST_BENCH_AS_LIBRARY=1
# shellcheck source=bench/ingest-bench.sh
. "$(dirname "$0")/ingest-bench.sh"

RACE_SYSTEMS=${RACE_SYSTEMS:-"stock-camel ours"}
RACE_RUNS=${RACE_RUNS:-3}
RACE_CONNS=${RACE_CONNS:-32}
RACE_DURATION=${RACE_DURATION:-30}
RACE_KILLS=${RACE_KILLS:-3}
RACE_KILL_EVERY=${RACE_KILL_EVERY:-6}
RACE_RESULTS="$BENCH_DIR/race-$STAMP.tsv"

ensure_tools
ensure_build
ensure_stock_build
prepare_db
stock_schema

server_pid() { if [ "$1" = stock-camel ]; then echo "$STOCK_PID"; else echo "$OURS_PID"; fi; }
start_system() { if [ "$1" = stock-camel ]; then start_stock "race-$1-$2"; else start_ours "race-$1-$2"; fi; }

# kill -9 while the load runs; the app is restarted at once (the sender's retries wait for it)
kill_and_restart() { # $1 system, $2 run
  local k pid
  for k in $(seq 1 "$RACE_KILLS"); do
    sleep "$RACE_KILL_EVERY"
    pid=$(server_pid "$1")
    kill -0 "$LOAD_PID" 2>/dev/null || return 0
    log "$1 run $2: kill -9 $pid ($k of $RACE_KILLS)"
    kill -9 "$pid"; wait "$pid" 2>/dev/null || true
    if [ "$1" = stock-camel ]; then STOCK_PID=; else OURS_PID=; fi
    start_system "$1" "$2-restart$k"
    log "$1 run $2: restarted"
  done
}

printf 'system\trun\tsent\tacked_first\tretried\tnever_acked\tacked_but_missing\torphan_dedupe_keys\n' >"$RACE_RESULTS"
for run in $(seq 1 "$RACE_RUNS"); do
  for s in $RACE_SYSTEMS; do
    reset_table; reset_stock
    wait_quiet
    start_system "$s" "$run"
    log "$s run $run: ready; sending for ${RACE_DURATION}s over $RACE_CONNS connections, $RACE_KILLS kill -9s"
    if [ "$s" = stock-camel ]; then port=$STOCK_PORT; url=$STOCK_JDBC_URL; else port=$OURS_HTTP_PORT; url=$JDBC_URL; fi
    out="$LOGS/race-$s-$run.out"
    java -Xmx1g -cp "$STOCK_JAR" bench.race.RetryingLoad --url "http://127.0.0.1:$port/hooks/metakit" \
      --secret "$SECRET" --connections "$RACE_CONNS" --duration "$RACE_DURATION" \
      --jdbc-url "$url" --db-user "$DB_USER" --db-password "$DB_PASSWORD" --inbox-table webhook_inbox \
      > >(tee "$out" >&2) 2>&1 &
    LOAD_PID=$!
    until grep -q 'sending for' "$out" 2>/dev/null || ! kill -0 "$LOAD_PID" 2>/dev/null; do sleep 0.05; done
    kill_and_restart "$s" "$run"
    wait "$LOAD_PID" || true
    orphans=-
    if [ "$s" = stock-camel ]; then
      orphans=$(psql_db -c "select count(*) from stock_camel.camel_messageprocessed d
                            where not exists (select 1 from stock_camel.webhook_inbox i where i.delivery_key = d.messageid)")
    fi
    if [ "$s" = stock-camel ]; then stop_stock; else stop_ours; fi
    line=$(grep '^RESULT' "$out" | tail -1 | tr '\t' '\n' | sed -n 's/^[a-z_]*=//p' | paste -sd '\t')
    printf '%s\t%s\t%s\t%s\n' "$s" "$run" "$line" "$orphans" >>"$RACE_RESULTS"
    log "$s run $run: $(tail -1 "$RACE_RESULTS")"
  done
done

echo
echo "kill -9 race, $STAMP: $RACE_RUNS run(s) x $RACE_KILLS kill -9 per system, $RACE_CONNS connections, ${RACE_DURATION}s (raw: $RACE_RESULTS)"
column -t -s $'\t' "$RACE_RESULTS"
