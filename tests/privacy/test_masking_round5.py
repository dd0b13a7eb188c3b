"""Masking round 5 (§14): general mechanisms, not lines.

- Contamination: a text in which one secret was found has every other value-shaped word masked
  (the handover list, the CVV after a card, the PUK after a PIN); a text in which nothing was
  found is untouched, so no look-alike of any corpus part changes because of it.
- One decision: a text :func:`contains_secret` flags for a label and a value never keeps the
  value after :func:`mask` (hypothesis: labels in many languages, separators, line ends on a
  copula or a polite ending, values of every shape ``withhold`` calls a value).
- New label families (safes, tills, screen locks, security answers), obfuscation (mixed
  scripts in one word, tatweel, half-width kana), values named after them by a demonstrative,
  answers past a vocative or a stalling line.

The look-alikes below were written before each mechanism (talk about a safe, a till, an answer,
an obfuscated label, a polite line ending, with no value).
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memory_worker.privacy.masking import contains_secret, mask
from memory_worker.privacy.masking.contaminate import contaminated, value_shaped
from memory_worker.privacy.masking.withhold import value_like
from tests.support.masking_score import READ_PARTS, load


@pytest.mark.parametrize(
    ("text", "values"),
    [
        (
            "shift notes:\n- alarm code 4471\n- back office admin / Corvo8#kLm\n- spare key 30976",
            ["4471", "Corvo8#kLm", "30976"],
        ),
        ("card 4111 1111 1111 1111, and the digits on the back are 317", ["317"]),
        ("PIN-код карты 5521, а ПУК 77120934", ["5521", "77120934"]),
        ("Karte PIN 4410, dazu die drei Ziffern hinten: 902", ["4410", "902"]),
        ("wifi password Mellow_Fox22, router admin is root:tuRniP", ["Mellow_Fox22", "tuRniP"]),
        ("密码 Jia_888888，门口的号码 448 210", ["Jia_888888", "448", "210"]),
    ],
)
def test_a_text_that_held_a_secret_keeps_none_of_its_other_values(
    text: str, values: list[str]
) -> None:
    masked = mask(text)
    for value in values:
        assert value not in masked


@pytest.mark.parametrize(
    "text",
    [
        "the order 48213 ships on 12/03, tracking ZX9981KLM",
        "Flight LH2041 leaves at 14:35 from gate B22",
        "v3.2.1 fixed bug #4412 in auth_utils2",
        "room 412, the wifi is slow again",
    ],
)
def test_a_text_without_a_secret_keeps_its_numbers(text: str) -> None:
    assert mask(text) == text


def test_contamination_changes_no_look_alike_of_any_part() -> None:
    for part in READ_PARTS:
        for row in load(part):
            if row.kind == "lookalike":
                assert mask(row.text) == mask(row.text, others=False), row.id


def test_operator_outputs_are_not_contaminated() -> None:
    text = "password: Xk2!pLm9q\nerror 503 on node 12"
    assert "503" not in mask(text)
    assert "503" in mask(text, others=False)


@pytest.mark.parametrize(
    ("word", "shaped"),
    [
        ("749", True),
        ("08908", True),
        ("kuqx8p#GQMCL", True),
        ("hGNxHsASs", True),
        ("belpa-miti-paqui-lokamo32", True),
        ("[redacted]", False),
        ("INVALID_ARGUMENT", False),
        ("12", False),
        ("hello", False),
        ("e-mail", False),
    ],
)
def test_value_shapes_of_contamination(word: str, *, shaped: bool) -> None:
    assert value_shaped(word) is shaped


def test_contamination_takes_the_password_of_a_pair_and_keeps_times() -> None:
    assert contaminated("ops / hunter", "[x]") == "ops / [x]"
    assert contaminated("[18:02] me: ok", "[x]") == "[18:02] me: ok"


# --- new families, obfuscation, value first, answers --------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # safes, tills, screen locks, typed-in codes
        ("the office safe 731904", "731904"),
        ("Tresor im Büro 55120", "55120"),
        ("la caja fuerte 918273", "918273"),
        ("сейф в подсобке 4471", "4471"),
        ("保险箱 660192", "660192"),
        ("金庫 30571", "30571"),
        ("금고 8812", "8812"),
        ("الخزنة 770123", "770123"),
        ("ekran kilidi 902211", "902211"),
        ("スマホのロック解除 118822", "118822"),
        ("punch in 7731 at the side door", "7731"),
        # security answers
        ("hemligt svar: Tofslan77", "Tofslan77"),
        ("geheim antwoord: Kweepeer12", "Kweepeer12"),
        ("gizli cevabı: Pamuk2019x", "Pamuk2019x"),
        ("密保问题答案：Lanlan88", "Lanlan88"),
        ("Antwort (Kennantwort): Brezel44", "Brezel44"),
        # obfuscation
        ("пapoль: Zq8#kLpw2", "Zq8#kLpw2"),
        ("mоt dе раssе : Fr4ise!x", "Fr4ise!x"),
        ("كلمـــة المرور: Qamar#2024x", "Qamar#2024x"),
        ("ﾊﾟｽﾜｰﾄﾞ Sakura#772", "Sakura#772"),
        ("ＰＷ Hoshi?zora8", "Hoshi?zora8"),
        # withhold: letters in random case, a line ending on a polite form
        ("the password is pLmQzWxRt all lower except some", "pLmQzWxRt"),
        ("共有フォルダのパスワードです。\nKumo77!sora\nよろしく", "Kumo77!sora"),
        ("공유 드라이브 비밀번호입니다\nHaneul22$\n감사합니다", "Haneul22$"),
        # value first, answers
        ("Trx9#pLm2 esa es mi contra del banco", "Trx9#pLm2"),
        ("« Gato_luna88 » c'est le code du coffre", "Gato_luna88"),
        ("Nour#2210x هذا الباسورد", "Nour#2210x"),
        ("— c'est quoi le mdp du wifi ?\n— attends\n— Lapin_bleu42\n— merci", "Lapin_bleu42"),
        ("[10:00] Mamá: cuál es la clave del wifi\n[10:02] Ana: mamá Sol_nube55 ya", "Sol_nube55"),
        ("please read back the code we sent\nme: 441 902", "441 902"),
        ("återställningskoder: 7YZP37SNV6, FP3EIOAEP0", "FP3EIOAEP0"),
        # a strong value closing its label's line after a colon, far from the label
        (
            "security answer for the old bank account (the street I grew up on): Elmwood#42",
            "Elmwood#42",
        ),
    ],
)
def test_the_mechanisms_of_round_5_mask(text: str, value: str | None) -> None:
    if value is not None:
        assert value not in mask(text)


LOOKALIKES = [
    # safes, tills, screen locks without a value
    "the safe in the office is broken again, call the locksmith",
    "put the cash in the safe before 6 and lock the till",
    "Der Tresor im Keller ist seit 2019 leer.",
    "La caja fuerte del hotel no funciona, habitación 412.",
    "il codice della cassaforte è sul foglio in reception",
    "金庫の鍵をなくしました。",
    "금고 열쇠는 사무실에 있어요",
    "保险柜在二楼的办公室里",
    "الخزنة في الطابق الثاني",
    "сейф стоит в кабинете директора, ключ у охраны",
    "kassaskåpet står i källaren sedan 2015",
    "de kluis zit achter het schilderij",
    "o cofre fica no quarto 205",
    "le coffre de la voiture est plein",
    "sejf w hotelu był zepsuty",
    "çelik kasa 2 metre yüksekliğinde",
    "the cash register at till 3 is jammed",
    "my screen lock kicks in after 30 seconds",
    "telefonun ekran kilidi bozuldu",
    "スマホのロック解除ができない、顔認証が効かない",
    "잠금 해제가 안 돼요",
    "锁屏时间设为 30 秒",
    "Hej, ärende 650509 är löst, 787,00 kr återbetalas till kortet som slutar på 2692",
    # security answers without a value
    "I forgot the secret answer to my security question",
    "geheim antwoord vergeten, beveiligingsvraag opnieuw instellen",
    "hemligt svar på säkerhetsfrågan måste bytas",
    "güvenlik sorusunun gizli cevabı ne olmalı sence?",
    "密保问题答案忘了怎么办",
    "نسيت جواب سؤال الأمان",
    "Kennantwort vergessen – was nun?",
    # typed-in and read-back codes without a value
    "punch in at 9 and punch out at 17",
    "please read back the code to me when you get it",
    # obfuscated labels, polite endings, mixed case without a value
    "пароль забыл, помогите",
    "كلمـــة المرور خاطئة",
    "ＰＷ忘れた",
    "共有フォルダのパスワードです。\nよろしくお願いします。",
    "공유 드라이브 비밀번호입니다\n감사합니다",
    "the password is on the PostIt in the McDonald's bag",
    "my iPhone password is the same as on my MacBook",
    "password for the iPhoneXS box is written inside",
    # value first and answers that are not values
    "VERANO25 esa es la promo del mes",
    "« Le Petit Prince » c'est le livre de ma fille",
    "[10:00] Tom: what's the code of the product?\n[10:01] Me: XJ-4410",
    "— tu te souviens du mdp de la box ?\n— non\n— demande à Paul",
    # a line closing on a colon with no value
    "the password for jira and confluence and the wiki: same as before",
    "Password policy changed (see the doc): min 8 chars",
]


@pytest.mark.parametrize("text", LOOKALIKES)
def test_the_look_alikes_of_round_5_are_kept(text: str) -> None:
    assert mask(text) == text


# --- one decision: a label and a value flagged, the value gone ----------------------------------

_LABELS = [
    "password",
    "the wifi password",
    "Passwort",
    "mot de passe",
    "contraseña",
    "senha",
    "hasło",
    "пароль",
    "wachtwoord",
    "lösenord",
    "şifre",
    "パスワード",
    "共有フォルダのパスワード",
    "비밀번호",
    "密码",
    "كلمة المرور",
]
_JOINS = [": ", " is ", " ", " = ", "です。\n", "입니다\n", "是", " هي ", " ist ", ":\n", " — "]
_VALUE_CHARS = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789!#$%&*?_"


@hsettings(max_examples=300, deadline=None)
@given(
    label=st.sampled_from(_LABELS),
    join=st.sampled_from(_JOINS),
    value=st.text(alphabet=_VALUE_CHARS, min_size=6, max_size=16).filter(value_like),
    tail=st.sampled_from(["", " thanks", "\nよろしく", " للنظام", ", bis später"]),
)
def test_a_label_and_a_value_flagged_leave_no_value(
    label: str, join: str, value: str, tail: str
) -> None:
    text = f"{label}{join}{value}{tail}"
    assume(contains_secret(text))
    assert value not in mask(text)
