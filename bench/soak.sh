#!/usr/bin/env bash
# Soak (BENCHMARKS.md "Soak"): the runnable jar, at its default settings on an embedded PostgreSQL of its
# own, under steady signed traffic from the MetaKit sandbox in a JVM of its own (SandboxCli run: trades, deliveries
# with the sandbox's faults, the REST API the consumer reconciles against), for a set time. It reports, at the start
# (after a warm-up) and at the end, the consumer's heap after a full GC (jcmd GC.run, then GC.heap_info), its RSS,
# threads and open files, and from /observe/metrics the rows stored and processed, the backlog, failed rows and the
# feed lag; then the traffic ends (the sandbox's API still answering) and it checks that nothing is left behind
# (backlog 0, feed lag 0), with the figures again after the drain.
# Not a CI test: it takes as long as it is told to.
#
#   bench/soak.sh [minutes]            default 30; e.g. bench/soak.sh 3 for a smoke run
#
# Environment: SOAK_RATE (sandbox operations/s, default 20), SOAK_ACCOUNTS (10), SOAK_FAULTS (moderate: delays,
# reordering, duplicates, losses, API 5xx/429 and slow answers; heavy also rotates the secret, which a consumer
# started from this script is not told about), SOAK_JAVA_OPTS (the consumer's JVM options, default -Xmx512m),
# SOAK_WARMUP_SECONDS (60), SOAK_KEEP=1 keeps the work folder (logs, database) under /tmp.
# Builds target/metakit-inbox.jar if it is missing (never installs anything). The machine is shared: the report
# prints `uptime` at the start and the end; write it down with the figures.
set -euo pipefail
cd "$(dirname "$0")/.."

minutes="${1:-30}"
rate="${SOAK_RATE:-20}"
accounts="${SOAK_ACCOUNTS:-10}"
faults="${SOAK_FAULTS:-moderate}"
warmup="${SOAK_WARMUP_SECONDS:-60}"
jar=target/metakit-inbox.jar
if [ ! -f "$jar" ]; then
  mvn -B -q package -DskipTests
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
http_port=$(free_port); mgmt_port=$(free_port); api_port=$(free_port)
work=$(mktemp -d /tmp/metakit-soak.XXXXXX)
secret="whsec_soak_$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
consumer_pid=""; sandbox_pid=""

cleanup() {
  # only the two processes this script started, by their id
  [ -n "$sandbox_pid" ] && kill "$sandbox_pid" 2>/dev/null || true
  if [ -n "$consumer_pid" ]; then
    kill "$consumer_pid" 2>/dev/null || true
    for _ in $(seq 1 30); do kill -0 "$consumer_pid" 2>/dev/null || break; sleep 1; done
  fi
  if [ "${SOAK_KEEP:-0}" = 1 ]; then echo "soak: work folder kept: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

metrics() { curl -s --max-time 5 "http://127.0.0.1:$mgmt_port/observe/metrics" || true; }
# the sum of a meter's samples over its labels (0 when absent)
metric() { awk -v name="$1" '$1 == name || index($1, name "{") == 1 { sum += $NF } END { printf "%.0f", sum }' <<<"$2"; }
metric_max() { awk -v name="$1" '$1 == name || index($1, name "{") == 1 { if ($NF > m) m = $NF } END { printf "%.1f", m }' <<<"$2"; }
health() { curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$mgmt_port/observe/health" || true; }

# heap after a full GC (KiB), RSS (KiB), threads, open files; then the meters
snapshot() {
  local label=$1 heap rss threads fds m
  jcmd "$consumer_pid" GC.run >/dev/null
  heap=$(jcmd "$consumer_pid" GC.heap_info | grep -oE 'used [0-9]+K' | head -1 | grep -oE '[0-9]+')
  rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$consumer_pid/status")
  threads=$(awk '/^Threads/ { print $2 }' "/proc/$consumer_pid/status")
  fds=$(ls "/proc/$consumer_pid/fd" | wc -l)
  # threads by name with the numbers taken out ("pool-4-thread-7" -> "pool-#-thread-#"), to tell a pool that grew
  jcmd "$consumer_pid" Thread.print | sed -n 's/^"\([^"]*\)".*/\1/p' | sed 's/[0-9][0-9]*/#/g' | sort | uniq -c \
    | awk '{ n = $1; $1 = ""; print substr($0, 2) "\t" n }' | LC_ALL=C sort >"$work/threads-$label.tsv"
  m=$(metrics)
  printf '%s heap-after-gc=%d KiB rss=%d KiB threads=%d fds=%d stored=%s processed=%s backlog=%s failed=%s feed-lag-max=%s s\n' \
    "$label" "$heap" "$rss" "$threads" "$fds" \
    "$(metric metakit_webhook_stored_total "$m")" "$(metric metakit_inbox_rows_processed_total "$m")" \
    "$(metric metakit_inbox_backlog "$m")" "$(metric metakit_inbox_failed "$m")" \
    "$(metric_max metakit_feed_lag_seconds "$m")"
  eval "${label}_heap=$heap ${label}_rss=$rss ${label}_threads=$threads ${label}_fds=$fds"
}

echo "soak: $minutes min at $rate operations/s over $accounts accounts, faults $faults; work folder $work"
echo "soak: load at start: $(uptime)"

METAKIT_WEBHOOK_SECRET="$secret" METAKIT_API_URL="http://127.0.0.1:$api_port" METAKIT_API_KEY=sandbox-api-key \
METAKIT_ACCOUNTS="$(seq -s, 1 "$accounts")" METAKIT_DATABASE_EMBEDDED_DIR="$work/postgres" \
HTTP_HOST=127.0.0.1 HTTP_PORT="$http_port" MANAGEMENT_HOST=127.0.0.1 MANAGEMENT_PORT="$mgmt_port" \
  java ${SOAK_JAVA_OPTS:--Xmx512m} -jar "$jar" >"$work/consumer.log" 2>&1 &
consumer_pid=$!
for _ in $(seq 1 120); do [ "$(health)" = 200 ] && break; sleep 1; done
[ "$(health)" = 200 ] || { echo "soak: the consumer did not get ready; see $work/consumer.log"; SOAK_KEEP=1; exit 1; }

# as many operations as the run lasts at the rate; then its REST API stays up while the consumer drains
operations=$(( rate * (warmup + minutes * 60) ))
java -Xmx512m -cp "$jar" dev.metakit.inbox.sandbox.SandboxCli run --url "http://127.0.0.1:$http_port/hooks/metakit" \
  --secret "$secret" --api-port "$api_port" --accounts "$accounts" --rate "$rate" --faults "$faults" \
  --operations "$operations" --linger 600 >"$work/sandbox.log" 2>&1 &
sandbox_pid=$!

sleep "$warmup"
snapshot start
end=$(( $(date +%s) + minutes * 60 ))
while [ "$(date +%s)" -lt "$end" ]; do
  sleep $(( end - $(date +%s) > 60 ? 60 : end - $(date +%s) ))
  m=$(metrics)
  printf 'soak: %s rss=%s KiB backlog=%s feed-lag-max=%s s health=%s | %s\n' "$(date -u +%H:%M:%S)" \
    "$(awk '/^VmRSS/ { print $2 }' "/proc/$consumer_pid/status")" "$(metric metakit_inbox_backlog "$m")" \
    "$(metric_max metakit_feed_lag_seconds "$m")" "$(health)" "$(grep '^sandbox:' "$work/sandbox.log" | tail -1)"
done
snapshot end

# the sandbox's last operations (its rate is a little under the one asked for) and their deliveries settle; then
# everything received must be worked off and published while its API still answers
for _ in $(seq 1 300); do grep -q 'traffic done' "$work/sandbox.log" && break; sleep 1; done
traffic_done_at=$(date +%s)
drained=no
for _ in $(seq 1 120); do
  m=$(metrics)
  if [ "$(metric metakit_inbox_backlog "$m")" = 0 ] && [ "$(metric_max metakit_feed_lag_seconds "$m")" = 0.0 ]; then
    drained=yes; break
  fi
  sleep 1
done
drain_seconds=$(( $(date +%s) - traffic_done_at ))
snapshot after_drain
echo "soak: last sandbox line: $(grep '^sandbox:' "$work/sandbox.log" | grep -v 'traffic done' | tail -1)"
kill "$sandbox_pid"; wait "$sandbox_pid" 2>/dev/null || true; sandbox_pid=""
echo "soak: thread names whose count changed from start to end: $(LC_ALL=C join -t $'\t' -a1 -a2 -e 0 -o 0,1.2,2.2 \
  "$work/threads-start.tsv" "$work/threads-end.tsv" | awk -F'\t' '$2 != $3 { printf "%s %d->%d; ", $1, $2, $3 }')"
echo "soak: ERROR lines in the consumer log: $(grep -c ' ERROR ' "$work/consumer.log" || true)"
echo "soak: load at end: $(uptime)"
printf 'SOAK %d min, %s ops/s, %s accounts, faults %s: heap after GC %d -> %d KiB (%+d%%), RSS %d -> %d KiB (%+d%%), threads %d -> %d, fds %d -> %d; drained (backlog 0, feed lag 0) after the traffic stopped: %s (%d s)\n' \
  "$minutes" "$rate" "$accounts" "$faults" "$start_heap" "$end_heap" $(( (end_heap - start_heap) * 100 / start_heap )) \
  "$start_rss" "$end_rss" $(( (end_rss - start_rss) * 100 / start_rss )) "$start_threads" "$end_threads" \
  "$start_fds" "$end_fds" "$drained" "$drain_seconds"
