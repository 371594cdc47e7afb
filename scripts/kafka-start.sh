#!/usr/bin/env bash
# Start a single-node Apache Kafka 3.9 broker (KRaft, no ZooKeeper, no Docker)
# for development and integration tests. Idempotent: exits 0 if it is already up.
#
#   npm run kafka:start            # or: bash scripts/kafka-start.sh
#   bash scripts/kafka-start.sh --fetch-only   # only fetch the jars (CI, before the tests)
#
# env: KAFKA_PORT (default 9092), KAFKA_CONTROLLER_PORT (default KAFKA_PORT+1),
#      KAFKA_START_TIMEOUT seconds (default 90), KAFKA_HEAP_OPTS (default -Xmx512m -Xms256m),
#      KAFKA_RUN_DIR (default kafka/run): a broker of its own in another directory (tests),
#      KAFKA_OWNER_PID: the broker is killed (SIGKILL) as soon as that process is gone, and a
#        run dir holding a file named .ephemeral is then removed (tests: no JVM outlives them).
# files: jars in kafka/target/lib (fetched by Maven on first use),
#        everything else in the run dir (config, data, server.log, kafka.pid).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="${KAFKA_RUN_DIR:-$ROOT/kafka/run}"
[[ "$RUN" == /* ]] || RUN="$PWD/$RUN" # relative to where the caller stands, before the cd
OWNER="${KAFKA_OWNER_PID:-}"
[[ -z "$OWNER" || "$OWNER" =~ ^[1-9][0-9]*$ ]] || { echo "kafka-start: KAFKA_OWNER_PID must be a pid, got: $OWNER" >&2; exit 2; }
cd "$ROOT"

PORT="${KAFKA_PORT:-9092}"
CPORT="${KAFKA_CONTROLLER_PORT:-$((PORT + 1))}"
TIMEOUT="${KAFKA_START_TIMEOUT:-90}"
HEAP="${KAFKA_HEAP_OPTS:--Xmx512m -Xms256m}"
LIB="$ROOT/kafka/target/lib"
DATA="$RUN/data"
PROPS="$RUN/server.properties"
PIDFILE="$RUN/kafka.pid"
LOG="$RUN/server.log"
CP="$LIB/*"
TOOL_JVM=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "-Dlog4j.configuration=file:$RUN/tools-log4j.properties")

log() { echo "kafka-start: $*"; }
die() { echo "kafka-start: $*" >&2; exit 1; }

port_open() { timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# pid is alive AND is our broker (guards against a recycled pid)
our_pid_alive() {
  local pid="$1"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'kafka\.Kafka'
}

metadata_ok() { # $1 = seconds this attempt may take
  timeout "$1" java "${TOOL_JVM[@]}" -cp "$CP" org.apache.kafka.tools.TopicCommand \
    --bootstrap-server "127.0.0.1:$PORT" --list >/dev/null 2>&1
}

FETCH_ONLY=0
case "${1:-}" in
  "") ;;
  --fetch-only) FETCH_ONLY=1 ;;
  *) die "unknown argument: $1 (usage: kafka-start.sh [--fetch-only])" ;;
esac

command -v java >/dev/null || die "java not found on PATH (need Java 17+)"

# ---------------------------------------------------------------- 1. jars
fetch_jars() {
  command -v mvn >/dev/null || die "mvn not found on PATH and $LIB is empty"
  MVN=(mvn -B -q -Dstyle.color=never -f kafka/pom.xml
       org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies)
  log "fetching Kafka jars into kafka/target/lib (Maven)..."
  # offline first: repeatable without network once ~/.m2 holds everything
  if ! "${MVN[@]}" -o >kafka/target/mvn.log 2>&1; then
    "${MVN[@]}" >kafka/target/mvn.log 2>&1 ||
      { tail -n 40 kafka/target/mvn.log >&2; die "maven dependency fetch failed (kafka/target/mvn.log)"; }
  fi
  ls "$LIB"/kafka_2.13-*.jar >/dev/null 2>&1 || die "maven ran but no kafka jar in $LIB"
  touch "$LIB/.complete"
}
if [[ ! -f "$LIB/.complete" ]]; then
  mkdir -p kafka/target
  # Several brokers may start at once (test files in parallel): one fetch, the others wait for it.
  exec 9>kafka/target/.fetch.lock
  flock -w 600 9 || die "waited 600 s for another fetch of the Kafka jars (kafka/target/.fetch.lock)"
  [[ -f "$LIB/.complete" ]] || fetch_jars
  exec 9>&-
fi
[[ "$FETCH_ONLY" == 1 ]] && { log "jars ready in kafka/target/lib"; exit 0; }

mkdir -p "$RUN"

# ------------------------------------------------------ 2. already running?
PID=""
[[ -f "$PIDFILE" ]] && PID="$(cat "$PIDFILE" 2>/dev/null || true)"
ALREADY=0
if our_pid_alive "$PID"; then
  ALREADY=1
else
  [[ -n "$PID" ]] && log "removing stale pid file (pid $PID not running)"
  rm -f "$PIDFILE"
  PID=""
  if port_open "$PORT"; then
    die "port 127.0.0.1:$PORT is already in use by a process not started by this script (no live $PIDFILE); stop it or set KAFKA_PORT"
  fi
fi

if [[ "$ALREADY" == 1 ]]; then
  log "broker already running (pid $PID), checking it answers..."
else
  # ------------------------------------------------------ 3. config files
  sed -e "s#^listeners=.*#listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CPORT#" \
      -e "s#^advertised\.listeners=.*#advertised.listeners=PLAINTEXT://127.0.0.1:$PORT#" \
      -e "s#^controller\.quorum\.voters=.*#controller.quorum.voters=1@127.0.0.1:$CPORT#" \
      -e "s#^log\.dirs=.*#log.dirs=$DATA#" \
      kafka/server.properties >"$PROPS"

  cat >"$RUN/log4j.properties" <<EOL
log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.RollingFileAppender
log4j.appender.file.File=$LOG
log4j.appender.file.MaxFileSize=20MB
log4j.appender.file.MaxBackupIndex=2
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.request.logger=WARN
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.state.change.logger=WARN
EOL
  cat >"$RUN/tools-log4j.properties" <<'EOL'
log4j.rootLogger=WARN, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
EOL

  # ------------------------------------------- 4. format KRaft storage once
  if [[ ! -f "$DATA/meta.properties" ]]; then
    if [[ ! -s "$RUN/cluster.id" ]]; then
      java "${TOOL_JVM[@]}" -cp "$CP" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -n1 >"$RUN/cluster.id"
    fi
    CLUSTER_ID="$(cat "$RUN/cluster.id")"
    [[ -n "$CLUSTER_ID" ]] || die "could not generate a cluster id"
    log "formatting $DATA (cluster id $CLUSTER_ID)"
    java "${TOOL_JVM[@]}" -cp "$CP" kafka.tools.StorageTool format \
      -t "$CLUSTER_ID" -c "$PROPS" --ignore-formatted >"$RUN/format.log" 2>&1 ||
      { cat "$RUN/format.log" >&2; die "storage format failed"; }
  fi

  # ------------------------------------------------------------ 5. launch
  if [[ -n "$OWNER" ]] && ! kill -0 "$OWNER" 2>/dev/null; then die "owner pid $OWNER is gone; not starting"; fi
  # shellcheck disable=SC2086
  setsid java $HEAP -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true \
    "-Dlog4j.configuration=file:$RUN/log4j.properties" \
    -cp "$CP" kafka.Kafka "$PROPS" </dev/null >"$RUN/kafka.out" 2>&1 &
  PID=$!
  echo "$PID" >"$PIDFILE"
  if [[ -n "$OWNER" ]]; then
    # Watchdog, in a session of its own so that nothing aimed at the owner's process group ends it:
    # polls both once a second, ends with the broker; if the owner goes first, kills the broker.
    # shellcheck disable=SC2016
    setsid bash -c '
      while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done
      if ! kill -0 "$1" 2>/dev/null; then
        tr "\0" " " <"/proc/$2/cmdline" 2>/dev/null | grep -q "kafka\.Kafka" && kill -KILL "$2" 2>/dev/null
        [[ -f "$3/.ephemeral" ]] && { while kill -0 "$2" 2>/dev/null; do sleep 0.2; done; rm -rf "$3"; }
      fi' kafka-owner-watchdog "$OWNER" "$PID" "$RUN" </dev/null >/dev/null 2>&1 &
  fi
  log "started broker pid $PID, waiting for 127.0.0.1:$PORT (timeout ${TIMEOUT}s)..."
fi

# --------------------------------------------------- 6. poll for readiness
fail() {
  echo "kafka-start: $1" >&2
  echo "---- tail of $LOG ----" >&2
  tail -n 40 "$LOG" >&2 2>/dev/null || true
  if [[ -s "$RUN/kafka.out" ]]; then
    echo "---- tail of $RUN/kafka.out ----" >&2
    tail -n 20 "$RUN/kafka.out" >&2
  fi
  exit 1
}

START=$SECONDS
remaining() { local r=$((TIMEOUT - (SECONDS - START))); (( r < 1 )) && r=1; (( r > 20 )) && r=20; echo "$r"; }
until port_open "$PORT" && metadata_ok "$(remaining)"; do
  our_pid_alive "$PID" || { rm -f "$PIDFILE"; fail "broker process $PID exited before becoming ready"; }
  (( SECONDS - START >= TIMEOUT )) && fail "broker pid $PID not ready on 127.0.0.1:$PORT after ${TIMEOUT}s (it is left running; npm run kafka:stop to stop it, with the same KAFKA_RUN_DIR)"
  sleep 0.5
done

if [[ "$ALREADY" == 1 ]]; then
  echo "kafka already running: ready on 127.0.0.1:$PORT (pid $PID)"
else
  echo "kafka ready on 127.0.0.1:$PORT (pid $PID) in $((SECONDS - START))s"
fi
