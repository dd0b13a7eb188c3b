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
local function preflight(writes)
  local check = redis.acl_check_cmd
  if not check then return end
  for command, keys in pairs(writes) do
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
end
