"""The noise filter (§10): which messages of a run never reach the extractor.

Dropped, each with a reason:

- ``bot`` — written by a bot (the bot's own replies included);
- ``forward`` — an automatic forward (channel posts relayed into the chat);
- ``empty`` — no text left after trimming whitespace;
- ``spam`` — the spam heuristics below say so.

Spam is scored, not matched on one word, so that a member saying "DM me the
details" or "bitcoin is down 5% https://…" is kept while the classic bait
("remote job, $300 a day, no experience, write me in DM") is dropped. Each
*strong* signal (DM bait, a job offer, money bait) counts 2, each *weak*
signal (a link, a money amount per day/week, a bait qualifier such as "no
experience", crypto words, a word mixing Latin and Cyrillic letters — a
classic filter-evasion trick) counts 1. A message is spam when it has two
strong signals, or one strong signal and a score of at least 4.

The phrase lists are data (English, Russian, plus a few Ukrainian, Spanish
and German phrases); a new phrase is one line. Decisions are per message
and pure, so a continuation run re-filters its own messages identically.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from memory_worker.models import Message


class NoiseReason(StrEnum):
    BOT = "bot"
    FORWARD = "forward"
    EMPTY = "empty"
    SPAM = "spam"


#: Invitations to move to private messages.
DM_BAIT: tuple[str, ...] = (
    "dm me",
    "pm me",
    "write me in dm",
    "write me in private",
    "write to me in private",
    "message me privately",
    "message me on whatsapp",
    "text me on whatsapp",
    "contact me on telegram",
    "contact me on whatsapp",
    "link in bio",
    "link in my bio",
    "check my profile",
    "details in dm",
    "details in private",
    "пиши в лс",
    "пишите в лс",
    "напиши в лс",
    "напишите в лс",
    "пишите в личку",
    "пиши в личку",
    "в личные сообщения",
    "подробности в лс",
    "подробности в личке",
    "за подробностями в лс",
    "ссылка в профиле",
    "ссылка в шапке",
    "пишіть в особисті",
    "пиши в особисті",
    "escríbeme al privado",
    "escríbeme por privado",
    "schreib mir privat",
    "schreibt mir privat",
)

#: Job-offer bait.
JOB_OFFER: tuple[str, ...] = (
    "remote work",
    "remote job",
    "work from home",
    "earn from home",
    "part-time job",
    "part time job",
    "we are hiring",
    "looking for people",
    "looking for partners",
    "easy job",
    "удаленная работа",
    "удалённая работа",
    "работа на дому",
    "подработка",
    "подработку",
    "требуются сотрудники",
    "ищем людей",
    "ищу людей",
    "набор в команду",
    "набираем команду",
    "віддалена робота",
    "trabajo desde casa",
    "nebenjob",
    "von zu hause arbeiten",
)

#: Money and crypto bait.
MONEY_BAIT: tuple[str, ...] = (
    "passive income",
    "guaranteed profit",
    "guaranteed income",
    "earn $",
    "earn up to",
    "double your",
    "free crypto",
    "free usdt",
    "free bitcoin",
    "airdrop",
    "giveaway",
    "investment opportunity",
    "пассивный доход",
    "доход от",
    "заработок от",
    "заработать от",
    "заработок без",
    "прибыль от",
    "без вложений",
    "гарантированный доход",
    "гарантированная прибыль",
    "раздача",
    "заробіток",
    "ingresos pasivos",
    "passives einkommen",
)

#: Qualifiers that turn an offer into bait.
QUALIFIERS: tuple[str, ...] = (
    "no experience",
    "without experience",
    "limited spots",
    "limited places",
    "only today",
    "act now",
    "18+",
    "без опыта",
    "осталось мест",
    "только сегодня",
    "успей",
    "без опыту",
    "sin experiencia",
)

#: Crypto words (weak on their own: people do talk about crypto).
CRYPTO: tuple[str, ...] = (
    "crypto",
    "bitcoin",
    "btc",
    "usdt",
    "binance",
    "крипт",
    "биткоин",
)

_LINK = re.compile(r"(https?://|www\.|t\.me/|wa\.me/|bit\.ly/)", re.IGNORECASE)
_AMOUNT_PER_PERIOD = re.compile(
    r"(\$\s?\d|\d\s?(\$|usd|usdt|€|₽|руб|грн|eur))[^.\n]{0,40}"
    r"(per day|a day|/day|per week|a week|/week|в день|в сутки|в неделю|за день|на день|am tag|pro tag|al día|por día)",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class NoiseResult:
    """The messages kept for extraction and the reason each dropped one was dropped."""

    kept: list[Message]
    dropped: dict[int, NoiseReason] = field(default_factory=dict)

    def counts(self) -> dict[str, int]:
        """Dropped messages per reason (for logs and the run result)."""
        return dict(sorted(Counter(str(reason) for reason in self.dropped.values()).items()))


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


def _has_any(text: str, phrases: Iterable[str]) -> bool:
    return any(phrase in text for phrase in phrases)


def _mixes_scripts(word: str) -> bool:
    latin = cyrillic = False
    for ch in word:
        if "a" <= ch <= "z":
            latin = True
        elif "\u0400" <= ch <= "\u04ff":
            cyrillic = True
    return latin and cyrillic


def spam_score(text: str) -> tuple[int, int]:
    """``(strong signals, total score)`` of a message text (see the module doc)."""
    norm = _normalise(text)
    strong = sum(_has_any(norm, phrases) for phrases in (DM_BAIT, JOB_OFFER, MONEY_BAIT))
    weak = sum(
        (
            bool(_LINK.search(norm)),
            bool(_AMOUNT_PER_PERIOD.search(norm)),
            _has_any(norm, QUALIFIERS),
            _has_any(norm, CRYPTO),
            any(_mixes_scripts(word) for word in _WORD.findall(norm)),
        )
    )
    return strong, 2 * strong + weak


def is_spam(text: str) -> bool:
    strong, score = spam_score(text)
    return strong >= 2 or (strong >= 1 and score >= 4)


def noise_reason(message: Message) -> NoiseReason | None:
    """Why ``message`` is noise, or None when it goes to the extractor."""
    if message.is_bot:
        return NoiseReason.BOT
    if message.is_forward:
        return NoiseReason.FORWARD
    if not message.text.strip():
        return NoiseReason.EMPTY
    if is_spam(message.text):
        return NoiseReason.SPAM
    return None


def filter_messages(messages: Sequence[Message]) -> NoiseResult:
    """Split ``messages`` into kept ones (order preserved) and dropped ones with reasons."""
    kept: list[Message] = []
    dropped: dict[int, NoiseReason] = {}
    for message in messages:
        reason = noise_reason(message)
        if reason is None:
            kept.append(message)
        else:
            dropped[message.message_id] = reason
    return NoiseResult(kept=kept, dropped=dropped)
