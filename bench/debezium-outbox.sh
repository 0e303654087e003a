#!/usr/bin/env bash
# The Debezium recipe of docs/change-feed.md run for real (DebeziumOutboxIT): an embedded PostgreSQL with wal_level=logical, a Kafka
# broker and a Kafka Connect worker with Debezium 3.6.1's PostgreSQL connector and its outbox event router, each
# account's changes checked on the topic. `mvn -B verify` runs it with 200 transactions (about 370 changes); this
# script runs it alone, with more if asked. Figures print as lines starting with "DEBEZIUM" (phase times, and how
# long after the writes began every change was on the topic).
#   bench/debezium-outbox.sh
#   TRANSACTIONS=5000 bench/debezium-outbox.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# METAKIT_BUILD_DIR: a folder name for the build's outputs (each module's, default target); the runtime's tests are
# in src/runtime/<name>
build_name="${METAKIT_BUILD_DIR:-target}"
build_dir="$PWD/src/runtime/$build_name"
status=0
# the IT needs the compiled classes only (not the packaged jar), so no package phase
mvn -B -Dmetakit.build.dir="$build_name" -pl src/runtime -am -Dit.test=DebeziumOutboxIT -Dsurefire.failIfNoSpecifiedTests=false \
  -Dmetakit.debezium.it.transactions="${TRANSACTIONS:-200}" \
  test-compile failsafe:integration-test failsafe:verify "$@" || status=$?
uptime
grep -h '^DEBEZIUM' "$build_dir"/failsafe-reports/*DebeziumOutboxIT-output.txt 2>/dev/null || true
exit $status
