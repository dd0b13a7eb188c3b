-- breaker.carry — the records a walk carried (each one breaker.record), then, when ARGV[2]
-- is 1, walk.begin: a walk opens with the process's held successes. With ARGV[2] 2 the last
-- record is one sent at once (a failure, a probe's…) behind the held ones of its store, and
-- its transition is the answer; with 0 the answer is 0.
-- ARGV: 1 record count, 2 what follows (1 begin, 2 the last record answers, 0 nothing), then
-- per record its key count, its arg count and its args, then begin's args. KEYS: every
-- record's keys in order, then begin's.
local ki, ai = 1, 3
local last = ''
-- every record's writes and the walk's first permit, asked of the ACL before the first
preflight({DEL = {KEYS}, HINCRBY = {KEYS}, HSET = {KEYS}, PEXPIRE = {KEYS}, SET = {KEYS}, ZADD = {KEYS},
  ZREM = {KEYS}, ZREMRANGEBYSCORE = {KEYS}})
for _ = 1, tonumber(ARGV[1]) do
  local nk, na = tonumber(ARGV[ai]), tonumber(ARGV[ai + 1])
  ai = ai + 2
  local k, a = {}, {}
  for j = 1, nk do k[j] = KEYS[ki]; ki = ki + 1 end
  for j = 1, na do a[j] = ARGV[ai]; ai = ai + 1 end
  last = record(k, a)
end
if ARGV[2] == '2' then return last end
if ARGV[2] ~= '1' then return 0 end
local bk, ba = {}, {}
for j = ki, #KEYS do bk[#bk + 1] = KEYS[j] end
for j = ai, #ARGV do ba[#ba + 1] = ARGV[j] end
return begin(bk, ba)
