#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo on a bundled robot.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_TARGETS="clusterdyn_demo" bash tools/setup.sh
exec build/tools/clusterdyn_demo "${@:-models/cd_quadruped.urdf}"
