#!/usr/bin/env bash
# The HAProxy config of a sharded fleet's router, for N shards of R replicas each, on stdout:
#
#   bash scripts/haproxy-shards.sh N R > haproxy-shards.cfg      # e.g. 8 3
#
# deploy/haproxy-shards.cfg is this script's output for 2 shards of 2 replicas (a test checks that it
# stays so: edit this script, then regenerate it). Only the shape (N, R) is written here; addresses,
# the partition count and the Lua's path come from the environment when HAProxy starts (the header
# of the output lists them), so moving a replica needs no new config.
set -euo pipefail

usage() { echo "usage: $0 SHARDS REPLICAS (whole numbers, 1 to 1024 shards, 1 to 64 replicas each)" >&2; exit 2; }
[ $# -eq 2 ] || usage
[[ $1 =~ ^[1-9][0-9]{0,3}$ && $2 =~ ^[1-9][0-9]?$ ]] || usage
n=$1
r=$2
[ "$n" -le 1024 ] && [ "$r" -le 64 ] || usage
last=$((n - 1))

cat <<EOF
# HAProxy in front of a sharded fleet (HAProxy 2.6, Debian 12's package, built with Lua 5.3): $n shards
# of $r replicas each. Written by scripts/haproxy-shards.sh $n $r (run it for another shape).
#
# A request for a project goes to the shard that holds it: deploy/shard-router.lua computes the shard
# from the project id the way the producer partitions events (kafkajs's murmur2 partitioner), so the
# router keeps no per-project state. Routes:
#   /v1/public/projects/{id} and everything under it (the change feed, /projects/{id}/runs/{run_group_id})
#                                 -> the shard of {id}
#   POST /mcp with params.arguments.project_id -> the shard of that project
#   /v1/public/runs/{run_group_id}[/results] (legacy: names no project) -> the first shard whose answer
#                                 to a HEAD of it, asked through the local-only listener below, is not a 404
#   anything else (GET /projects, the documents, MCP without a project) -> any replica of any shard:
#                                 every shard holds the catalog (accounts, keys, projects)
# Within a shard, replicas are checked on their ops port's /readyz and retried as in deploy/haproxy.cfg.
#
# Environment (HAProxy expands "\${VAR}" in quoted words; the Lua reads the SHARD_* ones once at start
# and refuses to start on a bad value):
#   HAPROXY_BIND                  the router's address, host:port, e.g. 0.0.0.0:8080
#   SHARD_LUA                     path of shard-router.lua, e.g. /etc/haproxy/shard-router.lua
#   SHARD_PARTITIONS              partitions of the events topic (the shards' /readyz says it)
#   SHARD_COUNT                   $n: the shards, backends shard0 .. shard$last
#   S<k>R<i>_API, S<k>R<i>_OPS    replica i (1 .. $r) of shard k (0 .. $last): its API address
#                                 (e.g. 10.0.0.11:8080) and its ops port (e.g. 9464)
# For example:
#   HAPROXY_BIND=0.0.0.0:8080 SHARD_LUA=/etc/haproxy/shard-router.lua SHARD_PARTITIONS=12 SHARD_COUNT=$n \\
#     S0R1_API=10.0.0.11:8080 S0R1_OPS=9464 ... haproxy -f haproxy-shards.cfg
# test/e2e/shard-router.test.ts runs this file (and its 3-shard sibling) on loopback.

global
    maxconn 4096
    # One Lua state per thread: the converter runs on every request, without a lock shared by threads.
    lua-load-per-thread "\${SHARD_LUA}"

defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 10s
    # A replica that died under a request: try again, on another replica of the shard (redispatch).
    retries 3
    option redispatch 1
    retry-on all-retryable-errors
    http-reuse safe
    # Long-lived change-feed streams (text/event-stream) must not be cut by the server timeout.
    timeout tunnel 1h
    # Checked every 250 ms: out after 2 failures, back after 2 successes.
    default-server inter 250ms fall 2 rise 2 observe layer4 error-limit 1 on-error mark-down

frontend api
    bind "\${HAPROXY_BIND}"
    acl project_path path_reg ^/v1/public/projects/[^/]+(/|\$)
    acl legacy_runs path_reg ^/v1/public/runs/[^/]+(/results)?\$
    acl mcp path /mcp
    # The project: from the path (decoded and lower-cased, as the service reads it), or from an MCP
    # tool call's arguments (the body is buffered for it; one past tune.bufsize, 16 kB by default, is
    # not looked into and goes to any shard).
    option http-buffer-request
    http-request set-var(txn.project) path,field(5,/),url_dec,lower if project_path
    http-request set-var(txn.project) req.body,json_query('\$.params.arguments.project_id'),lower if mcp METH_POST
    http-request lua.run_shard if legacy_runs
    use_backend %[var(txn.project),lua.shard] if { var(txn.project) -m found }
    use_backend %[var(txn.run_shard)] if { var(txn.run_shard) -m found }
    default_backend any

# How the legacy run-group action asks one shard: an abstract socket named after the public
# address (unique on the host, reachable from no other machine), the shard named by a header.
frontend shard_by_number
    bind "abns@shard-router-\${HAPROXY_BIND}"
    http-request deny deny_status 400 unless { req.hdr(x-shard-router-shard) -m reg ^[0-9]{1,4}\$ }
    use_backend shard%[req.hdr(x-shard-router-shard)]
EOF

for ((k = 0; k < n; k++)); do
  cat <<EOF

backend shard$k
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
EOF
  for ((i = 1; i <= r; i++)); do
    echo "    server s${k}r$i \"\${S${k}R${i}_API}\" check port \"\${S${k}R${i}_OPS}\""
  done
done

cat <<EOF

# Every replica of every shard, in the state its shard's checks give it: what names no project.
backend any
    balance roundrobin
EOF
for ((k = 0; k < n; k++)); do
  for ((i = 1; i <= r; i++)); do
    echo "    server s${k}r$i \"\${S${k}R${i}_API}\" track shard$k/s${k}r$i"
  done
done
