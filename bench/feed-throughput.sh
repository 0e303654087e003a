#!/usr/bin/env bash
# Changes per second the change feed's publisher sustains into a real Kafka broker (BENCHMARKS.md, "The change
# feed"): src/test/java/dev/metakit/inbox/bench/FeedKafkaBench.java. Options go to its main:
#   bench/feed-throughput.sh --changes 20000 --accounts 100 --concurrency 4
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
