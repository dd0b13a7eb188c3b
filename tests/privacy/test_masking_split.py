"""Masking (§14) measured on what it was not tuned on, and one decision for cards and prompts.

- The split: the train part (``tests/data/masking/train.jsonl``, the rules are written
  against it), the dev part (``tests/data/masking/dev.jsonl``: the first held-out set,
  scored twice as held out, then read and used as dev, see its ``DEV.md``), the dev2 part
  (``tests/data/masking/dev2.jsonl``: the second held-out set, scored twice as held out at
  recall 0.839 and 0.862, then read and used as dev, see its ``DEV2.md``) and the dev3 part
  (``tests/data/masking_test3/test.jsonl``: written before any rule changed in the round that
  made dev2, by someone who did not open the rules; scored once as held out at recall 0.965,
  then, in round 4, read and used as dev, see its ``README.md`` and
  ``tests/data/masking/DEV3.md``), and the dev4 part (``tests/data/masking_test4/test.jsonl``:
  written blind for round 4, scored once as held out at recall 0.893, then read in round 5,
  see ``tests/data/masking/DEV4.md``), and the dev5 part (``tests/data/masking_test5/test.jsonl``:
  written blind for round 5, scored once as held out at recall 0.933, then read in round 6,
  see ``tests/data/masking/DEV5.md``), and the dev6 part (``tests/data/masking_test6/test.jsonl``:
  written blind for round 6, scored once as held out at recall 0.961, then read in round 7,
  see ``tests/data/masking/DEV6.md``), and the dev7 part (``tests/data/masking_test7/test.jsonl``:
  written blind for round 7, scored once as held out at recall 0.968, then read in round 8,
  see ``tests/data/masking/DEV7.md``), and the dev8 part (``tests/data/masking_test8/test.jsonl``:
  written blind for round 8, scored once as held out at recall 0.905, then read in round 9,
  see ``tests/data/masking/DEV8.md``), and the dev9 part (``tests/data/masking_test9/test.jsonl``:
  written blind for round 9, scored once as held out at recall 0.911, then read in round 10,
  see ``tests/data/masking/DEV9.md``). All are scored with ``tests/support/masking_score.py``;
  the figures pinned here are the ones reached (see ``docs/benchmarks.md``, "Masking"). The
  held-out part of round 10 (test10) is written by someone else and scored once.
- One decision: whatever :func:`contains_secret` flags for its value, :func:`mask` takes
  out — for arbitrary text (hypothesis, 400 + 300 examples), and ``mask`` is idempotent and
  never raises.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memory_worker.privacy.masking import (
    CARD_NUMBER,
    FILTERED,
    REDACTED,
    contains_secret,
    find_secrets,
    mask,
)
from memory_worker.privacy.masking.detect import REPEAT_MIN_CHARS
from memory_worker.privacy.masking.normalise import fold
from tests.support.masking_score import READ_PARTS, CorpusError, load, score

DATA = Path(__file__).parent.parent / "data"
TRAIN = DATA / "masking" / "train.jsonl"
DEV = DATA / "masking" / "dev.jsonl"
DEV2 = DATA / "masking" / "dev2.jsonl"
DEV3 = DATA / "masking_test3" / "test.jsonl"
DEV4 = DATA / "masking_test4" / "test.jsonl"
DEV5 = DATA / "masking_test5" / "test.jsonl"
DEV6 = DATA / "masking_test6" / "test.jsonl"
DEV7 = DATA / "masking_test7" / "test.jsonl"
DEV8 = DATA / "masking_test8" / "test.jsonl"
DEV9 = DATA / "masking_test9" / "test.jsonl"
PLACEHOLDERS = (REDACTED, CARD_NUMBER, FILTERED, "[email]", "[phone]")


def test_the_train_part_meets_its_bar_in_every_language_of_the_split() -> None:
    rows = load(TRAIN)
    result = score(rows, mask)
    assert len(result.by_lang) >= 16
    assert result.total.recall >= 0.99, result.missed
    assert result.total.false_rate <= 0.02, result.falsely_masked


#: Each dev part: an earlier held-out set, scored as held out, then read and used as dev — held
#: at the figures its round reached (rows at least, languages at least, recall, false masks).
#:
#: - dev (held out for two scorings, 0.804 / 6.4 % and 0.829 / 3.9 %, then improved by the
#:   families of its lines until 1.000 / 0.0 %): held at the held-out bar;
#: - dev2 (the second held-out set: 0.839 / 0.862 and 1.0 % / 0.7 % as held out, then improved
#:   by its families, each written fresh into the train part, until 0.973 / 0.2 %; 0.995 in
#:   round 4 — see the recall test below): held at the held-out bar;
#: - dev3 (test3: once as held out 0.965 (472 of 489) / 0.2 %; round 4, ``families3.py``,
#:   reached 0.998 / 0.0 %): held within one line;
#: - dev4 (test4: once as held out 0.893 (418 of 468) / 0.2 %; round 5's general mechanisms —
#:   contamination, the last guard's copula line ends, safes, tills and security answers,
#:   script folding — reached 0.998 / 0.2 %; ``DEV4.md``): held within one line;
#: - dev5 (test5: once as held out 0.933 (332 of 356) / 0.9 %; round 6 — a security question's
#:   answer by concept, bracketed values, glued JSON keys, a code answered in a chat, a key
#:   box's number in a long message, a command that asks for its password — reached 1.000 /
#:   0.3 % (1 of 340); ``DEV5.md``): held within one line;
#: - dev6 (test6: once as held out 0.961 (463 of 482) / 2.3 % (11 of 482); round 7 — more
#:   look-alike letters and the last guard reading the folded text, glued qualifiers, env keys
#:   in other languages, a card's code named by what it is, passphrases, placeholders that
#:   name what to put there, a command that asks for its password — reached 1.000 / 0.0 %;
#:   ``DEV6.md``): held within one line;
#: - dev7 (test7: once as held out 0.968 (453 of 468) / 0.6 % (3 of 468); round 8 — a label line
#:   pointing down at its value, a lock's number asked and answered by a speaker phrase, a
#:   passphrase or a dotted value named after it, an intercom dialled and an alarm disarmed, a
#:   label glued after kana, fond labels, made-up bot tokens, a password in a film and a queue's
#:   ticket — reached 1.000 / 0.0 %; ``DEV7.md``): held within one line;
#: - dev8 (test8: once as held out 0.905 (829 of 916) / 1.1 % (10 of 881, all phone numbers on
#:   lines about passwords); round 9 — a code adorned with a keypad's keys, a gate's, a padlock's
#:   or a key box's number bare after its noun, a user then a transliterated "pass", a ``user /
#:   password`` pair, a one-time code past a comma, a label restated by "it's", a key glued to
#:   CJK text, and a phone number never a password's value — reached 1.000 / 0.0 %;
#:   ``DEV8.md``): held within one line;
#: - dev9 (test9: once as held out 0.911 (798 of 876) / 0.9 % (7 of 751: login errors quoting a
#:   user, flights' numbers beside airports' gates, a form's placeholder); round 10 — a code
#:   answered on the next speaker's line to "did the text come?", a security question given
#:   then an answer of a few words, a password handed to a command (``sudo -S`` through a pipe,
#:   ``lftp -u``, ``htpasswd -b``, ``7z -p``, ``zip -P``, ``openssl -pass``), a label misspelt
#:   or in kana then a value glued after a word of the writer's script, "the login for X is V"
#:   and "and the code" in Arabic — reached 0.994 (871 of 876) / 0.0 %; ``DEV9.md``): held within
#:   one line.
DEV_PARTS = [
    pytest.param(DEV, 600, 12, 0.97, 0.01, id="dev"),
    pytest.param(DEV2, 1000, 16, 0.97, 0.01, id="dev2"),
    pytest.param(DEV3, 900, 15, 0.995, 0.005, id="dev3"),
    pytest.param(DEV4, 900, 15, 0.995, 0.005, id="dev4"),
    pytest.param(DEV5, 690, 15, 0.995, 0.005, id="dev5"),
    pytest.param(DEV6, 960, 15, 0.995, 0.005, id="dev6"),
    pytest.param(DEV7, 930, 15, 0.995, 0.005, id="dev7"),
    pytest.param(DEV8, 1790, 15, 0.998, 0.002, id="dev8"),
    pytest.param(DEV9, 1627, 15, 0.993, 0.002, id="dev9"),
]
#: The dev2 part reached 0.995 (586 of 589) in round 4.
DEV2_RECALL = 0.99


@pytest.mark.parametrize(("part", "rows_at_least", "langs_at_least", "recall", "false"), DEV_PARTS)
def test_each_dev_part_stays_at_the_figures_reached(
    part: Path, rows_at_least: int, langs_at_least: int, recall: float, false: float
) -> None:
    rows = load(part)
    result = score(rows, mask)
    assert len(rows) >= rows_at_least
    assert len(result.by_lang) >= langs_at_least
    assert result.total.recall >= recall, result.missed
    assert result.total.false_rate <= false, result.falsely_masked


def test_the_dev2_part_stays_at_the_recall_of_round_4() -> None:
    result = score(load(DEV2), mask)
    assert result.total.recall >= DEV2_RECALL, result.missed


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # a value answering a request in a chat log (no question mark), in several languages
        ("[12:01] Hugo : le mdp du wifi stp\n[12:02] moi : Corvo_Nebel41", "Corvo_Nebel41"),
        ("[23:10] Оля: код от домофона скинь\n[23:11] я: 4410", "4410"),
        ("[09:00] 지영: 현관 비밀번호 알려줘\n[09:01] 나: 7731", "7731"),
        ("[08:55] Sanne: wat is de wifi?\n[08:56] ik: Wolga_Kiwi19", "Wolga_Kiwi19"),
        ("14:02 <dave> which pass for the nas?\n14:03 <me> Qw7!rT2yU9", "Qw7!rT2yU9"),
        # PINs and codes: Greek look-alike capitals, a Latin label glued after CJK, object words
        ("\u03a1\u0399\u039d 2143", "2143"),
        ("手机PIN码 8504", "8504"),
        ("报警器解锁码 7999", "7999"),
        ("경보 해제 번호 0797", "0797"),
        ("mi clave del cajero es 3490", "3490"),
        ("el pin de la tarjeta de crédito de mi padre es 0547", "0547"),
        # informal password labels
        ("короче пасс DvzG+sa9hSTM", "DvzG+sa9hSTM"),
        ("wifi pass Sakura1972", "Sakura1972"),
        ("wifi-lösenet Luna2008", "Luna2008"),
        ("netflix login\nRKdI*d9xkNDvHrl", "RKdI*d9xkNDvHrl"),
        ("uOjZ%ZFcc1CS <- gmail pw, delete after reading", "uOjZ%ZFcc1CS"),
        # a list of credentials under its heading, a password on a ``net use`` line
        ("Zugangsdaten:\nNAS: Xk2!pLm9q\nRouter: Fuchs_1993", "Xk2!pLm9q"),
        ("accounts:\n- gmail: Daisy1981\n- slack: same as gmail", "Daisy1981"),
        ("net use Z: \\\\srv\\share /user:CORP\\jb 7^&RNN*3&_gF", "7^&RNN*3&_gF"),
        # spelt apart
        ("pass word: Xk2!pLm9q", "Xk2!pLm9q"),
        ("pin 4 4 7 1", "4 4 7 1"),
        # SSNs said in passing
        ("for the credit check they want my social, it's 572 83 1941", "572 83 1941"),
        ("私のSSNは572 83 1941", "572 83 1941"),
    ],
)
def test_the_families_of_round_4_are_masked(text: str, value: str) -> None:
    assert value not in mask(text)


@pytest.mark.parametrize(
    "text",
    [
        "what is the wifi called?\nHomeNet5G",
        "[10:01] ana: what time is the alarm set for?\n[10:02] bo: 0630",
        "the social club meets at 555 12 3456",
        "boarding pass BA2490X, gate 12",
        "pass wifi is down again",
        "la clave es 1499 euros",
        "the token is 1234 for the arcade",
        "link om je wachtwoord te resetten is verstuurd",
        "my PIN has 4 digits, the new cards want 6",
        "pwd=/home/anna",
        "accounts:\n- email: anna92@gmail.com\n- user: anna92\n- created: 12/03/2024",
        "Meeting notes:\naccess: room B12\ntime: 14:30\ncode: ABC123X",
        "net use Z: \\\\srv\\share * /user:CORP\\jb",
        "[10:00] Léa : c'est quoi le code postal ?\n[10:01] moi : 75011",
        "[09:00] ana: how many pins does the connector have?\n[09:01] bo: 24",
    ],
)
def test_the_look_alikes_of_round_4_are_kept(text: str) -> None:
    assert mask(text) == text


def test_the_scorer_refuses_a_malformed_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"id": "a", "lang": "en", "kind": "secret", "category": "pin", "text": "PIN 1234",'
        ' "secrets": ["1234"]}\n{"id": "b", "lang": "en", "kind": "secret", "category": "pin",'
        ' "text": "PIN 1234", "secrets": ["9999"]}\n',
        encoding="utf-8",
    )
    with pytest.raises(CorpusError, match="line 2"):
        load(path)


# --- one decision: what contains_secret flags, mask takes out ----------------------------------


def _outside_placeholders(masked: str) -> list[str]:
    parts = [masked]
    for placeholder in PLACEHOLDERS:
        parts = [piece for part in parts for piece in part.split(placeholder)]
    return parts


def _assert_flagged_values_are_gone(text: str) -> None:
    masked = mask(text)
    assert mask(masked) == masked
    for found in find_secrets(text):
        value = text[found.start : found.end]
        assert contains_secret(text)
        if len(value) < REPEAT_MIN_CHARS or any(value in p for p in PLACEHOLDERS):
            continue  # a one-character value stands in ordinary text too
        assert all(value not in part for part in _outside_placeholders(masked)), (text, value)


_PIECES = [
    *"abcXYZ019 :=-/.@#\n'\"",
    *("password", "pass", "PIN", "пароль", "密码", "パスワード", "şifre", "wachtwoord"),
    *("is", "my", "the", "curl -u ", "mysql -p", " door code ", "cvv", "4111 1111 1111 1111"),
    *("\u200b", "ｐ", "\u0430", "Xk2v9Lq", "1234", "123-45-6789", "abandon", "ability"),
]
SOUP = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@hsettings(max_examples=400, deadline=None)
@given(text=SOUP)
def test_what_contains_secret_flags_mask_takes_out_on_label_soup(text: str) -> None:
    _assert_flagged_values_are_gone(text)


@hsettings(max_examples=300, deadline=None)
@given(text=st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=200))
def test_what_contains_secret_flags_mask_takes_out_on_any_text(text: str) -> None:
    _assert_flagged_values_are_gone(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("curl -u admin:Xk2v9Lq!x https://api.example.com", "Xk2v9Lq!x"),
        ("пин-код карты 9921", "9921"),
        ("the key is Zq8-Lm3vP0w", "Zq8-Lm3vP0w"),
        ("user admin pass hunter22", "hunter22"),
        ("wifi password\nMeadow2024!", "Meadow2024!"),
        ("Meadow2024! is my password", "Meadow2024!"),
        ("pass\u200bword: Meadow2024!", "Meadow2024!"),
        ("ｐａｓｓｗｏｒｄ：Meadow2024!", "Meadow2024!"),
        ("p\u0430ssword is Meadow2024!", "Meadow2024!"),
        ("password: Meadow2024! and again Meadow2024!", "Meadow2024!"),
    ],
)
def test_a_flagged_value_is_gone_from_the_masked_text_everywhere(text: str, value: str) -> None:
    assert contains_secret(text)
    assert value not in mask(text)


def test_folding_maps_spans_back_to_the_text_as_written() -> None:
    text = "ｐａｓｓ\u200bｗｏｒｄ：Ab12"
    folded = fold(text)
    assert folded.text == "password:Ab12"
    start = folded.text.index("Ab12")
    assert text[slice(*folded.span(start, start + 4))] == "Ａｂ１２" or text.endswith("Ab12")
    assert fold("plain ascii").starts is None
    assert fold("пароль ромашка").starts is None  # a Russian word stays Russian


@pytest.mark.parametrize("part", READ_PARTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_read_part_s_look_alikes_are_masked_above_half_a_percent(part: Path) -> None:
    """Every part the rules were read against keeps its look-alikes (at most 0.5 % changed):
    a rule added for one part's secrets must not buy them with another part's look-alikes."""
    rows = [row for row in load(part) if row.kind == "lookalike"]
    assert score(rows, mask).total.false_rate <= 0.005, score(rows, mask).falsely_masked
