#!/usr/bin/env bash
# Overload benchmark: the ack path under an open-loop load at the rate the machine stores and at twice that rate, on
# the local PostgreSQL 15 of bench/ingest-bench.sh (fsync and synchronous_commit on). See BENCHMARKS.md "Overload".
#
#   bench/overload-bench.sh                # capacity measured first (closed loop, 64 connections), then the phases
#   RATE=400 bench/overload-bench.sh       # capacity given: skip its measurement
#
# Phases of OverloadLoad, one run of our consumer (the ack path alone, as ingest-bench.sh runs it), one after the
# other without a pause: RATE/2 for 20 s (the generator's own warm-up: its threads, its JIT), RATE/s for PHASE_SECONDS
# (60), then 2*RATE/s as long, then RATE/2 for 20 s (the load drops).
# (PHASE_SECONDS: bash keeps SECONDS for itself)
# The report: per phase the share answered 2xx and 503, their latencies (p50/p99/max), the 2xx later than the bound
# (metakit.inbox.commit-timeout-millis, 2000 ms by default), a per-second timeline, and the 2xx deliveries missing
# from webhook_inbox. Knobs: RATE, PHASE_SECONDS, BOUND_MS (2000), CONNECTIONS (600, below
# the front door's 1024), and those of ingest-bench.sh (ports, BENCH_DIR).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
INGEST_BENCH_AS_LIBRARY=1
# shellcheck source=ingest-bench.sh
. "$ROOT/bench/ingest-bench.sh"

SECONDS_PER_PHASE=${PHASE_SECONDS:-60}
BOUND_MS=${BOUND_MS:-2000}

if [ ! -f "$JAR" ] || [ ! -f "$ROOT/src/runtime/target/test-classes/dev/metakit/inbox/bench/OverloadLoad.class" ]; then
  log "building target/metakit-inbox.jar and the load tools (mvn -B -q test-compile package -DskipTests)"
  mvn -B -q test-compile package -DskipTests -pl src/runtime -am
fi
prepare_db
reset_table
log "PostgreSQL: $(psql_db -c "select version()" | cut -d, -f1); fsync=$(psql_db -c 'show fsync'), synchronous_commit=$(psql_db -c 'show synchronous_commit')"
log "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"

slow_store() { # $1: ms per row, or empty: none
  psql_db -c "drop trigger if exists bench_slow_store on metakit.webhook_inbox" >/dev/null
  [ -n "$1" ] || return 0
  psql_db -c "create or replace function bench_slow_store() returns trigger language plpgsql as
               \$\$ begin perform pg_sleep($1 / 1000.0); return new; end \$\$" \
    -c "create trigger bench_slow_store before insert on metakit.webhook_inbox for each row execute function bench_slow_store()" >/dev/null
  log "store slowed down: $1 ms per row"
}
slow_store "${SLOW_STORE_MS:-}"
start_ours overload
trap 'stop_ours; slow_store ""' EXIT
log "our consumer ready in $READY_MS ms"
if [ -z "${RATE:-}" ]; then
  log "capacity: closed loop, 64 connections, 20 s after 10 s of warm-up"
  RATE=$(java -XX:+UseSerialGC -Xms1g -Xmx2g -cp "$LOADCP" dev.metakit.inbox.bench.IngestLoad \
    --url "http://127.0.0.1:$OURS_HTTP_PORT/hooks/metakit" --secret "$SECRET" --connections 64 \
    --duration 20 --warmup 10 --deliveries 200000 --jdbc-url "$JDBC_URL" --db-user "$DB_USER" \
    --db-password "$DB_PASSWORD" --label capacity | tee -a /dev/stderr | sed -n 's/.*throughput=\([0-9]*\) 2xx\/s.*/\1/p')
  # its rows stay: emptying the table under the running consumer would take rows its worker holds
fi
log "capacity $RATE/s: phases $((RATE / 2))/s for 20 s, ${RATE}/s and $((2 * RATE))/s for $SECONDS_PER_PHASE s each, then $((RATE / 2))/s for 20 s"
log "load average before the phases $(cut -d' ' -f1-3 /proc/loadavg)"
java -XX:+UseSerialGC -Xms512m -Xmx2g -cp "$LOADCP" dev.metakit.inbox.bench.OverloadLoad \
  --url "http://127.0.0.1:$OURS_HTTP_PORT/hooks/metakit" --secret "$SECRET" --bound-ms "$BOUND_MS" \
  --connections "${CONNECTIONS:-600}" --phases "$((RATE / 2))x20,${RATE}x${SECONDS_PER_PHASE},$((2 * RATE))x${SECONDS_PER_PHASE},$((RATE / 2))x20" \
  --jdbc-url "$JDBC_URL" --db-user "$DB_USER" --db-password "$DB_PASSWORD"
log "load average after $(cut -d' ' -f1-3 /proc/loadavg)"
curl -fs "http://127.0.0.1:$OURS_MGMT_PORT/observe/metrics" | grep -E '^metakit_webhook_(shed|unavailable|stored)_total' >&2 || true
stop_ours
