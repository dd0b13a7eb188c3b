-- KEYS: see helpers.lua (RUNS = applied-runs zset, EPISODE = this run's episode hash), then
-- the run's cancel mark (cancel_mark.lua). ARGV[3] = run id, ARGV[4] = plan JSON, ARGV[5..] =
-- vectors.
local run_id = ARGV[3]
local CANCEL_MARK = KEYS[FIRST_EXTRA + 1]
local plan = cjson.decode(ARGV[4])
local plan_scopes = {}
for _, n in ipairs(plan.cards) do plan_scopes[#plan_scopes + 1] = n.sk end
local missing = missing_scopes(plan_scopes)
if missing then return missing end
-- §13: an operator cancelled the run while a worker held it: nothing of it is written
if redis.call('EXISTS', CANCEL_MARK) == 1 then
  return cjson.encode({applied = false, cancelled = true})
end
preflight({DEL = {RUNS}, ZADD = {RUNS, EXPIRY, EPISODES, ACTIVE}, ZREM = {EXPIRY, ACTIVE},
  HSET = {AUTHORS, CARDS, DEDUP, HISTORY, LINKS, META, EPISODE}, HDEL = {DEDUP},
  INCR = {SEQ, VECVER, VECRW}, RPUSH = {VECIDS}, SADD = {SCOPES}, SETRANGE = {VEC, VECMASK}},
  {[RUNS] = 'set'})  -- a set before applied runs had a time: converted below
if redis.call('TYPE', RUNS).ok == 'set' then  -- written before applied runs had a time
  local old = redis.call('SMEMBERS', RUNS)
  redis.call('DEL', RUNS)
  for _, id in ipairs(old) do redis.call('ZADD', RUNS, now, id) end
end
if redis.call('ZSCORE', RUNS, run_id) then
  return cjson.encode({applied = false})
end
-- §14: a run claimed before a forget of its chat writes nothing (it is extracted again)
if not blank(plan.epoch) and num(redis.call('GET', FORGET)) > num(plan.epoch) then
  return cjson.encode({applied = false, forgotten = true})
end
-- §10: a retraction since the run's meaning check: checked again (nothing written yet)
local changed = withdrawn_changed(plan.wn)
if changed then return changed end
cause = {via = 'run', by = 'worker', run = run_id}
local authors = plan.authors or {}
for i = 1, #authors - 1, 2 do redis.call('HSET', AUTHORS, authors[i], authors[i + 1]) end
local function blob(i) if blank(i) then return nil end return ARGV[4 + tonumber(i)] end
if type(plan.model) == 'string' then vec_model = plan.model end
local counts = {applied = true, inserted = 0, observed = 0, superseded = 0, competing = 0,
  rewritten = 0, merged = 0, reinforced = 0, demoted = 0, skipped = 0, links = 0, episodes = 0,
  retracted = 0}
local refs, ref_list, seen = {}, {}, {}

for i, n in ipairs(plan.cards) do
  local c = load(redis.call('HGET', DEDUP, n.h))
  if not live(c) and (n.ret == '1' or retracted_after(n.h, n.obs_at)) then
    -- §10: retracted after every message it comes from, word for word or (``ret``, the
    -- meaning check's) in other words (refs[i] stays nil: its resolutions and links are
    -- skipped)
    counts.retracted = counts.retracted + 1
    c = nil
  elseif live(c) then
    observe_again(c, n)
    if blank(c.row) or c.vp then set_vector(c, blob(n.vec)) end
    counts.observed = counts.observed + 1
    history_add(c.id, 'observed')
  else
    c = create_card(n)
    c.run = run_id
    set_vector(c, blob(n.vec))
    counts.inserted = counts.inserted + 1
    history_add(c.id, 'created')
  end
  if c then
    index_live(c)
    save(c)
    refs[i] = c.id
    if not seen[c.id] then seen[c.id] = true; ref_list[#ref_list + 1] = c.id end
  end
end

for _, r in ipairs(plan.res) do
  local old = load(r.old)
  local new = nil
  if not blank(r.new) then new = load(refs[tonumber(r.new)]) end
  local done = false
  if live(old) then
    if r.op == 'supersede' then
      if live(new) and new.id ~= old.id then
        retire(old, 'superseded')
        old.vu = new.vf
        old.sup_by = new.id
        save(old)
        history_add(old.id, 'superseded', new.id)
        history_add(new.id, 'supersedes', old.id)
        counts.superseded = counts.superseded + 1
        done = true
      end
    elseif r.op == 'competing' then
      if live(new) and new.id ~= old.id then
        local g = old.group or new.group
        if blank(g) then
          if num(old.id) < num(new.id) then g = old.id else g = new.id end
        end
        old.status = 'competing'; old.group = g; old.updated = now
        new.status = 'competing'; new.group = g; new.updated = now
        save(old)
        save(new)
        counts.competing = counts.competing + 1
        done = true
      end
    elseif r.op == 'update' then
      if not blank(r.text) and r.ret ~= '1' and not retracted_after(r.h, plan.obs_at) then
        old.obs = int(num(old.obs) + 1)
        old.obs_at = maxs(old.obs_at, plan.obs_at)
        rewrite(old, r.text, r.h, blob(r.vec))
        counts.rewritten = counts.rewritten + 1
        done = true
      end
    elseif r.op == 'merge' then
      local into = new
      if not blank(r.into) then into = load(r.into) end
      if live(into) and into.id ~= old.id then
        fold(old, into)
        if not blank(r.text) and r.ret ~= '1' and not retracted_after(r.h, plan.obs_at) then
          rewrite(load(into.id), r.text, r.h, blob(r.vec))
        end
        counts.merged = counts.merged + 1
        done = true
      end
    elseif r.op == 'reinforce' then
      old.conf = fmt(math.min(1, num(old.conf) + 0.1))
      old.sal = fmt(math.min(1, num(old.sal) + 0.05))
      old.obs = int(num(old.obs) + 1)
      old.obs_at = maxs(old.obs_at, plan.obs_at)
      old.exp = ''
      old.updated = now
      index_live(old)
      save(old)
      history_add(old.id, 'observed')
      counts.reinforced = counts.reinforced + 1
      done = true
    elseif r.op == 'demote' then
      old.conf = fmt(math.max(0, num(old.conf) - 0.15))
      old.updated = now
      save(old)
      counts.demoted = counts.demoted + 1
      done = true
    end
  end
  if not done then counts.skipped = counts.skipped + 1 end
end

for _, l in ipairs(plan.links) do
  local a, b = refs[tonumber(l.from)], refs[tonumber(l.to)]
  if a and b and a ~= b then
    local f = a .. '|' .. l.rel .. '|' .. b
    redis.call('HSET', LINKS, f, maxs(redis.call('HGET', LINKS, f) or '', l.conf))
    counts.links = counts.links + 1
  end
end

local e = plan.episode
if e then
  local ek = EPISODE
  redis.call('HSET', ek, 'run', run_id, 'summary', e.summary, 'topics', e.topics,
    'participants', e.participants, 'start', e.start, 'end', e['end'], 'thread', e.thread,
    'messages', e.messages, 'cards', table.concat(ref_list, ','), 'created', now)
  local eb = blob(e.vec)
  if eb then redis.call('HSET', ek, 'emb', eb) end
  redis.call('ZADD', EPISODES, num(e['end']), run_id)
  counts.episodes = 1
end

redis.call('ZADD', RUNS, now, run_id)
if vec_changed then redis.call('INCR', VECVER) end
counts.cards = table.concat(ref_list, ',')
counts.vectors_refused = vec_refused
return cjson.encode(counts)
