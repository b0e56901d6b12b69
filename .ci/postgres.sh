#!/usr/bin/env bash
# Throwaway PostgreSQL (with pgvector) for CI and local test runs.
#
#   .ci/postgres.sh start   -> prints postgresql://postgres@127.0.0.1:<port>/memory_plugin_test
#   .ci/postgres.sh stop    -> stops the server and removes its temp dirs (idempotent)
#   .ci/postgres.sh pgbouncer URL       -> starts Debian's PgBouncer in transaction mode in
#                                          front of the server of URL, prints URL through it
#   .ci/postgres.sh pgbouncer-stop URL  -> stops the PgBouncer that URL reaches
#
# Binaries come from the `pgserver` wheel installed in the active python (PostgreSQL 16 +
# pgvector), else from Debian packages (postgresql-<major>-pgvector; Debian 13+ has it).
# The server listens only on 127.0.0.1, trust auth, superuser `postgres`. As root it runs
# as the unprivileged system user $PG_CI_USER (default memplug-pg), created if missing.
#
# Environment: PGPORT_CI (first port to try, default 54329), PYTHON (interpreter that has
# pgserver; default `python`, else `python3`), PG_CI_USER, PG_CI_SOURCE (auto|pgserver|apt),
# PGBOUNCER_PORT_CI (first port to try for PgBouncer, default 64329).
# All logs go to stderr; `start` prints exactly one line (the URL) on stdout.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
STATE_DIR="$SCRIPT_DIR/pg"
STATE_FILE="$STATE_DIR/state"
DB_NAME="memory_plugin_test"
RUN_USER="${PG_CI_USER:-memplug-pg}"
SOURCE="${PG_CI_SOURCE:-auto}"

# Keep client/server behaviour independent of the caller's libpq settings and locale.
unset PGHOST PGHOSTADDR PGPORT PGDATABASE PGUSER PGSERVICE PGOPTIONS PGDATA PGPASSWORD
export LC_ALL=C

log() { printf '[postgres.sh] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

is_root() { [ "$(id -u)" -eq 0 ]; }

# Run a command as the server's system user (as ourselves when not root).
as_pg() {
    if is_root; then
        (cd "$WORK" && runuser -u "$RUN_USER" -- "$@")
    else
        (cd "$WORK" && "$@")
    fi
}

ensure_user() {
    is_root || return 0
    if ! id -u "$RUN_USER" >/dev/null 2>&1; then
        log "creating system user $RUN_USER"
        useradd --system --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin "$RUN_USER" >&2
    fi
}

# Prints the pgserver wheel's pginstall dir, or nothing. Tries $PYTHON, else `python` and
# `python3`. Uses find_spec so pgserver's import-time side effects (lock files) never run.
pgserver_pginstall() {
    local py out
    for py in ${PYTHON:-python python3}; do
        command -v "$py" >/dev/null 2>&1 || continue
        out="$("$py" - <<'EOF' 2>/dev/null || true
import importlib.util, pathlib
spec = importlib.util.find_spec("pgserver")
if spec is not None and spec.origin:
    p = pathlib.Path(spec.origin).parent / "pginstall"
    if (p / "bin" / "postgres").is_file():
        print(p)
EOF
)"
        if [ -n "$out" ]; then echo "$out"; return 0; fi
    done
}

# Prints the bin dir of an installed Debian PostgreSQL that has pgvector, or nothing.
debian_bin() {
    local d major
    for d in $(ls -d /usr/lib/postgresql/[0-9]* 2>/dev/null | sort -t/ -k5 -n -r); do
        major="${d##*/}"
        if [ -x "$d/bin/postgres" ] && [ -x "$d/bin/initdb" ] \
            && [ -f "/usr/share/postgresql/$major/extension/vector.control" ]; then
            echo "$d/bin"
            return 0
        fi
    done
}

apt_install_pgvector() {
    is_root || die "no PostgreSQL with pgvector found, and not root so cannot apt-get install one"
    command -v apt-get >/dev/null 2>&1 || die "no PostgreSQL with pgvector found and no apt-get (not Debian?)"
    log "pgserver wheel not available; installing Debian postgresql + pgvector with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2 || die "apt-get update failed"
    local major
    major="$(apt-cache depends postgresql 2>/dev/null \
        | sed -n 's/^ *Depends: postgresql-\([0-9][0-9]*\)$/\1/p' | head -n1)"
    [ -n "$major" ] || die "cannot determine the PostgreSQL major version offered by apt (package 'postgresql')"
    if [ -z "$(apt-cache show "postgresql-$major-pgvector" 2>/dev/null | head -n1)" ]; then
        local rel
        rel="$(. /etc/os-release 2>/dev/null && echo "${PRETTY_NAME:-unknown}")"
        die "apt has no postgresql-$major-pgvector package on $rel (Debian 12 lacks it; Debian 13+ has it). Install the 'pgserver' wheel (pip install pgserver; needs CPython <= 3.12 on x86_64/arm64 Linux) or use an image with pgvector."
    fi
    # Do not let the package create/start its default cluster on 5432.
    if [ ! -e /etc/postgresql-common/createcluster.conf ]; then
        mkdir -p /etc/postgresql-common
        echo "create_main_cluster = false" > /etc/postgresql-common/createcluster.conf
    fi
    apt-get install -y --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
        "postgresql-$major" "postgresql-client-$major" "postgresql-$major-pgvector" >&2 \
        || die "apt-get install postgresql-$major-pgvector failed"
}

# Sets BIN (and WORK-local copy when needed). WORK must exist.
find_binaries() {
    local pginstall=""
    if [ "$SOURCE" != "apt" ]; then
        pginstall="$(pgserver_pginstall)"
    fi
    if [ -n "$pginstall" ] && "$pginstall/bin/initdb" --version >/dev/null 2>&1; then
        if is_root; then
            # The wheel may sit under dirs the server user cannot read (/root/...): copy it,
            # keeping the layout its RPATH ($ORIGIN/../../../pgserver.libs) expects.
            log "copying pgserver binaries from $pginstall"
            mkdir -p "$WORK/pgserver"
            cp -a "$pginstall" "$WORK/pgserver/pginstall"
            local libs
            libs="$(dirname "$(dirname "$pginstall")")/pgserver.libs"
            if [ -d "$libs" ]; then cp -a "$libs" "$WORK/pgserver.libs"; fi
            chmod -R a+rX "$WORK/pgserver" "$WORK/pgserver.libs" 2>/dev/null || true
            BIN="$WORK/pgserver/pginstall/bin"
            "$BIN/initdb" --version >/dev/null 2>&1 || die "copied pgserver binaries do not run from $BIN"
        else
            BIN="$pginstall/bin"
        fi
        return 0
    fi
    [ "$SOURCE" != "pgserver" ] || die "PG_CI_SOURCE=pgserver but no python (\$PYTHON, python, python3) can import pgserver"
    BIN="$(debian_bin)"
    if [ -z "$BIN" ]; then
        apt_install_pgvector
        BIN="$(debian_bin)"
    fi
    [ -n "$BIN" ] || die "no PostgreSQL with pgvector found after apt-get install"
}

# True if pid is a live (non-zombie) process.
alive() {
    kill -0 "$1" 2>/dev/null || return 1
    local st
    st="$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null || true)"
    [ "$st" != "Z" ]
}

port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") >/dev/null 2>&1
}

read_state() {
    # Sets S_<KEY> variables from the state file; returns 1 if there is none.
    [ -f "$STATE_FILE" ] || return 1
    local k v
    while IFS='=' read -r k v; do
        case "$k" in
            WORK|PGDATA|BIN|PORT|USER|LOG) printf -v "S_$k" '%s' "$v" ;;
        esac
    done < "$STATE_FILE"
    return 0
}

cmd_stop() {
    local S_WORK="" S_PGDATA="" S_BIN="" S_PORT="" S_USER="" S_LOG=""
    if ! read_state; then
        log "not running (no $STATE_FILE)"
        return 0
    fi
    WORK="${S_WORK:-/}"
    RUN_USER="${S_USER:-$RUN_USER}"
    local pid=""
    if [ -n "$S_PGDATA" ] && [ -f "$S_PGDATA/postmaster.pid" ]; then
        pid="$(head -n1 "$S_PGDATA/postmaster.pid" 2>/dev/null || true)"
    fi
    if [ -n "$pid" ] && alive "$pid" && [ -x "$S_BIN/pg_ctl" ]; then
        log "stopping PostgreSQL (pid $pid, port $S_PORT)"
        if ! as_pg "$S_BIN/pg_ctl" -D "$S_PGDATA" -m fast -w -t 60 stop >&2; then
            log "fast stop failed; trying immediate"
            as_pg "$S_BIN/pg_ctl" -D "$S_PGDATA" -m immediate -w -t 30 stop >&2 || true
        fi
        local i
        for i in $(seq 1 50); do
            alive "$pid" || break
            sleep 0.1
        done
        if alive "$pid"; then
            log "postmaster $pid still alive; killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    else
        log "server not running"
    fi
    case "$S_WORK" in
        /tmp/memplug-pg.*) rm -rf -- "$S_WORK" ;;
        "") ;;
        *) log "not removing unexpected work dir '$S_WORK'" ;;
    esac
    rm -f -- "$STATE_FILE"
    log "stopped"
}

cmd_start() {
    local t0=$SECONDS
    if [ -f "$STATE_FILE" ]; then
        log "found state from a previous start; stopping it first"
        cmd_stop
    fi
    ensure_user
    WORK="$(mktemp -d /tmp/memplug-pg.XXXXXX)"
    chmod 755 "$WORK"
    # Remove the temp dir if start fails part-way.
    trap 'rc=$?; if [ $rc -ne 0 ]; then [ -f "$STATE_FILE" ] && cmd_stop || rm -rf -- "$WORK"; fi' EXIT

    BIN=""
    find_binaries
    log "using $("$BIN/postgres" --version) from $BIN"

    local pgdata="$WORK/data" sock="$WORK/sock" logf="$WORK/postgres.log"
    mkdir -p "$sock" "$pgdata"
    chmod 700 "$pgdata"
    touch "$logf"
    if is_root; then chown "$RUN_USER:" "$sock" "$pgdata" "$logf"; fi

    log "initdb $pgdata"
    as_pg "$BIN/initdb" -D "$pgdata" -U postgres -A trust -E UTF8 --locale=C --no-sync >/dev/null 2>"$WORK/initdb.err" \
        || { cat "$WORK/initdb.err" >&2; die "initdb failed"; }

    local port="${PGPORT_CI:-54329}" tries=0 started=0
    [[ "$port" =~ ^[0-9]+$ ]] || die "PGPORT_CI must be a number, got '$port'"
    while [ $tries -lt 50 ]; do
        tries=$((tries + 1))
        if port_in_use "$port"; then
            log "port $port is taken; trying $((port + 1))"
            port=$((port + 1))
            continue
        fi
        : > "$logf"
        if as_pg "$BIN/pg_ctl" -D "$pgdata" -l "$logf" -w -t 60 \
            -o "-c listen_addresses=127.0.0.1 -p $port -k $sock -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
            start >&2; then
            started=1
            break
        fi
        if grep -q -e 'could not bind' -e 'Address already in use' "$logf"; then
            log "port $port could not be bound; trying $((port + 1))"
            port=$((port + 1))
            continue
        fi
        cat "$logf" >&2
        die "pg_ctl start failed (log above)"
    done
    [ $started -eq 1 ] || die "no free port found starting at ${PGPORT_CI:-54329}"

    mkdir -p "$STATE_DIR"
    {
        echo "WORK=$WORK"
        echo "PGDATA=$pgdata"
        echo "BIN=$BIN"
        echo "PORT=$port"
        echo "USER=$RUN_USER"
        echo "LOG=$logf"
    } > "$STATE_FILE"

    local i ready=0
    for i in $(seq 1 100); do
        if "$BIN/pg_isready" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres; then
            ready=1
            break
        fi
        sleep 0.2
    done
    [ $ready -eq 1 ] || { cat "$logf" >&2; die "server on port $port never became ready"; }

    local psql=("$BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres)
    "${psql[@]}" -d postgres -c "CREATE DATABASE $DB_NAME" >&2 || die "CREATE DATABASE $DB_NAME failed"
    "${psql[@]}" -d "$DB_NAME" -c "CREATE EXTENSION IF NOT EXISTS vector" >&2 \
        || die "CREATE EXTENSION vector failed: pgvector is not available in $BIN"
    local ver
    ver="$("${psql[@]}" -d "$DB_NAME" -At -c "SELECT extversion FROM pg_extension WHERE extname = 'vector'")"
    log "ready on 127.0.0.1:$port (pgvector $ver) in $((SECONDS - t0))s; stop with: .ci/postgres.sh stop"
    trap - EXIT
    echo "postgresql://postgres@127.0.0.1:$port/$DB_NAME"
}

# PgBouncer (Debian's package, 1.18 on Debian 12) in transaction mode, the pooler the plugin
# must work behind: a temp dir named by its port, trust auth like the server's.
cmd_pgbouncer() {
    local url="${1:-}"
    [[ "$url" =~ ^postgresql://([^@/]+)@([^:/]+):([0-9]+)/([^?]+) ]] \
        || die "usage: $0 pgbouncer postgresql://user@host:port/db (got '$url')"
    local user="${BASH_REMATCH[1]}" host="${BASH_REMATCH[2]}" server_port="${BASH_REMATCH[3]}"
    local db="${BASH_REMATCH[4]}" bouncer
    bouncer="$(command -v pgbouncer || ls /usr/sbin/pgbouncer 2>/dev/null || true)"
    [ -n "$bouncer" ] || die "pgbouncer is not installed (Debian: apt-get install pgbouncer)"
    ensure_user
    local port="${PGBOUNCER_PORT_CI:-64329}" tries=0
    [[ "$port" =~ ^[0-9]+$ ]] || die "PGBOUNCER_PORT_CI must be a number, got '$port'"
    while port_in_use "$port" || [ -e "/tmp/memplug-pgb.$port" ]; do
        tries=$((tries + 1))
        [ $tries -lt 50 ] || die "no free port for PgBouncer from ${PGBOUNCER_PORT_CI:-64329}"
        port=$((port + 1))
    done
    WORK="/tmp/memplug-pgb.$port"
    mkdir -p "$WORK"
    {
        echo "[databases]"
        echo "* = host=$host port=$server_port"
        echo "[pgbouncer]"
        echo "listen_addr = 127.0.0.1"
        echo "listen_port = $port"
        echo "unix_socket_dir ="
        echo "auth_type = trust"
        echo "auth_file = $WORK/userlist.txt"
        echo "pool_mode = transaction"
        echo "max_client_conn = 1000"
        echo "default_pool_size = 20"
        echo "logfile = $WORK/pgbouncer.log"
        echo "pidfile = $WORK/pgbouncer.pid"
    } > "$WORK/pgbouncer.ini"
    printf '"%s" ""\n' "$user" > "$WORK/userlist.txt"
    if is_root; then chown -R "$RUN_USER:" "$WORK"; fi
    as_pg "$bouncer" -d "$WORK/pgbouncer.ini" >&2 \
        || { cat "$WORK/pgbouncer.log" >&2; die "pgbouncer did not start"; }
    local i
    for i in $(seq 1 100); do
        port_in_use "$port" && break
        sleep 0.1
    done
    port_in_use "$port" || { cat "$WORK/pgbouncer.log" >&2; die "pgbouncer never listened on $port"; }
    log "$("$bouncer" --version | head -n1), transaction mode, 127.0.0.1:$port -> $host:$server_port"
    echo "postgresql://$user@127.0.0.1:$port/$db"
}

cmd_pgbouncer_stop() {
    local url="${1:-}"
    [[ "$url" =~ ^postgresql://[^@/]+@127\.0\.0\.1:([0-9]+)/ ]] \
        || die "usage: $0 pgbouncer-stop URL (the URL 'pgbouncer' printed; got '$url')"
    local dir="/tmp/memplug-pgb.${BASH_REMATCH[1]}" pid="" i
    [ -d "$dir" ] || { log "no PgBouncer at $dir"; return 0; }
    pid="$(cat "$dir/pgbouncer.pid" 2>/dev/null || true)"
    if [ -n "$pid" ] && alive "$pid"; then
        kill -TERM "$pid" 2>/dev/null || true
        for i in $(seq 1 50); do
            alive "$pid" || break
            sleep 0.1
        done
        if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    fi
    rm -rf -- "$dir"
    log "PgBouncer on port ${BASH_REMATCH[1]} stopped"
}

case "${1:-}" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    pgbouncer) cmd_pgbouncer "${2:-}" ;;
    pgbouncer-stop) cmd_pgbouncer_stop "${2:-}" ;;
    *) echo "usage: $0 start|stop|pgbouncer URL|pgbouncer-stop URL" >&2; exit 2 ;;
esac
