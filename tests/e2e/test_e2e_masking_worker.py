"""Masking (§14) end to end with a real worker: the secrets the issue measured reaching the farm
verbatim never do.

A chat's run carries, one a message, the phrasings that reached the farm as written when
masking was measured: ``curl -u admin:…``, a 12-word BIP-39 seed phrase, "the key is …",
"user admin pass …", "пин-код карты 9921", a value on the line after its label, "… is my
password", a Discord bot token, a US SSN and a CVV after a card number. A real worker process
(:class:`tests.support.harness.Fleet`) consolidates it against the loopback farm simulator,
which records every body it receives (extraction prompts and embedder inputs alike). Every
value is a canary made fresh for the run: none may be in what the farm received, while the
ordinary words of the same messages are (so the prompt was sent, masked).
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import string
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memory_worker.farmsim import FarmSimulator
from memory_worker.runs import RunStore
from memory_worker.settings import Settings
from tests.support.factories import slice_request
from tests.support.farm import everything_sent
from tests.support.harness import Fleet, completed_run

WORDLIST = Path(__file__).resolve().parents[2] / "memory_worker" / "data" / "bip39_english.txt"
CHAT = 4646
DAY = datetime(2026, 4, 6, 9, tzinfo=UTC)
ALNUM = string.ascii_letters + string.digits


def _fresh(length: int) -> str:
    """Letters and digits, one of each at least (so it reads as generated)."""
    return "Q7" + "".join(secrets.choice(ALNUM) for _ in range(length - 2))


def _seed_phrase() -> str:
    """12 words as a wallet makes them: 16 random bytes and the first 4 bits of their SHA-256."""
    words = WORDLIST.read_text(encoding="utf-8").split()
    entropy = secrets.token_bytes(16)
    bits = "".join(f"{b:08b}" for b in entropy) + f"{hashlib.sha256(entropy).digest()[0]:08b}"[:4]
    return " ".join(words[int(bits[i : i + 11], 2)] for i in range(0, 132, 11))


def _discord_token() -> str:
    user_id = str(secrets.randbelow(10**18) + 10**17).encode()
    head = base64.b64encode(user_id).decode().rstrip("=")
    tail = "".join(secrets.choice(ALNUM + "_-") for _ in range(38))
    return f"{head}.{''.join(secrets.choice(ALNUM) for _ in range(6))}.{tail}"


def _luhn_card() -> str:
    body = "4" + "".join(secrets.choice(string.digits) for _ in range(14))
    for check in string.digits:
        digits = [int(c) for c in body + check]
        total = sum(
            d if i % 2 == 0 else (d * 2 - 9 if d > 4 else d * 2)
            for i, d in enumerate(reversed(digits))
        )
        if total % 10 == 0:
            number = body + check
            return " ".join(number[i : i + 4] for i in range(0, 16, 4))
    raise AssertionError("unreachable")


CURL_PASSWORD = _fresh(12)
SEED = _seed_phrase()
KEY = f"Zq8-{_fresh(14)}"
PASS = _fresh(11)
PIN = "9921"
NEXT_LINE = _fresh(12)
IS_MINE = _fresh(10) + "!"
DISCORD = _discord_token()
SSN = f"{secrets.randbelow(600) + 100:03d}-{secrets.randbelow(89) + 10:02d}-{secrets.randbelow(8999) + 1000:04d}"
CARD = _luhn_card()
CVV = "738"
#: (message text, the canaries it carries: the value, and for a seed phrase its 12 words).
MESSAGES = [
    (
        f"can you check this? curl -u admin:{CURL_PASSWORD} https://api.example.com/v1/items",
        [CURL_PASSWORD],
    ),
    (f"my wallet backup, keep it safe: {SEED}", [SEED, " ".join(SEED.split()[4:8])]),
    (f"the key is {KEY}", [KEY]),
    (f"user admin pass {PASS}", [PASS]),
    (f"пин-код карты {PIN}", [PIN]),
    (f"wifi password for the cottage\n{NEXT_LINE}", [NEXT_LINE]),
    (f"{IS_MINE} is my password for the bank app", [IS_MINE]),
    (f"the bot token is {DISCORD} don't leak it", [DISCORD]),
    (f"for the form: my SSN is {SSN}", [SSN, SSN.replace("-", "")]),
    (f"pay with {CARD} 09/28 {CVV} please", [CARD, CARD.replace(" ", ""), CVV]),
]
#: Ordinary words of the same messages: they reach the farm (the run was sent, masked).
ORDINARY = ["can you check this?", "keep it safe", "for the cottage", "for the bank app"]


def _sent_holds(sent: str, canary: str) -> bool:
    """Whether ``canary`` is in what the farm received (a short number only as a whole number:
    the prompt's own ids and times hold digits too)."""
    if canary.isdigit() and len(canary) <= 6:
        return re.search(rf"(?<!\d){canary}(?!\d)", sent) is not None
    return canary in sent


@pytest.fixture
def fleet(settings: Settings, sim: FarmSimulator, tmp_path: Path) -> Any:
    fleet = Fleet(settings, tmp_path, env_overrides={"discovery_base_url": sim.base_url})
    yield fleet
    fleet.stop_all()


@pytest.mark.slow
async def test_no_measured_secret_reaches_the_farm_from_a_real_worker(
    settings: Settings, redis: Any, sim: FarmSimulator, fleet: Fleet
) -> None:
    store = RunStore(redis, settings)
    rows = [(100 + i, 7, "Alice", text) for i, (text, _) in enumerate(MESSAGES)]
    rid = (await store.enqueue(slice_request(CHAT, DAY, rows))).run_id
    assert rid
    fleet.start(1)
    await completed_run(lambda: store.get(rid), timeout=90)
    fleet.stop_all()

    sent = everything_sent(sim)
    assert sim.received(), "the farm was asked"
    for words in ORDINARY:
        assert words in sent, words  # the messages were sent, masked
    leaked = [
        (text.split()[0], canary)
        for text, canaries in MESSAGES
        for canary in canaries
        if _sent_holds(sent, canary)
    ]
    assert leaked == []
