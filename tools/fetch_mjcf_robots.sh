#!/usr/bin/env bash
# Fetches the public MJCF robots with closed loops that the optional tests compare with MuJoCo
# (python/tests/test_mjcf_public_robots.py, tests/test_mjcf_public_robots.cpp; docs/mjcf.md).
# They are third-party files: never copied into this project. Usage:
#   bash tools/fetch_mjcf_robots.sh DIR
#   export CLUSTERDYN_MJCF_ROBOTS_DIR=DIR
# Robots (shallow git clones, pinned commits):
#   DIR/cassie-mujoco-sim  Agility Robotics Cassie, Oregon State University Dynamic Robotics
#                          Laboratory (github.com/osudrl/cassie-mujoco-sim): four <connect>
#                          loops (two plantar-rod four-bars of hinges, two achilles rods on ball
#                          joints), mesh geoms with explicit inertials.
set -euo pipefail
dir=${1:?usage: fetch_mjcf_robots.sh DIR}
mkdir -p "$dir"
fetch() {  # name url commit
  local name=$1 url=$2 commit=$3
  if [ -d "$dir/$name/.git" ]; then
    echo "$dir/$name: present"
    return
  fi
  git init -q "$dir/$name"
  git -C "$dir/$name" fetch -q --depth 1 "$url" "$commit"
  git -C "$dir/$name" checkout -q FETCH_HEAD
  echo "$dir/$name: $commit"
}
fetch cassie-mujoco-sim https://github.com/osudrl/cassie-mujoco-sim.git \
  188d3d7f04f0c4ed12db66bdec67884e1c0eb743
echo "export CLUSTERDYN_MJCF_ROBOTS_DIR=$(cd "$dir" && pwd)"
