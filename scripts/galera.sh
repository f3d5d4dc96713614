#!/usr/bin/env bash
# A three-node MariaDB Galera cluster on loopback, for the Galera chaos run and for trying
# pvebill on Galera by hand (docs/operations.md, "pvebill on a MariaDB Galera cluster").
#
#   scripts/galera.sh up DIR       create DIR/node{1,2,3}, bootstrap node 1, join 2 and 3 by SST
#                                  (DIR's parents must be reachable by the mysql user)
#   scripts/galera.sh down DIR     SIGKILL every node and remove DIR
#   scripts/galera.sh kill DIR N   SIGKILL node N (1..3)
#   scripts/galera.sh start DIR N  start node N again: it rejoins (IST, or SST) and is waited for
#   scripts/galera.sh status DIR   each node's port, wsrep_ready, state and cluster size
#   scripts/galera.sh dsns         the three pvebill DSNs (root without a password)
#
# Needs mariadbd, the galera-4 provider, rsync (the SST method) and the mariadb client
# (apt-get install mariadb-server galera-4 rsync mariadb-client). Everything listens on
# 127.0.0.1 only: SQL on GALERA_SQL_PORT..+2 (13306), group communication on GALERA_GCOMM_PORT..+2
# (14567), IST on GALERA_IST_PORT..+2 (14667), SST on GALERA_SST_PORT..+2 (14767). The settings
# below are the ones docs/operations.md explains; the durability ones are relaxed for tests only.
set -euo pipefail

SQL_PORT=${GALERA_SQL_PORT:-13306}
GCOMM_PORT=${GALERA_GCOMM_PORT:-14567}
IST_PORT=${GALERA_IST_PORT:-14667}
SST_PORT=${GALERA_SST_PORT:-14767}
PROVIDER=${GALERA_PROVIDER:-}
MARIADBD=$(command -v mariadbd || command -v mysqld || echo /usr/sbin/mariadbd)
CLIENT=$(command -v mariadb || command -v mysql || echo mysql)
# The nodes run as mysql when that user exists: the rsync SST daemon, started by root, would
# drop to nobody and could not write a root-owned data directory.
RUN_AS=root
if id mysql >/dev/null 2>&1; then RUN_AS=mysql; fi

die() { echo "galera.sh: $*" >&2; exit 1; }

provider() {
  if [ -n "$PROVIDER" ]; then echo "$PROVIDER"; return; fi
  for p in /usr/lib/galera/libgalera_smm.so /usr/lib/libgalera_smm.so /usr/lib64/galera-4/libgalera_smm.so; do
    if [ -e "$p" ]; then echo "$p"; return; fi
  done
  die "no Galera provider (libgalera_smm.so): apt-get install galera-4"
}

gcomm_list() { echo "127.0.0.1:$GCOMM_PORT,127.0.0.1:$((GCOMM_PORT + 1)),127.0.0.1:$((GCOMM_PORT + 2))"; }

write_cnf() { # DIR N
  local d="$1/node$2" i=$(($2 - 1))
  mkdir -p "$d/data" "$d/tmp"
  cat >"$d/my.cnf" <<CNF
[mysqld]
user=$RUN_AS
datadir=$d/data
tmpdir=$d/tmp
socket=$d/mysqld.sock
pid-file=$d/mysqld.pid
log-error=$d/error.log
port=$((SQL_PORT + i))
bind-address=127.0.0.1
skip-name-resolve
character-set-server=utf8mb4
collation-server=utf8mb4_bin
# Galera replicates row events of InnoDB tables only.
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
# Test machine: small and not durable on the node itself (the cluster is the durability).
innodb_buffer_pool_size=64M
innodb_log_file_size=48M
innodb_flush_log_at_trx_commit=0
max_connections=400
wsrep_on=ON
wsrep_provider=$(provider)
wsrep_cluster_name=pvebill
wsrep_cluster_address=gcomm://$(gcomm_list)
wsrep_node_name=node$2
wsrep_node_address=127.0.0.1:$((GCOMM_PORT + i))
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$((GCOMM_PORT + i));ist.recv_addr=127.0.0.1:$((IST_PORT + i));gcache.size=128M;evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S;pc.wait_prim_timeout=PT10S"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$((SST_PORT + i))
wsrep_slave_threads=2
# Reads wait for the writes the node has already seen certified elsewhere (causal reads).
wsrep_sync_wait=1
CNF
}

sql() { # DIR N SQL
  "$CLIENT" --no-defaults -uroot -S "$1/node$2/mysqld.sock" -N -B -e "$3"
}

wsrep() { # DIR N VARIABLE
  sql "$1" "$2" "SHOW GLOBAL STATUS LIKE '$3'" 2>/dev/null | awk '{print $2}'
}

synced() { [ "$(wsrep "$1" "$2" wsrep_local_state_comment)" = Synced ] && [ "$(wsrep "$1" "$2" wsrep_ready)" = ON ]; }

pid_of() { cat "$1/node$2/mysqld.pid" 2>/dev/null || true; }

launch() { # DIR N [extra args]
  local d="$1/node$2"
  shift 2
  rm -f "$d/mysqld.pid"
  setsid "$MARIADBD" --defaults-file="$d/my.cnf" "$@" </dev/null >>"$d/stdout.log" 2>&1 &
}

wait_synced() { # DIR N SECONDS
  local i
  for i in $(seq 1 "$3"); do
    if synced "$1" "$2"; then return 0; fi
    sleep 1
  done
  tail -n 30 "$1/node$2/error.log" >&2 || true
  die "node $2 is not Synced after $3 s"
}

up() {
  local dir="$1"
  [ -x "$MARIADBD" ] || die "mariadbd is missing: apt-get install mariadb-server"
  command -v rsync >/dev/null || die "rsync is missing (the SST method): apt-get install rsync"
  mkdir -p "$dir"
  chmod 0755 "$dir" # the nodes' user must reach its data directory
  for n in 1 2 3; do write_cnf "$dir" "$n"; done
  chown -R "$RUN_AS" "$dir"/node*
  mariadb-install-db --no-defaults --user="$RUN_AS" --datadir="$dir/node1/data" --auth-root-authentication-method=normal \
    --skip-test-db >"$dir/node1/install.log" 2>&1 || { cat "$dir/node1/install.log" >&2; die "install-db failed"; }
  launch "$dir" 1 --wsrep-new-cluster
  wait_synced "$dir" 1 60
  # root over TCP without a password, as on the test MariaDB (loopback only).
  sql "$dir" 1 "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY ''; GRANT ALL ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;"
  for n in 2 3; do
    launch "$dir" "$n"
    wait_synced "$dir" "$n" 120
  done
  status "$dir"
}

kill_node() { # DIR N
  local pid
  pid=$(pid_of "$1" "$2")
  [ -n "$pid" ] || die "node $2 has no pid file"
  kill -KILL "$pid" 2>/dev/null || true
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  die "node $2 (pid $pid) did not die"
}

start_node() { # DIR N
  launch "$1" "$2"
  wait_synced "$1" "$2" "${GALERA_JOIN_TIMEOUT:-180}"
}

status() {
  local n
  for n in 1 2 3; do
    printf 'node%s 127.0.0.1:%s ready=%s state=%s size=%s\n' "$n" $((SQL_PORT + n - 1)) \
      "$(wsrep "$1" "$n" wsrep_ready)" "$(wsrep "$1" "$n" wsrep_local_state_comment)" "$(wsrep "$1" "$n" wsrep_cluster_size)"
  done
}

down() {
  local n pid
  for n in 1 2 3; do
    pid=$(pid_of "$1" "$n")
    if [ -n "$pid" ]; then kill -KILL "$pid" 2>/dev/null || true; fi
  done
  sleep 0.5
  case "$1" in /tmp/* | "${TMPDIR:-/tmp}"/*) rm -rf "$1" ;; *) echo "galera.sh: left $1 in place (not a temporary folder)" >&2 ;; esac
}

dsns() {
  local n
  for n in 0 1 2; do echo "root:@tcp(127.0.0.1:$((SQL_PORT + n)))/"; done
}

cmd=${1:-}
case "$cmd" in
  up) [ $# -eq 2 ] || die "usage: up DIR"; up "$2" ;;
  down) [ $# -eq 2 ] || die "usage: down DIR"; down "$2" ;;
  kill) [ $# -eq 3 ] || die "usage: kill DIR N"; kill_node "$2" "$3" ;;
  start) [ $# -eq 3 ] || die "usage: start DIR N"; start_node "$2" "$3" ;;
  status) [ $# -eq 2 ] || die "usage: status DIR"; status "$2" ;;
  dsns) dsns ;;
  *) die "usage: $0 up|down|kill|start|status DIR [N] | dsns" ;;
esac
