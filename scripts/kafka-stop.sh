#!/usr/bin/env bash
# Stop the dev Kafka broker started by scripts/kafka-start.sh.
#
#   npm run kafka:stop                 # or: bash scripts/kafka-stop.sh [--wipe]
#
# SIGTERM (clean shutdown), poll up to 30 s, then SIGKILL. Exit 0 if nothing
# was running. --wipe also deletes the run dir (data, logs, generated config).
# env: KAFKA_RUN_DIR (default kafka/run, as for kafka-start.sh), KAFKA_STOP_TIMEOUT (30)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="${KAFKA_RUN_DIR:-$ROOT/kafka/run}"
[[ "$RUN" == /* ]] || RUN="$PWD/$RUN"
PIDFILE="$RUN/kafka.pid"
GRACE="${KAFKA_STOP_TIMEOUT:-30}"

WIPE=0
for arg in "$@"; do
  case "$arg" in
    --wipe) WIPE=1 ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) echo "kafka-stop: unknown argument: $arg (usage: kafka-stop.sh [--wipe])" >&2; exit 2 ;;
  esac
done

our_pid_alive() {
  local pid="$1"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'
}

PID=""
[[ -f "$PIDFILE" ]] && PID="$(cat "$PIDFILE" 2>/dev/null || true)"

if our_pid_alive "$PID"; then
  echo "kafka-stop: stopping broker pid $PID (SIGTERM)..."
  kill -TERM "$PID" 2>/dev/null || true
  START=$SECONDS
  while our_pid_alive "$PID" && (( SECONDS - START < GRACE )); do sleep 0.25; done
  if our_pid_alive "$PID"; then
    echo "kafka-stop: still alive after ${GRACE}s, sending SIGKILL"
    kill -KILL "$PID" 2>/dev/null || true
    while kill -0 "$PID" 2>/dev/null; do sleep 0.1; done
  fi
  echo "kafka-stop: stopped (pid $PID) in $((SECONDS - START))s"
else
  echo "kafka-stop: no broker running${PID:+ (stale pid $PID)}"
fi
rm -f "$PIDFILE"

if [[ "$WIPE" == 1 ]]; then
  rm -rf "$RUN"
  echo "kafka-stop: wiped $RUN"
fi
