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
# METAKIT_BUILD_DIR: a folder name for the build's outputs (each module's, default target); the runtime's tests are
# in src/runtime/<name>
build_name="${METAKIT_BUILD_DIR:-target}"
build_dir="$PWD/src/runtime/$build_name"
mvn -B -q -Dmetakit.build.dir="$build_name" -pl src/runtime -am test-compile org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile="$build_dir/bench-classpath.txt"
cp="$build_dir/test-classes:$build_dir/classes:$(cat "$build_dir/bench-classpath.txt")"
# shellcheck disable=SC2086
java ${BENCH_JAVA_OPTS:--Xmx1g} -Dmetakit.test.basedir="$PWD" -Dmetakit.build.dir="$PWD/$build_name" -cp "$cp" \
  dev.metakit.inbox.bench.FeedKafkaBench "$@"
