#!/usr/bin/env bash
# The main job of pdi, end to end: create an archive, deposit a document,
# and get a passage of it back by the name the archive minted for it.
# Uses a fresh archive in a temporary directory unless PDI_ARCHIVE is set.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export PDI_ARCHIVE="${PDI_ARCHIVE:-$(mktemp -d)/pdi-archive}"
pdi() { python3 -m pdi "$@"; }

pdi init                                   # a directory: SQLite catalog + blob files
pdi series add archives.gov.us             # who issues the names (ISO 3166 country last)
name=$(pdi add "$here/declaration.txt" --series archives.gov.us)
echo "minted:  $name"
pdi meta "$name" title="Declaration of Independence" creator="Second Continental Congress"
echo "passage: $name#line=5,6"
pdi get "$name#line=5,6"                   # the 6th line, exactly as archived (CRLF-canonical)
echo "phrase:  $name#char=0,10"
pdi get "$name#char=0,10"; echo
pdi verify
