#!/bin/bash
# Peak RSS of `serve` catching up on a topic from its first offset (docs/benchmarks.md, "Ingestion").
# usage: bash bench/kafka/kafka-rss.sh LOG.ndjson   (after `npm run build` and `npm run kafka:start`)
# Produces LOG to a fresh topic on 127.0.0.1:9092, starts serve on a fresh SQLite file with that
# topic, samples VmRSS every 200 ms until every offset is committed (source_positions), then
# stops serve with SIGTERM and deletes its file. Prints one line: events, seconds, peak RSS.
set -euo pipefail
log=${1:?usage: bash bench/kafka/kafka-rss.sh LOG.ndjson}
root=$(cd "$(dirname "$0")/../.." && pwd)
cli="$root/bin/visibility-api.js"
events=$(grep -c . "$log")
topic=rss-$(date +%s)-$RANDOM
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
node "$cli" produce --brokers 127.0.0.1:9092 --topic "$topic" --quiet "$log" >/dev/null
KAFKA_BROKERS=127.0.0.1:9092 KAFKA_TOPICS=$topic KAFKA_GROUP_ID=$topic KAFKA_DLQ_TOPIC='' KAFKA_LOG_LEVEL=warn MAX_READY_LAG=0 \
  node "$cli" serve --db "$dir/s.db" --host 127.0.0.1 --port 0 --ops-host 127.0.0.1 --ops-port 0 >"$dir/log" 2>&1 &
pid=$!
start=$(date +%s.%N)
peak=0
deadline=$((SECONDS + 600))
while :; do
  rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status" 2>/dev/null || true)
  if [ -z "$rss" ]; then echo "serve exited early:" >&2; tail -3 "$dir/log" >&2; exit 1; fi
  [ "$rss" -gt "$peak" ] && peak=$rss
  done_=$(cd "$root" && node -e "try { const db = new (require('better-sqlite3'))(process.argv[1], { readonly: true, timeout: 1000 }); console.log(db.prepare('SELECT coalesce(sum(position), 0) FROM source_positions').pluck().get()) } catch { console.log(0) }" "$dir/s.db" 2>/dev/null || echo 0)
  [ "${done_:-0}" -ge "$events" ] && break
  if [ $SECONDS -gt $deadline ]; then echo "not caught up within 600 s" >&2; kill -KILL $pid; exit 1; fi
  sleep 0.2
done
seconds=$(echo "$(date +%s.%N) - $start" | bc)
kill -TERM $pid
wait $pid || true
bash "$root/scripts/kafka-topics.sh" delete "$topic" >/dev/null 2>&1 || true
printf '%s: %d events caught up in %.1f s, peak RSS %d MB\n' "$(basename "$log")" "$events" "$seconds" $((peak / 1024))
