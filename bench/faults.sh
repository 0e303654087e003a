#!/usr/bin/env bash
# The fault tests, short and long (docs/faults.md): every *FaultTest (with the fault-long ones,
# about 4 minutes more than mvn verify; SlowClientsFaultTest holds 500 slow connections for 70 s) and the
# process-level *FaultIT against the shaded jar.
#   bench/faults.sh                         # all of them
#   bench/faults.sh -Dtest=ApiOutageFaultTest -Dit.test=NoSuchIT -Dfailsafe.failIfNoSpecifiedTests=false
# Figures print as lines starting with "FAULT" in the test reports of src/bundle and src/runtime (target/*-reports).
set -euo pipefail
cd "$(dirname "$0")/.."
# METAKIT_BUILD_DIR: a folder name for the build's outputs (each module's, default target); the tests' reports are
# in src/bundle/<name> and src/runtime/<name>
build_name="${METAKIT_BUILD_DIR:-target}"
status=0
mvn -B -Pfaults -Dmetakit.build.dir="$build_name" -pl src/runtime -am -Dtest='*FaultTest' -Dit.test='*FaultIT' \
  -Dsurefire.failIfNoSpecifiedTests=false verify "$@" || status=$?
for module in src/bundle src/runtime; do
  grep -h '^FAULT' "$PWD/$module/$build_name"/surefire-reports/*-output.txt \
    "$PWD/$module/$build_name"/failsafe-reports/*-output.txt 2>/dev/null || true
done
exit $status
