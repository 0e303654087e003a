#!/usr/bin/env bash
# The dev run: builds the jar when the sources changed, then starts metakit-inbox on an embedded PostgreSQL
# (data in ./data), reading the route files from ./routes so edits apply. Without METAKIT_API_URL it runs in
# sandbox mode (a simulated MetaKit in the same process, wired to the consumer); without METAKIT_WEBHOOK_SECRET a
# secret is generated. With METAKIT_WEBHOOK_SECRET set it is an ordinary run with those settings.
set -euo pipefail
cd "$(dirname "$0")"
jar=target/metakit-inbox.jar
if [ ! -f "$jar" ] || [ -n "$(find pom.xml src application.properties routes -newer "$jar" -print -quit)" ]; then
  echo "Building $jar ..."
  mvn -B -q package -DskipTests
fi
if [ -z "${METAKIT_WEBHOOK_SECRET:-}" ]; then
  export METAKIT_DEV_MODE=true
fi
export CAMEL_MAIN_ROUTESINCLUDEPATTERN="${CAMEL_MAIN_ROUTESINCLUDEPATTERN:-file:routes/*.camel.yaml}"
exec java ${JAVA_OPTS:-} -jar "$jar" "$@"
