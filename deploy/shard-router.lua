-- The router of a sharded fleet (docs/scale-out.md): which shard holds a project, computed the way the
-- producer partitions it, so the router keeps no per-project state. HAProxy 2.6, Lua 5.3.
--
-- A project's partition is kafkajs's default partitioner: Java-compatible murmur2 (seed 0x9747b28c)
-- of the id's UTF-8 bytes, (h & 0x7fffffff) % SHARD_PARTITIONS; its shard is partition % SHARD_COUNT
-- (src/lib/partition.ts is the service's copy; test/e2e/shard-router.test.ts checks both against
-- kafkajs). Environment, read once at load:
--   SHARD_PARTITIONS  partitions of the events topic (what the shards' /readyz says)
--   SHARD_COUNT       N, the shards; backends shard0 .. shard<N-1> must exist
--   HAPROXY_BIND      the router's own address: legacy run-group paths ask each shard through it

local function whole(name, min)
  local raw = os.getenv(name)
  local n = tonumber(raw or "")
  if n == nil or n ~= math.floor(n) or n < min then
    error(string.format("%s must be an integer of at least %d, got %q", name, min, tostring(raw)))
  end
  return math.tointeger(n)
end

local PARTITIONS = whole("SHARD_PARTITIONS", 1)
local SHARDS = whole("SHARD_COUNT", 1)
if SHARDS > PARTITIONS then error(string.format("SHARD_COUNT %d is more than SHARD_PARTITIONS %d", SHARDS, PARTITIONS)) end

local M = 0x5bd1e995
local MASK = 0xffffffff

-- Lua 5.3 integers are 64-bit: every product is cut back to 32 bits, so >> is Java's >>>.
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
  return "shard" .. shard_of(id)
end)

-- Legacy /v1/public/runs/{id}[/results] names no project: ask each shard in turn, through this
-- router with the shard forced (X-Visibility-Shard), and answer the first answer that is not a 404
-- (every shard's 404 when none holds the group). The project-scoped paths
-- /projects/{project_id}/runs/{id} cost one request; these cost up to N.
local self_bind = os.getenv("HAPROXY_BIND") or ""
local self_host, self_port = self_bind:match("^(.*):(%d+)$")
if self_host == nil then error("HAPROXY_BIND must be host:port, got " .. self_bind) end
if self_host == "" or self_host == "0.0.0.0" or self_host == "*" then self_host = "127.0.0.1" end
if self_host == "::" or self_host == "[::]" then self_host = "[::1]" end
local SELF = "http://" .. self_host .. ":" .. self_port

local PASSED = { "x-api-key", "authorization", "accept", "if-none-match", "cache-control", "x-request-id" }
local DROPPED = { ["content-length"] = true, ["transfer-encoding"] = true, ["connection"] = true, ["keep-alive"] = true }

core.register_service("runs_any_shard", "http", function(applet)
  local headers = {}
  for _, name in ipairs(PASSED) do
    local v = applet.headers[name]
    if v ~= nil then headers[name] = { v[0] } end
  end
  local url = SELF .. applet.path .. (applet.qs ~= "" and ("?" .. applet.qs) or "")
  local answer = nil
  for k = 0, SHARDS - 1 do
    headers["x-visibility-shard"] = { tostring(k) }
    local hc = core.httpclient()
    local res = applet.method == "HEAD" and hc:head{ url = url, headers = headers } or hc:get{ url = url, headers = headers }
    if res ~= nil and res.status ~= nil and res.status ~= 0 then
      answer = res
      if res.status ~= 404 then break end
    end
  end
  if answer == nil then
    local body = '{"error":true,"message":"Service unavailable"}'
    applet:set_status(503)
    applet:add_header("content-type", "application/json; charset=utf-8")
    applet:add_header("content-length", tostring(#body))
    applet:start_response()
    applet:send(body)
    return
  end
  applet:set_status(answer.status)
  local head = applet.method == "HEAD"
  for name, values in pairs(answer.headers or {}) do
    -- A HEAD keeps the shard's Content-Length (the GET's); a GET's is set below, from the body.
    if not DROPPED[name] or (head and name == "content-length") then
      for _, v in pairs(values) do applet:add_header(name, v) end
    end
  end
  local body = answer.body or ""
  if not head then applet:add_header("content-length", tostring(#body)) end
  applet:start_response()
  if not head then applet:send(body) end
end)
