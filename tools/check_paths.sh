#!/usr/bin/env bash
# Fails when a tracked file names an absolute folder of one machine (a top-level work, root or
# home folder): the product names files relative to the checkout (../shared/...) or by what they
# are. Part of the format stage of tools/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
if git ls-files -z | grep -zv '^tools/check_paths\.sh$' |
    xargs -0 grep -nIE '(^|[^A-Za-z0-9_.~])/(work|root|home)/' -- 2>/dev/null; then
  echo "== paths: FAILED: the lines above name folders of one machine (use ../shared/... or a" \
       "relative path)" >&2
  exit 1
fi
echo "== paths: ok (no machine-specific absolute paths in tracked files)"
