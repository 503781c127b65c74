#!/usr/bin/env bash
# README command 1: the console on the embedded simulation of e3-load-floor at 10x real time.
# Arguments go to kvscope (e.g. --scenario e2-cold-d, --replay run.kvrec, --connect HOST:PORT).
# Without a display it says so and prints the headless summary instead.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "kvscope: no display; showing the headless summary (for the window: xvfb-run -a scripts/run.sh," >&2
  echo "or build/bin/kvscope --screenshot shot.png --run-for 600 with QT_QPA_PLATFORM=offscreen)" >&2
  exec build/bin/kvscope-cli simulate --scenario e3-load-floor
fi
exec build/bin/kvscope "$@"
