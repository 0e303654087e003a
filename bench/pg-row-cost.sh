#!/usr/bin/env bash
# PostgreSQL's cost per inbox row (BENCHMARKS.md): rows/s and PostgreSQL CPU (core-us per row: utime+stime of the
# postmaster and its children from /proc) for pgbench scripts that insert our inbox row, on the bench PostgreSQL of
# bench/ingest-bench.sh (fsync and synchronous_commit on).
#
# Tables (schema rowcost, each truncated and CHECKPOINTed before every run):
#   full          webhook_inbox as migrated (LIKE ... INCLUDING ALL): primary key + both partial pending indexes
#   full-no-pend  without webhook_inbox_pending_idx (next_attempt_at)
#   full-no-acct  without webhook_inbox_pending_account_idx (account_id, next_attempt_at)
#   full-pk       primary key only
#   narrow        the same row without a byte of the delivery lost: the key t:v1 (75 characters of text) stored as
#                 t bigint + v1 bytea (32 bytes; the primary key), event dropped (the body carries it); both
#                 pending indexes
#   narrow-pk     narrow, primary key only
# Statements:
#   multi   the ingest's statement (InboxIntake.insert): insert ... select * from unnest(text[], text[], bigint[],
#           text[], bytea[]) on conflict do nothing returning delivery_key, 16 rows per transaction
#   single  one row per transaction, values (...) on conflict do nothing returning delivery_key
# Keys look like ours (t, ':', 64 hex digits, random); each body ~390 bytes, distinct per row.
#
#   bench/pg-row-cost.sh                          # ROWCOST_ROUNDS=3 alternating rounds of every (table, statement)
# Knobs: ROWCOST_ROUNDS (3), ROWCOST_DURATION seconds per run (8), ROWCOST_TABLES, ROWCOST_SHAPES ("multi single"),
# ROWCOST_CONNS_MULTI (4: writers committing 16 rows each), ROWCOST_CONNS_SINGLE (16); and bench/ingest-bench.sh's
# BENCH_DIR, BENCH_PGPORT.
set -euo pipefail

INGEST_BENCH_AS_LIBRARY=1
# shellcheck source=bench/ingest-bench.sh
. "$(dirname "$0")/ingest-bench.sh"

ROWCOST_ROUNDS=${ROWCOST_ROUNDS:-3}
ROWCOST_DURATION=${ROWCOST_DURATION:-8}
ROWCOST_TABLES=${ROWCOST_TABLES:-"full full-no-pend full-no-acct full-pk narrow narrow-pk"}
ROWCOST_SHAPES=${ROWCOST_SHAPES:-"multi single"}
ROWCOST_CONNS_MULTI=${ROWCOST_CONNS_MULTI:-4}
ROWCOST_CONNS_SINGLE=${ROWCOST_CONNS_SINGLE:-16}
DIR="$BENCH_DIR/rowcost"
OUT="$BENCH_DIR/rowcost-$STAMP.tsv"
mkdir -p "$DIR"

ensure_tools
ensure_build
prepare_db

narrow_ddl() { # $1 table name: webhook_inbox as migrated, its key (delivery_key) as t + v1, without event
  cat <<SQL
create table rowcost."$1" (t bigint not null, v1 bytea not null,
    like metakit.webhook_inbox including defaults including constraints, primary key (v1));
alter table rowcost."$1" drop column delivery_key, drop column event;
SQL
}
pending_indexes() { # $1 table name
  echo "create index on rowcost.\"$1\" (next_attempt_at) where processed_at is null and failed_at is null;"
  echo "create index on rowcost.\"$1\" (account_id, next_attempt_at) where processed_at is null and failed_at is null;"
}
{
  echo "drop schema if exists rowcost cascade; create schema rowcost;"
  echo 'create table rowcost."full" (like metakit.webhook_inbox including all);'
  echo 'create table rowcost."full-no-pend" (like metakit.webhook_inbox including defaults including constraints);'
  echo 'alter table rowcost."full-no-pend" add primary key (delivery_key);'
  echo "create index on rowcost.\"full-no-pend\" (account_id, next_attempt_at) where processed_at is null and failed_at is null;"
  echo 'create table rowcost."full-no-acct" (like metakit.webhook_inbox including defaults including constraints);'
  echo 'alter table rowcost."full-no-acct" add primary key (delivery_key);'
  echo "create index on rowcost.\"full-no-acct\" (next_attempt_at) where processed_at is null and failed_at is null;"
  echo 'create table rowcost."full-pk" (like metakit.webhook_inbox including defaults including constraints);'
  echo 'alter table rowcost."full-pk" add primary key (delivery_key);'
  narrow_ddl narrow; pending_indexes narrow
  narrow_ddl narrow-pk
} | psql_db >/dev/null
log "rowcost tables: $(psql_db -c "select string_agg(format('%s(%s idx)', c.relname, (select count(*) from pg_index i where i.indrelid = c.oid)), ' ' order by c.relname) from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'rowcost' and c.relkind = 'r'")"

# The body, split around the per-row number; pgbench reads ':' followed by a letter as a variable, hence \u003a
BODY_A='{"event":"position.opened","account_id":7,"created_at":"2026-12-02T10\u003a15\u003a30Z","data":{"ticket":'
BODY_B=',"symbol":"EURUSD","type":"buy","volume":0.10,"price_open":1.08450,"sl":1.08000,"tp":1.09500,"profit":0.00,"swap":0.00,"commission":-0.70,"time":"2026-12-02T10\u003a15\u003a30Z","magic":20261202,"comment":"metakit-inbox bench","login":5000007,"server":"MetaQuotes-Demo","position_id":1}}'
T=1796290139

script() { # $1 table, $2 shape: prints a pgbench script
  local table=$1 shape=$2 n i keys= events= accts= bodies= raws= cols
  if [ "$shape" = multi ]; then n=16; else n=1; fi
  for i in $(seq 1 "$n"); do
    echo "\\set r$i random(1, 999999999999999)"
    echo "\\set a$i random(1, 1000)"
  done
  for i in $(seq 1 "$n"); do
    local sep=; [ "$i" -gt 1 ] && sep=", "
    if [[ $table == narrow* ]]; then
      keys+="$sep$T"; events+="${sep}decode(lpad((:r$i::bigint * 1000 + :client_id)::text, 64, '0'), 'hex')"
    else
      keys+="$sep'$T' || chr(58) || lpad((:r$i::bigint * 1000 + :client_id)::text, 64, '0')"; events+="$sep'position.opened'"
    fi
    accts+="$sep:a$i"; bodies+="$sep'$BODY_A' || :r$i::bigint || '$BODY_B'"; raws+="${sep}null"
  done
  if [[ $table == narrow* ]]; then
    cols="t, v1, account_id, body, body_raw"; conflict="(v1)"; ret="v1"
    types=("bigint[]" "bytea[]" "bigint[]" "text[]" "bytea[]")
  else
    cols="delivery_key, event, account_id, body, body_raw"; conflict="(delivery_key)"; ret="delivery_key"
    types=("text[]" "text[]" "bigint[]" "text[]" "bytea[]")
  fi
  if [ "$shape" = multi ]; then
    echo "insert into rowcost.\"$table\" ($cols) select * from unnest(array[$keys]::${types[0]}, array[$events]::${types[1]}, array[$accts]::${types[2]}, array[$bodies]::${types[3]}, array[$raws]::${types[4]}) on conflict $conflict do nothing returning $ret;"
  else
    echo "insert into rowcost.\"$table\" ($cols) values ($keys, $events, $accts, $bodies, $raws) on conflict $conflict do nothing returning $ret;"
  fi
}

run_one() { # $1 table, $2 shape, $3 round
  local table=$1 shape=$2 c rows_per f out p0 p1 x tx rows
  if [ "$shape" = multi ]; then c=$ROWCOST_CONNS_MULTI; rows_per=16; else c=$ROWCOST_CONNS_SINGLE; rows_per=1; fi
  f="$DIR/$table-$shape.sql"; script "$table" "$shape" >"$f"
  psql_db -c "truncate rowcost.\"$table\"" -c "checkpoint" >/dev/null
  read -r x p0 x < <(cpu_snapshot "" "")
  out=$(PGPASSWORD=$DB_PASSWORD pgbench -h 127.0.0.1 -p "$PGPORT" -U "$DB_USER" -n -c "$c" -j 2 -T "$ROWCOST_DURATION" \
    -M prepared -f "$f" "$DB" 2>&1) || { echo "$out" >&2; return 1; }
  read -r x p1 x < <(cpu_snapshot "" "")
  tx=$(echo "$out" | awk '/number of transactions actually processed/ {print $NF; exit}')
  tx=${tx%%/*}
  rows=$(( tx * rows_per ))
  printf '%s\t%s\t%s\t%s\t%.0f\t%s\t%s\n' "$3" "$table" "$shape" "$c" "$(awk -v r="$rows" -v d="$ROWCOST_DURATION" 'BEGIN{print r/d}')" \
    "$(per_delivery $(( p1 - p0 )) "$rows")" "$(psql_db -c "select pg_total_relation_size('rowcost.\"$table\"') / greatest(1, (select count(*) from rowcost.\"$table\"))")" >>"$OUT"
  log "round $3 $table $shape c=$c: $(tail -1 "$OUT" | cut -f5) rows/s, PostgreSQL $(tail -1 "$OUT" | cut -f6) core-us/row, $(tail -1 "$OUT" | cut -f7) bytes/row (heap+indexes)"
}

printf 'round\ttable\tshape\tconns\trows_per_s\tpg_core_us_per_row\tbytes_per_row\n' >"$OUT"
for round in $(seq 1 "$ROWCOST_ROUNDS"); do
  for shape in $ROWCOST_SHAPES; do
    for table in $ROWCOST_TABLES; do
      wait_quiet
      run_one "$table" "$shape" "$round"
    done
  done
done

echo
echo "PostgreSQL cost per inbox row, $STAMP: $ROWCOST_ROUNDS rounds x ${ROWCOST_DURATION}s, medians (raw: $OUT)"
awk -F'\t' 'NR > 1 {
    k = $3 SUBSEP $2; r[k] = r[k] " " $5; u[k] = u[k] " " $6; b[k] = b[k] " " $7; c[k] = $4
    if (!(k in seen)) { seen[k] = 1; keys[++n] = k }
    if ($2 == "full") { base_r[$3 SUBSEP $1] = $5; base_u[$3 SUBSEP $1] = $6 }
    rr[k] = rr[k] " " $5; ru[k] = ru[k] " " $6; rd[k] = rd[k] " " $1 }
  function median(list,   m, a, i, j, t) {
    m = split(list, a, " "); for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
  END {
    printf "%-7s %-13s %5s %10s %12s %10s %14s %14s\n", "shape", "table", "conns", "rows/s", "pg us/row", "bytes/row", "rows/s vs full", "us/row vs full"
    for (i = 1; i <= n; i++) {
      k = keys[i]; split(k, kk, SUBSEP)
      # ratios to the full table within each round, then their median
      m1 = split(rr[k], xr, " "); split(ru[k], xu, " "); split(rd[k], xd, " "); q1 = ""; q2 = ""
      for (j = 1; j <= m1; j++) { br = base_r[kk[1] SUBSEP xd[j]]; bu = base_u[kk[1] SUBSEP xd[j]]
        if (br > 0) q1 = q1 " " xr[j] / br; if (bu > 0) q2 = q2 " " xu[j] / bu }
      printf "%-7s %-13s %5s %10.0f %12.1f %10.0f %14.2f %14.2f\n", kk[1], kk[2], c[k], median(r[k]), median(u[k]), median(b[k]), median(q1), median(q2)
    }
  }' "$OUT"
