"""A card's stored history is read across a trust boundary (§13, :mod:`memory_worker.cards.history`):
whatever bytes sit in the ``history`` hash, the decoder answers events and a count of skipped
entries, never an exception; well-formed events read back as written. Also pure: the events a
card's own fields record when its history lacks them, the memory as of a moment, and the
twin's bound on a history (its first event and the newest).
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import orjson
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memory_worker.cards import CardStatus, EventKind
from memory_worker.cards.codec import to_ms
from memory_worker.cards.history import (
    CardEvent,
    card_history,
    decode_event,
    decode_events,
    encode_events,
    live_as_of,
    stored_live_as_of,
)
from tests.support.cards import T0, stored
from tests.support.lua_twins import ChatState, Write

KINDS = [k.value for k in EventKind]
text = st.text(max_size=30)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(text, inner, max_size=4),
    max_leaves=20,
)
near_events = st.dictionaries(
    st.sampled_from(["k", "at", "via", "by", "run", "req", "card", "x"]),
    st.sampled_from(KINDS) | st.integers().map(str) | text | st.integers() | st.none(),
    max_size=8,
)


@settings(max_examples=300, deadline=None)  # a loaded host is not a failure
@given(st.binary(max_size=200))
def test_any_bytes_decode_to_events_or_a_skip(raw: bytes) -> None:
    events, skipped = decode_events(raw)
    assert all(isinstance(e, CardEvent) for e in events)
    assert skipped >= 0


@settings(max_examples=300, deadline=None)  # a loaded host is not a failure
@given(st.lists(json_values | near_events, max_size=6))
def test_any_json_line_decodes_to_an_event_or_a_skip(values: list[Any]) -> None:
    raw = b"".join(json.dumps(v).encode() + b"\n" for v in values)  # big integers too
    events, skipped = decode_events(raw)
    assert len(events) + skipped == len(values)
    if all(abs(v) < 2**63 for v in _ints(values)):
        kinds = [e["k"] for e in values if decode_event(e) is not None]
        assert [e.kind.value for e in events] == kinds


def _ints(value: Any) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, list):
        return [i for v in value for i in _ints(v)]
    if isinstance(value, dict):
        return [i for v in value.values() for i in _ints(v)]
    return []


well_formed = st.fixed_dictionaries(
    {
        "k": st.sampled_from(KINDS),
        "at": st.integers(0, 10**13).map(str),
    },
    optional={
        "via": st.sampled_from(["run", "remember", "correct", "retract", "import"]),
        "by": st.text(min_size=1, max_size=20),
        "run": st.text(min_size=1, max_size=20),
        "req": st.text(min_size=1, max_size=20),
        "card": st.integers(1, 10**9).map(str),
    },
)


@settings(max_examples=200, deadline=None)
@given(st.lists(well_formed, min_size=1, max_size=8))
@example([{"k": "created", "at": "9319176193411"}])  # read back a millisecond short via floats
def test_well_formed_events_read_back_as_written(entries: list[dict[str, str]]) -> None:
    events, skipped = decode_events(encode_events(entries))
    assert skipped == 0
    for entry, event in zip(entries, events, strict=True):
        assert (event.kind.value, to_ms(event.at)) == (entry["k"], entry["at"])
        assert (event.via, event.actor, event.run_id) == (
            entry.get("via", ""),
            entry.get("by"),
            entry.get("run"),
        )
        assert (event.request_id, event.card_id, event.derived) == (
            entry.get("req"),
            entry.get("card"),
            False,
        )


def test_absent_values_and_broken_lines_are_no_event() -> None:
    assert decode_events(None) == ([], 0)
    assert decode_events(b"") == ([], 0)
    assert decode_events(b"not json\n\xff\xfe\n[]\n") == ([], 3)
    assert decode_events(b'{"k": "created", "at": "99999999999999999"}\n') == ([], 1)
    (event,), skipped = decode_events(b'{"k": "created", "at": "5"}\n{"k": "x"')  # cut short
    assert (event.kind, skipped) == (EventKind.CREATED, 1)


def test_a_card_without_a_history_tells_its_story_from_its_fields() -> None:
    later = T0 + timedelta(hours=1)
    old = stored(
        "1",
        "Alice skis",
        first_run_id="r1",
        status=CardStatus.SUPERSEDED,
        retracted_at=later,
        superseded_by="2",
    )
    events = card_history(old, [])
    assert [(e.kind, e.at, e.via, e.run_id, e.card_id, e.derived) for e in events] == [
        (EventKind.CREATED, T0, "run", "r1", None, True),
        (EventKind.SUPERSEDED, later, "", None, "2", True),
    ]
    recorded = [CardEvent(kind=EventKind.CREATED, at=T0, via="run", run_id="r1")]
    recorded.append(CardEvent(kind=EventKind.SUPERSEDED, at=later, via="run", card_id="2"))
    assert card_history(old, recorded) == recorded  # nothing derived beside what was recorded


def test_as_of_holds_a_card_from_its_creation_until_it_was_retired() -> None:
    end = T0 + timedelta(hours=1)
    gone = stored("1", "Alice skis", status=CardStatus.RETRACTED, retracted_at=end)
    live = stored("2", "Alice skates", expires_at=end)
    for card in (gone, live):
        assert not live_as_of(card, T0 - timedelta(milliseconds=1))
        assert live_as_of(card, T0)
        assert live_as_of(card, end - timedelta(milliseconds=1))
        assert not live_as_of(card, end)
        data = orjson.loads(orjson.dumps(_short(card)))
        for moment in (T0 - timedelta(milliseconds=1), T0, end - timedelta(milliseconds=1), end):
            assert stored_live_as_of(data, int(to_ms(moment))) == live_as_of(card, moment)
    assert not stored_live_as_of({"created": "x"}, 0)


def _short(card: Any) -> dict[str, str]:
    from memory_worker.cards.codec import card_stored

    return card_stored(card)


def test_the_twin_keeps_a_history_s_first_event_and_the_newest() -> None:
    state = ChatState()
    for i in range(6):
        write = Write(state, str(i), cause={"via": "remember", "req": f"q{i}"}, history_max=3)
        write.history_add("1", "created" if i == 0 else "observed")
    assert [(e["k"], e["req"]) for e in state.history["1"]] == [
        ("created", "q0"),
        ("observed", "q4"),
        ("observed", "q5"),
    ]
