"""The noise filter (§10): bots, automatic forwards, empty texts and spam never reach the extractor."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory_worker.consolidation.noise import NoiseReason, filter_messages, is_spam, noise_reason
from memory_worker.models import Message

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def msg(mid: int, text: str, **flags: bool) -> Message:
    return Message(
        message_id=mid, user_id=mid + 100, sender_name=f"u{mid}", text=text, sent_at=AT, **flags
    )


SPAM = [
    ("en_job_dm", "Remote job, $300 a day, no experience, DM me"),
    ("en_airdrop_link", "Join t.me/xyz for free crypto airdrop 🚀"),
    ("en_passive_income_dm", "I help people earn up to $2000 a week with passive income, DM me"),
    ("en_hiring_whatsapp", "We are hiring! Work from home, text me on whatsapp"),
    (
        "ru_job_dm",
        "Требуются сотрудники на удалённую работу, 3000 руб в день, без опыта, пишите в лс",
    ),
    ("ru_passive_income", "Пассивный доход от 5000₽ в день, пиши в лс"),
    ("ru_side_job_link", "Подработка без вложений, доход от 2000 в день https://bit.ly/abc"),
    ("ru_investment", "Гарантированный доход от 10% в неделю, ссылка в профиле"),
    ("uk_job", "Віддалена робота, заробіток від 1000 грн в день, пишіть в особисті"),
    ("es_job", "Trabajo desde casa, ingresos pasivos, escríbeme al privado"),
    ("de_job", "Nebenjob von zu Hause arbeiten, 200€ am Tag, schreib mir privat"),
    ("mixed_script_bait", "Зaрaбoтoк от 500$ в день, пиши в лс"),
]
HAM = [
    ("dm_alone", "DM me the details of the meetup"),
    ("bitcoin_news", "bitcoin dropped 8% today, glad I sold https://coinmarketcap.com"),
    ("job_talk", "I got a remote job at a startup, finally!"),
    ("ru_work", "Я работаю удалённо уже два года, очень доволен"),
    ("ru_link", "Вот статья про Postgres: https://habr.com/ru/articles/1"),
    ("giveaway_stickers", "we're doing a giveaway of stickers at the meetup"),
    ("money_plain", "rent went up to $2000 a month, ugh"),
    ("es_plain", "¿Cena el viernes en mi casa?"),
]


@pytest.mark.parametrize(("case", "text"), SPAM, ids=[c for c, _ in SPAM])
def test_spam_is_detected(case: str, text: str) -> None:
    assert is_spam(text)
    assert noise_reason(msg(1, text)) == NoiseReason.SPAM


@pytest.mark.parametrize(("case", "text"), HAM, ids=[c for c, _ in HAM])
def test_ordinary_messages_are_kept(case: str, text: str) -> None:
    assert not is_spam(text)
    assert noise_reason(msg(1, text)) is None


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        (msg(1, "Oslo: 3°C", is_bot=True), NoiseReason.BOT),
        (msg(2, "BREAKING: layoffs", is_forward=True), NoiseReason.FORWARD),
        (msg(3, ""), NoiseReason.EMPTY),
        (msg(4, " \n\t "), NoiseReason.EMPTY),
        (msg(5, "I live in Berlin"), None),
    ],
    ids=["bot", "forward", "empty", "whitespace", "human"],
)
def test_noise_reasons(message: Message, reason: NoiseReason | None) -> None:
    assert noise_reason(message) == reason


def test_filter_keeps_order_and_counts_reasons() -> None:
    messages = [
        msg(1, "hello"),
        msg(2, "bot says hi", is_bot=True),
        msg(3, "Remote job, $300 a day, no experience, DM me"),
        msg(4, ""),
        msg(5, "bye"),
        msg(6, "fwd", is_forward=True),
    ]
    result = filter_messages(messages)
    assert [m.message_id for m in result.kept] == [1, 5]
    assert result.dropped == {
        2: NoiseReason.BOT,
        3: NoiseReason.SPAM,
        4: NoiseReason.EMPTY,
        6: NoiseReason.FORWARD,
    }
    assert result.counts() == {"bot": 1, "empty": 1, "forward": 1, "spam": 1}
