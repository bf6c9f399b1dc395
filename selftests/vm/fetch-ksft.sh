#!/usr/bin/env bash
# Extracts the kselftest headers (tools/testing/selftests/kselftest*.h) from
# Debian's linux-source-6.12 into the git-ignored .cache/ksft/ (flat, so that
# -I.cache/ksft finds kselftest_harness.h). The big .deb is deleted afterwards;
# .cache/ksft/.from records which linux-source version the headers came from.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
dst=$top/.cache/ksft
log() { echo "fetch-ksft: $*" >&2; }
die() { echo "fetch-ksft: ERROR: $*" >&2; exit 1; }

if [ -s "$dst/.from" ] && [ -f "$dst/kselftest_harness.h" ] && [ -f "$dst/kselftest.h" ]; then
	log "using cached headers from $(cat "$dst/.from")"
	exit 0
fi

dl=$top/.cache/ksft-dl
rm -rf "$dl" "$dst" && mkdir -p "$dl" "$dst"
log "downloading linux-source-6.12 (~150 MB, once)"
(cd "$dl" && apt-get download -q linux-source-6.12 2>&1 |
	{ grep -v '^W: Download is performed unsandboxed' >&2 || true; }) ||
	{ log "retrying after apt-get update"; apt-get update -qq
	  (cd "$dl" && apt-get download -q linux-source-6.12 >&2); } ||
	die "apt-get download linux-source-6.12 failed"
deb=$(echo "$dl"/linux-source-6.12_*.deb)
[ -f "$deb" ] || die "linux-source-6.12 .deb not found after download"

log "extracting tools/testing/selftests/kselftest*.h"
# The .deb holds usr/src/linux-source-6.12.tar.xz; stream it, keep only the headers.
dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards './usr/src/linux-source-6.12.tar.xz' |
	tar -xJ -C "$dst" --strip-components=4 --wildcards '*/tools/testing/selftests/kselftest*.h'
[ -f "$dst/kselftest_harness.h" ] && [ -f "$dst/kselftest.h" ] ||
	die "kselftest headers not found in $deb"
basename "$deb" .deb > "$dst/.from"
rm -rf "$dl"
log "ready: $(cd "$dst" && echo kselftest*.h)"
