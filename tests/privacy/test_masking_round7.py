"""Masking round 7 (§14): what the dev6 part showed, as concepts and normalisations.

- Look-alike letters beyond the common ones fold to Latin (the lunate sigma before NFKC turns
  it into a ``Σ``, Komi ``Ԝ``, small capitals, the Latin alpha), and the last guard and
  :func:`contains_secret` read the folded text as the detectors do.
- A label's qualifier in brackets glued to it, a Turkish case ending after an apostrophe.
- Env keys naming the password in another language, spelt in ASCII or with their accents.
- A card's code named by what it is ("the three digits on the back"), in fifteen languages.
- A passphrase of lower-case words ending in digits; a key on a line naming its network;
  an answer word alone after a security question; a question answered on its own line.
- And what over-reached: a command that asks for its password, a placeholder that names
  what to put there, "never" said of a secret, a time such as ``10am``.

The phrasings below are written for this test, not taken from a corpus part.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memory_worker.privacy.masking import contains_secret, mask
from memory_worker.privacy.masking.normalise import SMALL_CAPITALS, fold

#: Latin letters and letters of other scripts drawn like them.
LOOKALIKES = {
    "a": "аα\u0251\u1d00",
    "c": "сϲ\u1d04",
    "d": "ԁ\u1d05",
    "e": "еε\u1d07",
    "o": "оοσ\u1d0f",
    "p": "рρ\u1d18",
    "s": "ѕ\ua731",
    "w": "ԝω\u1d21",
    "r": "\u0280",
}
LABELS = ["password", "passwort", "wachtwoord", "contraseña", "mot de passe", "lösenord"]


@st.composite
def disguised(draw: st.DrawFn) -> str:
    """A label with some of its letters drawn from another script."""
    label = draw(st.sampled_from(LABELS))
    out = []
    for char in label:
        others = LOOKALIKES.get(char, "")
        if others and draw(st.booleans()):
            out.append(draw(st.sampled_from(list(others))))
        else:
            out.append(char)
    return "".join(out)


@given(label=disguised(), joint=st.sampled_from([": ", " = ", "：", ": \u200b"]))
@hsettings(max_examples=300, deadline=None)
def test_a_label_drawn_in_look_alike_letters_still_names_its_value(label: str, joint: str) -> None:
    text = f"{label}{joint}Vq7!marlo9"
    assert contains_secret(text)
    assert "Vq7!marlo9" not in mask(text)


def test_small_capitals_and_the_lunate_sigma_fold_to_latin() -> None:
    assert fold("\u03f9ode").text == "Code"
    assert fold("".join(SMALL_CAPITALS)).text == "abcdefghijklmnoprstuvwyz"
    assert fold("пароль").starts is None  # a Russian word stays Russian


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("ｐａｓｓｗｄ（ＮＡＳ）：Hq7vLz2kTx", "Hq7vLz2kTx"),
        ("Passwort(Büro-WLAN):Tanne#8812", "Tanne#8812"),
        ("パスワード（社用PC）：Kumo_77_ame", "Kumo_77_ame"),
        ("telefonun PIN'i: 5521", "5521"),
        ("kartın CVV'si 733", "733"),
        ("SMTP_LÖSEN=Gx8mQ2vLr7Tz", "Gx8mQ2vLr7Tz"),
        ("DB_HASŁO=Gx8mQ2vLr7Tz", "Gx8mQ2vLr7Tz"),
        ("APP_SIFRE=Gx8mQ2vLr7Tz", "Gx8mQ2vLr7Tz"),
        ("it only wants the 3 digits on the back: 517", "517"),
        ("los tres dígitos del reverso: 628", "628"),
        ("카드 뒷면 3자리 448", "448"),
        ("le code de sécurité, c'est 390", "390"),
        ("MFA for the VPN: 408812", "408812"),
        ("back gate: punch 61294 then pull", "61294"),
        ("wifi pass: velvet onion harbor kite58", "velvet onion harbor kite58"),
        ("cabin wifi SSID Fjord, key moss_stone_river_44", "moss_stone_river_44"),
        ("Sicherheitsfrage (Lieblingsfilm) Antwort Quarzfeld9", "Quarzfeld9"),
        ('support: "what is the pw of the kiosk?" answer: Lq8vZt3Pkm', "Lq8vZt3Pkm"),
        ("el nuevo password de la cuenta compartida del equipo es Tq9=Lm2+Zv, ojo", "Tq9=Lm2+Zv"),
        ("cabin: wifi Fjordhus / Tide!Pool88, bins on Monday", "Tide!Pool88"),
        ("the side gate opens with 44719", "44719"),
        ("il cancello si apre con 6620#", "6620"),
        ("CVC는 913이에요", "913"),
        ("秘密の質問の答えは「ポチ」", "ポチ"),
    ],
)
def test_round_7_s_concepts_are_masked(text: str, value: str) -> None:
    assert value not in mask(text)


@pytest.mark.parametrize(
    "text",
    [
        "`ssh deploy@web1` fragt dann nach dem Passwort",
        "`docker login` asks for the password itself",
        "`sudo -k` and it will ask for your password again",
        "`mysql -u admin -p shop` i wpisz hasło po zapytaniu",
        "DB_PASSWORD=ここにパスワードを入力",
        "APP_PW=비밀번호를_입력하세요",
        "API_KEY=sk-...your-key-here...",
        "SECRET=这里填写密钥",
        "does the bank ever ask for the password? never",
        "a senha do banco: nunca por telefone",
        "standup 9am, password manager demo 2pm, retro 4pm",
        "the three digits on the back are rubbed off",
        "2FA is mandatory since 2023",
        "MFA enabled on 2024-05-01",
        "wifi SSID HomeNet, key is on the sticker",
        "[10:00] A: what is the wifi password?\n[10:01] B: check the fridge note page12",
        "security question answer forgotten again",
        "I changed the password, it is safer now",
        "punch 2 holes in the ticket",
        "wifi Home5G / Home5G_EXT",
        "the gate opens at 0700 every day",
        "password123 is a terrible password, never use it",
        "`git pull` pede usuário e senha toda vez",
        "mot de passe : (voir le coffre)",
        "neues Netz heißt Haus_5G, das WLAN-Passwort bleibt gleich",
        "wachtwoord van de gastenwifi wordt vrijdag aangepast",
        "密保问题是什么",
    ],
)
def test_round_7_s_look_alikes_are_kept(text: str) -> None:
    assert mask(text) == text
