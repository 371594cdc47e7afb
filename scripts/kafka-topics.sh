#!/usr/bin/env bash
# Manage topics on the dev broker with Kafka's own TopicCommand
# (org.apache.kafka.tools.TopicCommand from kafka/target/lib).
#
#   scripts/kafka-topics.sh create NAME [PARTITIONS]   # default 3, replication 1, no-op if it exists
#   scripts/kafka-topics.sh delete NAME                # no-op if missing
#   scripts/kafka-topics.sh list
#   scripts/kafka-topics.sh describe [NAME]
#
# env: KAFKA_PORT (default 9092), KAFKA_RUN_DIR (default kafka/run: where the tools' log4j file goes)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LIB="$ROOT/kafka/target/lib"
BOOTSTRAP="127.0.0.1:${KAFKA_PORT:-9092}"

usage() { sed -n '2,9p' "$0" >&2; exit 2; }
[[ -f "$LIB/.complete" ]] || { echo "kafka-topics: no jars in kafka/target/lib; run npm run kafka:start first" >&2; exit 1; }

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

topics() {
  java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "-Dlog4j.configuration=file:$LOG4J" \
    -cp "$LIB/*" org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" "$@"
}

cmd="${1:-}"; shift || true
case "$cmd" in
  create)
    [[ $# -ge 1 && $# -le 2 ]] || usage
    topics --create --if-not-exists --topic "$1" --partitions "${2:-3}" --replication-factor 1 ;;
  delete)
    [[ $# -eq 1 ]] || usage
    topics --delete --if-exists --topic "$1" ;;
  list)
    topics --list ;;
  describe)
    if [[ $# -ge 1 ]]; then topics --describe --topic "$1"; else topics --describe; fi ;;
  *) usage ;;
esac
