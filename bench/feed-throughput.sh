#!/usr/bin/env bash
# Changes per second the change feed's publisher sustains into a real Kafka broker (BENCHMARKS.md, "The change
# feed"): src/runtime/src/test/java/dev/metakit/inbox/bench/FeedKafkaBench.java. Options go to its main:
#   bench/feed-throughput.sh --changes 20000 --accounts 100 --concurrency 4
# The machine is shared: check `uptime` first; the load average should be low.
set -euo pipefail
cd "$(dirname "$0")/.."
# METAKIT_BUILD_DIR: a folder name for the build's outputs (each module's, default target); the runtime's tests are
# in src/runtime/<name>
build_name="${METAKIT_BUILD_DIR:-target}"
build_dir="$PWD/src/runtime/$build_name"
mvn -B -q -Dmetakit.build.dir="$build_name" -pl src/runtime -am test-compile dependency:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile="$build_dir/bench-classpath.txt"
cp="$build_dir/test-classes:$build_dir/classes:$(cat "$build_dir/bench-classpath.txt")"
# shellcheck disable=SC2086
java ${BENCH_JAVA_OPTS:--Xmx1g} -Dmetakit.test.basedir="$PWD" -Dmetakit.build.dir="$PWD/$build_name" -cp "$cp" \
  dev.metakit.inbox.bench.FeedKafkaBench "$@"
