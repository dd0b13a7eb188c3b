"""A one-time code read back in a chat log: one speaker asks whether a text message (an SMS,
a text, a message with a code) has come, and the next speaker's line answers with the digits
("[16:55] A: got the text?⏎[16:57] B: yep it says 742 073", "文字 왔어?⏎응 092 416").

The question names the message, not the code, so no label of :mod:`.labels` is there: the
concept is the exchange. The asking line holds a word for a text message and a question mark;
the next non-blank line is another speaker's (a time stamp or a name and a colon), and after a
few words of assent it ends with a code's digits — four to eight together, or read back in
groups ("742 073", "74 20 73") — and nothing after them but punctuation. A year, a time, an
amount or a count followed by its unit is no code: the digits must close the line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_worker.privacy.masking.needles import Hits, words
from memory_worker.privacy.masking.shapes import Span

#: Words for a text message, casefolded, in the fifteen languages of the split (and UK).
MESSAGE_NEEDLES = words(
    """
    sms smsen sms:et sms'i sms'in text texto textos message messages messaggio mensagem
    mensaje bericht berichtje meddelande wiadomość wiadomosc esemes esemesa смс сообщение
    смска эсэмэска повідомлення mesaj 短信 簡訊 讯息 訊息 消息 ショートメール メッセージ
    ショートメッセージ 문자 메시지 메세지 رسالة الرسالة مسج المسج
    """
)
_MESSAGE = "|".join(sorted((re.escape(w) for w in MESSAGE_NEEDLES), key=len, reverse=True))
#: The asking line: a word for a text message, then a question mark later on the line.
_ASKING = re.compile(rf"(?i)(?<![^\W\d_])(?:{_MESSAGE})[^\n]{{0,60}}?[?？؟]")
#: A chat line's head: a time stamp, then a speaker; or a speaker alone.
_STAMP = r"\[?(?:\d{1,4}[./-]\d{1,2}(?:[./-]\d{2,4})?,?[ \t]+)?\d{1,2}:\d{2}(?::\d{2})?\]?"
_SPEAKER = r"[^\n:：<>\d]{1,24}?[ \t]?[:：]"
_HEAD = rf"[ \t]*(?:{_STAMP}[ \t]*[-–—]?[ \t]*(?:{_SPEAKER})?|{_SPEAKER}|<[^<>\s]{{1,24}}>)"
#: The answering line: its head, a few words (none with a digit), then the code closing it.
_REPLY = re.compile(
    rf"{_HEAD}(?P<words>(?:[ \t]*[^\W\d_][^\s\d]{{0,15}}[,，、،:]?){{0,4}})[ \t,，、،:]*"
    r"(?P<v>\d{4,8}|\d{2,4}(?:[ \u00a0-]\d{2,4}){1,3})"
    r"[ \t]*[.!。！]?[ \t]*(?:\r?\n|$)"
)
_YEAR = re.compile(r"(?:1[89]|20)\d\d")
#: How many digits a code read back has, in all its groups.
_CODE_DIGITS = (4, 8)


def _line_ends(text: str, at: int) -> int:
    end = text.find("\n", at)
    return len(text) if end < 0 else end


def message_codes(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of a code's digits answering, on the next speaker's line, a question whether a
    text message came."""
    if "\n" not in text or hits.present.isdisjoint(MESSAGE_NEEDLES):
        return
    for asked in _ASKING.finditer(text):
        line_end = _line_ends(text, asked.end())
        below = line_end + 1
        while (
            below < len(text) and text[below] in " \t\r\n" and text.count("\n", line_end, below) < 2
        ):
            below += 1
        if below >= len(text):
            continue
        reply = _REPLY.match(text, below)
        if reply is None:
            continue
        value = reply.group("v")
        digits = sum(c.isdigit() for c in value)
        if _YEAR.fullmatch(value) or not _CODE_DIGITS[0] <= digits <= _CODE_DIGITS[1]:
            continue  # "yes, in 2019", "yes, 10 20"
        yield reply.start("v"), reply.end("v"), "pin"
