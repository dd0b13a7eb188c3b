"""The farm simulator's rule-based extractor: patterns, resolutions, merge, truncation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memory_worker.farmsim import extractor
from memory_worker.farmsim.extractor import Change, decide, find_facts, truncate_json

# (text, [(predicate, object, lang), ...])
FACT_TABLE: list[tuple[str, list[tuple[str, str, str]]]] = [
    # English
    ("I love hiking", [("likes", "hiking", "en")]),
    ("I really like green tea.", [("likes", "green tea", "en")]),
    ("I enjoy chess a lot!", [("likes", "chess", "en")]),
    ("I hate mornings", [("dislikes", "mornings", "en")]),
    ("I dislike loud music", [("dislikes", "loud music", "en")]),
    ("I don't like coffee", [("dislikes", "coffee", "en")]),
    ("I don't like coffee anymore", [("no_longer_likes", "coffee", "en")]),
    ("I no longer enjoy football", [("no_longer_likes", "football", "en")]),
    ("My name is Anna", [("name", "Anna", "en")]),
    ("Just call me Annie", [("name", "Annie", "en")]),
    ("I live in Berlin", [("lives_in", "Berlin", "en")]),
    ("I work at Siemens", [("works_at", "Siemens", "en")]),
    ("I work as a nurse", [("works_as", "nurse", "en")]),
    ("I am allergic to peanuts", [("allergic_to", "peanuts", "en")]),
    ("I'm allergic to cats", [("allergic_to", "cats", "en")]),
    ("I moved to Lisbon", [("lives_in", "Lisbon", "en")]),
    ("I've just moved to Porto", [("lives_in", "Porto", "en")]),
    ("I no longer live in Moscow", [("no_longer_lives_in", "Moscow", "en")]),
    ("Now I prefer coffee", [("prefers", "coffee", "en")]),
    ("I prefer tea now", [("prefers", "tea", "en")]),
    ("I prefer window seats", [("prefers", "window seats", "en")]),
    ("We decided to go hiking on Saturday", [("decided", "to go hiking on Saturday", "en")]),
    ("Let's meet on Friday at 7.30", [("meeting", "on Friday at 7.30", "en")]),
    (
        "My name is Anna and I live in Berlin",
        [("name", "Anna", "en"), ("lives_in", "Berlin", "en")],
    ),
    (
        "Hi, I'm Tom. I enjoy chess, and I work at Google!",
        [("likes", "chess", "en"), ("works_at", "Google", "en")],
    ),
    # Russian
    ("я люблю кофе", [("likes", "кофе", "ru")]),
    ("Мне очень нравится джаз", [("likes", "джаз", "ru")]),
    ("я не люблю кофе", [("dislikes", "кофе", "ru")]),
    ("я больше не люблю кофе", [("no_longer_likes", "кофе", "ru")]),
    ("мне больше не нравится джаз", [("no_longer_likes", "джаз", "ru")]),
    ("мне не нравятся пробки", [("dislikes", "пробки", "ru")]),
    ("меня зовут Анна", [("name", "Анна", "ru")]),
    ("я живу в Москве", [("lives_in", "Москве", "ru")]),
    ("я переехал в Питер", [("lives_in", "Питер", "ru")]),
    ("я больше не живу в Москве", [("no_longer_lives_in", "Москве", "ru")]),
    ("я работаю в Яндексе", [("works_at", "Яндексе", "ru")]),
    ("я работаю программистом", [("works_as", "программистом", "ru")]),
    ("у меня аллергия на орехи", [("allergic_to", "орехи", "ru")]),
    ("теперь я предпочитаю чай", [("prefers", "чай", "ru")]),
    ("я предпочитаю поезда", [("prefers", "поезда", "ru")]),
    ("мы решили поехать на море", [("decided", "поехать на море", "ru")]),
    ("давайте встретимся в пятницу", [("meeting", "в пятницу", "ru")]),
    # German
    ("ich liebe Kaffee", [("likes", "Kaffee", "de")]),
    ("ich mag Kaffee nicht", [("dislikes", "Kaffee", "de")]),
    ("ich mag Kaffee nicht mehr", [("no_longer_likes", "Kaffee", "de")]),
    ("ich wohne in Berlin", [("lives_in", "Berlin", "de")]),
    ("ich heiße Jonas", [("name", "Jonas", "de")]),
    ("ich arbeite als Lehrer", [("works_as", "Lehrer", "de")]),
    ("ich arbeite bei Siemens", [("works_at", "Siemens", "de")]),
    ("ich bin allergisch gegen Nüsse", [("allergic_to", "Nüsse", "de")]),
    ("ich bin nach Hamburg gezogen", [("lives_in", "Hamburg", "de")]),
    ("jetzt bevorzuge ich Tee", [("prefers", "Tee", "de")]),
    ("ich bevorzuge Züge", [("prefers", "Züge", "de")]),
    ("ich wohne nicht mehr in Köln", [("no_longer_lives_in", "Köln", "de")]),
    (
        "wir haben beschlossen, am Samstag zu wandern",
        [("decided", "am Samstag zu wandern", "de")],
    ),
    ("lass uns am Freitag treffen", [("meeting", "am Freitag", "de")]),
    # Spanish
    ("me encanta la pizza", [("likes", "la pizza", "es")]),
    ("no me gusta el fútbol", [("dislikes", "el fútbol", "es")]),
    ("ya no me gusta el fútbol", [("no_longer_likes", "el fútbol", "es")]),
    ("vivo en Madrid", [("lives_in", "Madrid", "es")]),
    ("ya no vivo en Madrid", [("no_longer_lives_in", "Madrid", "es")]),
    ("me mudé a Valencia", [("lives_in", "Valencia", "es")]),
    ("me llamo Lucía y vivo en Sevilla", [("name", "Lucía", "es"), ("lives_in", "Sevilla", "es")]),
    ("trabajo como médico", [("works_as", "médico", "es")]),
    ("trabajo en Telefónica", [("works_at", "Telefónica", "es")]),
    ("soy alérgica a los gatos", [("allergic_to", "los gatos", "es")]),
    ("ahora prefiero el té", [("prefers", "el té", "es")]),
    ("prefiero el tren", [("prefers", "el tren", "es")]),
    ("decidimos ir a la playa", [("decided", "ir a la playa", "es")]),
    ("nos vemos el sábado", [("meeting", "el sábado", "es")]),
    # nothing to extract
    ("Do you like tea?", []),
    ("¿Vives en Madrid?", []),
    ("I love you", []),
    ("I like it", []),
    ("The weather is nice today", []),
    ("", []),
]


@pytest.mark.parametrize(
    ("text", "expected"), FACT_TABLE, ids=[t or "<empty>" for t, _ in FACT_TABLE]
)
def test_find_facts(text: str, expected: list[tuple[str, str, str]]) -> None:
    assert [(f.predicate, f.object, f.lang) for f in find_facts(text)] == expected


#: What the simulated model writes, message by message: plausible sentences in the
#: speaker's language — no "Alice's name is Alice.", Russian names declined, verbs agreed.
CARD_TEXT_TABLE: list[tuple[str, str, list[str]]] = [
    ("Alice", "Hi all! My name is Alice and I live in Lisbon.", ["Alice lives in Lisbon."]),
    ("Jonas", "Ich heiße Jonas und ich wohne in Leipzig.", ["Jonas wohnt in Leipzig."]),
    ("Мария", "Привет! Меня зовут Мария.", []),
    ("Lucía", "Me llamo Lucía y vivo en Valencia.", ["Lucía vive en Valencia."]),
    ("user 42", "My name is Alice", ["user 42's name is Alice."]),
    ("Alexander", "Please call me Sasha.", ["Alexander goes by Sasha."]),
    ("Sasha", "Call me Sasha", []),
    ("Маша", "Меня зовут Мария", ["Машу зовут Мария."]),
    ("Олег", "Меня зовут Олег Петров", ["Олега зовут Олег Петров."]),
    (
        "Bob",
        "I work as a nurse at the city hospital.",
        ["Bob works as a nurse at the city hospital."],
    ),
    ("Bob", "I work as an engineer", ["Bob works as an engineer."]),
    ("Мария", "У меня аллергия на орехи.", ["У Марии аллергия на орехи."]),
    ("Олег", "У меня аллергия на кошек.", ["У Олега аллергия на кошек."]),
    ("Зоя", "У меня аллергия на пыль.", ["У Зои аллергия на пыль."]),
    ("Игорь", "У меня аллергия на мёд.", ["У Игоря аллергия на мёд."]),
    ("Ольга", "У меня аллергия на цитрусы.", ["У Ольги аллергия на цитрусы."]),
    ("Никита", "У меня аллергия на рыбу.", ["У Никиты аллергия на рыбу."]),
    ("Андрей", "У меня аллергия на пенициллин.", ["У Андрея аллергия на пенициллин."]),
    ("Anna", "у меня аллергия на орехи", ["У Anna аллергия на орехи."]),
    ("Олег", "Я недавно переехал в Самару.", ["Олег переехал в Самару."]),
    ("Мария", "Я переехала в Казань.", ["Мария переехала в Казань."]),
    ("Саша", "Я переехала во Владимир.", ["Саша переехала во Владимир."]),
    ("Саша", "Я переехал в Тверь.", ["Саша переехал в Тверь."]),
    ("Олег", "Я работаю на заводе.", ["Олег работает на заводе."]),
    ("Олег", "Я работаю в школе.", ["Олег работает в школе."]),
    ("Мария", "Мне очень нравится музыка.", ["Марии нравится музыка."]),
    ("Олег", "Мне нравятся горы.", ["Олегу нравятся горы."]),
    ("Зоя", "Мне не нравится жара.", ["Зое не нравится жара."]),
    ("Игорь", "Мне больше не нравится футбол.", ["Игорю больше не нравится футбол."]),
    ("Lucía", "Soy alérgica a los gatos.", ["Lucía tiene alergia a los gatos."]),
    ("Diego", "Tengo alergia al polen.", []),
    ("Diego", "Tengo alergia a las nueces.", ["Diego tiene alergia a las nueces."]),
]


@pytest.mark.parametrize(("sender", "text", "expected"), CARD_TEXT_TABLE)
def test_card_sentences_read_naturally(sender: str, text: str, expected: list[str]) -> None:
    out = extractor.extract(_request([_msg(1, 7, sender, text)]))
    assert [card["fact_text"] for card in out["candidate_cards"]] == expected


def test_no_card_sentence_repeats_a_placeholder_or_a_tautology() -> None:
    sentences = [
        card["fact_text"]
        for sender, text, _ in CARD_TEXT_TABLE
        for card in extractor.extract(_request([_msg(1, 7, sender, text)]))["candidate_cards"]
    ]
    for sentence in sentences:
        assert not any(mark in sentence for mark in ("(а)", "(a)", "/a ", "/о")), sentence
    for sender in {sender for sender, _, _ in CARD_TEXT_TABLE}:
        assert all(
            not (s.startswith(sender) and s.rstrip(".").endswith(f" {sender}")) for s in sentences
        )


@pytest.mark.parametrize(
    ("name", "forms"),
    [
        ("Мария", ("Марии", "Марии", "Марию")),
        ("Анна", ("Анны", "Анне", "Анну")),
        ("Ольга", ("Ольги", "Ольге", "Ольгу")),
        ("Зоя", ("Зои", "Зое", "Зою")),
        ("Олег", ("Олега", "Олегу", "Олега")),
        ("Андрей", ("Андрея", "Андрею", "Андрея")),
        ("Игорь", ("Игоря", "Игорю", "Игоря")),
        ("Любовь", ("Любови", "Любови", "Любовь")),
        ("Никита", ("Никиты", "Никите", "Никиту")),
        ("Alice", ("Alice", "Alice", "Alice")),
        ("Анна Петрова", ("Анна Петрова", "Анна Петрова", "Анна Петрова")),
    ],
)
def test_russian_names_are_declined(name: str, forms: tuple[str, str, str]) -> None:
    assert tuple(extractor.ru_decline(name, case) for case in ("gen", "dat", "acc")) == forms


def test_every_rule_is_exercised_by_the_table() -> None:
    used = {fact.rule for text, _ in FACT_TABLE for fact in find_facts(text)}
    assert used == {rule.name for rule in extractor.RULES}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("  coffee anymore ", "coffee"),
        ("anymore", None),
        ("hiking now", "hiking"),
        ("jazz very much", "jazz"),
        ("it when it rains", None),
        ("you", None),
        ("a b c d e f g h i", None),
        ("«Radiohead»", "Radiohead"),
        ("...", None),
    ],
)
def test_clean_object(text: str, expected: str | None) -> None:
    assert extractor.clean_object(text) == expected


def _request(
    messages: list[dict[str, Any]], existing: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "task": "memory_extraction",
        "run": {"id": "r1", "chat_id": -100, "thread_id": 0},
        "messages": messages,
        "existing_cards": existing or [],
    }


def _msg(message_id: int, user_id: int, name: str, text: str) -> dict[str, Any]:
    return {
        "message_id": message_id,
        "user_id": user_id,
        "sender_name": name,
        "text": text,
        "sent_at": "2024-05-01T10:00:00Z",
    }


def _card(
    card_id: str,
    predicate: str,
    obj: str,
    fact: str,
    *,
    subject: str = "Anna",
    user_id: int | None = 7,
    scope: str = "user",
) -> dict[str, Any]:
    return {
        "id": card_id,
        "scope": scope,
        "card_type": "preference",
        "subject": subject,
        "predicate": predicate,
        "object": obj,
        "fact": fact,
        "conf": 0.8,
        "user_id": user_id,
    }


def test_user_card_has_speaker_subject_author_and_language() -> None:
    out = extractor.extract(_request([_msg(11, 7, "Анна", "Я люблю кофе")]))
    [card] = out["candidate_cards"]
    assert card == {
        "scope": "user",
        "card_type": "preference",
        "subject": "Анна",
        "predicate": "likes",
        "object": "кофе",
        "fact_text": "Анна любит кофе.",
        "confidence": 0.8,
        "salience": 0.6,
        "source_message_ids": [11],
        "user_id": 7,
        "durability": "long",
    }


@pytest.mark.parametrize(
    ("text", "card_type", "durability", "fact_text"),
    [
        (
            "We decided to go hiking on Saturday",
            "decision",
            "short",
            "The group decided to go hiking on Saturday.",
        ),
        ("Let's meet on Friday", "event", "ephemeral", "The group plans to meet on Friday."),
        (
            "давайте встретимся в пятницу",
            "event",
            "ephemeral",
            "Группа договорилась встретиться в пятницу.",
        ),
        ("nos vemos el sábado", "event", "ephemeral", "El grupo quedó en verse el sábado."),
    ],
)
def test_group_facts_are_chat_scoped(
    text: str, card_type: str, durability: str, fact_text: str
) -> None:
    out = extractor.extract(_request([_msg(3, 9, "Bob", text)]))
    [card] = out["candidate_cards"]
    assert card["scope"] == "chat"
    assert card["subject"] == "chat:-100"
    assert card["user_id"] is None
    assert card["card_type"] == card_type
    assert card["durability"] == durability
    assert card["fact_text"] == fact_text
    assert card["source_message_ids"] == [3]


def test_repeated_statement_cites_every_message_and_gains_confidence() -> None:
    out = extractor.extract(
        _request([_msg(1, 7, "Anna", "I love jazz"), _msg(2, 7, "Anna", "I really love Jazz!")])
    )
    [card] = out["candidate_cards"]
    assert card["source_message_ids"] == [1, 2]
    assert card["confidence"] == 0.85


def test_same_fact_from_two_speakers_gives_two_cards() -> None:
    out = extractor.extract(
        _request([_msg(1, 7, "Anna", "I love jazz"), _msg(2, 8, "Bob", "I love jazz")])
    )
    assert [(c["subject"], c["user_id"]) for c in out["candidate_cards"]] == [
        ("Anna", 7),
        ("Bob", 8),
    ]


def test_later_move_in_the_batch_replaces_the_earlier_home() -> None:
    out = extractor.extract(
        _request([_msg(1, 7, "Anna", "I live in Moscow"), _msg(2, 7, "Anna", "I moved to Berlin")])
    )
    assert [(c["predicate"], c["object"]) for c in out["candidate_cards"]] == [
        ("lives_in", "Berlin")
    ]


def test_move_supersedes_existing_home() -> None:
    existing = [_card("c1", "lives_in", "Moscow", "Anna lives in Moscow.")]
    out = extractor.extract(_request([_msg(5, 7, "Anna", "I moved to Berlin")], existing))
    [card] = out["candidate_cards"]
    assert (card["predicate"], card["object"], card["fact_text"]) == (
        "lives_in",
        "Berlin",
        "Anna moved to Berlin.",
    )
    assert out["resolutions"] == [
        {
            "old_card_id": "c1",
            "decision": "supersede",
            "into_card_id": None,
            "new_fact_text": "Anna moved to Berlin.",
            "reason": "changed",
        }
    ]
    assert out["links"] == [
        {
            "from_fact_text": "Anna moved to Berlin.",
            "to_fact_text": "Anna lives in Moscow.",
            "relation": "supersedes",
            "confidence": 0.9,
        }
    ]


@pytest.mark.parametrize(
    ("existing", "text", "decision", "new_predicate"),
    [
        (("likes", "coffee"), "I don't like coffee anymore", "supersede", "no_longer_likes"),
        (("likes", "кофе"), "я больше не люблю кофе", "supersede", "no_longer_likes"),
        (("likes", "Kaffee"), "ich mag Kaffee nicht mehr", "supersede", "no_longer_likes"),
        (("likes", "el fútbol"), "ya no me gusta el fútbol", "supersede", "no_longer_likes"),
        (("lives_in", "Moscow"), "I no longer live in Moscow", "supersede", "no_longer_lives_in"),
        (("prefers", "tea"), "Now I prefer coffee", "supersede", "prefers"),
        (("prefers", "чай"), "теперь я предпочитаю кофе", "supersede", "prefers"),
        (("lives_in", "Madrid"), "me mudé a Valencia", "supersede", "lives_in"),
        (("lives_in", "Moscow"), "I live in Berlin", "supersede", "lives_in"),
        (("works_at", "Siemens"), "I work at Google", "supersede", "works_at"),
        (("likes", "coffee"), "I hate coffee", "competing", "dislikes"),
        (("dislikes", "coffee"), "I love coffee", "competing", "likes"),
    ],
)
def test_change_of_mind_resolves_the_existing_card(
    existing: tuple[str, str], text: str, decision: str, new_predicate: str
) -> None:
    predicate, obj = existing
    cards = [_card("old", predicate, obj, f"Anna {predicate} {obj}.")]
    out = extractor.extract(_request([_msg(5, 7, "Anna", text)], cards))
    [card] = out["candidate_cards"]
    assert card["predicate"] == new_predicate
    [resolution] = out["resolutions"]
    assert resolution["old_card_id"] == "old"
    assert resolution["decision"] == decision
    assert resolution["new_fact_text"] == card["fact_text"]
    relation = {"supersede": "supersedes", "competing": "contradicts"}[decision]
    assert [link["relation"] for link in out["links"]] == [relation]


@pytest.mark.parametrize(
    ("existing", "text"),
    [
        (("likes", "tea"), "I love coffee"),  # likes are many-valued
        (("prefers", "tea"), "I prefer coffee"),  # no change marker
        (("lives_in", "Berlin"), "I don't like coffee anymore"),
        (("likes", "coffee"), "I don't like tea anymore"),
    ],
)
def test_unrelated_or_additive_facts_leave_existing_cards_alone(
    existing: tuple[str, str], text: str
) -> None:
    predicate, obj = existing
    cards = [_card("old", predicate, obj, f"Anna {predicate} {obj}.")]
    out = extractor.extract(_request([_msg(5, 7, "Anna", text)], cards))
    assert len(out["candidate_cards"]) == 1
    assert out["resolutions"] == []


def test_restatement_reinforces_instead_of_adding_a_card() -> None:
    existing = [_card("c9", "likes", "the jazz", "Anna likes jazz.")]
    out = extractor.extract(_request([_msg(5, 7, "Anna", "I love Jazz!")], existing))
    assert out["candidate_cards"] == []
    assert out["resolutions"] == [
        {
            "old_card_id": "c9",
            "decision": "reinforce",
            "into_card_id": None,
            "new_fact_text": None,
            "reason": "restated",
        }
    ]
    assert out["links"] == []


def test_existing_card_of_another_user_is_not_touched() -> None:
    existing = [_card("c1", "lives_in", "Moscow", "Bob lives in Moscow.", subject="Bob", user_id=8)]
    out = extractor.extract(_request([_msg(5, 7, "Anna", "I moved to Berlin")], existing))
    assert out["resolutions"] == []
    assert len(out["candidate_cards"]) == 1


def test_existing_card_without_user_id_matches_by_subject_name() -> None:
    existing = [_card("c1", "lives_in", "Moscow", "Anna lives in Moscow.", user_id=None)]
    out = extractor.extract(_request([_msg(5, 7, "anna", "I moved to Berlin")], existing))
    assert [r["decision"] for r in out["resolutions"]] == ["supersede"]


def test_new_meeting_supersedes_the_planned_one() -> None:
    existing = [
        _card(
            "m1",
            "meeting",
            "on Friday",
            "The group plans to meet on Friday.",
            subject="chat:-100",
            user_id=None,
            scope="chat",
        )
    ]
    out = extractor.extract(_request([_msg(5, 7, "Anna", "Let's meet on Saturday")], existing))
    assert [(r["old_card_id"], r["decision"]) for r in out["resolutions"]] == [("m1", "supersede")]


@pytest.mark.parametrize(
    ("predicate", "obj", "change", "old_predicate", "old_obj", "expected"),
    [
        ("likes", "jazz", Change.NONE, "likes", "jazz", "reinforce"),
        ("likes", "jazz", Change.NONE, "likes", "rock", None),
        ("likes", "jazz", Change.NONE, "dislikes", "jazz", "competing"),
        ("prefers", "tea", Change.REPLACE, "prefers", "coffee", "supersede"),
        ("prefers", "tea", Change.NONE, "prefers", "coffee", None),
        ("lives_in", "berlin", Change.NONE, "lives_in", "moscow", "supersede"),
        ("no_longer_likes", "jazz", Change.NEGATE, "likes", "jazz", "supersede"),
        ("no_longer_likes", "jazz", Change.NEGATE, "likes", "rock", None),
    ],
)
def test_decide_table(
    predicate: str,
    obj: str,
    change: Change,
    old_predicate: str,
    old_obj: str,
    expected: str | None,
) -> None:
    negates = frozenset({"likes", "prefers"}) if change is Change.NEGATE else frozenset()
    assert decide(predicate, obj, change, negates, old_predicate, old_obj) == expected


def test_summary_topics_and_participants_are_always_filled() -> None:
    out = extractor.extract(
        _request(
            [
                _msg(1, 7, "Anna", "The weather is lovely, sunshine everywhere"),
                _msg(2, 8, "Bob", "Sunshine makes me happy"),
                _msg(3, 7, "Anna", "Indeed"),
            ]
        )
    )
    assert out["participants"] == ["Anna", "Bob"]
    assert out["topics"][0] == "sunshine"
    assert out["episode_summary"] == (
        "Anna, Bob exchanged 3 messages about sunshine, weather, lovely. Nothing durable was said."
    )
    assert out["candidate_cards"] == []


def test_no_messages_still_answers_the_full_shape() -> None:
    out = extractor.extract({"task": "memory_extraction"})
    assert out == {
        "episode_summary": "No messages.",
        "topics": [],
        "participants": [],
        "candidate_cards": [],
        "resolutions": [],
        "links": [],
    }


def test_extraction_is_deterministic() -> None:
    request = _request([_msg(1, 7, "Anna", "I love jazz. I live in Berlin.")])
    assert extractor.extract(request) == extractor.extract(json.loads(json.dumps(request)))


def test_malformed_messages_are_skipped() -> None:
    request = _request([{"message_id": "x"}, "nope", _msg(2, 7, "Anna", "I love jazz")])  # type: ignore[list-item]
    out = extractor.extract(request)
    assert [c["source_message_ids"] for c in out["candidate_cards"]] == [[2]]


# --------------------------------------------------------------------------- merge


def _merge_card(card_id: str, fact: str, salience: float) -> dict[str, Any]:
    return {"id": card_id, "predicate": "likes", "fact": fact, "salience": salience, "obs": 1}


def test_merge_clusters_equal_and_contained_facts() -> None:
    out = extractor.merge(
        {
            "task": "memory_merge",
            "subject": "Anna",
            "cards": [
                _merge_card("a", "Anna likes jazz.", 0.5),
                _merge_card("b", "anna likes JAZZ", 0.7),
                _merge_card("c", "Anna likes jazz and blues.", 0.7),
                _merge_card("d", "Anna lives in Berlin.", 0.9),
                _merge_card("e", "Anna likes jazzercise.", 0.9),
            ],
        }
    )
    assert out == {
        "clusters": [
            {
                "survivor_id": "b",
                "absorbed_ids": ["a", "c"],
                "merged_fact_text": "Anna likes jazz and blues.",
            }
        ],
        "demote_ids": [],
        "keep_ids": ["d", "e"],
    }


def test_merge_survivor_tie_breaks_on_first_card() -> None:
    out = extractor.merge(
        {"cards": [_merge_card("x", "Bob likes tea", 0.6), _merge_card("y", "Bob likes tea.", 0.6)]}
    )
    assert out["clusters"] == [
        {"survivor_id": "x", "absorbed_ids": ["y"], "merged_fact_text": "Bob likes tea"}
    ]


def test_merge_of_distinct_facts_keeps_everything() -> None:
    out = extractor.merge(
        {"cards": [_merge_card("x", "Bob likes tea", 0.6), _merge_card("y", "Bob hates rain", 0.6)]}
    )
    assert out == {"clusters": [], "demote_ids": [], "keep_ids": ["x", "y"]}


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Olaf mag Fußball.", "Olaf mag Fußball nicht mehr."),
        ("Alice likes jazz.", "Alice no longer likes jazz."),
        ("Семён любит футбол.", "Семён больше не любит футбол."),
        ("A Óscar le gusta el fútbol.", "A Óscar ya no le gusta el fútbol."),
    ],
)
def test_merge_never_swallows_a_negation_as_a_longer_duplicate(old: str, new: str) -> None:
    out = extractor.merge({"cards": [_merge_card("x", old, 0.6), _merge_card("y", new, 0.6)]})
    assert out["clusters"] == []


# --------------------------------------------------------------------------- dispatch and truncation


@pytest.mark.parametrize(
    ("content", "task"),
    [
        ('{"task": "memory_merge", "cards": []}', "memory_merge"),
        ('Here is the input:\n```json\n{"task": "memory_extraction"}\n```', "memory_extraction"),
        ("not json at all", None),
        ("[1, 2]", None),
    ],
)
def test_parse_task(content: str, task: str | None) -> None:
    parsed = extractor.parse_task(content)
    assert (parsed or {}).get("task") == task


def test_answer_dispatches_by_task() -> None:
    assert extractor.answer({"task": "memory_merge", "cards": []}) == {
        "clusters": [],
        "demote_ids": [],
        "keep_ids": [],
    }
    assert extractor.answer({"task": "something_else"}) is None


def test_truncate_json_cuts_inside_candidate_cards() -> None:
    out = extractor.extract(
        _request([_msg(1, 7, "Anna", "I love jazz. I live in Berlin. I work at Siemens.")])
    )
    text = json.dumps(out)
    cut = truncate_json(text)
    start = text.index('"candidate_cards"')
    end = text.index('"resolutions"')
    assert start < len(cut) < end
    assert text.startswith(cut)
    with pytest.raises(json.JSONDecodeError):
        json.loads(cut)


def test_truncate_json_with_empty_cards_cuts_after_the_bracket() -> None:
    text = json.dumps(extractor.extract({"messages": []}))
    cut = truncate_json(text)
    assert cut.endswith('"candidate_cards": [')


def test_truncate_json_without_cards_cuts_in_half() -> None:
    text = json.dumps({"embeddings": [[0.1, 0.2]], "dimension": 2, "count": 1})
    assert truncate_json(text) == text[: len(text) // 2]
    assert truncate_json("x") == ""
