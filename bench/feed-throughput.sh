#!/usr/bin/env bash
# The change feed's publisher into a real Kafka broker (BENCHMARKS.md, "The change feed"):
# src/test/java/dev/metakit/inbox/bench/FeedKafkaBench.java. Options go to its main:
#   bench/feed-throughput.sh --changes 20000 --accounts 100 --concurrency 4     # a backlog: changes/s, order on the topic
#   bench/feed-throughput.sh --changes 1000000 --accounts 100                   # the 1,000,000-change catch-up
#   bench/feed-throughput.sh --rate 1000 --seconds 30 --accounts 100            # steady writes: lag p50/p99
# Figures print as lines starting with "FEED", with CPU per change and the load average.
# The machine is shared: check `uptime` first; the load average should be low.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${METAKIT_BUILD_DIR:-$PWD/target}"
mvn -B -q -Dmetakit.build.dir="$build_dir" test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile="$build_dir/bench-classpath.txt"
cp="$build_dir/test-classes:$build_dir/classes:$(cat "$build_dir/bench-classpath.txt")"
# shellcheck disable=SC2086
java ${BENCH_JAVA_OPTS:--Xmx1g} -Dmetakit.test.basedir="$PWD" -Dmetakit.build.dir="$build_dir" -cp "$cp" \
  dev.metakit.inbox.bench.FeedKafkaBench "$@"
