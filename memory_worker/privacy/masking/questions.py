"""A security question's answer, by the concept and not by a list of phrasings: a phrase
naming a security (secret, control, helper) question in any of the fifteen label languages,
then anything on its line — the question itself in quotes, brackets or corner brackets, an
"answer" word — then a separator (``:``, ``=``, ``->``, ``→``, a dash, a copula) and **one**
word that ends the line. That word is the answer, even a plain made-up name
("Sicherheitsfrage "Geburtsname der Mutter": Yalshami", "密保问题「…」答案：Nukatis",
"security question "name of your first pet" answer is Tistutis").

What keeps it from masking talk: the answer is a single word closing its line (the question
alone, "pytanie pomocnicze: imię pierwszego zwierzaka", is several words), it is not a
placeholder or an ordinary non-answer ("forgot", "none"), and in a script with letter case
it starts with a capital or holds a digit ("… : esqueci" is not an answer). A quiz question
is no security question ("Quizfrage (Hauptstadt von Peru): Lima").

Once the question itself is given — closed by a bracket or a quote, then a separator, or
followed by an arrow — the answer may be up to three words ("… (first pet's name): Mrs
Okonkwo", "… → Bad Segeberg"): none an ordinary word, one of them a name's in a script with
letter case ("… (first pet): not set yet" stays).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_worker.privacy.masking.needles import Hits, words
from memory_worker.privacy.masking.shapes import Span
from memory_worker.privacy.masking.values import TRAILING, not_a_value

#: Needles: a text holding none of them names no security question.
QUESTION_NEEDLES = words(
    """
    question frage pregunta domanda pergunta vraag fråga pytanie вопрос питання soru 質問 질문
    问题 問題 密保 سؤال السؤال answer antwort réponse reponse respuesta risposta resposta
    antwoord svar odpowied ответ відповідь cevap cevab 答え 答案 답 إجابة جواب
    """
) | {"security q", "secret q"}

#: Words for "secret" or "security" that make an answer one to keep.
_SECRET = (
    r"secret|security|hidden|geheime?|sicherheits|secr[èe]te?|de\s+s[ée]curit[ée]|secreta"
    r"|de\s+seguridad|segreta|di\s+sicurezza|de\s+seguran[çc]a|hemlig[at]?|säkerhets"
    r"|tajn[aey]|sekretn[aey]|bezpiecze[ńn]stwa|секретн\w*|контрольн\w*|gizli|güvenlik"
    r"|秘密の?|密保|보안|비밀|(?:ال)?سري(?:ة)?|(?:ال)?أمان"
)
#: Words for "answer".
ANSWER_WORD = (
    r"answer|antwort|r[ée]ponse|respuesta|risposta|resposta|antwoord|svar(?:et)?"
    r"|odpowied[źz]|ответ|відповідь|cevab[ıi]?|cevap|答え|答案|답변|답|(?:ال)?إجابة|(?:ال)?جواب"
)
_QUESTION = (
    r"(?:security|secret|safety|memorable|challenge|recovery)\s+q(?:uestion)?s?\b"
    r"|\w*(?:sicherheits|geheim|kontroll)frage\w*"
    r"|question\s+(?:secr[èe]te|de\s+s[ée]curit[ée])"
    r"|pregunta\s+(?:de\s+seguridad|secreta)"
    r"|domanda\s+(?:di\s+sicurezza|segreta)"
    r"|pergunta\s+(?:de\s+seguran[çc]a|secreta)"
    r"|(?:beveiligings|veiligheids|controle)vraag|geheime\s+vraag"
    r"|säkerhetsfråga\w*|hemlig\s+fråga\w*|kontrollfråga\w*"
    r"|pytani[ea]\s+(?:pomocnicze|bezpiecze[ńn]stwa|kontrolne|zabezpieczaj[ąa]ce)"
    r"|(?:контрольн|секретн)\w*\s+(?:вопрос|питання)\w*"
    r"|(?:güvenlik|gizli)\s+soru(?:su)?"
    r"|秘密の質問|セキュリティー?質問|(?:보안|비밀)\s*질문|密保问题|密保問題|安全问题|安全問題|密保"
    r"|(?:ال)?سؤال\s+(?:ال)?(?:أمان|امان|سري)"
    # an answer named secret: the two concepts side by side, in either order
    rf"|(?:{_SECRET})[ \t]*(?:{ANSWER_WORD})|(?:{ANSWER_WORD})[ \t]+(?:{_SECRET})"
)
#: A question naming phrase, its line up to a separator (an "answer" word alone is one:
#: "보안 질문(…) 답 …", "Sicherheitsfrage (…) Antwort …"), one word, the line's end.
_ANSWER = re.compile(
    rf"(?i:{_QUESTION})[^\n]{{0,100}}?"
    r"(?:[ \t]*(?:[:：=]|->|=>|→|—|–|は|是|为|는|은)|[ \t]+(?:-|is|ist|est|es|è|é|är|er|jest|это|was)"
    rf"|(?<=[\s)）\]」』])(?i:{ANSWER_WORD})(?=[ \t]))"
    r"[ \t]*[\"'«“„「『]?(?P<v>[^\s\"'«»“”„「」『』()（）\[\]<>:：]{2,40})[\"'»”“」』]?"
    r"[ \t]*[.!。！]?[ \t]*$",
    re.M,
)
#: Single words that answer nothing ("security question: forgot").
_NON_ANSWERS = words(
    """
    none unknown forgot forgotten same required optional mandatory set unset empty blank
    n/a na idk later asked skip skipped vergessen keine leer oublié aucune olvidé ninguna
    dimenticato nessuna esqueci nenhuma vergeten geen glömt ingen zapomniałem brak забыл
    нет unuttum yok 什么 什麼 多少 哪个 忘了 忘记了 不知道 没有 なに 何 なん 忘れた 知らない なし
    뭐 무엇 몰라 없음 잊음
    """
)


#: Han and kana: a script written without spaces, where one "word" may be a whole phrase.
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
#: The longest answer in an unspaced script ("ポチ", "東京"; not "最初のペットの名前").
_UNSPACED_MAX = 4


def _answer(value: str) -> bool:
    if not_a_value(value) or value.casefold() in _NON_ANSWERS:
        return False
    if _UNSPACED.search(value):  # a name, not a phrase: no possessive ("你的小学", "母の旧姓")
        return len(value) <= _UNSPACED_MAX and "的" not in value and "の" not in value
    first = value[0]
    if first.isalpha() and first.lower() != first.upper():  # a script with letter case
        return first.isupper() or any(c.isdigit() for c in value)
    return True


#: A word of an answer given after its question.
_WORD = r"[^\s\"'«»“”„「」『』()（）\[\]<>:：→=]{1,30}"
#: A security question, then its question given (closed by a bracket or a quote) and a
#: separator, or an arrow; an "answer" word may follow; then one to three words closing the
#: line ("… (first pet's name): Mrs Okonkwo", "… 'first pet' → answer Vespa rossa").
_GIVEN = re.compile(
    rf"(?i:{_QUESTION})[^\n]{{0,100}}?"
    r"(?:[)）」』\"'”»][^\n:：→]{0,8}?[ \t]*(?:[:：=]|->|=>|—|–)|[ \t]*(?:->|=>|→))[ \t]*"
    rf"(?:(?i:{ANSWER_WORD})[ \t]*[:：]?[ \t]*)?"
    rf"[\"'«“„「『]?(?P<v>{_WORD}(?:[ \t]{_WORD}){{0,2}})[\"'»”“」』]?[ \t]*[.!。！]?[ \t]*$",
    re.M,
)
#: The longest answer in an unspaced script once its question was given ("ひたちなか").
_GIVEN_UNSPACED_MAX = 8


def _given_answer(value: str) -> bool:
    """Whether the words after a question given are its answer: each a possible answer word,
    and in a script with letter case one of them a name's (a capital or a digit)."""
    words = value.split()
    if any(not_a_value(w) or w.casefold() in _NON_ANSWERS for w in words):
        return False
    if _UNSPACED.search(value):
        return len(value) <= _GIVEN_UNSPACED_MAX and "的" not in value and "の" not in value
    cased = [w for w in words if w[0].isalpha() and w[0].lower() != w[0].upper()]
    if not cased:
        return True
    return any(w[0].isupper() or any(c.isdigit() for c in w) for w in cased)


def security_answers(text: str, hits: Hits) -> Iterator[Span]:
    """The one-word answer closing a security question's line, or a few words once the
    question itself was given (see the module doc)."""
    if not hits.present & QUESTION_NEEDLES:
        return
    for match in _ANSWER.finditer(text):
        value = match.group("v").rstrip(TRAILING)
        if (len(value) >= 3 or _UNSPACED.search(value)) and _answer(value):
            yield match.start("v"), match.start("v") + len(value), "password"
    for match in _GIVEN.finditer(text):
        value = match.group("v").rstrip(TRAILING)
        if len(value) >= 3 and _given_answer(value):
            yield match.start("v"), match.start("v") + len(value), "password"
