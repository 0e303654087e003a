#!/usr/bin/env bash
# The change feed into a real Kafka broker, the full fault scenario (docs/change-feed.md, BENCHMARKS.md):
# 60 s of sandbox trading under heavy faults, the publishing jar killed with kill -9 and restarted, the broker down
# for 20 s; then every account's changes are read back from the topic and checked. `mvn -B verify` runs the same test
# shorter (20 s, broker down 8 s). Figures print as lines starting with "FEED" in src/runtime/target/failsafe-reports.
#   bench/feed-kafka.sh                          # 60 s, broker down 20 s
#   SECONDS_OF_TRADING=120 BROKER_DOWN=30 bench/feed-kafka.sh
#   OUTAGES=false bench/feed-kafka.sh            # the sandbox's heavy faults only: the feed's lag p50/p99
set -euo pipefail
cd "$(dirname "$0")/.."
# METAKIT_BUILD_DIR: a folder name for the build's outputs (each module's, default target); the runtime's tests are
# in src/runtime/<name>
build_name="${METAKIT_BUILD_DIR:-target}"
build_dir="$PWD/src/runtime/$build_name"
status=0
mvn -B -Dmetakit.build.dir="$build_name" -pl src/runtime -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
  -Dit.test=ChangeFeedKafkaIT -Dmetakit.feed.it.seconds="${SECONDS_OF_TRADING:-60}" \
  -Dmetakit.feed.it.broker-down-seconds="${BROKER_DOWN:-20}" -Dmetakit.feed.it.outages="${OUTAGES:-true}" \
  verify "$@" || status=$?
grep -h '^FEED' "$build_dir"/failsafe-reports/*ChangeFeedKafkaIT-output.txt 2>/dev/null || true
exit $status
