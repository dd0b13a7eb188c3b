"""Writes ``test.jsonl``, the ninth held-out masking split (see README.md).

Run ``python generate.py`` from anywhere: it draws every value from ``random.Random(SEED)``,
so the output is the same byte for byte on every run. The templates live in
``templates_s.py`` (secrets), ``templates_l.py`` (look-alikes) and ``templates_n.py``
(language-neutral bodies with a lead-in in each language) and ``templates_x.py`` (more
phrasings per language).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import re
import string
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.data.masking_test9 import templates_l, templates_n, templates_s, templates_x  # noqa: E402

SEED = 20261208
LANGS = ("en", "de", "fr", "es", "it", "pt", "nl", "sv", "pl", "ru", "tr", "ja", "ko", "zh", "ar")
WORDS = (HERE / "bip39_english.txt").read_text(encoding="utf-8").split()
_ZW = re.compile("[\u200b-\u200f\u2060\ufeff\u00ad]")
ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"


def norm(text: str) -> str:
    return _ZW.sub("", unicodedata.normalize("NFKC", text))


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def seed_ok(words: list[str]) -> bool:
    if len(words) not in (12, 15, 18, 21, 24) or any(w not in WORDS for w in words):
        return False
    bits = "".join(format(WORDS.index(w), "011b") for w in words)
    cut = len(bits) * 32 // 33
    entropy = int(bits[:cut], 2).to_bytes(cut // 8, "big")
    check = format(hashlib.sha256(entropy).digest()[0], "08b")[: len(bits) - cut]
    return bits[cut:] == check


class Draw:
    """Random values, all from one seeded generator."""

    def __init__(self, rng: random.Random) -> None:
        self.r = rng

    def chars(self, pool: str, n: int) -> str:
        return "".join(self.r.choice(pool) for _ in range(n))

    def digits(self, n: int) -> str:
        return "".join(self.r.choice(string.digits) for _ in range(n))

    def code(self, n: int) -> str:
        while True:
            v = self.digits(n)
            if len(set(v)) < 3 or (n == 4 and v[:2] in ("19", "20")):
                continue
            if v in "0123456789" or v in "9876543210":
                continue
            return v

    def pw(self) -> str:
        kind = self.r.randrange(5)
        stems = (
            "Kompass",
            "lavanda",
            "Pinguin",
            "tortuga",
            "brezel",
            "Mandarine",
            "Orca",
            "ventisca",
            "Kanarie",
            "hejsan",
            "Sosna",
            "Marmotte",
            "nuvola",
            "Caju",
            "Lucciola",
            "Zorro",
            "Kirsche",
            "Gondel",
            "bulut",
            "Tanuki",
            "Haneul",
            "Xiongmao",
            "Qamar",
        )
        if kind == 0:
            return f"{self.r.choice(stems)}{self.digits(self.r.randint(2, 4))}{self.r.choice('!?#$%&*+')}"
        if kind == 1:
            return self.chars(ALNUM + "!#%&*+=?@", self.r.randint(10, 16))
        if kind == 2:
            a, b = self.r.sample(stems, 2)
            return f"{a.lower()}-{b.lower()}-{self.digits(2)}"
        if kind == 3:
            return f"{self.chars(string.ascii_lowercase, 3)}{self.r.choice(stems)}_{self.digits(3)}"
        return self.chars(ALNUM, 4) + self.r.choice(".-_") + self.chars(ALNUM, 6)

    def pw_cap(self) -> str:
        while True:
            v = self.pw()
            if v[0].isupper():
                return v

    def pw_safe(self) -> str:
        return self.chars(ALNUM, self.r.randint(5, 8)) + self.r.choice("._-") + self.chars(ALNUM, 5)

    def card(self) -> tuple[str, str]:
        brand = self.r.randrange(6)
        if brand == 0:
            prefix, length = "4", 16
        elif brand == 1:
            prefix, length = str(self.r.randint(51, 55)), 16
        elif brand == 2:
            prefix, length = str(self.r.randint(2221, 2720)), 16
        elif brand == 3:
            prefix, length = self.r.choice(("34", "37")), 15
        elif brand == 4:
            prefix, length = "6011", 16
        else:
            prefix, length = f"220{self.r.randint(0, 4)}", 16
        body = prefix + self.digits(length - len(prefix) - 1)
        for check in string.digits:
            if luhn_ok(body + check):
                body += check
                break
        sep = self.r.choice((" ", "-", "", " "))
        if length == 15:
            parts = [body[:4], body[4:10], body[10:]]
        else:
            parts = [body[i : i + 4] for i in range(0, 16, 4)]
        cvv = self.code(4 if length == 15 else 3)
        return sep.join(parts), cvv

    def ssn(self) -> str:
        while True:
            area = self.r.randint(1, 899)
            if area != 666:
                break
        sep = self.r.choice(("-", "-", " "))
        return f"{area:03d}{sep}{self.r.randint(1, 99):02d}{sep}{self.r.randint(1, 9999):04d}"

    def seed(self, n: int) -> str:
        ent_bits = n * 11 * 32 // 33
        entropy = self.r.getrandbits(ent_bits).to_bytes(ent_bits // 8, "big")
        check = format(hashlib.sha256(entropy).digest()[0], "08b")[: n * 11 - ent_bits]
        bits = format(int.from_bytes(entropy, "big"), f"0{ent_bits}b") + check
        words = [WORDS[int(bits[i : i + 11], 2)] for i in range(0, len(bits), 11)]
        assert seed_ok(words)
        return " ".join(words)

    def bad_seed(self) -> str:
        while True:
            words = [self.r.choice(WORDS) for _ in range(12)]
            if not seed_ok(words):
                return " ".join(words)

    def b64(self, n: int) -> str:
        return self.chars(ALNUM + "+/", n)

    def discord(self) -> str:
        uid = str(self.r.randint(10**17, 10**19 - 1)).encode()
        head = base64.b64encode(uid).decode().rstrip("=")
        return f"{head}.{self.chars(URLSAFE, 6)}.{self.chars(URLSAFE, 38)}"

    def jwt(self) -> str:
        head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
        body = json.dumps(
            {"sub": self.digits(7), "role": self.r.choice(("crew", "staff", "admin", "vet"))},
            separators=(",", ":"),
        )
        payload = base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")
        return f"{head}.{payload}.{self.chars(URLSAFE, 43)}"

    def pkey(self) -> str:
        lines = ["b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW"]
        lines += [self.b64(70) for _ in range(3)]
        lines.append(self.b64(self.r.randint(20, 40)) + "=")
        return "\n".join(lines)

    def ec_key(self) -> str:
        return "\n".join([self.b64(64), self.b64(64), self.b64(32) + "=="])

    def isbn(self) -> str:
        body = "978" + self.digits(9)
        total = sum(int(d) * (1 if i % 2 == 0 else 3) for i, d in enumerate(body))
        full = body + str((10 - total % 10) % 10)
        return f"{full[:3]}-{full[3]}-{full[4:8]}-{full[8:12]}-{full[12]}"

    def bad_number(self) -> str:
        while True:
            v = self.r.choice("3456") + self.digits(15)
            if not luhn_ok(v):
                sep = self.r.choice((" ", "-", ""))
                return sep.join(v[i : i + 4] for i in range(0, 16, 4))


def fields(d: Draw, lang: str) -> dict[str, Callable[[], str]]:
    """Every template field: how to draw it (secret fields are listed in SECRET)."""
    r = d.r
    pending: dict[str, str] = {}

    def card() -> str:
        number, pending["cvv"] = d.card()
        return number

    def cvv() -> str:
        return pending.pop("cvv", "") or d.code(3)

    def first_name() -> str:
        pending["name"] = r.choice(names)
        return pending["name"]

    def other_name() -> str:
        taken = pending.pop("name", "")
        return r.choice([n for n in names if n != taken])

    def clock() -> str:
        minutes = r.randint(6 * 60, 22 * 60) // 5 * 5
        pending["minutes"] = str(minutes)
        return f"{minutes // 60:02d}:{minutes % 60:02d}"

    def later() -> str:
        minutes = int(pending.pop("minutes", "600")) + r.randint(1, 9)
        return f"{minutes // 60:02d}:{minutes % 60:02d}"

    names = templates_s.NAMES[lang]
    answers = templates_s.ANSWERS[lang]
    return {
        "pw": d.pw,
        "pwcap": lambda: d.pw_cap(),
        "pwl": lambda: (
            r.choice(templates_x.STEMS[lang])
            + r.choice(("_", "-", ""))
            + d.chars(ALNUM, 3)
            + d.digits(2)
        ),
        "pw2": d.pw,
        "pwc": d.pw_safe,
        "pwu": d.pw_safe,
        "wifi": d.pw,
        "pin": lambda: d.code(4),
        "pin2": lambda: d.code(4),
        "pin6": lambda: d.code(6),
        "puk": lambda: d.code(8),
        "door": lambda: d.code(r.choice((4, 4, 5, 6))),
        "doorx": lambda: r.choice(("*", "#", "")) + d.code(4) + r.choice(("#", "*", "#")),
        "otp": lambda: d.code(6),
        "otps": lambda: f"{d.code(3)} {d.code(3)}",
        "card": card,
        "cvv": cvv,
        "exp": lambda: f"{r.randint(1, 12):02d}/{r.randint(27, 31)}",
        "ssn": d.ssn,
        "seed12": lambda: d.seed(12),
        "seed24": lambda: d.seed(24),
        "rc1": lambda: (
            f"{d.chars('abcdefghjkmnpqrstuvwxyz23456789', 5)}-{d.chars('abcdefghjkmnpqrstuvwxyz23456789', 5)}"
        ),
        "rc2": lambda: (
            f"{d.chars('abcdefghjkmnpqrstuvwxyz23456789', 5)}-{d.chars('abcdefghjkmnpqrstuvwxyz23456789', 5)}"
        ),
        "rc3": lambda: (
            f"{d.chars('abcdefghjkmnpqrstuvwxyz23456789', 5)}-{d.chars('abcdefghjkmnpqrstuvwxyz23456789', 5)}"
        ),
        "rcn": lambda: " ".join(d.code(8) for _ in range(1)),
        "ans": lambda: r.choice(answers),
        "tok_dc": d.discord,
        "tok_tg_id": lambda: str(r.randint(10**8, 10**10 - 1)),
        "tok_tg": lambda: "AA" + d.chars(URLSAFE, 33),
        "jwt": d.jwt,
        "aws_id": lambda: "AKIA" + d.chars(string.ascii_uppercase + "234567", 16),
        "aws_sk": lambda: d.b64(40),
        "ghp": lambda: "ghp_" + d.chars(ALNUM, 36),
        "skp": lambda: "sk-proj-" + d.chars(URLSAFE, 56),
        "ant": lambda: "sk-ant-api03-" + d.chars(URLSAFE, 80) + "AA",
        "stripe": lambda: r.choice(("sk_live_", "rk_live_")) + d.chars(ALNUM, 32),
        "slack": lambda: f"xoxb-{d.digits(12)}-{d.digits(13)}-{d.chars(ALNUM, 24)}",
        "gkey": lambda: "AIza" + d.chars(URLSAFE, 35),
        "hf": lambda: "hf_" + d.chars(ALNUM, 34),
        "dop": lambda: "dop_v1_" + d.chars("0123456789abcdef", 64),
        "glpat": lambda: "glpat-" + d.chars(URLSAFE, 20),
        "azure": lambda: d.b64(86) + "==",
        "twilio": lambda: d.chars("0123456789abcdef", 32),
        "pkey": d.pkey,
        "eckey": d.ec_key,
        "name": first_name,
        "name2": other_name,
        "user": lambda: r.choice(
            (
                "admin",
                "crew",
                "stable",
                "kasse",
                "pharm01",
                "coach",
                "deploy",
                "ops",
                "root",
                "booth",
            )
        ),
        "host": lambda: r.choice(
            (
                "clinic-db.lan",
                "db.harbor-lan",
                "pi.farm",
                "nas.local",
                "shop-backend",
                "srv2.intra",
            )
        ),
        "time": clock,
        "time2": later,
        "n": lambda: str(r.randint(2, 9)),
        "nn": lambda: str(r.randint(11, 48)),
        "order": lambda: r.choice(("", "#", "A-", "BX")) + d.digits(r.randint(7, 10)),
        "track": lambda: (
            r.choice(("1Z", "JJD", "RR", "LX", "CP"))
            + d.chars(string.ascii_uppercase + string.digits, 10)
            + r.choice(("", "DE", "CN", "SE"))
        ),
        "ver": lambda: (
            f"{r.randint(0, 9)}.{r.randint(0, 30)}.{r.randint(0, 19)}"
            + r.choice(("", "", "-rc1", "-beta.2"))
        ),
        "price": lambda: templates_l.price(lang, r.randint(3, 2400), r.randint(0, 99)),
        "phone": lambda: templates_l.phone(lang, d.digits(12)),
        "date": lambda: templates_l.date(lang, r.randint(1, 28), r.randint(1, 12)),
        "seat": lambda: f"{r.randint(1, 38)}{r.choice('ABCDEF')}",
        "gate": lambda: f"{r.choice('ABCDE')}{r.randint(1, 48)}",
        "flight": lambda: (
            f"{r.choice(('LH', 'AF', 'IB', 'KL', 'SK', 'LO', 'TK', 'JL', 'KE', 'CA', 'EK', 'TP', 'AZ', 'SU', 'UA'))} {r.randint(100, 2999)}"
        ),
        "room": lambda: str(r.randint(101, 730)),
        "isbn": d.isbn,
        "sha": lambda: d.chars("0123456789abcdef", 40),
        "short": lambda: d.chars("0123456789abcdef", 7),
        "uuid": lambda: "-".join(d.chars("0123456789abcdef", k) for k in (8, 4, 4, 4, 12)),
        "sha256": lambda: d.chars("0123456789abcdef", 64),
        "badnum": d.bad_number,
        "last4": lambda: d.digits(4),
        "badseed": d.bad_seed,
        "ip": lambda: f"192.168.{r.randint(0, 40)}.{r.randint(2, 250)}",
        "bigint": lambda: d.digits(r.randint(5, 9)),
    }


SECRET = {
    "pw", "pwcap", "pwl", "pw2", "pwc", "pwu", "wifi", "pin", "pin2", "pin6", "puk", "door", "doorx", "otp",
    "otps", "card", "cvv", "ssn", "seed12", "seed24", "rc1", "rc2", "rc3", "rcn", "ans",
    "tok_dc", "tok_tg", "jwt", "aws_sk", "ghp", "skp", "ant", "stripe", "slack", "gkey", "hf",
    "dop", "glpat", "azure", "twilio", "pkey", "eckey",
}  # fmt: skip

_FIELD = re.compile(r"\{(\w+)\}")
_DIGIT_RUN = re.compile(r"\d(?:[ -]?\d){12,}")


def luhn_runs(text: str) -> bool:
    """Whether any 13–19-digit window (single spaces or dashes allowed) is Luhn-valid."""
    for m in _DIGIT_RUN.finditer(norm(text)):
        digits = re.sub(r"\D", "", m.group())
        for size in range(13, 20):
            for start in range(0, len(digits) - size + 1):
                if luhn_ok(digits[start : start + size]):
                    return True
    return False


def seed_runs(text: str) -> bool:
    words = re.findall(r"[a-z]+", norm(text).lower())
    for size in (12, 15, 18, 21, 24):
        for start in range(0, len(words) - size + 1):
            if seed_ok(words[start : start + size]):
                return True
    return False


def line_ok(text: str, secrets: list[str], kind: str) -> bool:
    if kind == "lookalike":
        return not luhn_runs(text) and not seed_runs(text)
    flat = norm(text)
    for s in secrets:
        if text.count(s) != 1 or flat.count(norm(s)) != 1:
            return False
        rest = flat.replace(norm(s), "\x00")
        k = min(6, len(s))
        ns = norm(s)
        if any(ns[i : i + k] in rest for i in range(len(ns) - k + 1)):
            return False
        for other in secrets:
            if other != s and any(ns[i : i + k] in norm(other) for i in range(len(ns) - k + 1)):
                return False
    return True


_FULL = {c: chr(ord(c) + 0xFEE0) for c in string.ascii_letters + string.digits}
_HOMO = {"a": "а", "e": "е", "o": "о", "p": "р", "c": "с", "x": "х", "i": "і", "P": "Р", "A": "А"}
_HOMO_CYR = {"а": "a", "о": "o", "е": "e", "р": "p", "с": "c"}


def obfuscate(word: str, r: random.Random) -> str:
    how = r.randrange(4)
    if how == 0 and len(word) > 2:
        cut = r.randint(1, len(word) - 1)
        return word[:cut] + r.choice(("\u200b", "\u200c", "\u2060")) + word[cut:]
    if how == 1 and any(c in _FULL for c in word):
        return "".join(_FULL.get(c, c) for c in word)
    table = _HOMO_CYR if any(c in _HOMO_CYR for c in word) else _HOMO
    spots = [i for i, c in enumerate(word) if c in table]
    if not spots:
        return word[:1] + "\u200b" + word[1:]
    i = r.choice(spots)
    return word[:i] + table[word[i]] + word[i + 1 :]


def fill(
    template: str,
    draw: dict[str, Callable[[], str]],
    r: random.Random,
    labels: tuple[str, ...],
    obf: bool,
) -> tuple[str, list[str]]:
    escaped = template.replace("{{", "\x01").replace("}}", "\x02")
    names = list(dict.fromkeys(_FIELD.findall(escaped)))
    values = {name: draw[name]() for name in names}
    text = _FIELD.sub(lambda m: values[m.group(1)], escaped)
    text = text.replace("\x01", "{").replace("\x02", "}")
    secrets = [values[n] for n in names if n in SECRET]
    if obf and secrets:
        first = min(text.find(s) for s in secrets)
        found = [w for w in labels if 0 <= text.find(w) < first]
        if found:
            w = r.choice(found)
            text = text.replace(w, obfuscate(w, r), 1)
    return text, secrets


def build() -> list[dict[str, object]]:
    r = random.Random(SEED)
    d = Draw(r)
    rows: list[dict[str, object]] = []
    for lang in LANGS:
        draw = fields(d, lang)
        labels = templates_s.LABELS[lang]
        leads = templates_n.LEADS[lang]
        jobs: list[tuple[str, str, str, int]] = []
        for cat, tpl in templates_s.SECRETS[lang] + templates_x.SECRETS_X[lang]:
            jobs.append(("secret", cat, tpl, 2))
        for cat, tpl in templates_n.bodies_for(lang, "secret"):
            jobs.append(("secret", cat, tpl, 1))
        for cat, tpl in templates_l.LOOKALIKES[lang] + templates_x.LOOKALIKES_X[lang]:
            jobs.append(("lookalike", cat, tpl, 2 if _FIELD.search(tpl) else 1))
        for cat, tpl in templates_n.bodies_for(lang, "lookalike"):
            jobs.append(("lookalike", cat, tpl, 1))
        counts: Counter[str] = Counter()
        seen: set[str] = set()
        for kind, cat, tpl, times in jobs:
            for k in range(times):
                for _ in range(200):
                    body = tpl
                    if "{lead}" in body:
                        body = body.replace("{lead}", leads[(k + len(seen)) % len(leads)])
                    text, secrets = fill(
                        body,
                        draw,
                        r,
                        labels,
                        kind == "secret" and "{lead}" not in tpl and r.random() < 0.3,
                    )
                    if text not in seen and line_ok(text, secrets, kind):
                        break
                else:
                    raise SystemExit(f"cannot fill {lang} {cat}: {tpl[:40]!r}")
                seen.add(text)
                tag = "s" if kind == "secret" else "l"
                counts[tag] += 1
                rows.append(
                    {
                        "id": f"t9-{lang}-{tag}{counts[tag]:03d}",
                        "lang": lang,
                        "kind": kind,
                        "category": cat,
                        "text": text,
                        "secrets": secrets,
                    }
                )
    r.shuffle(rows)
    return rows


def main() -> None:
    rows = build()
    out = HERE / "test.jsonl"
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    kinds = Counter(str(row["kind"]) for row in rows)
    print(f"wrote {len(rows)} lines to {out.name}: {dict(kinds)}")


if __name__ == "__main__":
    main()
