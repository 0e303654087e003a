#!/usr/bin/env bash
# Runs the signature JMH benchmark from the test classpath.
#   bench/jmh-signature.sh                      # short run: -f 1 -wi 3 -i 5 -t 1
#   bench/jmh-signature.sh -f 2 -wi 5 -i 10     # any JMH options replace the defaults
# Why not exec:java: JMH forks a JVM with the host's java.class.path, which under exec:java is Maven's own
# launcher classpath, so the forked benchmark cannot find its classes.
set -euo pipefail
cd "$(dirname "$0")/.."
# METAKIT_BUILD_DIR: a folder name for the build's outputs (each module's, default target); the runtime's tests are
# in src/runtime/<name>
build_name="${METAKIT_BUILD_DIR:-target}"
build_dir="$PWD/src/runtime/$build_name"
mvn -B -q -Dmetakit.build.dir="$build_name" -pl src/runtime -am test-compile org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath \
  -Dmdep.includeScope=test -Dmdep.outputFile="$build_dir/jmh-classpath.txt"
cp="$build_dir/test-classes:$build_dir/classes:$(cat "$build_dir/jmh-classpath.txt")"
if [ "$#" -eq 0 ]; then set -- -f 1 -wi 3 -i 5 -t 1; fi
exec java -cp "$cp" org.openjdk.jmh.Main 'dev\.metakit\.inbox\.bench\.SignatureVerification' "$@"
