"""Secrets named by a label that is not right before them: a value named after it ("Xk2… is
my password", "Xk2… — это мой пароль", "saranghae-535K 내 메일 비번이야"), a value alone on
its line named by the next line ("M4gg…\n^ that's the pw", "Xk2…\nэто пароль от облака"),
and a long generated key a little after its label, past a few words or on the next line
("ключ шифрования бэкапов 78a5…", "chave privada do servidor, apaga depois\n<hex>").

The labels are :mod:`.labels`' (one scan per text, shared); what a value may be is
:mod:`.values`'.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_worker.privacy.masking.labels import FILLER, KINDS, label_matches, skipped
from memory_worker.privacy.masking.lexicon import LABEL_NEEDLES
from memory_worker.privacy.masking.needles import Hits
from memory_worker.privacy.masking.ordinary import (
    AS_WORDS,
    ASSENT_WORDS,
    BEFORE_WORDS,
    DEMONSTRATIVES,
    JUDGEMENTS,
    NEGATIONS,
    NOT_BEFORE,
    NOT_FILLERS,
    NOT_NEAR_KEYS,
    NOT_SECRET_CODES,
    PASS_TARGETS,
    PREPOSITIONS,
    UNITS,
)
from memory_worker.privacy.masking.questions import ANSWER_WORD
from memory_worker.privacy.masking.shapes import Span, token_like
from memory_worker.privacy.masking.values import (
    PASSPHRASE,
    TRAILING,
    address,
    code_digits,
    generated,
    not_a_value,
    phrase_before,
    strong,
    wordy,
)

_AS_LABEL = re.compile(
    rf"(?<!\w)(?:{'|'.join(sorted(AS_WORDS, key=len, reverse=True))})[ \t]+"
    r"(?:[^\s.,;:!?]{1,15}[ \t]+){0,2}"
    r"(?:password|passwort|kennwort|mot\s+de\s+passe|contrase[ñn]a|senha|hasło|пароль|"
    r"пароля)(?!\w)",
    re.IGNORECASE,
)
_LAST_WORD = re.compile(r"(\S+)[ \t]+$")


def values_before_labels(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of generated-looking values named as a password afterwards ("Xk2… as my
    password", "j'ai mis Xk2… comme mot de passe")."""
    if hits.present.isdisjoint(LABEL_NEEDLES):
        return
    for match in _AS_LABEL.finditer(text):
        before = _LAST_WORD.search(text, max(0, match.start() - 120), match.start())
        if before is None:
            continue
        value = before.group(1).rstrip(TRAILING)
        if strong(value) and not not_a_value(value) and not address(value):
            yield before.start(1), before.start(1) + len(value), "password"


#: The words before a label, as runs of ASCII and runs of anything else ("Xk2…是我的密码").
_BACK_TOKEN = re.compile(r"[!-~\u00c0-\u058f]+(?=[\u0590-\uffff])|[\u0590-\uffff]\S*|\S+")
_GLUED_BEFORE = tuple(w for w in BEFORE_WORDS if not w.isascii())
_NAMED_FAMILIES = frozenset({"password", "pin", "code", "cvv", "key"})
_YEAR = re.compile(r"^(?:19|20)\d\d$")


def _joins(word: str) -> bool:
    """Whether ``word`` joins a value before it to a label after it: a copula, a dash, a
    possessive, or a demonstrative ("Xk2… esa es mi contra", "Xk2… هذا الباسورد")."""
    folded = word.casefold().strip(",")
    return folded in BEFORE_WORDS or folded in DEMONSTRATIVES or folded.startswith(_GLUED_BEFORE)


#: Quotes and brackets standing alone around a value ("« Xk2… » c'est le code"): passed over.
_WRAPS_ALONE = frozenset("»«\"'“”„‘’)]）」』>")


#: A release's number (``v2.4.0-rc1``, ``3.12.1``): what it is, never a value named after.
_RELEASE = re.compile(r"[vV]?\d+(?:\.\d+)+")


def _value_named_after(text: str, start: int, family: str) -> tuple[int, int] | None:
    """A value a few words before a label that names it ("Xk2… is the new wifi password",
    "Xk2… — это мой пароль", "Xk2… benim şifrem", "Xk2… 是我的密码"): the word right after
    the value joins it to the label (a copula, a dash, a possessive), and no word between
    denies it or ends the sentence."""
    line = text.rfind("\n", 0, start) + 1
    tokens = [
        t
        for t in _BACK_TOKEN.finditer(text, max(line, start - 120), start)
        if not set(t.group(0)) <= _WRAPS_ALONE
    ]
    for k in range(len(tokens) - 1, -1, -1):
        word = tokens[k].group(0)
        value = word.rstrip(TRAILING)
        gap = len(tokens) - 1 - k
        label = (
            text[start : start + 40].split(maxsplit=1)[0].casefold() if start < len(text) else ""
        )
        if (
            gap
            and _joins(tokens[k + 1].group(0))
            and not word[len(value) :].startswith((",", ";"))  # "moi@serveur, il demandera…"
            and not not_a_value(value)
            and not address(value)
            and (not label or label not in value.casefold())
        ):
            digits = (
                family in ("pin", "code", "cvv")
                and value.isdigit()
                and 4 <= len(value) <= 8
                and not _YEAR.match(value)
            )
            end = tokens[k].start() + len(value)
            phrase = phrase_before(text, line, end) if family in ("password", "pass") else None
            if phrase is not None:
                return phrase, end  # "maple orbit candle fjord42 is the passphrase …"
            release = _RELEASE.match(value) is not None  # "v2.4.0-rc1 is safe": no safe's code
            if digits or (strong(value) and not release) or (family == "key" and generated(value)):
                return tokens[k].start(), end
        folded = word.casefold()
        if gap >= 5 or folded in NEGATIONS or folded in JUDGEMENTS:
            return None  # "… is not my password", "… is a terrible password"
        if any(c in ".!?;,。！？，" for c in word):
            return None
    return None


def values_named_after(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of values named by a label that follows them (see :func:`_value_named_after`)."""
    if hits.present.isdisjoint(LABEL_NEEDLES):
        return
    for label in label_matches(text, hits):
        family = label.family
        named = family in _NAMED_FAMILIES or (family == "pass" and label.lang != "en")
        if not named or skipped(family, text, label.start):
            continue
        after = FILLER.match(text, label.end)
        if text[label.end : label.end + 1] == "-" or (
            after is not None and after.group("w").casefold() in NOT_FILLERS
        ):
            continue  # "password-protected", "password manager"
        found = _value_named_after(text, label.start, family)
        if found is not None:
            yield found[0], found[1], KINDS.get(family, "password")


# --- a long generated key a little after its label --------------------------------------------

_LONG_TOKEN = re.compile(r"(?<![\w+/=.:@-])[A-Za-z0-9+/_-]{24,}={0,2}(?![\w+/=.:@-])")
#: How far after a key's label its value may stand: the rest of the line and the next one
#: ("приватный ключ от деплой-сервера\n0488…", "chave privada do servidor, apaga depois\n…").
_KEY_REACH = 200


def keys_near_labels(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of a long generated key (32+ hex digits, 24+ mixed base64) on a key label's line
    or the next, whatever words stand between — unless one of them, or of the three words
    before the label, says it is public, a hash, a fingerprint, an id or a file
    (:data:`NOT_FILLERS`, :data:`NOT_BEFORE`, :data:`NOT_NEAR_KEYS`)."""
    if hits.present.isdisjoint(LABEL_NEEDLES):
        return
    for label in label_matches(text, hits):
        family = label.family
        if family not in ("key", "saidkey") or skipped(family, text, label.start):
            continue
        first = text.find("\n", label.end)
        second = text.find("\n", first + 1) if first >= 0 else -1
        limit = min(len(text), label.end + _KEY_REACH, second if second >= 0 else len(text))
        token = _LONG_TOKEN.search(text, label.end, limit)
        if token is None or not generated(token.group(0)):
            continue
        around = text[max(0, label.start - 30) : label.start].split()[-3:]
        around += text[label.end : token.start()].split()
        between = {w.strip(".,:;()").casefold() for w in around}
        if (
            between & (NOT_FILLERS | NOT_BEFORE | NOT_NEAR_KEYS)
            or text[label.start : token.start()].count("\n") > 1
        ):
            continue
        yield token.start(), token.end(), "token"


# --- the answer to a question asked on the line before ----------------------------------------

#: An answer line: a time, a dash or bullet, a speaker ("[09:15] Ben: …", "- …"), a word of
#: assent ("it's", "sure,", "claro:", "да,"), then the value alone.
#: A chat log's time stamp ("[09:15]", "14:03", "[Mon 19:03]", "[12.03.26, 09:15]", "9:15 PM").
_STAMP = (
    r"\[?(?:[^\W\d_]{2,9}\.?,?[ \t]+)?(?:\d{1,4}[./-]\d{1,2}(?:[./-]\d{2,4})?,?[ \t]+)?"
    r"\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]?[AaPp]\.?[Mm]\.?)?\]?"
)
#: A chat log's speaker ("Ben:", "Léa :", "<dave>").
#: A speaker written in a script without spaces needs none after the colon ("娘：8567", a
#: full-width colon NFKC makes ``:``).
_SPEAKER = (
    r"(?:<[^<>\s]{1,24}>[ \t]*|[^\s:：<>]{1,24}[ \t]?[:：][ \t]+"
    r"|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{1,8}[:：])"
)
#: A line of a chat log: a time stamp, then a speaker (or a speaker alone).
_CHAT_LINE = re.compile(rf"[ \t]*(?:{_STAMP}[ \t]*[-–—]?[ \t]*{_SPEAKER}?|{_SPEAKER})")
#: After a dash, a speaker may be a short phrase ("— у меня: 5708", "- I do: 6604").
_SPOKEN = r"(?:[^\s:：<>\d]{1,12}[ \t]+){1,2}[^\s:：<>\d]{1,12}[ \t]?[:：][ \t]*"
_ANSWER = re.compile(
    rf"[ \t]*(?:{_STAMP}[ \t]*)?(?:[-–—•*>]+[ \t]*(?:{_SPOKEN})?)?"
    rf"{_SPEAKER}?"
    rf"(?:(?:{'|'.join(sorted(ASSENT_WORDS, key=len, reverse=True))})[,:!.]?[ \t]+){{0,2}}"
    r"(?P<v>\S+?)[ \t]*[.!]?[ \t]*(?:[ \t](?P<rest>[^\n]*))?",
    re.IGNORECASE,
)
_QUESTIONS = "?？؟"
#: A code's digits, then what to do next in a few words ("9433 e poi chiave", "6618 then
#: push hard"): a connective first, so a count ("1500 people asked") is no answer.
_TALK_AFTER = re.compile(
    r"(?i:,?[ \t]*(?:and|then|und|dann|et|puis|y|luego|e|poi|depois|en|dan|och|sen|sedan|"
    r"i|potem|и|потом|затем|ve|sonra|ardından|そして|然后|再|و|ثم))(?:[ \t]+[^\s\d]+){0,3}[ \t]*[.!]?"
)
#: Words after a code's digits that make them an amount, a time or a count.
_AMOUNT = re.compile(
    rf"[ \t]*(?:[%€$£¥₽₴₺元円원:.,/-]|(?:{'|'.join(sorted(UNITS, key=len, reverse=True))})(?!\w))",
    re.I,
)
#: Words after an answer's value that hand it over ("351411 ось", "4821 voilà", "Kx9… 吧").
_HERE_WORDS = frozenset(
    [
        "ось",
        "вот",
        "here",
        "voilà",
        "voila",
        "tiens",
        "aquí",
        "aqui",
        "ecco",
        "hier",
        "här",
        "tutaj",
        "burada",
        "吧",
        "です",
        "だよ",
        "요",
        "يا",
    ]
)
_ASKED_FAMILIES = frozenset(
    {"password", "word", "pass", "pin", "code", "cvv", "key", "saidkey", "pair"}
)


#: A message's header on a line of its own, as chat exports write it ("Ben, [12.03.26 09:16]",
#: "ben — Today at 9:16 PM").
_HEADER = re.compile(
    r"[ \t]*[^\n]{1,30}?(?:,[ \t]*|[ \t]+[—–-][ \t]+)[^\n\d]{0,12}" + _STAMP + r"[ \t]*"
)


def _next_text(text: str, start: int) -> int:
    """Where the next non-blank line after ``start`` (a line's end) begins, past at most one
    blank line."""
    at = start + 1
    while at < len(text) and text[at] in " \t\r\n" and text.count("\n", start, at) < 2:
        at += 1
    return at


#: A code read back in groups of digits, alone on its line.
_SPACED_ANSWER = re.compile(r"(?P<v>\d{3}[ -]\d{3}|\d{2}(?:[ -]\d{2}){2,3})[ \t]*[.!]?[ \t]*")
#: Words of an answer that stalls before the value ("— ouais attends", "wait", "momento").
_STALL_WORDS = 4
#: A word of the answer's line, after its stamp and speaker.
_LINE_WORD = re.compile(r"\S+")


def _answer(text: str, start: int, family: str) -> tuple[int, int] | None:
    """The value answering the question of a line that ends at ``start``: its next non-blank
    line, holding only the value and an answer's own words; or a value no sentence would hold
    among that line's first words ("papá Fisa_mimi075 y bórralo"); or, past a short line that
    stalls ("— ouais attends"), such a value on the line after (the last two for a password,
    not a code)."""
    at = _next_text(text, start)
    end = text.find("\n", at)
    end = len(text) if end < 0 else end
    if _HEADER.fullmatch(text, at, end) and end < len(text):
        at = _next_text(text, end)  # an export's header: "Ben, [12.03.26 09:16]" then the text
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
    found = _answer_line(text, at, end, family)
    if found is not None or family in ("pin", "code", "cvv"):
        return found  # a code's answer is its digits ("VERANO25" answers a discount code)
    found = _strong_word(text, at, end, words=3)
    if found is not None or end >= len(text):
        return found
    head = _CHAT_LINE.match(text, at, end)  # the stall's own words, past its stamp and speaker
    stall = text[head.end() if head is not None else at : end]
    if len(stall.split()) > _STALL_WORDS or any(c.isdigit() for c in stall):
        return None
    below = _next_text(text, end)
    below_end = text.find("\n", below)
    below_end = len(text) if below_end < 0 else below_end
    return _strong_word(text, below, below_end, words=2)


def _strong_word(text: str, at: int, end: int, *, words: int) -> tuple[int, int] | None:
    """A value no sentence would hold (strong, not digits alone) among the first ``words``
    words of the line ``text[at:end]``, past its stamp, speaker or dash."""
    head = _CHAT_LINE.match(text, at, end)
    begin = head.end() if head is not None else at
    dash = re.compile(r"[ \t]*[-–—•*>]+[ \t]*").match(text, begin, end)
    begin = dash.end() if dash is not None else begin
    for match in list(_LINE_WORD.finditer(text, begin, end))[:words]:
        value = match.group().strip("\"'«»“”()[]").rstrip(TRAILING)
        if strong(value) and not value.isdigit() and not not_a_value(value) and not address(value):
            at = text.find(value, match.start())
            return at, at + len(value)
    return None


#: What may close an answer's line after a passphrase: punctuation, spaces.
_PHRASE_END = re.compile(r"[ \t.!]*(?:\n|$)")


def _answer_line(text: str, at: int, end: int, family: str) -> tuple[int, int] | None:
    """The value of an answer's line ``text[at:end]`` (the value and an answer's words)."""
    line = _ANSWER.fullmatch(text, text.rfind("\n", 0, at) + 1, end)
    if line is None:
        return None
    phrase = PASSPHRASE.match(text, line.start("v")) if family not in ("pin", "cvv") else None
    if phrase is not None and _PHRASE_END.match(text, phrase.end()) is not None:
        return line.start("v"), phrase.end()  # "[20:03] Malo : lampe fleuve orage piano64"
    value = line.group("v").rstrip(TRAILING)
    spaced = _SPACED_ANSWER.fullmatch(text, line.start("v"), end)
    if spaced is not None and family in ("pin", "code", "cvv"):
        return spaced.span("v")  # "customer: 484 852", a code read back in groups
    digits = value.strip("#*") if family != "cvv" else value  # a keypad's key: "0166*"
    if not value or not_a_value(digits) or address(value):
        return None
    rest = line.group("rest")
    if rest and rest.strip(" \t.!,)").casefold() in ASSENT_WORDS | _HERE_WORDS:
        rest = None  # "351411 ось", "Kx9… here"
    if (
        rest
        and family in ("pin", "code", "cvv")
        and value.isdigit()
        and _TALK_AFTER.fullmatch(rest)
    ):
        # a code's digits first, then talk ("9433 e poi chiave"), not an amount or a time
        accepted = code_digits(
            "pin" if family == "code" else family, value, connector=True
        ) and not (_AMOUNT.match(" " + rest) or _YEAR.match(value))
    elif rest:
        # words after the value ("Kx9… (same as staging)", "caramel0156 je crois"): only a
        # value no sentence would hold there
        accepted = strong(value) and not value.isdigit()
    elif family in ("pin", "code", "cvv"):
        accepted = code_digits("pin" if family == "code" else family, digits, connector=True)
    else:
        accepted = strong(value) or token_like(value) or generated(value)
        accepted = accepted or (family == "word" and wordy(value) and len(value) >= 4)
        # a password of digits: a card's or a door's "密码", "şifre", "비밀번호"
        keyed = value.strip("#*")  # a door's "密码" read back with a keypad's key: "0166*"
        number = family in ("password", "pass") and keyed.isdigit() and 4 <= len(keyed) <= 12
        accepted = accepted or (number and not _YEAR.match(keyed))
    return (line.start("v"), line.start("v") + len(value)) if accepted else None


#: Words that ask for a value without a question mark ("send me the wifi pw", "le mdp du wifi
#: stp", "код от домофона скинь", "Wi-Fiのパスワード教えて", "현관 비밀번호 알려줘").
_REQUEST = re.compile(
    r"(?i)(?<!\w)(?:what|what's|whats|which|send|tell|give|share|remind|pls|plz|please|"
    r"wie|was|welche[sr]?|schick|gib|sag|quoi|quel(?:le)?|donne|envoie|stp|svp|file|"
    r"cu[aá]l|qu[eé]|p[aá]same|dame|manda(?:me)?|qual|quale|mandami|dammi|dimmi|passa|"
    r"wat|welke?|stuur|geef|vad|vilke[nt]|skicka|jaki[ea]?|jaka|podeślij|podaj|daj|wyślij|"
    r"какой|какая|какое|скинь|скиньте|дай|напиши|пришли|який|яка|яке|ne|neydi|nedir|atar|"
    r"gönder|söyle|read\s+(?:back|out)|vorlesen|lis|dicta|leia|leggi)(?!\w)"
    r"|教えて|おしえて|なんだっけ|何|送って|뭐|알려|좀|보내|多少|什么|什麼|发一下|发下|告诉|"
    r"شو|ما هي|ما هو|ابعت|أرسل|ارسل"
)


#: Words that ask for a time or a name, not the value ("what time is the alarm set for?", "what
#: is the wifi called?").
_NOT_ASKED = re.compile(
    r"(?i)(?<!\w)(?:when|time|called|named|name|ssid|wann|uhrzeit|heißt|quand|heure|"
    r"s'appelle|appelle|cu[aá]ndo|hora|llama|quando|ora|chiama|nome|wanneer|hoe laat|heet|naam|"
    r"när|heter|namn|kiedy|godzina|nazywa|nazwa|когда|время|называется|название|коли|"
    r"ne zaman|saat|adı|isim)(?!\w)|何時|いつ|名前|언제|몇\s*시|이름|几点|什么时候|名字|叫什么|متى|"
    r"الساعة|اسم"
)


def _asked(text: str, start: int, line_end: int) -> bool:
    """Whether the line of a label asks for its value: a question mark, a word that asks, or
    a chat log's line whose next line answers it (a time stamp or a speaker on both)."""
    line = text.rfind("\n", 0, start) + 1
    asked = text[line:line_end]
    if _NOT_ASKED.search(asked):
        return False
    if any(q in asked for q in _QUESTIONS) or _REQUEST.search(asked):
        return True
    if _CHAT_LINE.match(text, line) is None:
        return False
    answer = _CHAT_LINE.match(text, line_end + 1)
    return answer is not None and answer.end() > line_end + 1


_NEXT_WORD = re.compile(r"[ \t]+([^\W\d_]+)")


def answers_below_questions(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of a value given on the line after a question that names it ("what's the wifi
    password?\nKx9…", "[09:14] Anna: какой пароль от вайфая?\n[09:15] Ben: Kvartira_88",
    "wifi密码是多少？\nJia_888888")."""
    if "\n" not in text or hits.present.isdisjoint(LABEL_NEEDLES):
        return
    for label in label_matches(text, hits):
        if label.family not in _ASKED_FAMILIES or skipped(label.family, text, label.start):
            continue
        line_end = text.find("\n", label.end)
        if line_end < 0 or not _asked(text, label.start, line_end):
            continue
        after = _NEXT_WORD.match(text, label.end)
        if after is not None and after.group(1).casefold() in NOT_SECRET_CODES:
            continue  # "c'est quoi le code postal ?", "какой код заказа?"
        if (
            label.family == "pass"
            and after is not None
            and after.group(1).casefold() not in PREPOSITIONS | PASS_TARGETS
        ):
            continue  # "which pass is valid?", not "pass for the nas?"
        found = _answer(text, line_end, label.family)
        if found is not None:
            yield found[0], found[1], KINDS.get(label.family, "password")


#: After a label: the rest of its question on the same line, the question mark (a closing
#: quote), then an "answer" or "reply" word, a separator and one value closing the line
#: ('"welk ww heeft de test-admin?" antwoord: …').
_ANSWERED_BESIDE = re.compile(
    r"[^\n?？]{0,80}[?？][\"'»”」』]?[ \t]*"
    rf"(?i:{ANSWER_WORD}|reply|response|repl(?:y|ied)|antw(?:ort|oord)|r[ée]ponse)"
    r"[ \t]*(?:[:：=]|->|→|—|–)[ \t]*(?P<v>[^\s]{3,64})[ \t]*(?=\r?\n|$)"
)


def answers_beside_questions(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of a value given on the question's own line, after an answer word (a ticket or a
    mail quoting the question: 'vraag: "welk ww heeft de admin?" antwoord: Wj7…')."""
    if ("?" not in text and "？" not in text) or hits.present.isdisjoint(LABEL_NEEDLES):
        return
    for label in label_matches(text, hits):
        if label.family not in _ASKED_FAMILIES or skipped(label.family, text, label.start):
            continue
        match = _ANSWERED_BESIDE.match(text, label.end)
        if match is None:
            continue
        value = match.group("v").rstrip(TRAILING)
        if label.family in ("pin", "code", "cvv"):
            digits = "pin" if label.family == "code" else label.family
            accepted = code_digits(digits, value, connector=True)
        else:
            accepted = (strong(value) or generated(value)) and not not_a_value(value)
        if accepted:
            yield (
                match.start("v"),
                match.start("v") + len(value),
                KINDS.get(label.family, "password"),
            )


# --- a value on its own line, named by the line after it ---------------------------------------

#: What points up at the line above: ``^``, arrows, a pointing hand (with its variation
#: selector or skin tone).
_POINTER = re.compile(r"[ \t]*(?:[\^↑⬆⤴☝👆🔝][\ufe0f\U0001f3fb-\U0001f3ff]*[ \t]*)+")
_ABOVE_WORDS = 4
#: Demonstratives of languages without spaces, matched at a word's start ("这是", "これは").
_GLUED_DEMONSTRATIVES = tuple(w for w in DEMONSTRATIVES if ord(w[0]) >= 0x2E80)
_ALONE = re.compile(r"[ \t]*(?:[^\W\d_]{2,12}[:：][ \t]*)?(?P<v>\S{6,64})[ \t]*")
#: Demonstratives that close a line naming the value above ("Aslan1985\nannemin şifresi bu").
_LAST_DEMONSTRATIVES = frozenset(
    ["bu", "şu", "это", "вот", "this", "that", "这个", "那个", "이거", "これ"]
)


def _pointed(text: str, line: int, start: int) -> bool:
    """Whether the words from a line's start to a label on it point at the line above:
    a pointer, or a demonstrative first ("это пароль…", "dat is het wachtwoord"), and no
    more than a few words, none denying it."""
    pointer = _POINTER.match(text, line, start)
    words = text[pointer.end() if pointer else line : start].split()
    if len(words) > _ABOVE_WORDS or any(w.casefold() in NEGATIONS for w in words):
        return False
    if pointer is not None and pointer.end() > line:
        return True
    first = words[0].casefold().strip(",.:;!") if words else ""
    if first in DEMONSTRATIVES or first.startswith(_GLUED_DEMONSTRATIVES):
        return True
    end = text.find("\n", start)
    after = text[start : end if end >= 0 else len(text)].split()
    last = after[-1].casefold().strip(",.:;!") if len(after) >= 2 else ""
    return len(after) <= _ABOVE_WORDS and last in _LAST_DEMONSTRATIVES  # "…şifresi bu"


def values_above_labels(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of a generated-looking value alone on its line, named by the line after it
    ("M4gg…\n^ that's the pw for the drive", "Xk2…\nэто пароль от облака")."""
    if "\n" not in text or hits.present.isdisjoint(LABEL_NEEDLES):
        return
    for label in label_matches(text, hits):
        family = label.family
        if family not in ("password", "pass", "key", "pair") or skipped(family, text, label.start):
            continue
        line = text.rfind("\n", 0, label.start)
        if line < 1 or not _pointed(text, line + 1, label.start):
            continue
        end = text.find("\n", label.end)
        said = text[label.end : end if end >= 0 else len(text)].split()
        if any(w.casefold().strip(",.:;!?") in NOT_FILLERS for w in said):
            continue  # "that's the password manager version", "the login screen"
        above = text.rfind("\n", 0, line) + 1
        alone = _ALONE.fullmatch(text, above, line)
        if alone is None:
            continue
        value = alone.group("v").rstrip(TRAILING)
        if family == "pair" and (value.isalpha() or not strong(value)):
            continue  # "that's the login": only a value no sentence would hold
        if (strong(value) or token_like(value)) and not not_a_value(value):
            yield alone.start("v"), alone.start("v") + len(value), KINDS.get(family, "password")
