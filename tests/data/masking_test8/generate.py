"""Writes ``test.jsonl`` of the eighth held-out masking split from the templates in
``templates_*.py`` (hand-written per language). Values are drawn fresh from
``secrets.SystemRandom`` on every run, so a rerun writes a different file; the committed file
is the one the README's sha256 names. Needs the ``mnemonic`` package (BIP-39 word list and
checksum), which the project does not depend on: run it from a throwaway virtualenv::

    python -m venv /tmp/bip && /tmp/bip/bin/pip install mnemonic==0.21
    /tmp/bip/bin/python tests/data/masking_test8/generate.py
"""

from __future__ import annotations

import base64
import importlib.util
import json
import re
import secrets
import string
import sys
import unicodedata
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mnemonic import Mnemonic  # type: ignore[import-not-found,unused-ignore]

HERE = Path(__file__).resolve().parent
LANGS = ("en", "de", "fr", "es", "it", "pt", "nl", "sv", "pl", "ru", "tr", "ja", "ko", "zh", "ar")
REPEAT = 2  # each template is used this many times, with fresh values each time
RNG = secrets.SystemRandom()
BIP = Mnemonic("english")
WORDS: list[str] = list(BIP.wordlist)
ZW = re.compile("[\u200b-\u200f\u2060\ufeff\u00ad]")
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-."


def norm(text: str) -> str:
    return ZW.sub("", unicodedata.normalize("NFKC", text))


def rs(alphabet: str, n: int) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def luhn_complete(prefix: str, length: int) -> str:
    body = prefix + rs(string.digits, length - len(prefix) - 1)
    for last in string.digits:
        if luhn_ok(body + last):
            return body + last
    raise AssertionError


def card(brand: str = "") -> str:
    brand = brand or RNG.choice(["visa", "mc", "mc2", "amex", "mir", "disc"])
    prefix, length = {
        "visa": ("4", 16),
        "mc": (str(RNG.randint(51, 55)), 16),
        "mc2": (str(RNG.randint(2221, 2720)), 16),
        "amex": (RNG.choice(["34", "37"]), 15),
        "mir": ("220" + str(RNG.randint(0, 4)), 16),
        "disc": ("6011", 16),
    }[brand]
    num = luhn_complete(prefix, length)
    sep = RNG.choice([" ", "-", ""])
    if length == 15:
        return sep.join([num[:4], num[4:10], num[10:]]) if sep else num
    return sep.join(num[i : i + 4] for i in range(0, 16, 4)) if sep else num


def nonluhn() -> str:
    while True:
        num = RNG.choice(["4", "5", "6", "9"]) + rs(string.digits, 15)
        if not luhn_ok(num):
            return " ".join(num[i : i + 4] for i in range(0, 16, 4))


def pin(n: int = 4) -> str:
    while True:
        p = rs(string.digits, n)
        if len(set(p)) < 3 or p[:2] in ("19", "20") or p in "0123456789" or p in "9876543210":
            continue
        return p


def password() -> str:
    stems = [
        "Maple",
        "tiger",
        "Nordlicht",
        "kayak",
        "Zebra",
        "ocelot",
        "Brume",
        "vento",
        "Kiwi",
        "luna",
        "Falke",
        "sol",
        "Mirto",
        "drago",
        "Pino",
        "wasabi",
        "Orca",
        "raven",
        "Tundra",
    ]
    kind = RNG.randint(0, 2)
    if kind == 0:
        return RNG.choice(stems) + rs(string.digits, 3) + RNG.choice("!#$%&*?@+") + rs(ALNUM, 3)
    if kind == 1:
        return rs(ALNUM, 5) + RNG.choice("!#%&*?+=") + rs(ALNUM, 6)
    return rs(string.ascii_lowercase, 4) + "-" + rs(ALNUM, 4) + "-" + rs(string.digits, 3)


def urlpw() -> str:
    return rs(ALNUM, 6) + RNG.choice("_-.") + rs(ALNUM, 6)


def seed(n: int) -> str:
    return str(BIP.generate(128 if n == 12 else 256))


def bad_seed() -> str:
    while True:
        phrase = " ".join(RNG.choice(WORDS) for _ in range(12))
        if not BIP.check(phrase):
            return phrase


def b64u(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def jwt() -> str:
    head = b64u(b'{"alg":"HS256","typ":"JWT"}')
    body = b64u(
        json.dumps(
            {
                "sub": str(RNG.randint(10**5, 10**7)),
                "iat": RNG.randint(1_700_000_000, 1_800_000_000),
            }
        ).encode()
    )
    return f"{head}.{body}.{b64u(secrets.token_bytes(32))}"


def discord() -> str:
    uid = str(RNG.randint(10**17, 10**18 - 1))
    return f"{b64u(uid.encode())}.{rs(ALNUM + '_-', 6)}.{rs(ALNUM + '_-', 38)}"


def pem() -> str:
    lines = [base64.b64encode(secrets.token_bytes(48)).decode() for _ in range(4)]
    return "\n".join(lines)


def ssn() -> str:
    while True:
        area = RNG.randint(1, 899)
        if area != 666:
            return f"{area:03d}-{RNG.randint(1, 99):02d}-{RNG.randint(1, 9999):04d}"


def recovery() -> str:
    return " ".join(
        rs(string.ascii_lowercase + string.digits, 4)
        + "-"
        + rs(string.ascii_lowercase + string.digits, 4)
        for _ in range(3)
    )


def answer() -> str:
    first = ["Rocky", "Mimi", "Bruno", "Pelusa", "Kiki", "Ruffus", "Tobi", "Nala", "Fifi", "Lupo"]
    return (
        RNG.choice(first) + rs(string.digits, 2) + RNG.choice(["Oak", "Sky", "Rio", "Zed", "Fox"])
    )


def doorcode() -> str:
    return RNG.choice(["", "*", "#"]) + pin(RNG.choice([4, 5, 6])) + RNG.choice(["", "#", "*"])


LANG_NOW = ["en"]


def date() -> str:
    y, m, d = RNG.choice([2025, 2026, 2027]), RNG.randint(1, 12), RNG.randint(1, 28)
    lang = LANG_NOW[0]
    if lang in ("ja", "zh"):
        return f"{y}年{m}月{d}日"
    if lang == "ko":
        return f"{y}년 {m}월 {d}일"
    if lang in ("en", "fr", "es", "it", "pt", "ar"):
        return f"{d:02d}/{m:02d}/{y}"
    if lang in ("sv", "nl"):
        return f"{y}-{m:02d}-{d:02d}" if lang == "sv" else f"{d:02d}-{m:02d}-{y}"
    return f"{d:02d}.{m:02d}.{y}"


def price() -> str:
    if LANG_NOW[0] in ("ja", "ko"):
        return f"{RNG.randint(3, 90) * 1000:,}"
    if LANG_NOW[0] == "zh":
        return str(RNG.randint(20, 900))
    return f"{RNG.randint(3, 900)},{RNG.choice(['00', '50', '90', '99'])}"


SECRET: dict[str, Callable[[], str]] = {
    "pw": password,
    "upw": urlpw,
    "wifi": lambda: (
        RNG.choice(["Haus", "casa", "Stuga", "dom", "Ev", "koti"])
        + rs(ALNUM, 8)
        + rs(string.digits, 2)
    ),
    "pin": pin,
    "pinl": lambda: pin(6),
    "puk": lambda: pin(8),
    "code": doorcode,
    "otp": lambda: pin(6),
    "card": card,
    "amex": lambda: card("amex"),
    "cvv": lambda: pin(3),
    "cid": lambda: pin(4),
    "ssn": ssn,
    "seed": lambda: seed(12),
    "seedl": lambda: seed(24),
    "oai": lambda: "sk-proj-" + rs(ALNUM + "_-", 48),
    "ant": lambda: "sk-ant-api03-" + rs(ALNUM + "_-", 80) + "AA",
    "ghp": lambda: "ghp_" + rs(ALNUM, 36),
    "glpat": lambda: "glpat-" + rs(ALNUM + "_-", 20),
    "slack": lambda: (
        f"xoxb-{RNG.randint(10**11, 10**12)}-{RNG.randint(10**11, 10**12)}-{rs(ALNUM, 24)}"
    ),
    "stripe": lambda: "sk_live_" + rs(ALNUM, 32),
    "aws": lambda: rs(ALNUM + "/+", 40),
    "gkey": lambda: "AIza" + rs(ALNUM + "_-", 35),
    "hf": lambda: "hf_" + rs(ALNUM, 34),
    "sg": lambda: f"SG.{rs(ALNUM + '_-', 22)}.{rs(ALNUM + '_-', 43)}",
    "npm": lambda: "npm_" + rs(ALNUM, 36),
    "discord": discord,
    "tg": lambda: "AA" + rs(ALNUM + "_-", 33),
    "jwt": jwt,
    "pem": pem,
    "rec": recovery,
    "ans": answer,
}

LOOK: dict[str, Callable[[], str]] = {
    "order": lambda: str(RNG.randint(10**6, 10**8)),
    "price": lambda: price(),
    "usd": lambda: f"{RNG.randint(3, 900)}.{RNG.choice(['00', '50', '99'])}",
    "date": lambda: date(),
    "isodate": lambda: (
        f"{RNG.choice([2025, 2026, 2027])}-{RNG.randint(1, 12):02d}-{RNG.randint(1, 28):02d}"
    ),
    "time": lambda: f"{RNG.randint(6, 22):02d}:{RNG.choice(['00', '15', '30', '45'])}",
    "track": lambda: (
        RNG.choice(["1Z", "JJD", "LX", "RR"]) + rs(string.ascii_uppercase + string.digits, 12)
    ),
    "ext": lambda: str(RNG.randint(200, 899)),
    "room": lambda: str(RNG.randint(101, 499)),
    "ver": lambda: f"{RNG.randint(1, 4)}.{RNG.randint(0, 20)}.{RNG.randint(0, 9)}",
    "flight": lambda: (
        RNG.choice(
            [
                "LH",
                "AF",
                "IB",
                "AZ",
                "TP",
                "KL",
                "SK",
                "LO",
                "SU",
                "TK",
                "NH",
                "KE",
                "CA",
                "EK",
                "BA",
            ]
        )
        + str(RNG.randint(100, 9999))
    ),
    "phone": lambda: (
        f"+{RNG.randint(30, 49)} {RNG.randint(100, 999)} {RNG.randint(100, 999)} {RNG.randint(1000, 9999)}"
    ),
    "nonluhn": nonluhn,
    "ends": lambda: pin(4),
    "badseed": bad_seed,
    "uuid": lambda: str(uuid.UUID(int=RNG.getrandbits(128), version=4)),
    "git": lambda: rs("0123456789abcdef", 40),
    "sha": lambda: rs("0123456789abcdef", 64),
    "ip": lambda: f"10.{RNG.randint(0, 255)}.{RNG.randint(0, 255)}.{RNG.randint(1, 254)}",
    "mac": lambda: ":".join(rs("0123456789ABCDEF", 2) for _ in range(6)),
    "n": lambda: str(RNG.randint(2, 40)),
    "freq": lambda: f"{RNG.randint(144, 146)}.{RNG.randint(100, 975)}",
    "callsign": lambda: (
        RNG.choice(
            [
                "DL",
                "F",
                "EA",
                "I",
                "CT",
                "PA",
                "SM",
                "SP",
                "RA",
                "TA",
                "JA",
                "HL",
                "BG",
                "A6",
                "G",
                "K",
            ]
        )
        + str(RNG.randint(1, 9))
        + rs(string.ascii_uppercase, 3)
    ),
    "claim": lambda: "CLM-" + str(RNG.randint(10**5, 10**6)),
    "isbn": lambda: (
        "978-"
        + str(RNG.randint(0, 9))
        + "-"
        + str(RNG.randint(1000, 9999))
        + "-"
        + str(RNG.randint(1000, 9999))
        + "-"
        + str(RNG.randint(0, 9))
    ),
    "hex": lambda: "#" + rs("0123456789abcdef", 6),
    "user": lambda: (
        RNG.choice(["admin", "root", "kasse", "crew", "hut", "lib", "ops", "bar", "dock", "ham"])
        + str(RNG.randint(1, 99))
    ),
    "host": lambda: (
        RNG.choice(["db", "nas", "srv", "mc", "cloud", "vpn", "pi"])
        + str(RNG.randint(1, 9))
        + "."
        + RNG.choice(["example.org", "club.lan", "home.arpa", "example.net"])
    ),
    "akid": lambda: "AKIA" + rs(string.ascii_uppercase + string.digits, 16),
    "tgid": lambda: str(RNG.randint(10**9, 8 * 10**9)),
    "exp": lambda: f"{RNG.randint(1, 12):02d}/{RNG.randint(27, 31)}",
}

ESC = re.compile(r"\\u([0-9a-fA-F]{4})")
SLOT = re.compile(r"\{([a-z]+?)(\d?)\}")
CATEGORY = {
    "pw": "password",
    "upw": "credential_url_or_command",
    "wifi": "wifi",
    "pin": "pin",
    "pinl": "pin",
    "puk": "pin",
    "code": "door_code",
    "otp": "otp",
    "card": "card",
    "amex": "card",
    "cvv": "cvv",
    "cid": "cvv",
    "ssn": "ssn",
    "seed": "seed_phrase",
    "seedl": "seed_phrase",
    "jwt": "jwt",
    "pem": "private_key",
    "discord": "bot_token",
    "tg": "bot_token",
    "rec": "recovery_code",
    "ans": "security_answer",
}
LOOK_CATEGORY = {
    "badseed": "bip39_words_bad_checksum",
    "nonluhn": "non_luhn_number",
    "ends": "card_last4",
    "order": "order_number",
    "track": "tracking_code",
    "price": "price",
    "usd": "price",
    "ext": "phone_extension",
    "room": "room_number",
    "ver": "version",
    "flight": "flight",
    "phone": "phone",
    "date": "date",
    "isodate": "date",
    "uuid": "hash_or_id",
    "git": "hash_or_id",
    "sha": "hash_or_id",
    "claim": "claim_number",
    "freq": "frequency",
    "isbn": "isbn",
}


def fill(template: str, kind: str) -> tuple[str, list[str], str]:
    values: dict[str, str] = {}
    order: list[str] = []
    for m in SLOT.finditer(template):
        key = m.group(0)
        name = m.group(1)
        if key in values:
            continue
        if name in SECRET:
            if kind != "secret":
                raise ValueError(f"secret slot {key} in a look-alike: {template!r}")
            values[key] = SECRET[name]()
            order.append(key)
        elif name in LOOK:
            values[key] = LOOK[name]()
        else:
            raise ValueError(f"unknown slot {key} in {template!r}")
    text = SLOT.sub(lambda m: values[m.group(0)], template).replace("\\n", "\n")
    text = ESC.sub(lambda m: chr(int(m.group(1), 16)), text)
    listed = [values[k] for k in order]
    names = [SLOT.match(k).group(1) for k in order]  # type: ignore[union-attr]
    if kind == "secret":
        first = names[0] if names else ""
        category = CATEGORY.get(first, "api_key")
        if first == "upw":
            category = "credential_url_or_command"
        pairs = {frozenset({"card", "cvv"}), frozenset({"amex", "cid"}), frozenset({"pin", "puk"})}
        if "```" in template and first != "pem":
            category = "config_paste"
        elif len(set(names)) > 1 and frozenset(names) not in pairs:
            category = "several_secrets"
    else:
        looks = [SLOT.match(m.group(0)).group(1) for m in SLOT.finditer(template)]  # type: ignore[union-attr]
        category = next(
            (LOOK_CATEGORY[n] for n in looks if n in LOOK_CATEGORY), "talk_or_placeholder"
        )
    return text, listed, category


DIGIT_RUN = re.compile(r"\d(?:[ -]?\d){12,18}")


def luhn_runs(text: str) -> bool:
    for m in DIGIT_RUN.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        for n in range(13, 20):
            for i in range(len(digits) - n + 1):
                if luhn_ok(digits[i : i + n]):
                    return True
    return False


def seed_runs(text: str) -> bool:
    toks = re.findall(r"[a-z]+", text.lower())
    for n in (12, 15, 18, 21, 24):
        for i in range(len(toks) - n + 1):
            window = toks[i : i + n]
            if all(w in BIP.wordlist for w in window) and BIP.check(" ".join(window)):
                return True
    return False


def problems(text: str, listed: list[str], kind: str) -> list[str]:
    out: list[str] = []
    ntext = norm(text)
    for s in listed:
        if text.count(s) != 1 or norm(text).count(norm(s)) != 1:
            out.append("secret not exactly once")
            continue
        run = min(6, len(s))
        rest = text.replace(s, "\0")
        others = [o for o in listed if o != s]
        ns = norm(s)
        for i in range(len(ns) - run + 1):
            piece = ns[i : i + run]
            if piece in norm(rest) or any(piece in norm(o) for o in others):
                out.append("secret run elsewhere")
                break
    del ntext
    if kind == "lookalike":
        if luhn_runs(text):
            out.append("luhn run in look-alike")
        if seed_runs(text):
            out.append("seed in look-alike")
    return out


def load_templates() -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(HERE.glob("templates_*.py")):
        spec = importlib.util.spec_from_file_location(path.stem, path)
        assert spec
        assert spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        for lang, block in mod.T.items():
            rows = out.setdefault(lang, [])
            for raw in block.strip("\n").split("\n"):
                if not raw.strip() or raw.startswith("#"):
                    continue
                tag, _, body = raw.partition(" ")
                kind = {"S": "secret", "L": "lookalike"}[tag]
                rows.append((kind, body))
    return out


def main() -> int:
    templates = load_templates()
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for lang in LANGS:
        LANG_NOW[0] = lang
        counters = {"secret": 0, "lookalike": 0}
        for kind, body in templates.get(lang, []):
            for _ in range(REPEAT if SLOT.search(body) else 1):
                for _attempt in range(500):
                    text, listed, category = fill(body, kind)
                    if kind == "secret" and "seed" in category:
                        assert all(BIP.check(s) for s in listed if s.count(" ") in (11, 23))
                    if text not in seen and not problems(text, listed, kind):
                        break
                else:
                    raise SystemExit(f"cannot satisfy checks: {lang} {body[:60]!r}")
                seen.add(text)
                counters[kind] += 1
                tag = "s" if kind == "secret" else "l"
                rows.append(
                    {
                        "id": f"t8-{lang}-{tag}{counters[kind]:03d}",
                        "lang": lang,
                        "kind": kind,
                        "category": category,
                        "text": text,
                        "secrets": listed,
                    }
                )
    RNG.shuffle(rows)
    ids = [r["id"] for r in rows]
    assert len(ids) == len(set(ids))
    texts = [r["text"] for r in rows]
    dup = {t for t in texts if texts.count(t) > 1}
    assert not dup, sorted(dup)[:3]
    with (HERE / "test.jsonl").open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    for lang in LANGS:
        s = sum(1 for r in rows if r["lang"] == lang and r["kind"] == "secret")
        lk = sum(1 for r in rows if r["lang"] == lang and r["kind"] == "lookalike")
        print(lang, s, lk, file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
