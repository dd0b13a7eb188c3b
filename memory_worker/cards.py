"""The card store (§10): one chat's long-term memory in Redis, written once per run.

Model. A **card** is one durable fact (scope chat|thread|user, type,
subject/predicate/object, fact text, confidence, salience, observation
count, validity window, durability/expiry, provenance). Cards are never
deleted: a superseded fact keeps its text with ``valid_until`` and
``superseded_by``; an expired or merged card keeps its row with its status.
An **episode** summarises one run. **Links** are typed edges between cards
made by the same run.

Key layout (all under the chat's hash tag ``{P chat:<id>}``, built by
:meth:`Keys.chat`, so every script touches one cluster slot):

==============  ======  ==========================================================
``cards``       HASH    card id → card JSON (every value a string: ids never lose
                        digits to Lua's number formatting)
``seq``         STRING  card id counter
``dedup``       HASH    dedup hash → id of the *live* card holding it
``scopes``      SET     scope keys in use (``chat``, ``thread:<t>``, ``user:<u>``)
``active:<sk>`` ZSET    live cards of a scope; score = last observation (ms)
``expiry``      ZSET    live cards with an expiry; score = expires_at (ms)
``runs``        ZSET    ids of the runs already applied (idempotency); score = when.
                        Entries older than ``MEMORY_APPLIED_RUN_RETENTION_DAYS``
                        are pruned by maintenance (bounded growth)
``episode:<r>`` HASH    the episode of run ``r``; ``episodes`` ZSET by window end
``links``       HASH    ``from|relation|to`` → confidence
``vec``         STRING  packed int8 rows of unit vectors (``dim`` bytes a row)
``vecids``      LIST    ``<card id>|<scope key>`` per row
``vecmask``     STRING  one byte a row: 1 = searchable (live), 0 = not
``vecver``      STRING  bumped on every change of the three above
``meta``        HASH    ``dim`` (bytes a row), ``model`` (id of the embedding model)
==============  ======  ==========================================================

Vectors know their model (§16). The first vector stored in a chat fixes the
chat's vector space: its dimension and the id of the model that made it
(``RunWrites.embedding_model``, ``FoldGroup.embedding_model``). A later vector
of another dimension or another model is **refused** — the card is stored
without a row (``has_embedding`` false), the run is not failed, and the count
comes back as ``ApplyResult.vectors_refused`` (logged as
``cards.vectors_refused``). A writer that does not say its model ("unknown")
is accepted only while the chat has no model recorded (chats written before
models were recorded); the first write that names a model with the same
dimension adopts it for them. A query names its model too
(``similar_cards(..., model=)``): another model finds nothing (logged
``cards.vector_model_mismatch``), so results never mix two spaces.
:meth:`CardStore.vector_space` tells callers which space a chat uses.
Switching a chat to another model (re-embedding its live cards) is a
maintenance pass that does not exist yet: until then a chat keeps its first
model.

Writes. :meth:`CardStore.apply_run` sends a run's whole output to ONE Lua
script. It is idempotent by run id (a rerun after a crash returns at once,
leaving the store byte-identical) and atomic per chat, so two workers
applying two runs of one chat at the same moment can never create a
duplicate: the dedup lookup and the insert happen inside one script.
Repeats (same dedup hash) raise the observation count, keep the highest
confidence/salience and widen the validity window; resolutions
(supersede, competing, update, merge, reinforce, demote) are applied after
the upserts and skipped — counted, never failed — when their target is no
longer live.

Reads. :meth:`CardStore.visible_cards` honours scope visibility;
:meth:`CardStore.similar_cards` is an exact cosine scan with numpy over a
per-chat matrix cached in the process and revalidated by ``vecver`` (one
``GET`` on the hot path, plus one ``HMGET`` of the winners).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import numpy as np
import orjson
import structlog
from pydantic import BaseModel, ConfigDict

from memory_worker.keys import Keys

if TYPE_CHECKING:
    from redis.asyncio import Redis

log = structlog.get_logger(__name__)


# --- the card model ---------------------------------------------------------------------


class Scope(StrEnum):
    CHAT = "chat"
    THREAD = "thread"
    USER = "user"


class CardStatus(StrEnum):
    ACTIVE = "active"
    COMPETING = "competing"
    SUPERSEDED = "superseded"
    EXPIRED = "expired"
    MERGED = "merged"


LIVE_STATUSES = frozenset({CardStatus.ACTIVE, CardStatus.COMPETING})


class Durability(StrEnum):
    PERMANENT = "permanent"
    LONG = "long"
    SHORT = "short"
    EPHEMERAL = "ephemeral"


class Card(BaseModel):
    """One memory card as the bot reads it."""

    model_config = ConfigDict(frozen=True)

    id: str
    chat_id: int
    scope: Scope
    thread_id: int = 0
    user_id: int | None = None
    card_type: str
    subject: str
    predicate: str
    object: str
    fact_text: str
    confidence: float
    salience: float
    observation_count: int
    status: CardStatus
    durability: Durability | None = None
    valid_from: datetime
    valid_until: datetime | None = None
    observed_at: datetime
    created_at: datetime
    updated_at: datetime
    expires_at: datetime | None = None
    retracted_at: datetime | None = None
    superseded_by: str | None = None
    merged_into: str | None = None
    conflict_group: str | None = None
    source_message_ids: list[int]
    dedup_hash: str
    has_embedding: bool = False
    last_merge_at: datetime | None = None
    first_run_id: str | None = None

    @property
    def scope_key(self) -> str:
        return scope_key(self.scope, self.thread_id, self.user_id)

    @property
    def live(self) -> bool:
        return self.status in LIVE_STATUSES

    def visible_at(self, now: datetime) -> bool:
        """Live and not past its expiry (maintenance may not have run yet)."""
        return self.live and (self.expires_at is None or self.expires_at > now)


class Episode(BaseModel):
    """What one run was about."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    chat_id: int
    thread_id: int
    summary: str
    topics: list[str]
    participants: list[str]
    range_start: datetime
    range_end: datetime
    message_count: int
    card_ids: list[str]
    created_at: datetime
    has_embedding: bool = False


class Link(BaseModel):
    model_config = ConfigDict(frozen=True)

    from_card_id: str
    relation: str
    to_card_id: str
    confidence: float


def scope_key(scope: Scope | str, thread_id: int, user_id: int | None) -> str:
    """The scope a card lives in: ``chat``, ``thread:<t>`` or ``user:<u>``."""
    if scope == Scope.USER:
        return f"user:{user_id}"
    if scope == Scope.THREAD:
        return f"thread:{thread_id}"
    return "chat"


def visible_scope_keys(thread_id: int = 0, user_id: int | None = None) -> frozenset[str]:
    """What a reader in ``thread_id`` (0 = none), speaking for ``user_id``, may see.

    Chat cards everywhere in the chat; thread cards only in their thread; user
    cards only for that user (in this chat).
    """
    keys = {"chat"}
    if thread_id:
        keys.add(f"thread:{thread_id}")
    if user_id is not None:
        keys.add(f"user:{user_id}")
    return frozenset(keys)


_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """Text as dedup compares it: NFKC, case-folded, single spaces, no trailing punctuation."""
    folded = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()
    return folded.rstrip(" .!?;,…").strip()


def dedup_hash(sk: str, subject: str, predicate: str, obj: str, fact_text: str) -> str:
    """Identity of a fact within a chat: scope + normalised subject/predicate/object/fact."""
    parts = [sk, normalise(subject), normalise(predicate), normalise(obj), normalise(fact_text)]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


# --- what a run writes ------------------------------------------------------------------


class ResolutionOp(StrEnum):
    SUPERSEDE = "supersede"
    COMPETING = "competing"
    UPDATE = "update"
    MERGE = "merge"
    REINFORCE = "reinforce"
    DEMOTE = "demote"


@dataclass(frozen=True, slots=True)
class NewCard:
    """A validated card a run wants stored (upserted by its dedup hash)."""

    scope: Scope
    thread_id: int
    user_id: int | None
    card_type: str
    subject: str
    predicate: str
    object: str
    fact_text: str
    confidence: float
    salience: float
    durability: Durability | None
    source_message_ids: tuple[int, ...]
    valid_from: datetime
    observed_at: datetime
    expires_at: datetime | None
    embedding: Sequence[float] | None = None

    @property
    def scope_key(self) -> str:
        return scope_key(self.scope, self.thread_id, self.user_id)

    @property
    def dedup_hash(self) -> str:
        return dedup_hash(self.scope_key, self.subject, self.predicate, self.object, self.fact_text)


@dataclass(frozen=True, slots=True)
class ResolutionWrite:
    """A decision about an existing card.

    ``new_index`` points into :attr:`RunWrites.cards` (the card that
    supersedes / competes / absorbs); ``into_card_id`` names an existing
    survivor for ``merge``; ``new_fact_text`` (with its ``new_dedup_hash``
    and ``embedding``) rewrites the target of ``update`` or the survivor of
    ``merge``.
    """

    old_card_id: str
    op: ResolutionOp
    new_index: int | None = None
    into_card_id: str | None = None
    new_fact_text: str | None = None
    new_dedup_hash: str | None = None
    embedding: Sequence[float] | None = None


@dataclass(frozen=True, slots=True)
class LinkWrite:
    from_index: int
    to_index: int
    relation: str
    confidence: float


@dataclass(frozen=True, slots=True)
class EpisodeWrite:
    summary: str
    topics: Sequence[str]
    participants: Sequence[str]
    range_start: datetime
    range_end: datetime
    thread_id: int
    message_count: int
    embedding: Sequence[float] | None = None


@dataclass(frozen=True, slots=True)
class RunWrites:
    """Everything one run stores, applied at once by :meth:`CardStore.apply_run`."""

    observed_at: datetime
    cards: Sequence[NewCard] = ()
    resolutions: Sequence[ResolutionWrite] = ()
    links: Sequence[LinkWrite] = ()
    episode: EpisodeWrite | None = None
    #: Id of the model that made every vector of this write (None: unknown, see the module doc).
    embedding_model: str | None = None


@dataclass(frozen=True, slots=True)
class ApplyResult:
    """What :meth:`CardStore.apply_run` did (all zero when the run was already applied)."""

    applied: bool
    inserted: int = 0
    observed: int = 0
    superseded: int = 0
    competing: int = 0
    rewritten: int = 0
    merged: int = 0
    reinforced: int = 0
    demoted: int = 0
    skipped: int = 0
    links: int = 0
    episodes: int = 0
    card_ids: tuple[str, ...] = ()
    #: Vectors not stored: another model or dimension than the chat's (see the module doc).
    vectors_refused: int = 0


@dataclass(frozen=True, slots=True)
class FoldGroup:
    """A maintenance fold: ``absorbed`` into ``survivor``, optional rewrite, demotions, stamps."""

    survivor_id: str | None
    absorbed_ids: Sequence[str] = ()
    new_fact_text: str | None = None
    new_dedup_hash: str | None = None
    embedding: Sequence[float] | None = None
    demote_ids: Sequence[str] = ()
    stamp_ids: Sequence[str] = ()
    #: Id of the model that made ``embedding`` (None: unknown).
    embedding_model: str | None = None


@dataclass(frozen=True, slots=True)
class VectorSpace:
    """The embedding model and dimension a chat's vectors were made with."""

    model: str | None
    dimension: int


@dataclass(frozen=True, slots=True)
class FoldResult:
    folded: int = 0
    rewritten: int = 0
    demoted: int = 0
    stamped: int = 0


# --- encoding helpers -------------------------------------------------------------------


def to_ms(moment: datetime) -> str:
    return str(int(moment.timestamp() * 1000))


def from_ms(value: str | None) -> datetime | None:
    if value is None or value == "":
        return None
    return datetime.fromtimestamp(int(value) / 1000, tz=UTC)


def _req_ms(value: str | None) -> datetime:
    moment = from_ms(value)
    if moment is None:
        raise ValueError("missing timestamp")
    return moment


def _num(value: float) -> str:
    return f"{min(1.0, max(0.0, value)):.4f}"


def quantize(vector: Sequence[float]) -> bytes:
    """A vector as int8 bytes of its direction (cosine needs no magnitude)."""
    array = np.asarray(vector, dtype=np.float32)
    peak = float(np.max(np.abs(array))) if array.size else 0.0
    if peak == 0.0 or not np.isfinite(peak):
        return bytes(array.size)
    scaled = np.clip(np.rint(array / peak * 127.0), -127, 127).astype(np.int8)
    return bytes(scaled.tobytes())


def card_from_json(chat_id: int, raw: bytes | str) -> Card:
    """Parse the stored card JSON (every value a string)."""
    data: dict[str, str] = orjson.loads(raw)
    user = data.get("user")
    return Card(
        id=data["id"],
        chat_id=chat_id,
        scope=Scope(data["scope"]),
        thread_id=int(data.get("thread") or 0),
        user_id=int(user) if user else None,
        card_type=data["type"],
        subject=data["subject"],
        predicate=data["predicate"],
        object=data["object"],
        fact_text=data["fact"],
        confidence=float(data["conf"]),
        salience=float(data["sal"]),
        observation_count=int(data["obs"]),
        status=CardStatus(data["status"]),
        durability=Durability(data["dur"]) if data.get("dur") else None,
        valid_from=_req_ms(data["vf"]),
        valid_until=from_ms(data.get("vu")),
        observed_at=_req_ms(data["obs_at"]),
        created_at=_req_ms(data["created"]),
        updated_at=_req_ms(data["updated"]),
        expires_at=from_ms(data.get("exp")),
        retracted_at=from_ms(data.get("retracted")),
        superseded_by=data.get("sup_by") or None,
        merged_into=data.get("merged_into") or None,
        conflict_group=data.get("group") or None,
        source_message_ids=[int(s) for s in data.get("src", "").split(",") if s],
        dedup_hash=data["h"],
        has_embedding=bool(data.get("row")),
        last_merge_at=from_ms(data.get("merge_at")),
        first_run_id=data.get("run") or None,
    )


def _card_plan(card: NewCard, vec_index: int | None) -> dict[str, str]:
    plan = {
        "h": card.dedup_hash,
        "scope": card.scope.value,
        "sk": card.scope_key,
        "thread": str(card.thread_id),
        "type": card.card_type,
        "subject": card.subject,
        "predicate": card.predicate,
        "object": card.object,
        "fact": card.fact_text,
        "conf": _num(card.confidence),
        "sal": _num(card.salience),
        "vf": to_ms(card.valid_from),
        "obs_at": to_ms(card.observed_at),
        "exp": to_ms(card.expires_at) if card.expires_at else "",
        "src": ",".join(str(s) for s in sorted(set(card.source_message_ids))),
    }
    if card.user_id is not None:
        plan["user"] = str(card.user_id)
    if card.durability is not None:
        plan["dur"] = card.durability.value
    if vec_index is not None:
        plan["vec"] = str(vec_index)
    return plan


class _Vectors:
    """Collects vector blobs for a script call; plan entries refer to them by 1-based index."""

    def __init__(self) -> None:
        self.blobs: list[bytes] = []

    def add(self, vector: Sequence[float] | None) -> int | None:
        if vector is None or len(vector) == 0:
            return None
        self.blobs.append(quantize(vector))
        return len(self.blobs)


# --- Lua ----------------------------------------------------------------------------------

#: Helpers shared by every script. ARGV[1] = key base ("{P chat:<id>}:"), ARGV[2] = now (ms).
_LUA_HELPERS = r"""
local base = ARGV[1]
local now = ARGV[2]
local function key(s) return base .. s end
local CARDS = key('cards')
local vec_changed = false
-- id of the model that made this write's vectors ('' = unknown); set by each script
local vec_model = ''
local vec_refused = 0

local function num(s) return tonumber(s) or 0 end
local function fmt(x) return string.format('%.4f', x) end
local function int(x) return string.format('%d', x) end
local function blank(s) return not s or s == '' end
local function maxs(a, b)
  if blank(a) then return b end
  if blank(b) then return a end
  if num(a) >= num(b) then return a end
  return b
end
local function mins(a, b)
  if blank(a) then return b end
  if blank(b) then return a end
  if num(a) <= num(b) then return a end
  return b
end
-- expiry of two merged facts: the durable one wins ('' = never expires)
local function exp_merge(a, b)
  if blank(a) or blank(b) then return '' end
  return maxs(a, b)
end
-- union of two comma lists of message ids, numerically sorted, last 64 kept
local function union(a, b)
  local seen, out = {}, {}
  for s in string.gmatch((a or '') .. ',' .. (b or ''), '[^,]+') do
    if not seen[s] then seen[s] = true; out[#out + 1] = s end
  end
  table.sort(out, function(x, y) return num(x) < num(y) end)
  if #out > 64 then
    local keep = {}
    for i = #out - 63, #out do keep[#keep + 1] = out[i] end
    out = keep
  end
  return table.concat(out, ',')
end

local function load(id)
  if blank(id) then return nil end
  local raw = redis.call('HGET', CARDS, id)
  if not raw then return nil end
  return cjson.decode(raw)
end
local function save(c) redis.call('HSET', CARDS, c.id, cjson.encode(c)) end
local function live(c) return c ~= nil and (c.status == 'active' or c.status == 'competing') end

-- (re)write the indexes of a live card
local function index_live(c)
  redis.call('ZADD', key('active:' .. c.sk), num(c.obs_at), c.id)
  redis.call('SADD', key('scopes'), c.sk)
  redis.call('HSET', key('dedup'), c.h, c.id)
  if blank(c.exp) then
    redis.call('ZREM', key('expiry'), c.id)
  else
    redis.call('ZADD', key('expiry'), num(c.exp), c.id)
  end
end

-- take a card out of every live index and give it a final status (kept, never deleted)
local function retire(c, status)
  redis.call('ZREM', key('active:' .. c.sk), c.id)
  if redis.call('HGET', key('dedup'), c.h) == c.id then redis.call('HDEL', key('dedup'), c.h) end
  redis.call('ZREM', key('expiry'), c.id)
  if not blank(c.row) then
    redis.call('SETRANGE', key('vecmask'), num(c.row), '\0')
    vec_changed = true
  end
  c.status = status
  c.retracted = now
  c.updated = now
end

-- store (or overwrite) a card's vector row. The chat's first vector fixes its space
-- (meta dim + model); a vector of another dimension or model is refused (counted).
-- own = the blob is a row of this chat already (a fold copies it): no model check.
local function set_vector(c, blob, own)
  if blob == nil or #blob == 0 then return end
  local meta = key('meta')
  local dim = num(redis.call('HGET', meta, 'dim'))
  if dim == 0 then
    dim = #blob
    redis.call('HSET', meta, 'dim', int(dim))
    if vec_model ~= '' then redis.call('HSET', meta, 'model', vec_model) end
  end
  if #blob ~= dim then vec_refused = vec_refused + 1; return end
  if not own then
    local have = redis.call('HGET', meta, 'model') or ''
    if have == '' then
      -- a chat from before models were recorded: the first named model adopts it
      if vec_model ~= '' then redis.call('HSET', meta, 'model', vec_model) end
    elseif have ~= vec_model then
      vec_refused = vec_refused + 1
      return
    end
  end
  if blank(c.row) then
    local n = redis.call('RPUSH', key('vecids'), c.id .. '|' .. c.sk)
    c.row = int(n - 1)
  else
    redis.call('INCR', key('vecrw'))
  end
  redis.call('SETRANGE', key('vec'), num(c.row) * dim, blob)
  local flag = '\0'
  if live(c) then flag = '\1' end
  redis.call('SETRANGE', key('vecmask'), num(c.row), flag)
  vec_changed = true
end

local function row_blob(c)
  if blank(c.row) then return nil end
  local dim = num(redis.call('HGET', key('meta'), 'dim'))
  if dim == 0 then return nil end
  local start = num(c.row) * dim
  return redis.call('GETRANGE', key('vec'), start, start + dim - 1)
end

-- fold card src into card dst (both live, freshly loaded); src ends 'merged'
local function fold(src, dst)
  dst.conf = maxs(dst.conf, src.conf)
  dst.sal = maxs(dst.sal, src.sal)
  dst.obs = int(num(dst.obs) + num(src.obs))
  dst.vf = mins(dst.vf, src.vf)
  dst.obs_at = maxs(dst.obs_at, src.obs_at)
  dst.exp = exp_merge(dst.exp, src.exp)
  dst.src = union(dst.src, src.src)
  dst.updated = now
  if blank(dst.row) then set_vector(dst, row_blob(src), true) end
  retire(src, 'merged')
  src.merged_into = dst.id
  save(src)
  index_live(dst)
  save(dst)
end

-- rewrite a live card's fact text; if another live card already holds the new
-- text, the card is folded into that one instead. Returns the holder.
local function rewrite(c, text, h, blob)
  if blank(text) then return c end
  if not blank(h) and h ~= c.h then
    local other = load(redis.call('HGET', key('dedup'), h))
    if live(other) and other.id ~= c.id then
      fold(c, other)
      return other
    end
    if redis.call('HGET', key('dedup'), c.h) == c.id then redis.call('HDEL', key('dedup'), c.h) end
    c.h = h
  end
  c.fact = text
  c.updated = now
  set_vector(c, blob)
  index_live(c)
  save(c)
  return c
end
"""

#: KEYS[1] = applied-runs zset. ARGV[3] = run id, ARGV[4] = plan JSON, ARGV[5..] = vectors.
_APPLY_LUA = (
    _LUA_HELPERS
    + r"""
local run_id = ARGV[3]
if redis.call('TYPE', KEYS[1]).ok == 'set' then  -- written before applied runs had a time
  local old = redis.call('SMEMBERS', KEYS[1])
  redis.call('DEL', KEYS[1])
  for _, id in ipairs(old) do redis.call('ZADD', KEYS[1], now, id) end
end
if redis.call('ZSCORE', KEYS[1], run_id) then
  return cjson.encode({applied = false})
end
local plan = cjson.decode(ARGV[4])
local function blob(i) if blank(i) then return nil end return ARGV[4 + tonumber(i)] end
if type(plan.model) == 'string' then vec_model = plan.model end
local counts = {applied = true, inserted = 0, observed = 0, superseded = 0, competing = 0,
  rewritten = 0, merged = 0, reinforced = 0, demoted = 0, skipped = 0, links = 0, episodes = 0}
local refs, ref_list, seen = {}, {}, {}

for i, n in ipairs(plan.cards) do
  local c = load(redis.call('HGET', key('dedup'), n.h))
  if live(c) then
    c.conf = maxs(c.conf, n.conf)
    c.sal = maxs(c.sal, n.sal)
    c.obs = int(num(c.obs) + 1)
    c.vf = mins(c.vf, n.vf)
    c.obs_at = maxs(c.obs_at, n.obs_at)
    c.exp = exp_merge(c.exp, n.exp)
    c.src = union(c.src, n.src)
    c.updated = now
    if blank(c.row) then set_vector(c, blob(n.vec)) end
    counts.observed = counts.observed + 1
  else
    c = {id = int(redis.call('INCR', key('seq'))), scope = n.scope, sk = n.sk, thread = n.thread,
      user = n.user, type = n.type, subject = n.subject, predicate = n.predicate,
      object = n.object, fact = n.fact, conf = n.conf, sal = n.sal, obs = '1',
      status = 'active', dur = n.dur, vf = n.vf, obs_at = n.obs_at, created = now,
      updated = now, exp = n.exp, src = n.src, h = n.h, run = run_id}
    set_vector(c, blob(n.vec))
    counts.inserted = counts.inserted + 1
  end
  index_live(c)
  save(c)
  refs[i] = c.id
  if not seen[c.id] then seen[c.id] = true; ref_list[#ref_list + 1] = c.id end
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
      if not blank(r.text) then
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
        if not blank(r.text) then rewrite(load(into.id), r.text, r.h, blob(r.vec)) end
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
    redis.call('HSET', key('links'), f, maxs(redis.call('HGET', key('links'), f) or '', l.conf))
    counts.links = counts.links + 1
  end
end

local e = plan.episode
if e then
  local ek = key('episode:' .. run_id)
  redis.call('HSET', ek, 'run', run_id, 'summary', e.summary, 'topics', e.topics,
    'participants', e.participants, 'start', e.start, 'end', e['end'], 'thread', e.thread,
    'messages', e.messages, 'cards', table.concat(ref_list, ','), 'created', now)
  local eb = blob(e.vec)
  if eb then redis.call('HSET', ek, 'emb', eb) end
  redis.call('ZADD', key('episodes'), num(e['end']), run_id)
  counts.episodes = 1
end

redis.call('ZADD', KEYS[1], now, run_id)
if vec_changed then redis.call('INCR', key('vecver')) end
counts.cards = table.concat(ref_list, ',')
counts.vectors_refused = vec_refused
return cjson.encode(counts)
"""
)

#: KEYS[1] = expiry zset. ARGV[3] = max cards. Expires live cards whose TTL passed.
_EXPIRE_LUA = (
    _LUA_HELPERS
    + r"""
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[3]))
local n = 0
for _, id in ipairs(ids) do
  local c = load(id)
  if live(c) and not blank(c.exp) and num(c.exp) <= num(now) then
    retire(c, 'expired')
    save(c)
    n = n + 1
  else
    redis.call('ZREM', KEYS[1], id)
  end
end
if vec_changed then redis.call('INCR', key('vecver')) end
return n
"""
)

#: KEYS[1] = cards hash. ARGV[3] = plan JSON {groups, demote_delta}, ARGV[4..] = vectors.
_FOLD_LUA = (
    _LUA_HELPERS
    + r"""
local plan = cjson.decode(ARGV[3])
local function blob(i) if blank(i) then return nil end return ARGV[3 + tonumber(i)] end
local delta = num(plan.demote_delta)
local counts = {folded = 0, rewritten = 0, demoted = 0, stamped = 0}
for _, g in ipairs(plan.groups) do
  vec_model = ''
  if type(g.model) == 'string' then vec_model = g.model end
  local s = load(g.survivor)
  if live(s) then
    for _, id in ipairs(g.absorbed) do
      local c = load(id)
      if live(c) and c.id ~= s.id then
        fold(c, s)
        s = load(s.id)
        counts.folded = counts.folded + 1
      end
    end
    if not blank(g.text) then
      s = rewrite(s, g.text, g.h, blob(g.vec))
      counts.rewritten = counts.rewritten + 1
    end
  end
  for _, id in ipairs(g.demote) do
    local c = load(id)
    if live(c) then
      c.conf = fmt(math.max(0, num(c.conf) - delta))
      c.updated = now
      save(c)
      counts.demoted = counts.demoted + 1
    end
  end
  for _, id in ipairs(g.stamp) do
    local c = load(id)
    if c then
      c.merge_at = now
      save(c)
      counts.stamped = counts.stamped + 1
    end
  end
end
if vec_changed then redis.call('INCR', key('vecver')) end
counts.refused = vec_refused
return cjson.encode(counts)
"""
)


# --- the vector cache ---------------------------------------------------------------------

#: KEYS[1] = vecver. ARGV[1] = key base, ARGV[2] = cached version, ARGV[3] = cached rows,
#: ARGV[4] = cached row-rewrite counter (``vecrw``). Answers {version} when the cache is
#: current; {version, 'full'} when it must be rebuilt (empty, or a row was rewritten);
#: otherwise the delta: {version, rewrites, dim, first new row, mask, new rows, new ids,
#: model}. (The model only changes together with ``vecver``.)
#: (A full matrix is read with plain GETs: megabytes are cheaper outside Lua.)
_REFRESH_LUA = r"""
local base = ARGV[1]
local version = redis.call('GET', KEYS[1]) or '0'
if version == ARGV[2] then return {version} end
local rewrites = redis.call('GET', base .. 'vecrw') or '0'
local dim = tonumber(redis.call('HGET', base .. 'meta', 'dim') or '0') or 0
local from = tonumber(ARGV[3]) or 0
if rewrites ~= ARGV[4] or dim == 0 or from == 0 then return {version, 'full'} end
local rows = redis.call('GETRANGE', base .. 'vec', from * dim, -1)
local mask = redis.call('GET', base .. 'vecmask') or ''
local ids = redis.call('LRANGE', base .. 'vecids', from, -1)
local model = redis.call('HGET', base .. 'meta', 'model') or ''
return {version, rewrites, tostring(dim), tostring(from), mask, rows, ids, model}
"""


class _Matrix:
    """A chat's vector rows at one ``vecver``: ids, scope codes, unit float32 rows, live flags.

    Rows only ever get appended (a card keeps its row for life) or, rarely,
    rewritten; a refresh after appends and status changes fetches just the
    new rows and the one-byte-a-row mask.
    """

    def __init__(self, dim: int, model: str = "") -> None:
        self.version = b""
        self.rewrites = b""
        self.dim = dim
        #: Id of the model of the rows ('' = not recorded).
        self.model = model
        self.ids: list[str] = []
        self.scope_codes: dict[str, int] = {}
        self._rows = np.zeros((0, max(dim, 1)), dtype=np.float32)
        self._scopes = np.zeros(0, dtype=np.int32)
        self._nonzero = np.zeros(0, dtype=bool)
        self.live = np.zeros(0, dtype=bool)

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def rows(self) -> np.ndarray[Any, np.dtype[np.float32]]:
        return self._rows[: self.count]

    @property
    def scopes(self) -> np.ndarray[Any, np.dtype[np.int32]]:
        return self._scopes[: self.count]

    @property
    def nbytes(self) -> int:
        return int(self._rows.nbytes + self._scopes.nbytes + 64 * self.count)

    def append(self, blob: bytes, entries: Sequence[bytes]) -> None:
        """Add rows (int8 bytes) and their ``id|scope`` entries; rows are unit-normalised."""
        fresh = min(len(entries), len(blob) // self.dim) if self.dim else 0
        if fresh == 0:
            return
        block = np.frombuffer(blob, dtype=np.int8, count=fresh * self.dim).reshape(fresh, self.dim)
        first, need = self.count, self.count + fresh
        if need > self._rows.shape[0]:
            capacity = need if first == 0 else max(need, 2 * self._rows.shape[0])
            rows = np.empty((capacity, self.dim), dtype=np.float32)
            rows[:first] = self.rows
            scopes = np.zeros(capacity, dtype=np.int32)
            scopes[:first] = self.scopes
            nonzero = np.zeros(capacity, dtype=bool)
            nonzero[:first] = self._nonzero[:first]
            self._rows, self._scopes, self._nonzero = rows, scopes, nonzero
        target = self._rows[first:need]
        target[...] = block
        norms = np.sqrt(np.einsum("ij,ij->i", target, target))
        self._nonzero[first:need] = norms > 0
        target *= (1.0 / np.where(norms > 0, norms, 1.0))[:, None]
        codes = self.scope_codes
        for offset, entry in enumerate(entries[:fresh]):
            card_id, _, sk = entry.decode().partition("|")
            code = codes.get(sk)
            if code is None:
                code = codes[sk] = len(codes)
            self._scopes[first + offset] = code
            self.ids.append(card_id)

    def set_mask(self, mask: bytes) -> None:
        flags = np.zeros(self.count, dtype=np.uint8)
        have = min(len(mask), self.count)
        flags[:have] = np.frombuffer(mask, dtype=np.uint8, count=have)
        self.live = (flags == 1) & self._nonzero[: self.count]


@dataclass
class _VectorCache:
    """Per-process LRU of chat matrices, bounded by bytes."""

    max_bytes: int
    entries: OrderedDict[int, _Matrix] = field(default_factory=OrderedDict)

    def get(self, chat_id: int) -> _Matrix | None:
        entry = self.entries.get(chat_id)
        if entry is not None:
            self.entries.move_to_end(chat_id)
        return entry

    def put(self, chat_id: int, matrix: _Matrix) -> None:
        self.entries[chat_id] = matrix
        self.entries.move_to_end(chat_id)
        total = sum(m.nbytes for m in self.entries.values())
        while total > self.max_bytes and len(self.entries) > 1:
            _, evicted = self.entries.popitem(last=False)
            total -= evicted.nbytes


# --- the store ------------------------------------------------------------------------------


class CardStore:
    """One chat's memory in Redis: the run write, maintenance writes and the read API."""

    def __init__(
        self, redis: Redis, keys: Keys, *, vector_cache_bytes: int = 256 * 1024 * 1024
    ) -> None:
        self._redis = redis
        self._keys = keys
        self._apply = redis.register_script(_APPLY_LUA)
        self._expire = redis.register_script(_EXPIRE_LUA)
        self._fold = redis.register_script(_FOLD_LUA)
        self._refresh = redis.register_script(_REFRESH_LUA)
        self._cache = _VectorCache(max_bytes=vector_cache_bytes)

    @property
    def redis(self) -> Redis:
        return self._redis

    def key(self, chat_id: int, suffix: str) -> str:
        return self._keys.chat(chat_id, suffix)

    def _base(self, chat_id: int) -> str:
        return self._keys.chat(chat_id, "")

    # -- writes ----------------------------------------------------------------------------

    async def apply_run(
        self, chat_id: int, run_id: str, writes: RunWrites, *, now: datetime
    ) -> ApplyResult:
        """Store a run's output in one atomic, idempotent script (see the module doc)."""
        vectors = _Vectors()
        cards = [_card_plan(card, vectors.add(card.embedding)) for card in writes.cards]
        resolutions: list[dict[str, str]] = []
        for res in writes.resolutions:
            entry = {"old": res.old_card_id, "op": res.op.value}
            if res.new_index is not None:
                entry["new"] = str(res.new_index + 1)
            if res.into_card_id:
                entry["into"] = res.into_card_id
            if res.new_fact_text:
                entry["text"] = res.new_fact_text
                entry["h"] = res.new_dedup_hash or ""
                index = vectors.add(res.embedding)
                if index is not None:
                    entry["vec"] = str(index)
            resolutions.append(entry)
        links = [
            {
                "from": str(link.from_index + 1),
                "to": str(link.to_index + 1),
                "rel": link.relation,
                "conf": _num(link.confidence),
            }
            for link in writes.links
        ]
        plan: dict[str, Any] = {
            "obs_at": to_ms(writes.observed_at),
            "cards": cards,
            "res": resolutions,
            "links": links,
            "model": writes.embedding_model or "",
        }
        if writes.episode is not None:
            ep = writes.episode
            episode = {
                "summary": ep.summary,
                "topics": orjson.dumps(list(ep.topics)).decode(),
                "participants": orjson.dumps(list(ep.participants)).decode(),
                "start": to_ms(ep.range_start),
                "end": to_ms(ep.range_end),
                "thread": str(ep.thread_id),
                "messages": str(ep.message_count),
            }
            index = vectors.add(ep.embedding)
            if index is not None:
                episode["vec"] = str(index)
            plan["episode"] = episode
        await self._redis.sadd(self._keys.chats, str(chat_id))  # type: ignore[misc]
        raw = await self._apply(
            keys=[self.key(chat_id, "runs")],
            args=[
                self._base(chat_id),
                to_ms(now),
                run_id,
                _lua_json(plan),
                *vectors.blobs,
            ],
        )
        data = orjson.loads(raw)
        if not data.get("applied"):
            log.info("cards.run_already_applied", chat_id=chat_id, run_id=run_id)
            return ApplyResult(applied=False)
        ids = tuple(s for s in str(data.get("cards") or "").split(",") if s)
        result = ApplyResult(
            applied=True,
            inserted=int(data["inserted"]),
            observed=int(data["observed"]),
            superseded=int(data["superseded"]),
            competing=int(data["competing"]),
            rewritten=int(data["rewritten"]),
            merged=int(data["merged"]),
            reinforced=int(data["reinforced"]),
            demoted=int(data["demoted"]),
            skipped=int(data["skipped"]),
            links=int(data["links"]),
            episodes=int(data["episodes"]),
            card_ids=ids,
            vectors_refused=int(data.get("vectors_refused") or 0),
        )
        if result.vectors_refused:
            log.warning(
                "cards.vectors_refused",
                chat_id=chat_id,
                run_id=run_id,
                model=writes.embedding_model,
                refused=result.vectors_refused,
            )
        log.info(
            "cards.run_applied",
            chat_id=chat_id,
            run_id=run_id,
            inserted=result.inserted,
            observed=result.observed,
            superseded=result.superseded,
            skipped=result.skipped,
        )
        return result

    async def expire(self, chat_id: int, *, now: datetime, limit: int = 1000) -> int:
        """Mark live cards past their TTL ``expired`` (kept, out of every live index)."""
        count = await self._expire(
            keys=[self.key(chat_id, "expiry")],
            args=[self._base(chat_id), to_ms(now), limit],
        )
        return int(count)

    async def fold_groups(
        self,
        chat_id: int,
        groups: Sequence[FoldGroup],
        *,
        now: datetime,
        demote_delta: float = 0.2,
    ) -> FoldResult:
        """Apply maintenance folds atomically (targets no longer live are skipped)."""
        if not groups:
            return FoldResult()
        vectors = _Vectors()
        plan_groups: list[dict[str, Any]] = []
        for group in groups:
            entry: dict[str, Any] = {
                "survivor": group.survivor_id or "",
                "absorbed": list(group.absorbed_ids),
                "demote": list(group.demote_ids),
                "stamp": list(group.stamp_ids),
                "model": group.embedding_model or "",
            }
            if group.new_fact_text:
                entry["text"] = group.new_fact_text
                entry["h"] = group.new_dedup_hash or ""
                index = vectors.add(group.embedding)
                if index is not None:
                    entry["vec"] = str(index)
            plan_groups.append(entry)
        raw = await self._fold(
            keys=[self.key(chat_id, "cards")],
            args=[
                self._base(chat_id),
                to_ms(now),
                _lua_json({"groups": plan_groups, "demote_delta": f"{demote_delta:.4f}"}),
                *vectors.blobs,
            ],
        )
        data = orjson.loads(raw)
        if int(data.get("refused") or 0):
            log.warning("cards.vectors_refused", chat_id=chat_id, refused=int(data["refused"]))
        return FoldResult(
            folded=int(data["folded"]),
            rewritten=int(data["rewritten"]),
            demoted=int(data["demoted"]),
            stamped=int(data["stamped"]),
        )

    # -- reads -----------------------------------------------------------------------------

    async def chat_ids(self) -> list[int]:
        """Every chat that has memory (for maintenance sweeps)."""
        members = await self._redis.smembers(self._keys.chats)  # type: ignore[misc]
        return sorted(int(m) for m in members)

    async def has_applied(self, chat_id: int, run_id: str) -> bool:
        key = self.key(chat_id, "runs")
        if await self._redis.type(key) in (b"set", "set"):  # before applied runs had a time
            return bool(await self._redis.sismember(key, run_id))  # type: ignore[misc]
        return await self._redis.zscore(key, run_id) is not None

    async def prune_applied_runs(self, chat_id: int, *, before_ms: int) -> int:
        """Forget runs applied before ``before_ms`` (bounded growth); how many.

        Safe once no run can be applied twice that long apart: a run is applied
        at its completion, and only a crash between apply and completion makes a
        worker apply it again — within one lease, never days later.
        """
        key = self.key(chat_id, "runs")
        if await self._redis.type(key) in (b"set", "set"):
            return 0  # migrated (with a time) by its next apply
        return int(await self._redis.zremrangebyscore(key, "-inf", f"({before_ms}"))

    async def get_cards(self, chat_id: int, card_ids: Sequence[str]) -> list[Card]:
        """Cards by id, in the order given (unknown ids are left out)."""
        if not card_ids:
            return []
        raws = await self._redis.hmget(self.key(chat_id, "cards"), list(card_ids))  # type: ignore[misc]
        return [card_from_json(chat_id, raw) for raw in raws if raw is not None]

    async def get_card(self, chat_id: int, card_id: str) -> Card | None:
        cards = await self.get_cards(chat_id, [card_id])
        return cards[0] if cards else None

    async def all_cards(self, chat_id: int) -> list[Card]:
        """Every card of the chat, whatever its status, by id."""
        raws = await self._redis.hvals(self.key(chat_id, "cards"))  # type: ignore[misc]
        cards = [card_from_json(chat_id, raw) for raw in raws]
        return sorted(cards, key=lambda c: int(c.id))

    async def live_cards(
        self, chat_id: int, scope_keys: Iterable[str] | None = None, *, limit: int | None = None
    ) -> list[Card]:
        """Live (active/competing) cards of the given scopes (all when None), newest first."""
        if scope_keys is None:
            scope_keys = sorted(
                m.decode()
                for m in await self._redis.smembers(self.key(chat_id, "scopes"))  # type: ignore[misc]
            )
        stop = -1 if limit is None else max(0, limit - 1)
        pipe = self._redis.pipeline(transaction=False)
        for sk in scope_keys:
            pipe.zrevrange(self.key(chat_id, f"active:{sk}"), 0, stop, withscores=True)
        scored: list[tuple[float, str]] = []
        for members in await pipe.execute():
            scored.extend((score, member.decode()) for member, score in members)
        scored.sort(key=lambda item: (-item[0], int(item[1])))
        ids = [card_id for _, card_id in scored]
        return await self.get_cards(chat_id, ids)

    async def visible_cards(
        self,
        chat_id: int,
        thread_id: int = 0,
        user_id: int | None = None,
        *,
        include_inactive: bool = False,
        now: datetime | None = None,
        limit: int | None = None,
    ) -> list[Card]:
        """Cards a reader in ``thread_id`` speaking for ``user_id`` may see, newest first.

        Chat cards; thread cards only of that thread; user cards only of that
        user. Superseded, merged and expired cards (also those past their
        TTL that maintenance has not archived yet) only with
        ``include_inactive``.
        """
        allowed = visible_scope_keys(thread_id, user_id)
        if include_inactive:
            cards = [c for c in await self.all_cards(chat_id) if c.scope_key in allowed]
            cards.sort(key=lambda c: (c.observed_at, int(c.id)), reverse=True)
            return cards[:limit] if limit is not None else cards
        moment = now or datetime.now(UTC)
        cards = await self.live_cards(chat_id, sorted(allowed))
        visible = [c for c in cards if c.visible_at(moment)]
        return visible[:limit] if limit is not None else visible

    async def _matrix(self, chat_id: int) -> _Matrix:
        """The chat's matrix: one script call when current or after appends, a full read else."""
        cached = self._cache.get(chat_id)
        reply = list(
            await self._refresh(
                keys=[self.key(chat_id, "vecver")],
                args=[
                    self._base(chat_id),
                    cached.version if cached else b"",
                    cached.count if cached else 0,
                    cached.rewrites if cached else b"",
                ],
            )
        )
        if cached is not None and len(reply) == 1:
            return cached
        if len(reply) == 8 and cached is not None and cached.count == int(reply[3]):
            version, rewrites, _, _, mask, rows, entries, model = reply
            matrix = cached
            matrix.model = model.decode() if isinstance(model, bytes) else str(model)
        else:  # empty cache, a rewritten row, or another query of ours refreshed meanwhile
            pipe = self._redis.pipeline(transaction=True)
            pipe.get(self.key(chat_id, "vecver"))
            pipe.get(self.key(chat_id, "vecrw"))
            pipe.hget(self.key(chat_id, "meta"), "dim")
            pipe.get(self.key(chat_id, "vecmask"))
            pipe.get(self.key(chat_id, "vec"))
            pipe.lrange(self.key(chat_id, "vecids"), 0, -1)
            pipe.hget(self.key(chat_id, "meta"), "model")
            version, rewrites, dim, mask, rows, entries, model = await pipe.execute()
            matrix = _Matrix(int(dim or 0), model.decode() if model else "")
        matrix.append(rows or b"", entries)
        matrix.set_mask(mask or b"")
        matrix.version, matrix.rewrites = version or b"0", rewrites or b"0"
        self._cache.put(chat_id, matrix)
        return matrix

    async def similar_cards(
        self,
        chat_id: int,
        embedding: Sequence[float],
        k: int,
        *,
        thread_id: int | None = None,
        user_id: int | None = None,
        scope_keys: Iterable[str] | None = None,
        now: datetime | None = None,
        model: str | None = None,
    ) -> list[tuple[Card, float]]:
        """The ``k`` live cards most similar (cosine) to ``embedding``, best first.

        With neither ``thread_id`` nor ``user_id`` every live card of the chat
        is a candidate; with either, only what :func:`visible_scope_keys`
        allows; ``scope_keys`` names the allowed scopes outright. ``model``
        names the model of ``embedding``: one other than the chat's finds
        nothing (so does another dimension), never a mix of two spaces.
        """
        if k <= 0:
            return []
        matrix = await self._matrix(chat_id)
        if not matrix.ids:
            return []
        if model is not None and matrix.model and model != matrix.model:
            log.warning(
                "cards.vector_model_mismatch",
                chat_id=chat_id,
                query_model=model,
                chat_model=matrix.model,
            )
            return []
        query = np.asarray(embedding, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if query.shape != (matrix.rows.shape[1],) or norm == 0.0:
            return []
        scores = np.where(matrix.live, matrix.rows @ (query / norm), -np.inf)
        allowed: frozenset[str] | None = None
        if scope_keys is not None:
            allowed = frozenset(scope_keys)
        elif thread_id is not None or user_id is not None:
            allowed = visible_scope_keys(thread_id or 0, user_id)
        if allowed is not None:
            codes = [code for sk, code in matrix.scope_codes.items() if sk in allowed]
            scores = np.where(np.isin(matrix.scopes, codes), scores, -np.inf)
        moment = now or datetime.now(UTC)
        want = min(len(matrix.ids), max(2 * k, k + 8))
        while True:
            top = np.argpartition(-scores, want - 1)[:want] if want < len(scores) else None
            order = top[np.argsort(-scores[top])] if top is not None else np.argsort(-scores)
            order = order[np.isfinite(scores[order])]
            cards = await self.get_cards(chat_id, [matrix.ids[i] for i in order.tolist()])
            by_id = {c.id: c for c in cards}
            found: list[tuple[Card, float]] = []
            for index in order.tolist():
                card = by_id.get(matrix.ids[index])
                if card is not None and card.visible_at(moment):
                    found.append((card, float(scores[index])))
                    if len(found) == k:
                        return found
            if want >= len(matrix.ids) or len(order) < want:
                return found
            want = min(len(matrix.ids), want * 4)

    async def vector_space(self, chat_id: int) -> VectorSpace | None:
        """The model and dimension of the chat's vectors (None: no vector stored yet)."""
        matrix = await self._matrix(chat_id)
        if matrix.dim == 0:
            return None
        return VectorSpace(model=matrix.model or None, dimension=matrix.dim)

    async def episodes(self, chat_id: int, *, limit: int = 20) -> list[Episode]:
        """The latest episodes of the chat, newest window first."""
        run_ids = await self._redis.zrevrange(self.key(chat_id, "episodes"), 0, limit - 1)
        pipe = self._redis.pipeline(transaction=False)
        for run_id in run_ids:
            pipe.hgetall(self.key(chat_id, f"episode:{run_id.decode()}"))
        return [_episode(chat_id, raw) for raw in await pipe.execute() if raw]

    async def get_episode(self, chat_id: int, run_id: str) -> Episode | None:
        raw = await self._redis.hgetall(self.key(chat_id, f"episode:{run_id}"))  # type: ignore[misc]
        return _episode(chat_id, raw) if raw else None

    async def links(self, chat_id: int) -> list[Link]:
        raw = await self._redis.hgetall(self.key(chat_id, "links"))  # type: ignore[misc]
        links: list[Link] = []
        for field_name, value in raw.items():
            source, relation, target = field_name.decode().split("|")
            links.append(
                Link(
                    from_card_id=source,
                    relation=relation,
                    to_card_id=target,
                    confidence=float(value),
                )
            )
        return sorted(links, key=lambda link: (int(link.from_card_id), link.relation))

    async def chat_keys(self, chat_id: int) -> list[str]:
        """Every key of one chat's memory (tests compare them with DUMP; ops inspect them)."""
        pattern = _glob_escape(self._keys.chat_tag(chat_id)) + "*"
        found = [k.decode() async for k in self._redis.scan_iter(match=pattern, count=1000)]
        return sorted(found)


def _episode(chat_id: int, raw: dict[bytes, bytes]) -> Episode:
    data = {k.decode(): v for k, v in raw.items()}
    text = {k: v.decode() for k, v in data.items() if k != "emb"}
    return Episode(
        run_id=text["run"],
        chat_id=chat_id,
        thread_id=int(text.get("thread") or 0),
        summary=text.get("summary", ""),
        topics=orjson.loads(text.get("topics") or "[]"),
        participants=orjson.loads(text.get("participants") or "[]"),
        range_start=_req_ms(text["start"]),
        range_end=_req_ms(text["end"]),
        message_count=int(text.get("messages") or 0),
        card_ids=[s for s in text.get("cards", "").split(",") if s],
        created_at=_req_ms(text["created"]),
        has_embedding="emb" in data,
    )


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def _lua_json(value: Any) -> bytes:
    """JSON for cjson: no NULs or lone surrogates can reach Lua (orjson rejects the latter)."""
    return orjson.dumps(value)
