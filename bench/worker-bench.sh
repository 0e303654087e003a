#!/usr/bin/env bash
# Worker and reconcile benchmarks; figures in BENCHMARKS.md (section "Worker and reconcile throughput").
#
#   bench/worker-bench.sh drain       # 100k inbox rows over 1,000 accounts, API latency 20 ms: rows/s, API calls/row
#   bench/worker-bench.sh reconcile   # full reconcile of 10,000 accounts, API latency 20 ms: wall time vs the bound
#   bench/worker-bench.sh outage      # deliveries at 400/s while every API call answers 500: PostgreSQL's CPU by window
#   bench/worker-bench.sh claim       # one claim's time with 0 to 200,000 rows piled up for an account backing off
#   bench/worker-bench.sh retention   # the inbox by day against one table: WAL per delivery, a day retired, sizes
#   bench/worker-bench.sh all         # drain and reconcile, with their defaults
#   bench/worker-bench.sh drain --rows 20000 --rounds 2     # options after the mode go to the benchmark's main
#
# Both run the real bundle in one JVM (RunningInbox: camel-main, application.properties, routes/) against the
# sandbox's REST API on 127.0.0.1 (no faults, fixed latency), on an embedded PostgreSQL (or a database created for the
# run on the server named by METAKIT_TEST_DATABASE_URL, with METAKIT_TEST_DATABASE_USER / _PASSWORD; never DATABASE_URL). Options: see the javadoc of src/runtime/src/test/java/dev/metakit/inbox/bench/
# DrainBench.java, ReconcileBench.java, OutageBench.java, ClaimBench.java and RetentionBench.java. BENCH_JAVA_OPTS: JVM options (default -Xmx1g). RESULTS: a TSV file the
# rounds are appended to (default target/worker-bench-<stamp>.tsv).
# The machine is shared: check `uptime` first; the load average should be low.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-all}
shift || true
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_classpath test-compile
results=${RESULTS:-$build_dir/worker-bench-$(date -u +%Y%m%dT%H%M%SZ).tsv}
run() { # $1 main class, rest: options
  local main=$1; shift
  # shellcheck disable=SC2086
  # sun.net.httpserver.nodelay: the sandbox API (JDK HttpServer) writes headers and body apart; with Nagle on, the
  # body waits for the client's delayed ACK, about 40 ms more per call than the configured latency
  java ${BENCH_JAVA_OPTS:--Xmx1g} -Dsun.net.httpserver.nodelay=true -Dmetakit.test.basedir="$PWD" -cp "$cp" "dev.metakit.inbox.bench.$main" \
    --result-file "$results" "$@"
}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg); results: $results" >&2
case $mode in
  drain) run DrainBench "$@" ;;
  reconcile) run ReconcileBench "$@" ;;
  outage) run OutageBench "$@" ;;
  claim) run ClaimBench "$@" ;;
  retention) run RetentionBench "$@" ;;
  all) run DrainBench; run ReconcileBench ;;
  *) echo "usage: $0 drain|reconcile|outage|claim|retention|all [options]" >&2; exit 64 ;;
esac
