-- Forget (§14): which runs of one page of the run index belong to a chat. A read-only
-- filter, so the walk over every run sends one command a page instead of one per run.
-- KEYS: the page's run hashes. ARGV[1] = the chat id. Answers the 1-based KEYS indexes of
-- the chat's runs.
local out = {}
for i = 1, #KEYS do
  if redis.call('HGET', KEYS[i], 'chat_id') == ARGV[1] then out[#out + 1] = i end
end
return out
