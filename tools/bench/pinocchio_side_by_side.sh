#!/usr/bin/env bash
# Tree ABA, RNEA and CRBA of clusterdyn and Pinocchio 3.7, side by side: ROUNDS interleaved
# rounds (default 5) of Pinocchio's reference bench and `clusterdyn bench`, then the median of
# the rounds per algorithm and the ratio clusterdyn / Pinocchio.
#
#   PIN_REF_BENCH=/path/to/pinocchio-ref-bench CLUSTERDYN_CLI=build-dev/tools/clusterdyn \
#     bash tools/bench/pinocchio_side_by_side.sh MODEL.urdf...
#
# pinocchio-ref-bench is built outside the project tree by ../shared/refs/build-pinocchio.sh; it
# prints, per URDF, the faster of its generic and -march=native builds.
set -euo pipefail
PIN=${PIN_REF_BENCH:-/work/refs/bench/pinocchio-ref-bench}
CLI=${CLUSTERDYN_CLI:-build-dev/tools/clusterdyn}
ROUNDS=${ROUNDS:-5}
[ $# -ge 1 ] || { echo "usage: $0 MODEL.urdf..." >&2; exit 2; }
[ -x "$PIN" ] || { echo "$0: no Pinocchio bench at $PIN (set PIN_REF_BENCH)" >&2; exit 2; }
[ -x "$CLI" ] || { echo "$0: no clusterdyn CLI at $CLI (set CLUSTERDYN_CLI)" >&2; exit 2; }
raw=$(mktemp)
trap 'rm -f "$raw"' EXIT
for ((r = 0; r < ROUNDS; ++r)); do
  "$PIN" "$@" | grep -v '^#' | sed 's/^/pin /' >>"$raw"
  for m in "$@"; do
    "$CLI" bench "$m" --calls 20000 --json 2>/dev/null | python3 -c "
import json, sys
d = json.load(sys.stdin)['median_ns']
print('cd', '$(basename "$m")', ' '.join(f'{k}={d[k]:.0f}' for k in ('aba', 'rnea', 'crba')))" >>"$raw"
  done
done
python3 - "$raw" "$@" <<'PY'
import collections, os, statistics, sys
v = collections.defaultdict(list)
for line in open(sys.argv[1]):
    who, model, *kvs = line.split()
    for kv in kvs:
        k, _, x = kv.partition('=')
        if k in ('aba', 'rnea', 'crba'):
            v[(who, model, k)].append(float(x))
print('| model | CRBA | ABA | RNEA |')
print('|---|---|---|---|')
for path in sys.argv[2:]:
    m = os.path.basename(path)
    cells = []
    for k in ('crba', 'aba', 'rnea'):
        a, b = statistics.median(v[('cd', m, k)]), statistics.median(v[('pin', m, k)])
        cells.append(f'{a:.0f} / {b:.0f} = {a / b:.2f}')
    print(f'| {m} | ' + ' | '.join(cells) + ' |')
PY
