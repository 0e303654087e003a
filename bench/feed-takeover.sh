#!/usr/bin/env bash
# The change feed as its downstream feels it through a fault of one of two publishers (BENCHMARKS.md, "The change
# feed through a takeover"): src/runtime/src/test/java/dev/metakit/inbox/bench/FeedTakeoverBench.java, two jars on one
# embedded PostgreSQL, the outlet an HTTP receiver (one POST per change), 4 accounts, two positions each whose stop
# losses move 25 times a second.
# For each fault (a 30 s SIGSTOP, a kill -9, a 30 s outage of the receiver) it runs the build before (BEFORE_JAR: the
# runnable jar of an earlier checkout, target/metakit-inbox.jar there) and the current one in turn, ROUNDS times:
#   BEFORE_JAR=/tmp/before/target/metakit-inbox.jar bench/feed-takeover.sh
#   FAULTS="freeze" ROUNDS=2 bench/feed-takeover.sh            # the current build alone without BEFORE_JAR
#   FAULTS="freeze" BEFORE_JAR=... bench/feed-takeover.sh --receiver-millis 20   # a receiver taking 20 ms per POST
# Extra options go to the bench's main (--seconds 30 --warmup 20 --after 30 --accounts 4 --threads 4 --rate 25
# --receiver-millis 0).
# Figures print as lines starting with "FEED-TAKEOVER", with the load average (the whole output goes to
# src/runtime/target/feed-takeover.log). The machine is shared: check `uptime` first.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_classpath package -DskipTests
current_jar="$PWD/$build_name/metakit-inbox.jar"
builds=("current=$current_jar")
if [[ -n "${BEFORE_JAR:-}" ]]; then
  builds=("before=$BEFORE_JAR" "current=$current_jar")
fi
for round in $(seq 1 "${ROUNDS:-1}"); do
  for fault in ${FAULTS:-freeze kill outage}; do
    for build in "${builds[@]}"; do
      echo "round $round, $fault, ${build%%=*}: $(uptime)"
      # shellcheck disable=SC2086
      java ${BENCH_JAVA_OPTS:--Xmx1g} -Dmetakit.test.basedir="$PWD" -Dmetakit.test.jar="${build#*=}" -cp "$cp" \
        dev.metakit.inbox.bench.FeedTakeoverBench --fault "$fault" --label "${build%%=*}" "$@" \
        | tee -a "$build_dir/feed-takeover.log" | grep '^FEED-TAKEOVER'
    done
  done
done
