#!/usr/bin/env bash
# README's Debezium recipe run for real (DebeziumOutboxIT): an embedded PostgreSQL with wal_level=logical, a Kafka
# broker and a Kafka Connect worker with Debezium 3.6.1's PostgreSQL connector and its outbox event router, each
# account's changes checked on the topic. `mvn -B verify` runs it with 200 transactions (about 370 changes); this
# script runs it alone, with more if asked. Figures print as lines starting with "DEBEZIUM" (phase times, and how
# long after the writes began every change was on the topic).
#   bench/debezium-outbox.sh
#   TRANSACTIONS=5000 bench/debezium-outbox.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${METAKIT_BUILD_DIR:-$PWD/target}"
status=0
# the IT needs the compiled classes only (not the packaged jar), so no package phase
mvn -B -Dmetakit.build.dir="$build_dir" -Dit.test=DebeziumOutboxIT \
  -Dmetakit.debezium.it.transactions="${TRANSACTIONS:-200}" \
  test-compile failsafe:integration-test failsafe:verify "$@" || status=$?
uptime
grep -h '^DEBEZIUM' "$build_dir"/failsafe-reports/*DebeziumOutboxIT-output.txt 2>/dev/null || true
exit $status
