#!/usr/bin/env bash
# Runs the signature JMH benchmark from the test classpath.
#   bench/jmh-signature.sh                      # short run: -f 1 -wi 3 -i 5 -t 1
#   bench/jmh-signature.sh -f 2 -wi 5 -i 10     # any JMH options replace the defaults
# Why not exec:java: JMH forks a JVM with the host's java.class.path, which under exec:java is Maven's own
# launcher classpath, so the forked benchmark cannot find its classes.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
. bench/lib.sh
bench_classpath test-compile
if [ "$#" -eq 0 ]; then set -- -f 1 -wi 3 -i 5 -t 1; fi
exec java -cp "$cp" org.openjdk.jmh.Main 'dev\.metakit\.inbox\.bench\.SignatureVerification' "$@"
