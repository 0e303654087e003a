#!/bin/sh
# Fails unless every dev.metakit artifact in the nested builds' local repository ($1) was taken from the file repository
# the build published into (Maven's _remote.repositories names the repository each file came from).
set -eu
dir="$1"
found="$(find "$dir" -name _remote.repositories | wc -l)"
if [ "$found" -eq 0 ]; then
  echo "release check: no dev.metakit artifact under $dir" >&2
  exit 1
fi
elsewhere="$(find "$dir" -name _remote.repositories -exec grep -H '^[^#].*>' {} + | grep -v '>metakit-release-check=$' || true)"
if [ -n "$elsewhere" ]; then
  echo "release check: dev.metakit artifacts not taken from the release's file repository:" >&2
  echo "$elsewhere" >&2
  exit 1
fi
echo "release check: $found dev.metakit artifacts, each from the release's file repository"
