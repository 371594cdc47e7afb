-- The router of a sharded fleet (deploy/haproxy-shards.cfg, docs/scale-out.md): which shard holds a
-- project, computed the way the producer partitions it, so the router keeps no per-project state.
-- HAProxy 2.6, Lua 5.3.
--
-- A project's partition is kafkajs's default partitioner: Java-compatible murmur2 (seed 0x9747b28c)
-- of the id's UTF-8 bytes, (h & 0x7fffffff) % SHARD_PARTITIONS; its shard is partition % SHARD_COUNT.
-- src/lib/partition.ts is the service's copy; test/e2e/shard-router.test.ts checks this one against
-- kafkajs's own partitioner. Environment, read once at load (a bad value stops HAProxy's start):
--   SHARD_PARTITIONS  partitions of the events topic (what the shards' /readyz says)
--   SHARD_COUNT       N, the shards: backends shard0 .. shard<N-1> must exist, and no shard<N>
--   HAPROXY_BIND      the router's own address: the name of its local-only listener for shards

local function whole(name, min, max)
  local raw = os.getenv(name)
  local n = raw ~= nil and raw:match("^%s*(%d+)%s*$") and math.tointeger(tonumber(raw)) or nil
  if n == nil or n < min or n > max then
    error(string.format("shard-router: %s must be a whole number from %d to %d, got %s", name, min, max,
      raw == nil and "nothing (unset)" or string.format("%q", raw)), 0)
  end
  return n
end

local PARTITIONS = whole("SHARD_PARTITIONS", 1, 1000000)
local SHARDS = whole("SHARD_COUNT", 1, 1024)
if SHARDS > PARTITIONS then
  error(string.format("shard-router: SHARD_COUNT %d is more than SHARD_PARTITIONS %d (a shard would hold no partition)", SHARDS, PARTITIONS), 0)
end

local M = 0x5bd1e995
local MASK = 0xffffffff

-- Lua 5.3 integers are 64-bit: every product is cut back to 32 bits, so >> on them is Java's >>>.
local function murmur2(key)
  local length = #key
  local h = (0x9747b28c ~ length) & MASK
  local whole4 = length - length % 4
  for i = 1, whole4, 4 do
    local b1, b2, b3, b4 = string.byte(key, i, i + 3)
    local k = b1 | (b2 << 8) | (b3 << 16) | (b4 << 24)
    k = (k * M) & MASK
    k = k ~ (k >> 24)
    k = (k * M) & MASK
    h = ((h * M) & MASK) ~ k
  end
  -- The last 1-3 bytes (Kafka's switch falls through from case 3 to case 1).
  local tail = length % 4
  if tail > 0 then
    if tail == 3 then h = h ~ (string.byte(key, whole4 + 3) << 16) end
    if tail >= 2 then h = h ~ (string.byte(key, whole4 + 2) << 8) end
    h = h ~ string.byte(key, whole4 + 1)
    h = (h * M) & MASK
  end
  h = h ~ (h >> 13)
  h = (h * M) & MASK
  h = h ~ (h >> 15)
  return h
end

local function shard_of(id)
  return ((murmur2(id) & 0x7fffffff) % PARTITIONS) % SHARDS
end

-- use_backend %[var(txn.project),lua.shard]: the backend of the project's shard.
core.register_converters("shard", function(id)
  return "shard" .. shard_of(tostring(id))
end)

-- The config and SHARD_COUNT must agree, or some projects would have no backend (or one never used).
core.register_init(function()
  for k = 0, SHARDS - 1 do
    if core.backends["shard" .. k] == nil then
      error(string.format("shard-router: SHARD_COUNT is %d but the config has no backend shard%d", SHARDS, k), 0)
    end
  end
  if core.backends["shard" .. SHARDS] ~= nil then
    error(string.format("shard-router: SHARD_COUNT is %d but the config has a backend shard%d: more shards than that", SHARDS, SHARDS), 0)
  end
end)

-- Legacy /v1/public/runs/{id}[/results] names no project. This action finds its shard: it asks
-- each shard in turn, with a HEAD of the same path and the client's headers, through the router's
-- local-only listener (frontend shard_by_number), and names the first shard whose answer is not a 404
-- in txn.run_shard; the request itself is then proxied to that shard as any other, so its answer
-- (status, headers, body of any size, a 304) reaches the client untouched. No shard but 404s: none
-- is named, and any shard answers its own 404. (Debian's HAProxy 2.6 cuts long bodies that Lua's
-- httpclient reads, so no body is ever read here.) The project-scoped paths
-- /projects/{project_id}/runs/{id} cost one request; these cost up to N more HEADs.
local bind = os.getenv("HAPROXY_BIND")
if bind == nil or bind == "" then error("shard-router: HAPROXY_BIND must be set (the router's host:port)", 0) end
local SHARD_LISTENER = "abns@shard-router-" .. bind
-- What the service sees over a hop of its own: everything the client sent but the hop's own headers.
local HOP = { connection = true, ["keep-alive"] = true, ["proxy-connection"] = true, te = true, trailer = true,
  ["transfer-encoding"] = true, upgrade = true, ["content-length"] = true, ["x-shard-router-shard"] = true }
local TIMEOUT_MS = 30000 -- as `timeout server`

core.register_action("run_shard", { "http-req" }, function(txn)
  local headers = {}
  for name, values in pairs(txn.http:req_get_headers()) do
    if not HOP[name] then
      local list = {}
      for i = 0, #values do list[#list + 1] = values[i] end
      headers[name] = list
    end
  end
  local url = "http://shard-router" .. txn.sf:path() .. (txn.sf:query() and ("?" .. txn.sf:query()) or "")
  for k = 0, SHARDS - 1 do
    headers["x-shard-router-shard"] = { tostring(k) }
    local res = core.httpclient():head{ url = url, dst = SHARD_LISTENER, headers = headers, timeout = TIMEOUT_MS }
    -- Anything but a 404 (a 200, a 304, the key's 401, a shard with no replica up, a failed hop)
    -- sends the request to this shard: the client gets the shard's own answer to it.
    if res == nil or res.status ~= 404 then
      txn:set_var("txn.run_shard", "shard" .. k)
      return
    end
  end
end)
