#!/usr/bin/env bash
# Ingest benchmark: our consumer vs. the pgbench single-row INSERT limit vs. the seed's Express+pg reference,
# on one local PostgreSQL 15 (fsync and synchronous_commit on), alternating rounds, medians. See BENCHMARKS.md.
#
#   bench/ingest-bench.sh                       # 3 rounds x {16, 64} connections x {pgbench, ours, express}
#   ROUNDS=5 DURATION=20 bench/ingest-bench.sh  # more rounds, longer windows
#   SYSTEMS="pgbench ours ours-base stock-camel" BASE_JAR=... bench/ingest-bench.sh  # a build beside an earlier one and stock Camel
#
# Knobs (environment): ROUNDS (3), DURATION seconds measured per run (15), WARMUP seconds before it (30: the JIT; at
# 13-21 s after start C2's compiler threads still took half of the JVM's CPU, BENCHMARKS.md "Ingest throughput"),
# PRESIGNED_PER_SECOND (20000: deliveries the load tool pre-signs per second of the run), CONNS ("16 64"), SYSTEMS ("pgbench ours express"), BENCH_DIR (/tmp/metakit-inbox-bench: PostgreSQL data, logs,
# results), BENCH_PGPORT (55439), OURS_HTTP_PORT (18480), OURS_MGMT_PORT (18481), EXPRESS_PORT (18482),
# OURS_JAVA_OPTS (JVM options for our consumer), METAKIT_INBOX_WRITERS / METAKIT_INBOX_MAX_BATCH /
# METAKIT_DATABASE_POOL_SIZE (passed through), EXTRA_RUNS (1: also the -Xmx256m run at 64 connections), BASE_JAR (the jar
# of an earlier commit, run as the system "ours-base" when SYSTEMS names it: a before/after in one run),
# STOCK_PORT (18483: the stock-Camel baseline of bench/stock-camel/, the system "stock-camel", built on demand),
# STOCK_JAVA_OPTS (its JVM options), BOOT_PORT (18484: the Spring Boot example host of examples/spring-boot, the
# system "boot", built on demand; BOOT_JAVA_OPTS its JVM options, BOOT_ARGS more of its settings, e.g.
# "--spring.threads.virtual.enabled=true"). THREAD_CPU=1 adds the server JVM's CPU per delivery by thread group to the
# log (from /proc/PID/task, over the same window). A system named with the suffix -j25 (ours-j25, ours-base-j25,
# boot-j25, boot-base-j25) runs on J25_JAVA (/usr/lib/jvm/temurin-25-jdk-amd64/bin/java), the others on java;
# boot-base runs BOOT_BASE_JAR (an earlier commit's Boot example jar); BASE_JDBC_URL the base's database URL, or BASE_DB
# a database of the base's own on the same server (pgbench-base then runs pgbench there, with BASE_PGBENCH_SQL, the
# earlier commit's bench/pgbench-insert.sql, when its table differs);
# J25_BASE_OPTS JVM options of ours-base-j25 alone (e.g. -Dcamel.threads.virtual.enabled=true). ours-wiretap and
# ours-setheader run ours with a step an integrator adds to a copy of routes/ingest.camel.yaml: an audit file of each
# stored delivery (the setHeader and wireTap of docs/routes.md, in BENCH_DIR/audit, removed after the sitting), or a
# setHeader between hand-off-to-group-commit and store-in-inbox. ours-traced runs ours traced, every delivery sampled
# (-Dotel.exporter.otlp.endpoint: OTLP over HTTP to bench/otlp-sink.py on OTLP_PORT, 18485, which keeps nothing).
# RETAINED_ROWS (0): deliveries retained in the inbox's past days before the sitting (bench/retained-fill.sh, once per
# BENCH_DIR; the runs keep them).
# CPU per acked delivery, per process, over the measured window (utime+stime from /proc): the server JVM, PostgreSQL
# (postmaster and its children) and the client (the load tool, or pgbench), in core-us: columns 9-11 of the results.
# Everything listens on and talks to 127.0.0.1 only. The PostgreSQL server is left running (idempotent setup);
# stop it with: bench/ingest-bench.sh stop-db
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-15}
WARMUP=${WARMUP:-30}
CONNS=${CONNS:-"16 64"}
SYSTEMS=${SYSTEMS:-"pgbench ours express"}
EXTRA_RUNS=${EXTRA_RUNS:-1}
BENCH_DIR=${BENCH_DIR:-/tmp/metakit-inbox-bench}
RETAINED_ROWS=${RETAINED_ROWS:-0}
PGPORT=${BENCH_PGPORT:-55439}
OURS_HTTP_PORT=${OURS_HTTP_PORT:-18480}
OURS_MGMT_PORT=${OURS_MGMT_PORT:-18481}
EXPRESS_PORT=${EXPRESS_PORT:-18482}
STOCK_PORT=${STOCK_PORT:-18483}
OTLP_PORT=${OTLP_PORT:-18485}
OURS_JAVA_OPTS=${OURS_JAVA_OPTS:-}
# the ack path alone: no worker draining the benchmark's rows against a MetaKit that is not there
# (OURS_ROUTES=classpath:routes/*.camel.yaml runs the whole bundle)
OURS_ROUTES=${OURS_ROUTES:-classpath:routes/beans.camel.yaml,classpath:routes/standalone.camel.yaml,classpath:routes/ingest.camel.yaml}
# The worker's own routes (Java, not from the route files) are left out too, by Camel's route filter: rung by every
# delivery, they would claim the benchmark's rows over and over against a MetaKit that is not there, its accounts all
# backing off, each claim reading past every row piled up for them (~1.1 us each, BENCHMARKS.md "An API outage with
# deliveries arriving": half a core of PostgreSQL at this rate), and each reconcile would wait for direct:metakit-get,
# left out below, up to Camel's 30 s (what keeps such a run's stop waiting for its in-flight reconciles). Set
# OURS_ROUTE_FILTER_EXCLUDE empty to keep them.
OURS_ROUTE_FILTER_EXCLUDE=${OURS_ROUTE_FILTER_EXCLUDE-metakit-worker-doorbell,metakit-worker-drain,metakit-reconcile-account,metakit-reconcile-all,metakit-reconcile-requested}
# ...and the routes left out on purpose named as such, or the bundle's completeness check would answer every delivery 503
# (set it empty with OURS_ROUTES=classpath:routes/*.camel.yaml; builds before the check ignore it)
OURS_ROUTES_REPLACED=${OURS_ROUTES_REPLACED-metakit-api-get,metakit-worker-poll,metakit-reconcile-periodic,metakit-delivery-status-watch,metakit-change-feed-poll,metakit-change-outlet${OURS_ROUTE_FILTER_EXCLUDE:+,$OURS_ROUTE_FILTER_EXCLUDE}}
# the same for BASE_JAR: builds before c2cdc0d kept some of their beans in a second file, ops-beans.camel.yaml
BASE_ROUTES=${BASE_ROUTES:-classpath:routes/beans.camel.yaml,classpath:routes/ops-beans.camel.yaml,classpath:routes/ingest.camel.yaml}
SECRET=bench-secret-0f3b9c2e7a
DB=metakit_bench
DB_USER=bench
DB_PASSWORD=bench
JDBC_URL="jdbc:postgresql://127.0.0.1:${PGPORT}/${DB}"
PG_URL="postgres://${DB_USER}:${DB_PASSWORD}@127.0.0.1:${PGPORT}/${DB}"
PGDATA="$BENCH_DIR/pg"
LOGS="$BENCH_DIR/logs"
STAMP=$(date -u +%Y%m%dT%H%M%SZ)
RESULTS="$BENCH_DIR/results-$STAMP.tsv"
STARTUPS="$BENCH_DIR/startup-$STAMP.txt"
JAR="$ROOT/target/metakit-inbox.jar"
BASE_JAR=${BASE_JAR:-}
LOADCP="$ROOT/src/runtime/target/test-classes:$JAR"

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

pgbin() {
  local b
  for b in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    [ -x "$b/pg_ctl" ] && { echo "$b"; return; }
  done
  return 1
}

as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

psql_db() { PGPASSWORD=$DB_PASSWORD psql -h 127.0.0.1 -p "$PGPORT" -U "$DB_USER" -d "$DB" -qAtX -v ON_ERROR_STOP=1 "$@"; }

ensure_tools() {
  if ! command -v pgbench >/dev/null || ! pgbin >/dev/null; then
    log "installing PostgreSQL 15 (server and pgbench) from Debian's packages"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15 postgresql-client-15
  fi
  command -v node >/dev/null || { echo "node (20) is needed for the Express reference" >&2; exit 1; }
  command -v curl >/dev/null || { echo "curl is needed" >&2; exit 1; }
}

STOCK_JAR="$ROOT/bench/stock-camel/target/stock-camel.jar"
ensure_stock_build() {
  if [ ! -f "$STOCK_JAR" ]; then
    log "building bench/stock-camel/target/stock-camel.jar (mvn -o -B -q package)"
    (cd bench/stock-camel && { mvn -o -B -q package || mvn -B -q package; })
  fi
}

ensure_build() {
  if [ ! -f "$JAR" ] || [ ! -f "$ROOT/src/runtime/target/test-classes/dev/metakit/inbox/bench/IngestLoad.class" ]; then
    log "building target/metakit-inbox.jar (mvn -B -q package -DskipTests)"
    mvn -B -q package -DskipTests -pl src/runtime -am
  fi
  if [[ " $SYSTEMS " == *" express "* ]] && [ ! -d bench/reference-express/node_modules ]; then
    log "installing the Express reference's dependencies (npm install)"
    (cd bench/reference-express && npm install --no-audit --no-fund --silent)
  fi
}

db_up() {
  local bin; bin=$(pgbin)
  mkdir -p "$BENCH_DIR" "$LOGS"
  if [ "$(id -u)" = 0 ]; then chown postgres: "$BENCH_DIR"; chmod 0777 "$LOGS"; fi
  if [ ! -f "$PGDATA/PG_VERSION" ]; then
    log "initdb $PGDATA (PostgreSQL $("$bin/postgres" -V | awk '{print $3}'), port $PGPORT, 127.0.0.1 only)"
    as_pg "$bin/initdb" -D "$PGDATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 >/dev/null
    cat >>"$PGDATA/postgresql.conf" <<EOF
# --- metakit-inbox ingest benchmark ---
listen_addresses = '127.0.0.1'
port = $PGPORT
unix_socket_directories = '$BENCH_DIR'
max_connections = 200
shared_buffers = 256MB
fsync = on
synchronous_commit = on
full_page_writes = on
wal_level = replica
max_wal_size = 4GB
checkpoint_timeout = 15min
EOF
  fi
  if ! as_pg "$bin/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
    log "starting PostgreSQL on 127.0.0.1:$PGPORT"
    as_pg "$bin/pg_ctl" -D "$PGDATA" -l "$LOGS/postgresql.log" -w start >/dev/null
  fi
  if ! as_pg psql -h "$BENCH_DIR" -p "$PGPORT" -U postgres -qAtX -c "select 1 from pg_roles where rolname='$DB_USER'" | grep -q 1; then
    as_pg psql -h "$BENCH_DIR" -p "$PGPORT" -U postgres -qX -v ON_ERROR_STOP=1 \
      -c "create role $DB_USER login password '$DB_PASSWORD'" \
      -c "create database $DB owner $DB_USER" \
      -c "grant pg_checkpoint to $DB_USER" >/dev/null
  fi
  if [ -n "$BASE_DB" ] && ! as_pg psql -h "$BENCH_DIR" -p "$PGPORT" -U postgres -qAtX -c "select 1 from pg_database where datname='$BASE_DB'" | grep -q 1; then
    as_pg psql -h "$BENCH_DIR" -p "$PGPORT" -U postgres -qX -v ON_ERROR_STOP=1 -c "create database $BASE_DB owner $DB_USER" >/dev/null
  fi
}

db_down() {
  local bin; bin=$(pgbin)
  as_pg "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop || true
}

# PostgreSQL up and our schema in it (Flyway, by starting our consumer once when the schema is missing)
prepare_db() {
  db_up
  if ! schema_ready; then
    log "applying the schema (our consumer's Flyway migrations, first start)"
    start_ours ours-migrate; stop_ours
  fi
}

schema_ready() { psql_db -c "select to_regclass('metakit.webhook_inbox') is not null" 2>/dev/null | grep -q t; }

reset_table() {
  if [ "$RETAINED_ROWS" -gt 0 ]; then
    # the retained days stay; the sitting's own rows, today's partition and later ones, go
    psql_db -c "do \$\$ declare p text; begin
          for p in select inhrelid::regclass::text from pg_inherits where inhparent = 'metakit.webhook_inbox'::regclass
                    and inhrelid::regclass::text ~ '_p[0-9]{8}\$'
                    and right(inhrelid::regclass::text, 8) >= to_char(now() at time zone 'UTC', 'YYYYMMDD')
          loop execute 'truncate ' || p; end loop; end \$\$" -c "checkpoint" >/dev/null
    return
  fi
  if [ -n "$BASE_DB" ]; then
    PGPASSWORD=$DB_PASSWORD psql -h 127.0.0.1 -p "$PGPORT" -U "$DB_USER" -d "$BASE_DB" -qAtX -v ON_ERROR_STOP=1 \
      -c "do \$\$ begin if to_regclass('metakit.webhook_inbox') is not null then truncate metakit.webhook_inbox; end if; end \$\$" >/dev/null
  fi
  psql_db -c "truncate metakit.webhook_inbox" -c "do \$\$ begin if to_regclass('ours_base.webhook_inbox') is not null then
          truncate ours_base.webhook_inbox; end if; end \$\$" -c "checkpoint" >/dev/null
}

# RETAINED_ROWS > 0: the inbox holds that many retained deliveries of the past days (and a tenth as many published
# changes), made once by bench/retained-fill.sh, which every run keeps (BENCHMARKS.md, "At a deployment's size")
retain_rows() {
  [ "$RETAINED_ROWS" -gt 0 ] || return 0
  local held
  held=$(psql_db -c "select coalesce(sum(c.reltuples), 0)::bigint from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = 'metakit.webhook_inbox'::regclass and c.relname ~ '_p[0-9]{8}$'
            and right(c.relname, 8) < to_char(now() at time zone 'UTC', 'YYYYMMDD')")
  if [ "$held" -eq 0 ]; then
    log "retaining $RETAINED_ROWS deliveries over the past 7 days (bench/retained-fill.sh)"
    PSQL="env PGPASSWORD=$DB_PASSWORD psql -h 127.0.0.1 -p $PGPORT -U $DB_USER -d $DB" ROWS=$RETAINED_ROWS \
      "$ROOT/bench/retained-fill.sh"
    held=$RETAINED_ROWS
  fi
  log "retained in the inbox's past days: about $held deliveries ($(psql_db -c \
      "select pg_size_pretty(pg_database_size(current_database()))") in the database)"
}

# BASE_JAR's own schema: an earlier build keeps its migration history elsewhere (flyway_schema_history before the
# module split), so it migrates a schema of its own rather than meet this build's tables without its history
# (BASE_DB names a database of its own on the same server instead, made and emptied by this script: a build whose
# schema is bound to "metakit" whatever the URL says, such as one before the partitioned tables beside one after)
BASE_DB=${BASE_DB:-}
if [ -n "$BASE_DB" ]; then BASE_JDBC_URL="jdbc:postgresql://127.0.0.1:${PGPORT}/${BASE_DB}"; fi
BASE_JDBC_URL=${BASE_JDBC_URL:-"$JDBC_URL?currentSchema=ours_base"}

# The stock-Camel baseline's own tables, in schema stock_camel (its JDBC URL sets currentSchema): the inbox table a
# Camel user would create, and camel-sql's dedupe table CAMEL_MESSAGEPROCESSED, which JdbcMessageIdRepository creates
# itself on its first start (its default DDL, with its primary key).
STOCK_JDBC_URL="$JDBC_URL?currentSchema=stock_camel"
stock_schema() {
  psql_db -c "create schema if not exists stock_camel" \
    -c "create table if not exists stock_camel.webhook_inbox (delivery_key text primary key, event text,
          body text not null, received_at timestamptz not null default now())" >/dev/null
}
reset_stock() {
  psql_db -c "truncate stock_camel.webhook_inbox" \
    -c "do \$\$ begin if to_regclass('stock_camel.camel_messageprocessed') is not null then
          truncate stock_camel.camel_messageprocessed; end if; end \$\$" -c "checkpoint" >/dev/null
}

STOCK_PID=
start_stock() { # $1 = log name; sets STOCK_PID
  if (exec 3<>"/dev/tcp/127.0.0.1/$STOCK_PORT") 2>/dev/null; then
    echo "port $STOCK_PORT is already in use: set STOCK_PORT" >&2; exit 1
  fi
  METAKIT_WEBHOOK_SECRET=$SECRET DATABASE_URL=$STOCK_JDBC_URL DATABASE_USER=$DB_USER DATABASE_PASSWORD=$DB_PASSWORD \
    HTTP_HOST=127.0.0.1 HTTP_PORT=$STOCK_PORT java ${STOCK_JAVA_OPTS:-} -jar "$STOCK_JAR" >"$LOGS/$1.log" 2>&1 &
  STOCK_PID=$!
  local i=0
  # ready when the route answers (a GET on the POST-only route: 405), not just the server (404 before the route)
  until case $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$STOCK_PORT/hooks/metakit") in 000|404) false ;; esac; do
    kill -0 "$STOCK_PID" 2>/dev/null || { echo "stock-camel died at startup, see $LOGS/$1.log" >&2; tail -20 "$LOGS/$1.log" >&2; exit 1; }
    i=$(( i + 1 )); [ "$i" -gt 3000 ] && { echo "stock-camel not ready after 60 s" >&2; exit 1; }
    sleep 0.02
  done
}

stop_stock() { [ -n "$STOCK_PID" ] && { kill "$STOCK_PID" 2>/dev/null; wait "$STOCK_PID" 2>/dev/null || true; }; STOCK_PID=; return 0; }

# The Spring Boot host (examples/spring-boot): the starter on Tomcat, the bundle on its own pool from spring.datasource.*,
# its tables in schema metakit of the benchmark's database (the same table as ours and pgbench). The routes the
# standalone run leaves out are left out here by Camel's route filter, and named in METAKIT_ROUTES_REPLACED.
BOOT_PORT=${BOOT_PORT:-18484}
BOOT_JAR="$ROOT/examples/spring-boot/target/metakit-inbox-example-spring-boot-0.1.0-SNAPSHOT.jar"
BOOT_BASE_JAR=${BOOT_BASE_JAR:-}
J25_JAVA=${J25_JAVA:-/usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
BOOT_ROUTE_FILTER_EXCLUDE="$OURS_ROUTES_REPLACED"
ensure_boot_build() {
  if [ ! -f "$BOOT_JAR" ]; then
    log "building $BOOT_JAR (mvn -B -q package -DskipTests -pl examples/spring-boot -am)"
    mvn -B -q package -DskipTests -pl examples/spring-boot -am
  fi
}
BOOT_PID=
start_boot() { # $1 = log name, $2 = jar (BOOT_JAR); sets BOOT_PID and READY_MS
  local t0 jar=${2:-$BOOT_JAR}
  if (exec 3<>"/dev/tcp/127.0.0.1/$BOOT_PORT") 2>/dev/null; then
    echo "port $BOOT_PORT is already in use: set BOOT_PORT" >&2; exit 1
  fi
  # its own working directory: Boot reads ./application.properties, and the repository's is the standalone run's
  mkdir -p "$BENCH_DIR/boot"
  t0=$(date +%s%N)
  # shellcheck disable=SC2086
  env -u METAKIT_DATABASE_URL -u METAKIT_DATABASE_USER -u METAKIT_DATABASE_PASSWORD \
    SPRING_DATASOURCE_URL=$JDBC_URL SPRING_DATASOURCE_USERNAME=$DB_USER SPRING_DATASOURCE_PASSWORD=$DB_PASSWORD \
    METAKIT_WEBHOOK_SECRET=$SECRET METAKIT_API_URL=http://127.0.0.1:9 METAKIT_API_KEY=bench-unused \
    METAKIT_ROUTES_REPLACED="$OURS_ROUTES_REPLACED" CAMEL_MAIN_ROUTEFILTEREXCLUDEPATTERN="$BOOT_ROUTE_FILTER_EXCLUDE" \
    SERVER_ADDRESS=127.0.0.1 SERVER_PORT=$BOOT_PORT \
    bash -c 'cd "$1" && shift && exec "$@"' boot "$BENCH_DIR/boot" "${BOOT_JAVA:-java}" ${BOOT_JAVA_OPTS:-} -jar "$jar" ${BOOT_ARGS:-} \
    >"$LOGS/$1.log" 2>&1 &
  BOOT_PID=$!
  await_ready "the Boot host" "$BOOT_PID" "http://127.0.0.1:$BOOT_PORT/actuator/health" "$LOGS/$1.log" "$t0"
}
stop_boot() { [ -n "$BOOT_PID" ] && { kill "$BOOT_PID" 2>/dev/null; wait "$BOOT_PID" 2>/dev/null || true; }; BOOT_PID=; return 0; }

# The server JVM's CPU by thread group (thread names without their numbers), from /proc/PID/task: "name ticks" lines
thread_snapshot() {
  local t s n r
  for t in /proc/"$1"/task/*; do
    s=$(cat "$t/stat" 2>/dev/null) || continue
    n=${s#*(}; n=${n%)*}; r=${s##*) }
    # shellcheck disable=SC2086
    set -- $r
    echo "$(basename "$t") ${n// /_} $(( ${12} + ${13} ))"
  done
}
# $1 $2 snapshots, $3 deliveries: core-us per delivery by thread group, largest first
thread_report() {
  awk -v n="$3" -v hz="$CLK_TCK" 'NR == FNR { a[$1] = $3; next }
    { g = $2; gsub(/[-#_]?[0-9]+$/, "", g); tot[g] += $3 - a[$1] }
    END { for (g in tot) if (tot[g] > 0 && n > 0) printf "  %-24s %7.1f\n", g, tot[g] * 1e6 / hz / n }' "$1" "$2" | sort -k2 -nr
}

# One snapshot of CPU clock ticks (utime+stime from /proc/PID/stat), one awk over /proc so that the three figures are
# read at one instant: "server postgres client". $1 the server's pid, $2 the client's (either may be empty: 0).
# PostgreSQL is the postmaster (with its reaped children's cutime+cstime) plus its live children.
cpu_snapshot() {
  local pm
  pm=$(head -1 "$PGDATA/postmaster.pid" 2>/dev/null || echo -1)
  # cat, not awk's own file list: a process that exits meanwhile is skipped (mawk stops at an unreadable file)
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v srv="${1:--1}" -v cli="${2:--1}" -v pm="$pm" '
    $2 ~ /\)$/ {
      if ($1 == srv) s += $14 + $15
      if ($1 == cli) c += $14 + $15
      if ($1 == pm) p += $14 + $15 + $16 + $17
      else if ($4 == pm && $2 == "(postgres)") p += $14 + $15
    }
    END { printf "%d %d %d\n", s, p, c }'
}

CLK_TCK=$(getconf CLK_TCK)
# core-us per delivery from a tick difference: $1 ticks, $2 deliveries
per_delivery() { awk -v t="$1" -v n="$2" -v hz="$CLK_TCK" 'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else printf "-" }'; }

# ours with a step added to its ingest route (ours-wiretap, ours-setheader): the route files, the edited copy in BENCH_DIR
edited_routes() { # $1 wiretap|setheader
  local copy="$BENCH_DIR/ingest-$1.camel.yaml"
  case $1 in
    wiretap) awk -v dir="$BENCH_DIR/audit" '{ print } /ref: inboxDoorbell/ {
        print "                      - setHeader:"
        print "                          name: MetaKitAudit"
        print "                          simple: \"${exchangeProperty.metakitDeliveryKey}\""
        print "                      - wireTap:"
        print "                          uri: \"file:" dir "?fileName=${exchangeId}_${header.MetaKitAudit}\"" }' \
        routes/ingest.camel.yaml >"$copy" ;;
    setheader) awk '/- idempotentConsumer:/ {
        print "        - setHeader:"
        print "            name: MetaKitAudit"
        print "            simple: \"${exchangeProperty.metakitDeliveryKey}\"" } { print }' routes/ingest.camel.yaml >"$copy" ;;
  esac
  [ "$(wc -l <"$copy")" -gt "$(wc -l <routes/ingest.camel.yaml)" ] || { echo "no step added to $copy" >&2; exit 1; }
  echo "${OURS_ROUTES%classpath:routes/ingest.camel.yaml}file:$copy"
}

OURS_PID=
READY_MS=
# Waits until $3 answers 2xx while process $2 lives, then sets READY_MS (from $5, date +%s%N, to ready).
# $1 what it is (for the messages), $4 its log. READY_TIMEOUT (s, 60): a machine loaded by others can take longer.
await_ready() {
  local t1
  until curl -fs -o /dev/null "$3"; do
    kill -0 "$2" 2>/dev/null || { echo "$1 died at startup, see $4" >&2; tail -20 "$4" >&2; exit 1; }
    t1=$(date +%s%N)
    if [ $(( (t1 - $5) / 1000000 )) -gt $(( ${READY_TIMEOUT:-60} * 1000 )) ]; then echo "$1 not ready after ${READY_TIMEOUT:-60} s" >&2; exit 1; fi
    sleep 0.02
  done
  READY_MS=$(( ($(date +%s%N) - $5) / 1000000 ))
}

start_ours() { # $1 = log name, $2 = extra JVM options, $3 = jar (ours), $4 = route files, $5 = JDBC URL; sets OURS_PID and READY_MS (start to health 200)
  local name=$1 opts=${2:-} jar=${3:-$JAR} routes=${4:-$OURS_ROUTES} url=${5:-$JDBC_URL} t0
  if (exec 3<>"/dev/tcp/127.0.0.1/$OURS_HTTP_PORT") 2>/dev/null; then
    echo "port $OURS_HTTP_PORT is already in use: stop what listens there or set OURS_HTTP_PORT" >&2; exit 1
  fi
  t0=$(date +%s%N)
  # Camel reads METAKIT_DATABASE_* as overrides of metakit.database.*: one exported for production must not win here
  # shellcheck disable=SC2086
  env -u METAKIT_DATABASE_URL -u METAKIT_DATABASE_USER -u METAKIT_DATABASE_PASSWORD \
    METAKIT_WEBHOOK_SECRET=$SECRET DATABASE_URL=$url DATABASE_USER=$DB_USER DATABASE_PASSWORD=$DB_PASSWORD \
    METAKIT_API_URL=http://127.0.0.1:9 METAKIT_API_KEY=bench-unused CAMEL_MAIN_ROUTESINCLUDEPATTERN="$routes" METAKIT_ROUTES_REPLACED="$OURS_ROUTES_REPLACED" \
    CAMEL_MAIN_ROUTEFILTEREXCLUDEPATTERN="$OURS_ROUTE_FILTER_EXCLUDE" \
    HTTP_HOST=127.0.0.1 HTTP_PORT=$OURS_HTTP_PORT MANAGEMENT_HOST=127.0.0.1 MANAGEMENT_PORT=$OURS_MGMT_PORT \
    "${OURS_JAVA:-java}" $OURS_JAVA_OPTS $opts -jar "$jar" >"$LOGS/$name.log" 2>&1 &
  OURS_PID=$!
  await_ready "our consumer" "$OURS_PID" "http://127.0.0.1:$OURS_MGMT_PORT/observe/health" "$LOGS/$name.log" "$t0"
}

stop_ours() { [ -n "$OURS_PID" ] && { kill "$OURS_PID" 2>/dev/null; wait "$OURS_PID" 2>/dev/null || true; }; OURS_PID=; return 0; }

EXPRESS_PID=
start_express() {
  if (exec 3<>"/dev/tcp/127.0.0.1/$EXPRESS_PORT") 2>/dev/null; then
    echo "port $EXPRESS_PORT is already in use: set EXPRESS_PORT" >&2; exit 1
  fi
  METAKIT_WEBHOOK_SECRET=$SECRET DATABASE_URL=$PG_URL HTTP_PORT=$EXPRESS_PORT \
    node bench/reference-express/server.js >"$LOGS/express.log" 2>&1 &
  EXPRESS_PID=$!
  until curl -fs -o /dev/null "http://127.0.0.1:$EXPRESS_PORT/health"; do
    kill -0 "$EXPRESS_PID" 2>/dev/null || { echo "express reference died, see $LOGS/express.log" >&2; exit 1; }
    sleep 0.05
  done
}

stop_express() { [ -n "$EXPRESS_PID" ] && { kill "$EXPRESS_PID" 2>/dev/null; wait "$EXPRESS_PID" 2>/dev/null || true; }; EXPRESS_PID=; return 0; }

# This machine is shared (2 cores): before each run wait until the CPU is quiet, so a neighbour's build does not
# land in one system's figures. QUIET_IDLE percent idle over 2 s (default 85), at most QUIET_MAX seconds (120), of the
# cores this script may run on (all, or the one it is pinned to with taskset -c N while other work uses the rest).
QUIET_CPU=$(awk '/^Cpus_allowed_list/ { if ($2 ~ /^[0-9]+$/) print $2 }' /proc/self/status)
wait_quiet() {
  local waited=0 a b idle
  while :; do
    a=($(grep "^cpu$QUIET_CPU " /proc/stat)); sleep 2; b=($(grep "^cpu$QUIET_CPU " /proc/stat))
    local tot=0 i
    for i in 1 2 3 4 5 6 7 8; do tot=$(( tot + ${b[$i]} - ${a[$i]} )); done
    idle=$(( 100 * ( ${b[4]} - ${a[4]} + ${b[5]} - ${a[5]} ) / (tot > 0 ? tot : 1) ))
    if [ "$idle" -ge "${QUIET_IDLE:-85}" ]; then break; fi
    if [ "$waited" -ge "${QUIET_MAX:-120}" ]; then log "CPU still busy (idle $idle%) after ${waited}s: running anyway"; break; fi
    waited=$(( waited + 5 )); sleep 3
  done
  [ "$waited" -gt 0 ] && log "waited ${waited}s for a quiet CPU (idle $idle%)"
  return 0
}

SINK_PID=
start_sink() { [ -n "$SINK_PID" ] || { python3 bench/otlp-sink.py "$OTLP_PORT" & SINK_PID=$!; }; }
stop_sink() { [ -n "$SINK_PID" ] && { kill "$SINK_PID" 2>/dev/null; wait "$SINK_PID" 2>/dev/null || true; }; SINK_PID=; return 0; }

cleanup() { stop_ours; stop_express; stop_stock; stop_boot; stop_sink; }
trap cleanup EXIT

load() { # $1 label, $2 port, $3 connections, $4 the server's pid, $5 JDBC URL of the inbox to check (ours)
  local deliveries=$(( (DURATION + WARMUP) * ${PRESIGNED_PER_SECOND:-20000} )) out="$LOGS/load-$1-c$3.out" rows lp
  local s0 p0 c0 s1 p1 c1 acked
  rows=$(wc -l <"$RESULTS" 2>/dev/null || echo 0)
  : >"$out"
  java -XX:+UseSerialGC -Xms1g -Xmx2g -cp "$LOADCP" dev.metakit.inbox.bench.IngestLoad \
    --url "http://127.0.0.1:$2/hooks/metakit" --secret "$SECRET" --connections "$3" \
    --duration "$DURATION" --warmup "$WARMUP" --deliveries "$deliveries" \
    --jdbc-url "${5:-$JDBC_URL}" --db-user "$DB_USER" --db-password "$DB_PASSWORD" \
    --label "$1" --result-file "$RESULTS" > >(tee "$out" >&2) 2>&1 &
  lp=$!
  # the tool starts its clock right after printing the body size (pre-signing done): measure its window
  until grep -q 'body size' "$out" 2>/dev/null || ! kill -0 "$lp" 2>/dev/null; do sleep 0.02; done
  sleep "$WARMUP"
  [ "${THREAD_CPU:-0}" = 1 ] && thread_snapshot "$4" >"$LOGS/threads-a"
  read -r s0 p0 c0 < <(cpu_snapshot "$4" "$lp")
  sleep "$DURATION"
  read -r s1 p1 c1 < <(cpu_snapshot "$4" "$lp")
  [ "${THREAD_CPU:-0}" = 1 ] && thread_snapshot "$4" >"$LOGS/threads-b"
  wait "$lp" || true
  if [ "$(wc -l <"$RESULTS" 2>/dev/null || echo 0)" -gt "$rows" ]; then
    acked=$(tail -1 "$RESULTS" | awk -F'\t' -v d="$DURATION" '{printf "%d", $3 * d}')
    sed -i "\$ s/\$/\t$(per_delivery $(( s1 - s0 )) "$acked")\t$(per_delivery $(( p1 - p0 )) "$acked")\t$(per_delivery $(( c1 - c0 )) "$acked")/" "$RESULTS"
    log "$1 c=$3 CPU core-us per acked delivery: server $(tail -1 "$RESULTS" | cut -f9), PostgreSQL $(tail -1 "$RESULTS" | cut -f10), load tool $(tail -1 "$RESULTS" | cut -f11)"
    if [ "${THREAD_CPU:-0}" = 1 ]; then
      log "$1 c=$3 server CPU core-us per acked delivery by thread:"
      thread_report "$LOGS/threads-a" "$LOGS/threads-b" "$acked" | head -12 >&2
    fi
  fi
}

run_pgbench() { # $1 connections, $2 the database (the benchmark's; BASE_DB for pgbench-base), $3 its script
  local c=$1 db=${2:-$DB} script=${3:-${PGBENCH_SQL:-bench/pgbench-insert.sql}} out pfx="$BENCH_DIR/pgblog"
  rm -f "$pfx".*
  if [ "$WARMUP" -gt 0 ]; then
    PGPASSWORD=$DB_PASSWORD pgbench -h 127.0.0.1 -p "$PGPORT" -U "$DB_USER" -n -c "$c" -j 2 -T "$WARMUP" \
      -M prepared -f "$script" "$db" >/dev/null 2>&1 || true
  fi
  local of="$BENCH_DIR/pgbench.out" pb ta tb p0 p1 c0 c1 rc=0
  PGPASSWORD=$DB_PASSWORD pgbench -h 127.0.0.1 -p "$PGPORT" -U "$DB_USER" -n -c "$c" -j 2 -T "$DURATION" \
    -M prepared -f "$script" -l --log-prefix="$pfx" "$db" >"$of" 2>&1 &
  pb=$!
  # CPU over [0.5 s, DURATION - 0.5 s] of the run (pgbench must still be there to be read), and the transactions
  # its log shows completed in that window
  local x
  sleep 0.5; ta=$(date +%s.%N); read -r x p0 c0 < <(cpu_snapshot "" "$pb")
  sleep "$(awk -v d="$DURATION" 'BEGIN { print d - 1 }')"
  tb=$(date +%s.%N); read -r x p1 c1 < <(cpu_snapshot "" "$pb")
  wait "$pb" || rc=$?
  out=$(cat "$of")
  [ "$rc" = 0 ] || { echo "$out" >&2; return; }
  local tps failed lat nwin
  nwin=$(cat "$pfx".* | awk -v a="$ta" -v b="$tb" '{ t = $5 + $6 / 1e6; if (t >= a && t < b) n++ } END { print n + 0 }')
  tps=$(echo "$out" | awk '/^tps = / {printf "%.0f", $3; exit}')
  failed=$(echo "$out" | awk '/number of failed transactions/ {print $5; exit}')
  # per-transaction log: client_id transaction_no time_us script_no epoch epoch_us
  lat=$(cat "$pfx".* | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {
        i50=int(NR*0.50+0.999); i99=int(NR*0.99+0.999); if(i50<1)i50=1; if(i99<1)i99=1;
        printf "%.2f\t%.2f", a[i50]/1000, a[i99]/1000}')
  printf 'pgbench\t%s\t%s\t%s\t%s\t0\t-\t-\t%s\t%s\n' "$c" "$tps" "$lat" "${failed:-0}" \
    "$(per_delivery $(( p1 - p0 )) "$nwin")" "$(per_delivery $(( c1 - c0 )) "$nwin")" >>"$RESULTS"
  log "pgbench c=$c tps=$tps p50/p99 ms=$(echo "$lat" | tr '\t' /) failed=${failed:-0}; CPU core-us per transaction: PostgreSQL $(tail -1 "$RESULTS" | cut -f10), pgbench $(tail -1 "$RESULTS" | cut -f11)"
  rm -f "$pfx".*
}

summary() {
  echo
  echo "Ingest benchmark $STAMP: rounds=$ROUNDS duration=${DURATION}s warm-up=${WARMUP}s, medians (raw rows: $RESULTS)"
  awk -F'\t' '
    function median(list,   n, arr, i, j, t) {
      n = split(list, arr, " "); if (n == 0) return "";
      for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (arr[j] + 0 < arr[i] + 0) { t = arr[i]; arr[i] = arr[j]; arr[j] = t }
      return (n % 2) ? arr[(n + 1) / 2] : (arr[n / 2] + arr[n / 2 + 1]) / 2 }
    { k = $1 SUBSEP $2; tp[k] = tp[k] " " $3; p50[k] = p50[k] " " $4; p99[k] = p99[k] " " $5;
      bad[k] += $6; err[k] += $7; if ($8 != "-") miss[k] += $8; else miss[k] = "-"; runs[k]++;
      if (NF >= 11) { if ($9 != "-") cs[k] = cs[k] " " $9; if ($10 != "-") cp[k] = cp[k] " " $10; if ($11 != "-") cc[k] = cc[k] " " $11 }
      rnd[k]++; per[$1 SUBSEP $2 SUBSEP rnd[k]] = $3; if (rnd[k] > maxr) maxr = rnd[k]
      sys[$1] = 1; con[$2] = 1 }
    function med1(list) { return list == "" ? "-" : sprintf("%.0f", median(list)) }
    END {
      printf "%-12s %5s %5s %10s %8s %8s %8s %7s %8s %12s %12s %10s %8s %8s %9s\n", "system", "conns", "runs", "2xx/s", "p50 ms", "p99 ms", "non-2xx", "errors", "missing", "ours/pgbench", "ours/express", "ours/stock", "srv us", "pg us", "client us"
      n = split("pgbench pgbench-base ours ours-j25 ours-base ours-base-j25 ours-traced ours-wiretap ours-setheader boot boot-j25 boot-base boot-base-j25 express stock-camel ours-xmx256m", order, " ")
      for (c in con) conns[++nc] = c + 0
      for (i = 1; i <= nc; i++) for (j = i + 1; j <= nc; j++) if (conns[j] < conns[i]) { t = conns[i]; conns[i] = conns[j]; conns[j] = t }
      for (ci = 1; ci <= nc; ci++) {
        c = conns[ci]
        for (s = 1; s <= n; s++) {
          k = order[s] SUBSEP c; if (!(k in runs)) continue
          m = median(tp[k]); r1 = "-"; r2 = "-"; r3 = "-"
          if (order[s] ~ /^(ours|boot)/) {
            pk = "pgbench" SUBSEP c; ek = "express" SUBSEP c; sk = "stock-camel" SUBSEP c
            if (pk in runs) r1 = sprintf("%.2f", m / median(tp[pk]))
            if (ek in runs) r2 = sprintf("%.2f", m / median(tp[ek]))
            if (sk in runs) r3 = sprintf("%.2f", m / median(tp[sk]))
          }
          printf "%-12s %5s %5d %10.0f %8.2f %8.2f %8d %7d %8s %12s %12s %10s %8s %8s %9s\n", order[s], c, runs[k], m, median(p50[k]), median(p99[k]), bad[k], err[k], miss[k], r1, r2, r3, med1(cs[k]), med1(cp[k]), med1(cc[k])
        }
      }
      print "(srv/pg/client us: core-us per acked delivery over the measured window, medians; for pgbench per transaction, client = pgbench)"
      # the machine is shared: ratios within one round say more than ratios of medians
      for (ci = 1; ci <= nc; ci++) {
        c = conns[ci]
        for (s = 1; s <= n; s++) {
          if (order[s] == "ours" || order[s] == "ours-xmx256m") continue
          if (!((order[s] SUBSEP c) in runs) || !(("ours" SUBSEP c) in runs)) continue
          line = ""
          for (r = 1; r <= maxr; r++) {
            a = per["ours" SUBSEP c SUBSEP r]; b = per[order[s] SUBSEP c SUBSEP r]
            if (a != "" && b != "" && b > 0) line = line sprintf(" %.2f", a / b)
          }
          printf "per round, ours/%s at %s: %s\n", order[s], c, line
        }
        # every consumer against pgbench, round by round
        for (s = 1; s <= n; s++) {
          if (order[s] == "pgbench" || order[s] == "ours" || !((order[s] SUBSEP c) in runs) || !(("pgbench" SUBSEP c) in runs)) continue
          line = ""
          for (r = 1; r <= maxr; r++) {
            a = per[order[s] SUBSEP c SUBSEP r]; b = per["pgbench" SUBSEP c SUBSEP r]
            if (a != "" && b != "" && b > 0) line = line sprintf(" %.2f", a / b)
          }
          printf "per round, %s/pgbench at %s: %s\n", order[s], c, line
        }
      }
    }' "$RESULTS"
  if [ -s "$STARTUPS" ]; then
    sort -n "$STARTUPS" | awk '{a[NR]=$1} END {printf "our startup to ready (external database): median %d ms, min %d, max %d over %d starts\n", a[int((NR+1)/2)], a[1], a[NR], NR}'
  fi
}

# bench/stock-camel-race.sh sources this file for its functions and settings, then runs its own steps
if [ "${INGEST_BENCH_AS_LIBRARY:-}" = 1 ]; then return 0; fi

case "${1:-run}" in
  stop-db) db_down; exit 0 ;;
  summary) RESULTS=$2; STARTUPS=/dev/null; summary; exit 0 ;;
  run) ;;
  *) echo "usage: $0 [run|stop-db|summary RESULTS.tsv]" >&2; exit 64 ;;
esac

ensure_tools
ensure_build
prepare_db
retain_rows
case " $SYSTEMS " in *" stock-camel "*) ensure_stock_build; stock_schema ;; esac
case " $SYSTEMS " in *" boot "*) ensure_boot_build ;; esac
log "PostgreSQL: $(psql_db -c "select version()" | cut -d, -f1); fsync=$(psql_db -c 'show fsync'), synchronous_commit=$(psql_db -c 'show synchronous_commit')"
log "results: $RESULTS"

for round in $(seq 1 "$ROUNDS"); do
  for c in $CONNS; do
    for s in $SYSTEMS; do
      reset_table
      wait_quiet
      # a system named with -j25 runs on J25_JAVA (Temurin 25 here), the others on java (17 here)
      jvm=java
      case $s in *-j25) jvm=$J25_JAVA ;; esac
      case ${s%-j25} in
        pgbench) run_pgbench "$c" ;;
        pgbench-base)
          [ -n "$BASE_DB" ] || { echo "SYSTEMS names pgbench-base: set BASE_DB" >&2; exit 64; }
          run_pgbench "$c" "$BASE_DB" "${BASE_PGBENCH_SQL:-bench/pgbench-insert.sql}" ;;
        ours)
          OURS_JAVA=$jvm start_ours "$s-r$round-c$c"; echo "$READY_MS" >>"$STARTUPS"
          log "round $round: $s c=$c (ready in $READY_MS ms, $("$jvm" -version 2>&1 | head -1))"
          load "$s" "$OURS_HTTP_PORT" "$c" "$OURS_PID"; stop_ours ;;
        ours-traced)
          start_sink
          OURS_JAVA=$jvm start_ours "$s-r$round-c$c" "-Dotel.exporter.otlp.endpoint=http://127.0.0.1:$OTLP_PORT"
          echo "$READY_MS" >>"$STARTUPS"
          log "round $round: $s c=$c (ready in $READY_MS ms, OTLP to 127.0.0.1:$OTLP_PORT)"
          load "$s" "$OURS_HTTP_PORT" "$c" "$OURS_PID"; stop_ours ;;
        ours-wiretap|ours-setheader)
          routes=$(edited_routes "${s#ours-}")
          OURS_JAVA=$jvm start_ours "$s-r$round-c$c" "" "$JAR" "$routes"; echo "$READY_MS" >>"$STARTUPS"
          log "round $round: $s c=$c (ready in $READY_MS ms, $routes)"
          load "$s" "$OURS_HTTP_PORT" "$c" "$OURS_PID"; stop_ours
          if [ -d "$BENCH_DIR/audit" ]; then
            # moved aside, removed after the sitting: removing 300,000 files took minutes at a high load
            log "$s: $(ls -f "$BENCH_DIR/audit" | grep -vc '^\.\.\?$') audit files"
            mv "$BENCH_DIR/audit" "$BENCH_DIR/audit-done-r$round"
          fi ;;
        ours-base)
          [ -f "$BASE_JAR" ] || { echo "SYSTEMS names ours-base: set BASE_JAR to the earlier commit's jar" >&2; exit 64; }
          psql_db -c "create schema if not exists ours_base" >/dev/null
          base_opts=""; case $s in *-j25) base_opts=${J25_BASE_OPTS:-} ;; esac
          OURS_JAVA=$jvm start_ours "$s-r$round-c$c" "$base_opts" "$BASE_JAR" "$BASE_ROUTES" "$BASE_JDBC_URL"
          log "round $round: $s c=$c (ready in $READY_MS ms, $BASE_JAR, $("$jvm" -version 2>&1 | head -1))"
          load "$s" "$OURS_HTTP_PORT" "$c" "$OURS_PID" "$BASE_JDBC_URL"; stop_ours ;;
        express)
          start_express; log "round $round: express c=$c"
          load express "$EXPRESS_PORT" "$c" "$EXPRESS_PID"; stop_express ;;
        boot|boot-base)
          jar=$BOOT_JAR
          if [ "${s%-j25}" = boot-base ]; then
            [ -f "$BOOT_BASE_JAR" ] || { echo "SYSTEMS names boot-base: set BOOT_BASE_JAR to the earlier commit's Boot example jar" >&2; exit 64; }
            jar=$BOOT_BASE_JAR
          fi
          BOOT_JAVA=$jvm start_boot "$s-r$round-c$c" "$jar"
          log "round $round: $s c=$c (ready in $READY_MS ms, $jar, $("$jvm" -version 2>&1 | head -1))"
          load "$s" "$BOOT_PORT" "$c" "$BOOT_PID"; stop_boot ;;
        stock-camel)
          reset_stock; start_stock "stock-camel-r$round-c$c"; log "round $round: stock-camel c=$c"
          load stock-camel "$STOCK_PORT" "$c" "$STOCK_PID" "$STOCK_JDBC_URL"; stop_stock ;;
      esac
    done
  done
done

if [ "$EXTRA_RUNS" = 1 ]; then
  reset_table
  wait_quiet
  start_ours ours-xmx256m "-Xmx256m"; echo "$READY_MS" >>"$STARTUPS"
  log "ours with -Xmx256m at 64 connections (ready in $READY_MS ms)"
  load ours-xmx256m "$OURS_HTTP_PORT" 64 "$OURS_PID"
  stop_ours
  if grep -q OutOfMemoryError "$LOGS/ours-xmx256m.log"; then echo "ours-xmx256m: OutOfMemoryError in $LOGS/ours-xmx256m.log"; fi
fi

rm -rf "$BENCH_DIR"/audit-done-*
summary
