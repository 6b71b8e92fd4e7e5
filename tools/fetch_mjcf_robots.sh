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
#   DIR/mujoco_menagerie   MuJoCo Menagerie (github.com/google-deepmind/mujoco_menagerie), only
#                          robotiq_2f85/ (sparse, blobless): Robotiq 2F-85 gripper, two
#                          five-bar finger linkages closed by <connect>, a joint equality
#                          between the drivers, springs, armature, STL mesh geoms (the silicone
#                          pads take their inertia from their meshes).
set -euo pipefail
dir=${1:?usage: fetch_mjcf_robots.sh DIR}
mkdir -p "$dir"
fetch() {  # name url commit [folder...]: only those folders (sparse checkout) when given
  local name=$1 url=$2 commit=$3
  shift 3
  if [ -d "$dir/$name/.git" ]; then
    echo "$dir/$name: present"
    return
  fi
  git init -q "$dir/$name"
  if [ $# -gt 0 ]; then
    git -C "$dir/$name" sparse-checkout set "$@"
    git -C "$dir/$name" fetch -q --depth 1 --filter=blob:none "$url" "$commit"
  else
    git -C "$dir/$name" fetch -q --depth 1 "$url" "$commit"
  fi
  git -C "$dir/$name" checkout -q FETCH_HEAD
  echo "$dir/$name: $commit"
}
fetch cassie-mujoco-sim https://github.com/osudrl/cassie-mujoco-sim.git \
  188d3d7f04f0c4ed12db66bdec67884e1c0eb743
fetch mujoco_menagerie https://github.com/google-deepmind/mujoco_menagerie.git \
  9e9185d772df5812346ae4668def8117b354bbae robotiq_2f85
echo "export CLUSTERDYN_MJCF_ROBOTS_DIR=$(cd "$dir" && pwd)"
