#!/usr/bin/env bash
# The change feed's publisher into a real Kafka broker (BENCHMARKS.md, "The change feed into Kafka"):
# src/runtime/src/test/java/dev/metakit/inbox/bench/FeedKafkaBench.java. Options go to its main:
#   bench/feed-throughput.sh --changes 20000 --accounts 100 --concurrency 4     # a backlog: changes/s, order on the topic
#   bench/feed-throughput.sh --changes 1000000 --accounts 100                   # the 1,000,000-change catch-up
#   bench/feed-throughput.sh --rate 1000 --seconds 30 --accounts 100            # steady writes: lag p50/p99
#       (after --warmup 10 s of the same writes; --outlet none: an outlet that confirms at once, log: the default's)
# Figures print as lines starting with "FEED", with CPU per change and the load average.
# The machine is shared: check `uptime` first; the load average should be low.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_classpath test-compile
# shellcheck disable=SC2086
java ${BENCH_JAVA_OPTS:--Xmx1g} -Dmetakit.test.basedir="$PWD" -Dmetakit.build.dir="$PWD/$build_name" -cp "$cp" \
  dev.metakit.inbox.bench.FeedKafkaBench "$@"
