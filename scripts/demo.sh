#!/usr/bin/env bash
# Quick start, step 1: installs what is missing (as root), builds, runs the demo.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
veda_install_deps
veda_configure "$VEDA_ROOT/build" "${VEDA_CUDA:-AUTO}"
veda_build "$VEDA_ROOT/build" --target quickstart
"$VEDA_ROOT/build/examples/quickstart"
