-- preflight(writes): before a script's first write, ask the server whether this user may run
-- every write the script may make, so an ACL that denies one (a command, or a key for a
-- command through a selector) refuses the whole call with nothing written, never a half-made
-- change. ``writes``: command -> {key, ...}; an entry may be a table of keys (KEYS itself:
-- every key the script was given; a map such as the card scripts' ACTIVE), and a nil entry
-- (a key this call does not have) is skipped. A denied pair raises the server's own code,
-- ``NOPERM``: callers treat it as any ACL refusal. Declared at the top of each script that
-- writes more than once (tests/storage/test_lua_preflight.py checks every declaration
-- against the script's writes). A server without redis.acl_check_cmd (before 7.0) has
-- nothing to ask: the script runs unchecked, as before (docs/contract.md).
-- Then, with what the declaration implies, each key's type and each INCR counter's value
-- (preflight_shapes.lua, in front of this): corrupt data is refused before the first write
-- with the server's own reply (WRONGTYPE, "value is not an integer or out of range",
-- "increment or decrement would overflow"). ``legacy`` (optional): key -> a further type it
-- may hold (a shape an older version wrote, which the script converts).
local function preflight(writes, legacy)
  local check = redis.acl_check_cmd
  for command, keys in pairs(check and writes or {}) do
    for _, key in pairs(keys) do
      local group = key
      if type(key) ~= 'table' then group = {key} end
      for _, k in pairs(group) do
        if not check(command, k) then
          error({err = 'NOPERM this user may not run ' .. command
            .. ' on a key this script writes (checked before its first write: nothing written)'})
        end
      end
    end
  end
  preflight_shapes(writes, legacy)
end
