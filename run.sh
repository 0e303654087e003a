#!/usr/bin/env bash
# The dev run: builds the jar when the sources changed, then starts metakit-inbox (with ./application.properties,
# which overrides the jar's copy), reading the route files from ./routes and reloading them when one changes.
# Without METAKIT_WEBHOOK_SECRET in the environment it asks for the dev run (METAKIT_DEV_MODE): sandbox mode (a
# simulated MetaKit in the same process, on its own embedded database data/sandbox-postgres) when none of your
# database, API or secret is configured anywhere (environment or application.properties; docs/sandbox.md, "When it is sandbox
# mode"), otherwise a run with your settings, a secret generated if none is configured. With METAKIT_WEBHOOK_SECRET
# set it is an ordinary run with your settings.
set -euo pipefail
cd "$(dirname "$0")"
jar=target/metakit-inbox.jar
if [ ! -f "$jar" ] || [ -n "$(find pom.xml src application.properties routes -newer "$jar" -print -quit)" ]; then
  echo "Building $jar ..."
  mvn -B -q package -DskipTests -pl src/runtime -am
fi
if [ -z "${METAKIT_WEBHOOK_SECRET:-}" ]; then
  export METAKIT_DEV_MODE=true
fi
export CAMEL_MAIN_ROUTESINCLUDEPATTERN="${CAMEL_MAIN_ROUTESINCLUDEPATTERN:-file:routes/*.camel.yaml}"
# dev only (never in application.properties): saving a file in ./routes replaces that file's routes in the running
# process. Not every route: camel-main 4.18's remove-all reload loads a file once per route it holds, so every file
# with two routes fails as "duplicate route id". A replaced route drops whatever waits in its seda queue; the inbox
# table is the truth and the worker's poll picks those rows up again. Beans are not re-created: edit them, restart.
export CAMEL_MAIN_ROUTESRELOADENABLED="${CAMEL_MAIN_ROUTESRELOADENABLED:-true}"
export CAMEL_MAIN_ROUTESRELOADDIRECTORY="${CAMEL_MAIN_ROUTESRELOADDIRECTORY:-routes}"
export CAMEL_MAIN_ROUTESRELOADPATTERN="${CAMEL_MAIN_ROUTESRELOADPATTERN:-*.camel.yaml}"
export CAMEL_MAIN_ROUTESRELOADREMOVEALLROUTES="${CAMEL_MAIN_ROUTESRELOADREMOVEALLROUTES:-false}"
exec java ${JAVA_OPTS:-} -jar "$jar" "$@"
