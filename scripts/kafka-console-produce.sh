#!/usr/bin/env bash
# Produce an NDJSON file (one record per line) to the dev broker with Kafka's
# own console producer (kafka.tools.ConsoleProducer from kafka/target/lib) —
# an independent client for integration tests.
#
#   scripts/kafka-console-produce.sh [--keyed] [--async] TOPIC FILE [extra ConsoleProducer args...]
#
#   FILE      NDJSON file, or - for stdin. Blank lines are skipped.
#   --keyed   lines are `key<TAB>value`: adds
#               --property parse.key=true --property key.separator=<TAB>
#             (same as KAFKA_KEYED=1). Without it the whole line is the value, key = null.
#   --async   drop --sync (faster for big files, but a failed send is only
#             logged and the exit code is still 0)
#   extra args are passed through, e.g. --producer-property max.block.ms=5000
#
# Default is --sync (acks=all, idempotent): each record is acknowledged before the
# next is read, and the script exits non-zero on the first failed record.
# env: KAFKA_PORT (default 9092), KAFKA_RUN_DIR (default kafka/run: where the tools' log4j file goes)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIB="$ROOT/kafka/target/lib"
BOOTSTRAP="127.0.0.1:${KAFKA_PORT:-9092}"

usage() { sed -n '2,18p' "$0" >&2; exit 2; }

KEYED="${KAFKA_KEYED:-0}"
SYNC=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --keyed) KEYED=1; shift ;;
    --async) SYNC=0; shift ;;
    *) break ;;
  esac
done
[[ $# -ge 2 ]] || usage
TOPIC="$1"; FILE="$2"; shift 2
[[ "$FILE" == "-" || -r "$FILE" ]] || { echo "kafka-console-produce: cannot read $FILE" >&2; exit 1; }
[[ -f "$LIB/.complete" ]] || { echo "kafka-console-produce: no jars in kafka/target/lib; run npm run kafka:start first" >&2; exit 1; }

RUN="${KAFKA_RUN_DIR:-$ROOT/kafka/run}"
LOG4J="$RUN/tools-log4j.properties"
if [[ ! -f "$LOG4J" ]]; then
  mkdir -p "$RUN"
  printf '%s\n' 'log4j.rootLogger=WARN, stderr' \
    'log4j.appender.stderr=org.apache.log4j.ConsoleAppender' \
    'log4j.appender.stderr.Target=System.err' \
    'log4j.appender.stderr.layout=org.apache.log4j.PatternLayout' \
    'log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n' >"$LOG4J"
fi

ARGS=(--bootstrap-server "$BOOTSTRAP" --topic "$TOPIC"
      --producer-property acks=all --producer-property enable.idempotence=true)
# --timeout is linger.ms; 0 so --sync does not wait 1 s per record
[[ "$SYNC" == 1 ]] && ARGS+=(--sync --timeout 0)
if [[ "$KEYED" == 1 ]]; then
  ARGS+=(--property parse.key=true --property "key.separator=$(printf '\t')")
fi

[[ "$FILE" == "-" ]] && FILE=/dev/stdin
sed '/^[[:space:]]*$/d' "$FILE" |
  java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "-Dlog4j.configuration=file:$LOG4J" \
    -cp "$LIB/*" kafka.tools.ConsoleProducer "${ARGS[@]}" "$@"
