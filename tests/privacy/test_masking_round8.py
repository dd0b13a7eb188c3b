"""Masking round 8 (§14): what the dev7 part showed, as concepts.

- A label line that points down at its value ("below", "here", a demonstrative, an arrow, in
  the label languages), the next line a single typed value; what makes that line no value.
- A lock's number asked on one line and answered alone on the next, a speaker written as a
  phrase after a dash, a stall line in a chat log read past its stamp.
- A passphrase or a dotted value in random case named after it.
- An intercom dialled after a flat's number, an alarm disarmed with its code.
- A hyphened word after a label is no copula; a Latin label glued after kana.
- And what over-reached: a password in a film or a book, a queue's ticket, a mask with a note.

The phrasings below are written for this test, not taken from a corpus part.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memory_worker.privacy.masking import contains_secret, mask


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("the ssh pass below:\nGv8!quarry2", "Gv8!quarry2"),
        ("Passwort vom Drucker hier ↓\nDruck_Eule55", "Druck_Eule55"),
        ("contraseña de la caja abajo\nCaja#Norte19", "Caja#Norte19"),
        ("пароль от сервера внизу:\nSrv_Oblako42", "Srv_Oblako42"),
        ("サーバーのパスワードは下記\nSrv!kaze88", "Srv!kaze88"),
        ("工作站密码在下面\nGzz_Shan2024", "Gzz_Shan2024"),
        ("la clave del router es esta\nRtr!Sol882", "Rtr!Sol882"),
        ("[08:00] Eva: wifi password?\n[08:01] Jo: sec\n[08:02] Jo: Wf_Harbor61", "Wf_Harbor61"),
        ("who knows the padlock number for the gym locker?\n— my sister: 4826", "4826"),
        ("ロッカーの南京錠の番号知ってる？\n— 兄：3391", "3391"),
        ("plum river attic socket73 is the passphrase for my laptop", "plum river attic socket73"),
        ("Vbn.moPQzRx is the password for the wiki", "Vbn.moPQzRx"),
        ("at the intercom dial 40 then 6215", "6215"),
        ("the alarm disarms with 8093", "8093"),
        ("l'allarme si disattiva con 5527", "5527"),
        ("engångskod från e-legitimationen: 441902", "441902"),
        ("タブレットのPIN: 660213", "660213"),
        ("hasełko do konta: Pies_Burek7", "Pies_Burek7"),
    ],
)
def test_the_concepts_of_round_8_are_masked(text: str, value: str) -> None:
    assert value not in mask(text)
    assert contains_secret(text)


@pytest.mark.parametrize(
    "text",
    [
        "password rules below:\nat least twelve characters",
        "passwort unten:\nsteht im Tresor",
        "パスワードは下記\n2025年1月に変更",
        "password below:\nv2.0.1",
        "la contraseña es esta\nsemana la cambio",
        "[08:00] Eva: wifi password?\n[08:01] Jo: sec\n[08:02] Jo: ask Lena",
        "who knows the padlock number?\n— my sister: 2 min",
        "at the intercom dial 40 then wait",
        "the alarm went off at 0615",
        "the password in the film was 'swordfish'",
        "a senha do atendimento é C-12, estou na fila",
        "password: ******** (hidden in the screenshot)",
        "手机PIN码忘了",
    ],
)
def test_the_look_alikes_of_round_8_are_kept(text: str) -> None:
    assert mask(text) == text


_POINTERS = st.sampled_from(["below:", "here:", "↓", "👇", "ниже:", "下記", "poniżej:", "->"])
_LINES = st.sampled_from(
    ["ask the admin", "v1.2.3", "[photo]", "********", "2024年に変更", "same as before", "—"]
)


@hsettings(max_examples=200, deadline=None)
@given(pointer=_POINTERS, below=_LINES)
def test_a_label_pointing_down_at_a_line_that_is_no_value_keeps_it(
    pointer: str, below: str
) -> None:
    text = f"password {pointer}\n{below}"
    assert mask(text).split("\n", 1)[1] == below
