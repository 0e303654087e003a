# What the Java benchmark scripts share; sourced by them from the repository's root (each cds there first).
# METAKIT_BUILD_DIR: a folder name for the build's outputs (each module's, default target); the runtime's tests are
# in src/runtime/<name>
build_name="${METAKIT_BUILD_DIR:-target}"
build_dir="$PWD/src/runtime/$build_name"

# Builds the runtime up to the Maven phase and options given ($@) and sets cp to its test classpath: its test classes,
# its classes and every dependency of test scope.
bench_classpath() {
  mvn -B -q -Dmetakit.build.dir="$build_name" -pl src/runtime -am "$@" \
    org.apache.maven.plugins:maven-dependency-plugin:3.9.0:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="$build_dir/bench-classpath.txt"
  cp="$build_dir/test-classes:$build_dir/classes:$(cat "$build_dir/bench-classpath.txt")"
}
