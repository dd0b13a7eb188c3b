-- preflight_shapes(writes, legacy): before a script's first write, refuse a key that holds a
-- value its declared writes cannot take, with the server's own reply, so that corrupt data is
-- met before anything is written instead of at the write that meets it. Each typed command
-- needs its key to be missing or of one type (PREFLIGHT_TYPES: HSET a hash, ZADD a zset,
-- RPUSH a list, SETRANGE/INCR a string…); a command that takes any type (SET, DEL, UNLINK,
-- EXPIRE, RENAME…) needs nothing. A key declared under INCR must also hold an integer INCR can
-- raise. ``legacy``: key -> one more type it may hold (a shape an older version wrote that
-- the script converts first). Part of ``preflight`` (preflight.lua); the entries that are
-- KEYS itself (every key of the call, declared for the ACL) imply no type. One key under
-- commands of two types is refused as WRONGTYPE (tests/storage/test_lua_preflight.py keeps
-- declarations free of it; at run time it means two roles were given the same key).
local PREFLIGHT_TYPES = {}
for _, c in ipairs({'HSET', 'HSETNX', 'HMSET', 'HDEL', 'HINCRBY', 'HINCRBYFLOAT'}) do
  PREFLIGHT_TYPES[c] = 'hash'
end
for _, c in ipairs({'ZADD', 'ZREM', 'ZINCRBY', 'ZREMRANGEBYSCORE', 'ZREMRANGEBYRANK',
    'ZREMRANGEBYLEX', 'ZPOPMIN', 'ZPOPMAX'}) do
  PREFLIGHT_TYPES[c] = 'zset'
end
for _, c in ipairs({'SADD', 'SREM', 'SPOP', 'SMOVE'}) do PREFLIGHT_TYPES[c] = 'set' end
for _, c in ipairs({'RPUSH', 'LPUSH', 'RPUSHX', 'LPUSHX', 'RPOP', 'LPOP', 'LSET', 'LTRIM',
    'LREM', 'LINSERT', 'LMOVE', 'RPOPLPUSH'}) do
  PREFLIGHT_TYPES[c] = 'list'
end
for _, c in ipairs({'INCR', 'INCRBY', 'INCRBYFLOAT', 'DECR', 'DECRBY', 'APPEND', 'SETRANGE',
    'SETBIT', 'GETDEL', 'GETSET', 'PFADD'}) do
  PREFLIGHT_TYPES[c] = 'string'
end
for _, c in ipairs({'XADD', 'XTRIM', 'XDEL', 'XACK', 'XGROUP'}) do PREFLIGHT_TYPES[c] = 'stream' end

-- Whether INCR can raise a string holding ``v``: Redis' integer syntax (string2ll: no sign on
-- zero, no leading zeros, no spaces) in 64 bits, below the top. Compared as text: a Lua
-- number cannot hold 2^63 - 1 exactly.
local function preflight_incrementable(v)
  local digits = v
  if string.sub(v, 1, 1) == '-' then digits = string.sub(v, 2) end
  if v ~= '0' and not string.find(digits, '^[1-9]%d*$') then return 'not_integer' end
  if #digits < 19 then return nil end
  if #digits > 19 then return 'not_integer' end
  local top = '9223372036854775807'
  if digits == v then
    if digits > top then return 'not_integer' end
    if digits == top then return 'overflow' end
  elseif digits > '9223372036854775808' then
    return 'not_integer'
  end
  return nil
end

local function preflight_shapes(writes, legacy)
  local need, counter, order = {}, {}, {}
  for command, keys in pairs(writes) do
    local kind = PREFLIGHT_TYPES[command]
    for _, entry in pairs(keys) do
      if kind and not rawequal(entry, KEYS) then  -- KEYS itself: every key, for the ACL
        local group = entry
        if type(entry) ~= 'table' then group = {entry} end
        for _, k in pairs(group) do
          if need[k] == nil then order[#order + 1] = k; need[k] = kind
          elseif need[k] ~= kind then need[k] = 'two' end  -- no value takes both
          if command == 'INCR' then counter[k] = true end
        end
      end
    end
  end
  table.sort(order)  -- the same key refused first whatever the table's order
  for _, k in ipairs(order) do
    local kind = need[k]
    local have = redis.pcall('TYPE', k)  -- an ACL that denies TYPE: the key goes unchecked
    -- a key given for two roles of two types (a bug, or a name made to collide): the
    -- second write would meet the type the first made
    if kind == 'two' or (have.ok and have.ok ~= 'none' and have.ok ~= kind
        and not (legacy and legacy[k] == have.ok)) then
      error({err = 'WRONGTYPE Operation against a key holding the wrong kind of value'})
    end
  end
  for _, k in ipairs(order) do
    if counter[k] then
      local v = redis.pcall('GET', k)
      local bad = type(v) == 'string' and preflight_incrementable(v)
      if bad == 'overflow' then
        error({err = 'ERR increment or decrement would overflow'})
      elseif bad then
        error({err = 'ERR value is not an integer or out of range'})
      end
    end
  end
end
