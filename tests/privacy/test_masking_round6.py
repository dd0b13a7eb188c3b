"""Masking round 6 (§14): concepts, not phrasings.

- A security question's answer: the question named in any of fifteen languages, anything on
  its line (the question itself in quotes or brackets, an "answer" word), a separator or a
  copula, then one word closing the line — a made-up name is the answer.
- A value in square brackets after a short password label; a password key glued into one
  word in a JSON paste.
- A code asked for in a chat, answered by its digits and a few words, or after a CJK
  speaker's colon with no space.
- A key box's or lock's number, a few words on in the same sentence of a long message.
- A command line that asks for its password (``mysql -u root -p`` in backticks) keeps its
  text.

Every mechanism has look-alikes here, and no look-alike of any corpus part changes.
The phrasings below are written for this test, not taken from a corpus part.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from memory_worker.privacy.masking import mask, scrub

#: How a security question is named, in the fifteen languages of the split.
QUESTIONS = [
    "security question",
    "Sicherheitsfrage",
    "question de sécurité",
    "pregunta secreta",
    "domanda di sicurezza",
    "pergunta secreta",
    "beveiligingsvraag",
    "säkerhetsfråga",
    "pytanie kontrolne",
    "секретный вопрос",
    "gizli soru",
    "秘密の質問",
    "보안 질문",
    "安全问题",
    "السؤال السري",
    "secret answer",
    "gizli cevap",
    "비밀 답변",
    "الإجابة السرية",
    "réponse secrète",
]
#: What stands between the question's name and its answer.
BETWEEN = [": ", ' "first car": ', " (first car) = ", " 'first car' -> ", " «first car» — "]


@given(
    question=st.sampled_from(QUESTIONS),
    between=st.sampled_from(BETWEEN),
    answer=st.from_regex(r"[A-Z][a-z]{4,9}", fullmatch=True),
)
@hsettings(max_examples=300, deadline=None)
def test_a_security_question_s_one_word_answer_is_masked(
    question: str, between: str, answer: str
) -> None:
    assert answer not in mask(f"{question}{between}{answer}")


@pytest.mark.parametrize(
    "text",
    [
        "security question: name of your first pet",
        "Sicherheitsfrage (erstes Auto): weiß ich nicht mehr",
        "pergunta de segurança (nome da primeira escola): esqueci",
        "секретный вопрос: девичья фамилия матери",
        "安全问题：第一只宠物的名字",
        "秘密の質問：最初のペットの名前",
        "quiz question (capital of Peru): Lima",
        "security question: none",
        "the answer: Lima",
        "Antwort: Berlin",
        "secret answer: forgot",
    ],
)
def test_a_security_question_without_its_answer_is_kept(text: str) -> None:
    assert mask(text) == text


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("shop acct: user pine_k / pw [Vrolq84#x]", "Vrolq84#x"),
        ("foro: usuario sol / contra: [Tubek55?]", "Tubek55?"),
        ('{"login": "atelier_9", "motdepasse": "Pierre8811?"}', "Pierre8811?"),
        ('{"gebruiker": "winkel", "wachtwoord": "Tulp2244!"}', "Tulp2244!"),
        ("MOT_DE_PASSE=Pierre8811?", "Pierre8811?"),
    ],
)
def test_a_bracketed_value_and_a_glued_json_key_are_masked(text: str, value: str) -> None:
    assert value not in mask(text)


@pytest.mark.parametrize(
    "text",
    ["pw [ask me]", "pw: [see vault]", "run `mysql -u root -p` and type it at the prompt"],
)
def test_a_bracketed_note_and_a_command_without_a_value_are_kept(text: str) -> None:
    assert mask(text) == text


def test_a_command_line_with_its_password_is_still_masked() -> None:
    assert "Hx8wq2Lm" not in mask("run `mysql -u root -pHx8wq2Lm shop` then")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Tim: what's the padlock code?\nEva: 5082 and pull", "5082"),
        ("Jan: jaki kod do furtki?\nOla: 7719 i pchnij", "7719"),
        ("父：ロッカーの暗証番号なんだっけ？\n娘：6604", "6604"),
        ("hey, the spare key is in the key box by the garage, the code is 3817, thanks!", "3817"),
        ("Das Rad ist mit dem Zahlenschloss 4092 gesichert", "4092"),
        ("留守中すみません。合鍵はキーボックスで、番号は 5530 です", "5530"),
        ("열쇠는 키박스 안에 있어요 번호는 1946 입니다", "1946"),
        ("the padlock on the bike shed opens with 5527", "5527"),
        ("hangslot van de garage: 3318", "3318"),
    ],
)
def test_a_code_answered_in_a_chat_and_a_key_box_number_are_masked(text: str, value: str) -> None:
    assert value not in mask(text)


@pytest.mark.parametrize(
    "text",
    [
        "Tim: what's the padlock code?\nEva: 2 sec, checking",
        "Tim: what's the padlock code?\nEva: 1500 people asked already",
        "父：郵便番号なんだっけ？\n娘：1500001",
        "the key box cost 2990 euros",
        "ключница стоит 1500 рублей",
        "キーボックスは玄関の横です。部屋番号は 302 です",
        "der Schlüsselkasten hat 4 Haken, Nummer 12 ist für die Garage",
        "der Schlüsselkasten ist von 2019",
        "the padlock was 12 euros",
    ],
)
def test_a_count_a_price_and_a_room_near_a_lock_are_kept(text: str) -> None:
    assert mask(text) == text


@pytest.mark.parametrize("text", ["pw [Vrolq84#x]", "pw: [Vrolq84#x], token: [Kq83mZpL2w]"])
def test_a_bracketed_value_masks_to_a_placeholder_that_is_not_masked_again(text: str) -> None:
    once = mask(text)
    assert mask(once) == once
    assert scrub(scrub(text)) == scrub(text)


#: Words for access or credentials, in the fifteen languages of the split.
ACCESS_WORDS = [
    "creds",
    "Zugangsdaten",
    "accès",
    "acceso",
    "accesso",
    "acesso",
    "toegang",
    "inloggning",
    "dostęp",
    "доступ",
    "giriş bilgileri",
    "ログイン情報",
    "로그인 정보",
    "登录信息",
    "بيانات الدخول",
]


@given(
    word=st.sampled_from(ACCESS_WORDS),
    sep=st.sampled_from([": ", " = ", " -> ", " → ", "："]),
    value=st.from_regex(r"[A-Z][a-z]{3,6}[!#%*+@][0-9]{2,4}", fullmatch=True),
)
@hsettings(max_examples=200, deadline=None)
def test_a_generated_value_after_a_word_for_access_is_masked(
    word: str, sep: str, value: str
) -> None:
    assert value not in mask(f"{word} netflix{sep}{value}")


@pytest.mark.parametrize(
    "text",
    [
        "access: read-only",
        "login: anna.k",
        "Zugang: über den Hintereingang",
        "accès : 24h/24",
        "доступ: admin",
        "access: Room4B",
        "access: https://intranet.example.com/a?b=1",
    ],
)
def test_access_without_a_generated_value_is_kept(text: str) -> None:
    assert mask(text) == text
