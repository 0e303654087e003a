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

# The JVM: $JAVA_HOME's when set (yours wins); else the newest JDK 21+ under /usr/lib/jvm (as its release file says);
# else `java` on PATH (17 works). Sets $java and says which, in one line.
choose_java() {
  if [ -n "${JAVA_HOME:-}" ]; then
    java="$JAVA_HOME/bin/java"
    if [ ! -x "$java" ]; then
      echo "JAVA_HOME=$JAVA_HOME has no bin/java: point it at a JDK or JRE 17+, or unset it" >&2
      exit 1
    fi
    echo "Java $(release_version "$JAVA_HOME" || version_of "$java") ($JAVA_HOME: JAVA_HOME)"
    return
  fi
  local home version newest=""
  for home in /usr/lib/jvm/*; do
    version="$(release_version "$home")" || continue
    if [ -x "$home/bin/java" ] && [ "${version%%[.+_-]*}" -ge 21 ] 2>/dev/null; then
      newest="$(printf '%s\n%s %s\n' "$newest" "$version" "$home" | sort -V | tail -n 1)"
    fi
  done
  if [ -n "$newest" ]; then
    java="${newest#* }/bin/java"
    echo "Java ${newest%% *} (${newest#* }: the newest 21+ here; JAVA_HOME picks another)"
  else
    java=java
    echo "Java $(version_of java) (java on PATH: no JDK 21+ in /usr/lib/jvm; JAVA_HOME picks another)"
  fi
}
# JAVA_VERSION="25.0.3" in <home>/release: 25.0.3; fails when there is none
release_version() {
  local v
  v="$(sed -n 's/^JAVA_VERSION="\(.*\)"$/\1/p' "$1/release" 2>/dev/null)" && [ -n "$v" ] && echo "$v"
}
# what the JVM itself reports as java.version
version_of() {
  "$1" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.version = //p'
}
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
choose_java
# Java 24+ warns on stderr when Netty (the HTTP server's) calls sun.misc.Unsafe's memory methods; 17 ignores this
exec "$java" -Dsun.misc.unsafe.memory.access=allow ${JAVA_OPTS:-} -jar "$jar" "$@"
