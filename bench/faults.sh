#!/usr/bin/env bash
# The fault tests, short and long (docs/faults.md): every *FaultTest (with the fault-long ones,
# about 4 minutes more than mvn verify; SlowClientsFaultTest holds 500 slow connections for 70 s) and the
# process-level *FaultIT against the shaded jar.
#   bench/faults.sh                         # all of them
#   bench/faults.sh -Dtest=ApiOutageFaultTest -Dit.test=NoSuchIT -Dfailsafe.failIfNoSpecifiedTests=false
# Figures print as lines starting with "FAULT" in src/runtime/target/surefire-reports and src/runtime/target/failsafe-reports.
set -euo pipefail
cd "$(dirname "$0")/.."
# METAKIT_BUILD_DIR: a folder name for the build's outputs (each module's, default target); the runtime's tests are
# in src/runtime/<name>
build_name="${METAKIT_BUILD_DIR:-target}"
build_dir="$PWD/src/runtime/$build_name"
status=0
mvn -B -Pfaults -Dmetakit.build.dir="$build_name" -pl src/runtime -am -Dtest='*FaultTest' -Dit.test='*FaultIT' \
  -Dsurefire.failIfNoSpecifiedTests=false verify "$@" || status=$?
grep -h '^FAULT' "$build_dir"/surefire-reports/*-output.txt "$build_dir"/failsafe-reports/*-output.txt 2>/dev/null || true
exit $status
