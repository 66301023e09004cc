#!/usr/bin/env bash
# A real single-node Apache Kafka broker (KRaft, broker+controller in one JVM) for ragpulse's tests
# and local runs, built from Maven Central jars so no tarball download or Docker is needed.
#
#   scripts/kafka.sh fetch   put the broker's jars in the cache (once; prints the lib folder)
#   scripts/kafka.sh start   format fresh storage, start on free 127.0.0.1 ports, wait until it serves
#                            requests; prints the bootstrap address
#   scripts/kafka.sh stop    SIGTERM the broker started here, SIGKILL after a grace period
#   scripts/kafka.sh restart start again on the same ports and data (after a crash, kill -9 or stop):
#                            what survives a broker crash is exactly what clients see afterwards
#   scripts/kafka.sh env     prints `export RAGPULSE_KAFKA_BOOTSTRAP=127.0.0.1:PORT`
#
# Environment (all optional):
#   KAFKA_HOME                      an unpacked Kafka release: its libs/ is used, nothing is fetched
#   RAGPULSE_KAFKA_VERSION          versions to try, in order (default "4.3.1 4.1.2")
#   RAGPULSE_CACHE                  cache root (default ~/.cache/ragpulse); jars in kafka-<version>/lib
#   RAGPULSE_KAFKA_STATE            pid/port files, data and broker.log (default /tmp/ragpulse-kafka)
#   RAGPULSE_KAFKA_START_TIMEOUT    seconds to wait for the broker to serve requests (default 120)
#   RAGPULSE_KAFKA_STOP_GRACE       seconds between SIGTERM and SIGKILL (default 20)
#   RAGPULSE_KAFKA_WATCH_PID        stop the broker once this process is gone (the test session's pid)
#   KAFKA_HEAP_OPTS                 JVM heap (default "-Xms256m -Xmx512m")
#   PYTHON                          interpreter with kafka-python, for the readiness check (python3)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SCRIPT_PATH="$SCRIPT_DIR/$(basename "${BASH_SOURCE[0]}")"
FILES_DIR="$SCRIPT_DIR/kafka"
KAFKA_VERSIONS="${RAGPULSE_KAFKA_VERSION:-4.3.1 4.1.2}"
CACHE_ROOT="${RAGPULSE_CACHE:-$HOME/.cache/ragpulse}"
STATE_DIR="${RAGPULSE_KAFKA_STATE:-/tmp/ragpulse-kafka}"
START_TIMEOUT="${RAGPULSE_KAFKA_START_TIMEOUT:-120}"
STOP_GRACE="${RAGPULSE_KAFKA_STOP_GRACE:-20}"
HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
PYTHON="${PYTHON:-python3}"
LOG4J_CONFIG="$FILES_DIR/log4j2.properties"
BIND_RETRIES=3

PID_FILE="$STATE_DIR/broker.pid"
PORT_FILE="$STATE_DIR/broker.port"
PROPS_FILE="$STATE_DIR/server.properties"
BROKER_LOG="$STATE_DIR/broker.log"
DATA_DIR="$STATE_DIR/data"

say() { echo "kafka.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }
now() { echo "$EPOCHREALTIME"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# Which jars run the broker: an existing install, or the first cached version in preference order.
has_kafka_jars() { compgen -G "$1/kafka_2.13-*.jar" >/dev/null; }

cached_lib_dir() {
  local version
  for version in $KAFKA_VERSIONS; do
    if has_kafka_jars "$CACHE_ROOT/kafka-$version/lib"; then
      echo "$CACHE_ROOT/kafka-$version/lib"
      return 0
    fi
  done
  return 1
}

require_maven() {
  command -v mvn >/dev/null || die "Maven (mvn) is needed to fetch Kafka from Maven Central \
(Debian: apt-get install maven), or set KAFKA_HOME to an unpacked Kafka release"
}

# Copy one version's runtime classpath into the cache; the rename makes a half-done copy invisible.
fetch_version() {
  local version="$1" target="$CACHE_ROOT/kafka-$1/lib" partial
  partial="$CACHE_ROOT/kafka-$version/lib.partial.$$"
  mkdir -p "$CACHE_ROOT/kafka-$version"
  rm -rf "$partial"
  if ! mvn -B -q -f "$FILES_DIR/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -Dkafka.version="$version" -DoutputDirectory="$partial" \
      >"$CACHE_ROOT/kafka-$version/mvn.log" 2>&1; then
    rm -rf "$partial"
    return 1
  fi
  # Another fetch may have won the race; its copy is as good as ours.
  mv -T "$partial" "$target" 2>/dev/null || rm -rf "$partial"
  has_kafka_jars "$target"
}

cmd_fetch() {
  local lib_dir version started
  if [[ -n "${KAFKA_HOME:-}" ]]; then
    has_kafka_jars "$KAFKA_HOME/libs" || die "KAFKA_HOME=$KAFKA_HOME has no libs/kafka_2.13-*.jar"
    echo "$KAFKA_HOME/libs"
    return 0
  fi
  if lib_dir="$(cached_lib_dir)"; then
    echo "$lib_dir"
    return 0
  fi
  require_maven
  for version in $KAFKA_VERSIONS; do
    say "fetching Apache Kafka $version from Maven Central into $CACHE_ROOT/kafka-$version/lib"
    started="$(now)"
    if fetch_version "$version"; then
      say "fetched Kafka $version in $(since "$started")s"
      echo "$CACHE_ROOT/kafka-$version/lib"
      return 0
    fi
    say "could not fetch Kafka $version (last lines of $CACHE_ROOT/kafka-$version/mvn.log):"
    tail -n 15 "$CACHE_ROOT/kafka-$version/mvn.log" >&2 || true
  done
  die "no Kafka version among [$KAFKA_VERSIONS] could be fetched"
}

require_java() {
  command -v java >/dev/null || die "java is not on PATH; Kafka 4 needs Java 17+ \
(Debian: apt-get install openjdk-17-jre-headless)"
  local major
  major="$(java -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')"
  [[ "${major%%.*}" =~ ^[0-9]+$ && "${major%%.*}" -ge 17 ]] || die "Kafka 4 needs Java 17+, found '$major'"
}

# The pid file names our broker only while that pid still runs kafka.Kafka on our properties file:
# a stale file whose pid was reused by another process must never get a signal.
broker_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid cmdline
  pid="$(<"$PID_FILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  cmdline="$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")" || return 1
  [[ "$cmdline" == *kafka.Kafka*"$PROPS_FILE"* ]] || return 1
  echo "$pid"
}

# Two distinct free loopback ports (broker, controller), held open together so they differ.
free_ports() {
  "$PYTHON" - <<'EOF'
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

# URL-safe base64 of 16 random bytes without padding, never starting with '-' (StorageTool's rule).
cluster_id() {
  "$PYTHON" -c '
import base64, uuid
while (cid := base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()).startswith("-"):
    pass
print(cid)'
}

render_properties() {
  local port="$1" controller_port="$2"
  sed -e "s|@PORT@|$port|g" -e "s|@CONTROLLER_PORT@|$controller_port|g" -e "s|@DATA_DIR@|$DATA_DIR|g" \
    "$FILES_DIR/server.properties.template" >"$PROPS_FILE"
}

# JVM options shared by StorageTool and the broker; an array, so the caller can background `java`
# itself and $! is the JVM's pid rather than a subshell's.
java_args() {
  local lib_dir="$1"
  # shellcheck disable=SC2206  # HEAP_OPTS holds several JVM flags.
  JAVA_ARGS=($HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -Djava.awt.headless=true
    -Dlog4j2.configurationFile="$LOG4J_CONFIG" -Dkafka.logs.dir="$STATE_DIR/logs" -cp "$lib_dir/*")
}

format_storage() {
  rm -rf "$DATA_DIR"
  java "${JAVA_ARGS[@]}" kafka.tools.StorageTool format -t "$(cluster_id)" -c "$PROPS_FILE" --standalone \
    >"$STATE_DIR/format.log" 2>&1 || { cat "$STATE_DIR/format.log" >&2; die "formatting KRaft storage failed"; }
}

# A real admin round trip: the log line alone does not prove the listener answers metadata requests.
admin_ready() {
  local bootstrap="$1" timeout="$2"
  "$PYTHON" - "$bootstrap" "$timeout" <<'EOF'
import sys
import time

try:
    from kafka import KafkaAdminClient
except ImportError:
    sys.exit(f"kafka-python is not installed for {sys.executable} (pip install 'kafka-python>=3.0')")

bootstrap, deadline = sys.argv[1], time.monotonic() + float(sys.argv[2])
while True:
    try:
        admin = KafkaAdminClient(
            bootstrap_servers=bootstrap, client_id="ragpulse-kafka-sh",
            request_timeout_ms=5000, bootstrap_timeout_ms=5000,
        )
        try:
            admin.list_topics()
        finally:
            admin.close()
        sys.exit(0)
    except Exception as exc:
        if time.monotonic() >= deadline:
            sys.exit(f"admin client could not list topics on {bootstrap}: {exc!r}")
        time.sleep(0.2)
EOF
}

fail_start() {
  say "error: $1"
  if [[ -f "$BROKER_LOG" ]]; then
    say "last lines of $BROKER_LOG:"
    tail -n 40 "$BROKER_LOG" >&2
  fi
  cmd_stop >/dev/null 2>&1 || true
  exit 1
}

# Whether the process launched as `pid` still runs (a zombie does not). Not `broker_pid`: just after
# `java ... &` the child is still the forking shell, whose cmdline is not java's yet; read as "exited",
# that moment made a loaded machine report a start-up failure with an empty broker log.
launched_alive() {
  local state
  state="$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\) .*/\1/p' "/proc/$1/stat" 2>/dev/null)" || return 1
  [[ -n "$state" && "$state" != Z && "$state" != X ]]
}

# Returns 0 once ready, 2 when the broker died because a port was taken meanwhile (worth a retry).
wait_until_ready() {
  local bootstrap="$1" pid="$2" deadline=$((SECONDS + START_TIMEOUT))
  until grep -q "Kafka Server started" "$BROKER_LOG" 2>/dev/null; do
    if ! launched_alive "$pid"; then  # not kill -0: the dead JVM stays our unreaped zombie
      grep -q "Address already in use" "$BROKER_LOG" && return 2
      fail_start "the broker exited during start-up"
    fi
    ((SECONDS < deadline)) || fail_start "the broker did not log 'Kafka Server started' within ${START_TIMEOUT}s"
    sleep 0.2
  done
  admin_ready "$bootstrap" "$((deadline - SECONDS > 5 ? deadline - SECONDS : 5))" \
    || fail_start "the broker logged 'Kafka Server started' but did not answer an admin request"
}

# Stops the broker when the watched process (a test session) is gone, even if it never ran `stop`.
start_watchdog() {
  local watched="$1" pid="$2"
  # shellcheck disable=SC2016  # the inner script expands its own positional arguments.
  RAGPULSE_KAFKA_STATE="$STATE_DIR" nohup bash -c '
    while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 2; done
    kill -0 "$2" 2>/dev/null && exec bash "$3" stop' ragpulse-kafka-watchdog "$watched" "$pid" "$SCRIPT_PATH" \
    >"$STATE_DIR/watchdog.log" 2>&1 </dev/null &
}

cmd_start() {
  local pid lib_dir ports port controller_port attempt started status
  if pid="$(broker_pid)" && [[ -f "$PORT_FILE" ]]; then
    say "a broker is already running (pid $pid, state $STATE_DIR)"
    echo "127.0.0.1:$(<"$PORT_FILE")"
    return 0
  fi
  require_java
  lib_dir="$(cmd_fetch)"
  java_args "$lib_dir"
  mkdir -p "$STATE_DIR"
  rm -f "$PID_FILE" "$PORT_FILE"
  for ((attempt = 1; attempt <= BIND_RETRIES; attempt++)); do
    started="$(now)"
    ports="$(free_ports)"
    port="${ports% *}"
    controller_port="${ports#* }"
    render_properties "$port" "$controller_port"
    format_storage
    say "formatted KRaft storage in $(since "$started")s"
    java "${JAVA_ARGS[@]}" kafka.Kafka "$PROPS_FILE" >"$BROKER_LOG" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$PID_FILE"
    status=0
    wait_until_ready "127.0.0.1:$port" "$pid" || status=$?
    if ((status == 0)); then
      echo "$port" >"$PORT_FILE"
      [[ -n "${RAGPULSE_KAFKA_WATCH_PID:-}" ]] && start_watchdog "$RAGPULSE_KAFKA_WATCH_PID" "$pid"
      say "Kafka ($(basename "$(dirname "$lib_dir")")) ready on 127.0.0.1:$port in $(since "$started")s" \
        "(pid $pid, log $BROKER_LOG)"
      echo "127.0.0.1:$port"
      return 0
    fi
    say "port $port or $controller_port was taken meanwhile; retrying with new ports"
  done
  fail_start "could not bind free ports after $BIND_RETRIES attempts"
}

cmd_stop() {
  local pid deadline
  if ! pid="$(broker_pid)"; then
    rm -f "$PID_FILE" "$PORT_FILE"
    say "no broker running (state $STATE_DIR)"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$((SECONDS + STOP_GRACE))
  # broker_pid, not kill -0: an unreaped (zombie) broker has no command line and is already gone.
  while broker_pid >/dev/null && ((SECONDS < deadline)); do sleep 0.2; done
  if broker_pid >/dev/null; then
    say "broker (pid $pid) still running ${STOP_GRACE}s after SIGTERM; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$PID_FILE" "$PORT_FILE"
  say "stopped broker (pid $pid)"
}

cmd_restart() {
  local pid lib_dir port started
  if pid="$(broker_pid)"; then
    die "a broker is still running (pid $pid); stop or kill it first"
  fi
  [[ -f "$PROPS_FILE" && -d "$DATA_DIR" ]] || die "nothing to restart in $STATE_DIR; run: scripts/kafka.sh start"
  require_java
  lib_dir="$(cmd_fetch)"
  java_args "$lib_dir"
  port="$(sed -n 's|^listeners=PLAINTEXT://127.0.0.1:\([0-9]*\),.*|\1|p' "$PROPS_FILE")"
  started="$(now)"
  java "${JAVA_ARGS[@]}" kafka.Kafka "$PROPS_FILE" >"$BROKER_LOG" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PID_FILE"
  wait_until_ready "127.0.0.1:$port" "$pid" || fail_start "port $port was taken while the broker was down"
  echo "$port" >"$PORT_FILE"
  [[ -n "${RAGPULSE_KAFKA_WATCH_PID:-}" ]] && start_watchdog "$RAGPULSE_KAFKA_WATCH_PID" "$pid"
  say "Kafka restarted on 127.0.0.1:$port in $(since "$started")s (pid $pid, data kept)"
  echo "127.0.0.1:$port"
}

cmd_env() {
  if ! broker_pid >/dev/null || [[ ! -f "$PORT_FILE" ]]; then
    die "no broker running (state $STATE_DIR); run: scripts/kafka.sh start"
  fi
  echo "export RAGPULSE_KAFKA_BOOTSTRAP=127.0.0.1:$(<"$PORT_FILE")"
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  restart) cmd_restart ;;
  env) cmd_env ;;
  *) echo "usage: $0 {fetch|start|stop|restart|env}" >&2; exit 2 ;;
esac
