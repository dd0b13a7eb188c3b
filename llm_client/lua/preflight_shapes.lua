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
-- One string, not a table: a script's text runs whole at every call, and a constant string
-- costs nothing to build (a table of 50 entries cost about 0.9 µs a call); a command is
-- found in it by a plain find (0.1 µs; a pattern scan of it took 1 µs).
local PREFLIGHT_TYPES = [[
  HSET=hash HSETNX=hash HMSET=hash HDEL=hash HINCRBY=hash HINCRBYFLOAT=hash
  ZADD=zset ZREM=zset ZINCRBY=zset ZREMRANGEBYSCORE=zset ZREMRANGEBYRANK=zset
  ZREMRANGEBYLEX=zset ZPOPMIN=zset ZPOPMAX=zset
  SADD=set SREM=set SPOP=set SMOVE=set
  RPUSH=list LPUSH=list RPUSHX=list LPUSHX=list RPOP=list LPOP=list LSET=list LTRIM=list
  LREM=list LINSERT=list LMOVE=list RPOPLPUSH=list
  INCR=string INCRBY=string INCRBYFLOAT=string DECR=string DECRBY=string APPEND=string
  SETRANGE=string SETBIT=string GETDEL=string GETSET=string PFADD=string
  XADD=stream XTRIM=stream XDEL=stream XACK=stream XGROUP=stream
]]

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

-- note that key ``k`` must hold ``kind`` (two kinds: 'two'), in first-seen order
local function preflight_need(need, order, k, kind)
  local had = need[k]
  if had == nil then order[#order + 1] = k; need[k] = kind
  elseif had ~= kind then need[k] = 'two' end  -- no value takes both
end

local function preflight_shapes(writes, legacy)
  local need, counter, order = {}, {}, {}
  for command, keys in pairs(writes) do
    local _, at = string.find(PREFLIGHT_TYPES, ' ' .. command .. '=', 1, true)  -- plain: fast
    local kind = at and string.match(PREFLIGHT_TYPES, '^%l+', at + 1)
    local incr = command == 'INCR'
    for _, entry in pairs(kind and keys or {}) do
      if type(entry) ~= 'table' then
        preflight_need(need, order, entry, kind)
        if incr then counter[entry] = true end
      elseif not rawequal(entry, KEYS) then  -- KEYS itself: every key, for the ACL
        for _, k in pairs(entry) do
          preflight_need(need, order, k, kind)
          if incr then counter[k] = true end
        end
      end
    end
  end
  for _, k in ipairs(order) do
    local kind = need[k]
    -- redis.call, not pcall (twice the cost): the scripts already read their keys' types
    -- (TYPE is @read, like every read the worker makes), so an ACL that denies it
    -- refuses the call here, before any write, like any other refusal
    local have = redis.call('TYPE', k).ok
    -- a key given for two roles of two types (a bug, or a name made to collide): the
    -- second write would meet the type the first made
    if kind == 'two' or (have ~= 'none' and have ~= kind
        and not (legacy and legacy[k] == have)) then
      error({err = 'WRONGTYPE Operation against a key holding the wrong kind of value'})
    end
    if counter[k] and have == 'string' then
      local bad = preflight_incrementable(redis.call('GET', k))
      if bad == 'overflow' then
        error({err = 'ERR increment or decrement would overflow'})
      elseif bad then
        error({err = 'ERR value is not an integer or out of range'})
      end
    end
  end
end
