"""Write test10's ``test.jsonl`` from the phrasings in ``frames_s.py`` and ``frames_l.py``
and the language-neutral bodies below. ``python generate.py`` rewrites it byte for byte."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import random
import re
import sys
import unicodedata
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent


def _load(name: str) -> ModuleType:
    """A template module beside this file, loaded by path (this folder is no package)."""
    found = importlib.util.spec_from_file_location(f"masking_test10_{name}", HERE / f"{name}.py")
    assert found is not None
    assert found.loader is not None
    module = importlib.util.module_from_spec(found)
    sys.modules[found.name] = module
    found.loader.exec_module(module)
    return module


Table = dict[str, list[tuple[str, str]]]
Situations = list[tuple[str, dict[str, str]]]
S: Table = _load("frames_s").S
L: Table = _load("frames_l").L
SIT_S: Situations = _load("situations_s").SIT_S
SIT_L: Situations = _load("situations_l").SIT_L

SEED = 20261210
LANGS = ("en", "de", "fr", "es", "it", "pt", "nl", "sv", "pl", "ru", "tr", "ja", "ko", "zh", "ar")
WORDS = (HERE / "bip39_english.txt").read_text(encoding="utf-8").split()
B62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
ZW = re.compile("[\u200b-\u200f\u2060\ufeff\u00ad]")

LEAD: dict[str, tuple[str, ...]] = {
    "en": ("quick one, this is what I ran:", "pasting from my terminal 👇", "fyi"),
    "de": ("kurz, das hab ich ausgeführt:", "aus dem Terminal kopiert 👇", "zur Info"),
    "fr": ("vite fait, voilà ce que j'ai lancé :", "copié du terminal 👇", "pour info"),
    "es": ("rápido, esto es lo que ejecuté:", "copiado de la terminal 👇", "para que sepas"),
    "it": ("al volo, ho lanciato questo:", "copiato dal terminale 👇", "per info"),
    "pt": ("rapidinho, rodei isso:", "copiei do terminal 👇", "só pra constar"),
    "nl": ("even snel, dit heb ik gedraaid:", "uit mijn terminal 👇", "ter info"),
    "sv": ("snabbt, det här körde jag:", "klistrat från terminalen 👇", "för kännedom"),
    "pl": ("szybko, odpaliłem to:", "skopiowane z terminala 👇", "dla info"),
    "ru": ("быстро, вот что я запускал:", "скопировал из терминала 👇", "для справки"),
    "tr": ("hızlıca, bunu çalıştırdım:", "terminalden kopyaladım 👇", "bilgin olsun"),
    "ja": ("実行したのはこれ：", "ターミナルから貼ります👇", "参考まで"),
    "ko": ("이거 돌렸어:", "터미널에서 복사 👇", "참고로"),
    "zh": ("我跑的是这个：", "从终端复制的👇", "供参考"),
    "ar": ("بسرعة، هذا اللي شغلته:", "منسوخ من الطرفية 👇", "للعلم"),
}

# Language-neutral secret bodies: (category, body); each goes to at most four languages.
NS: list[tuple[str, str]] = [
    ("credential_cmd", "curl -u scorekeeper:{pw} https://regatta-results.example.org/api/heats"),
    ("credential_cmd", "curl --user 'kiln:{pw}' -X POST https://pottery.example.net/slots"),
    ("credential_cmd", "mysql -h 10.0.4.7 -u choir -p{pw} choir_db"),
    ("credential_cmd", "sshpass -p '{pw}' ssh keeper@lighthouse-pi.local"),
    ("credential_cmd", "PGPASSWORD={pw} psql -h db.zooclinic.internal -U vet"),
    ("credential_cmd", "git clone https://oauth2:{gh}@gitlab.example.com/hockey/jerseys.git"),
    ("credential_cmd", "ftp://glider:{pw}@files.glider-club.example.de/photos/"),
    ("credential_cmd", "https://planet:{pw}@dav.planetarium.example.com/shows/"),
    ("credential_cmd", "mongodb+srv://ferry:{pw}@cluster0.ab12c.mongodb.net/tickets"),
    ("credential_cmd", "redis-cli -h 127.0.0.1 -a {pw} FLUSHDB"),
    ("credential_cmd", "docker login registry.example.io -u brassband -p {pw}"),
    ("credential_cmd", "user: bandadmin pass: {pw} (the nas in the rehearsal loft)"),
    ("credential_cmd", "smbclient //nas/scores -U librarian%{pw}"),
    (
        "credential_cmd",
        "wget --http-user=quilt --http-password={pw} https://guild.example.org/patterns.zip",
    ),
    ("api_token", "DISCORD_TOKEN={discord}"),
    ("api_token", "bot = telebot.TeleBot('{tgid}:{tg}')"),
    ("api_token", "Authorization: Bearer {jwt}"),
    ("api_token", "AWS_ACCESS_KEY_ID={akid}\nAWS_SECRET_ACCESS_KEY={aws}"),
    ("api_token", "export GITHUB_TOKEN={gh}"),
    ("api_token", "OPENAI_API_KEY={oai}"),
    ("api_token", 'stripe.api_key = "{stripe}"'),
    ("api_token", "SLACK_BOT_TOKEN={slack}"),
    (
        "private_key",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{sshkey}\n-----END OPENSSH PRIVATE KEY-----",
    ),
    ("config", "```\nDB_HOST=localhost\nDB_USER=ferry\nDB_PASSWORD={pw}\n```"),
    ("config", '```yaml\nsmtp:\n  user: guild@example.org\n  password: "{pw}"\n```'),
    ("config", '```json\n{"mqtt_user": "dome", "mqtt_pass": "{pw}"}\n```'),
    ("config", "```ini\n[wifi]\nssid = Boathouse\npsk = {wifi}\n```"),
    ("multi", "```\nADMIN_PASSWORD={pw}\nTELEGRAM_TOKEN={tgid}:{tg}\n```"),
    ("credential_cmd", "lftp -u backup,{pw} sftp://nas.local"),
    ("credential_cmd", "mysqldump -u root --password={pw} shop > dump.sql"),
    ("credential_cmd", "xfreerdp /v:10.1.1.20 /u:reception /p:{pw}"),
    ("credential_cmd", 'sqlcmd -S db01 -U sa -P {pw} -Q "SELECT 1"'),
    ("credential_cmd", "echo {pw} | sudo -S systemctl restart kiosk"),
    ("credential_cmd", "amqp://worker:{pw}@rabbit.internal:5672/"),
    ("credential_cmd", "postgres://app:{pw}@db.example.net:5432/regatta"),
    ("credential_cmd", "net use \\\\nas\\scores /user:band {pw}"),
    ("credential_cmd", "snmpwalk -v3 -u monitor -l authPriv -a SHA -A {pw} switch01"),
    ("credential_cmd", "git remote set-url origin https://{gh}@github.com/choir/site.git"),
    ("api_token", "HF_TOKEN={hf}"),
    ("api_token", "ANTHROPIC_API_KEY={ant}"),
    ("api_token", 'const token = "{discord}";\nclient.login(token);'),
    ("api_token", "https://api.telegram.org/bot{tgid}:{tg}/sendMessage?chat_id=-100123"),
    ("private_key", "-----BEGIN EC PRIVATE KEY-----\n{eckey}\n-----END EC PRIVATE KEY-----"),
    ("config", '```toml\n[database]\nuser = "ferry"\npassword = "{pw}"\n```'),
    ("config", "```yaml\nwifi:\n  ssid: Lighthouse\n  password: {wifi}\n```"),
]
# Language-neutral look-alike bodies.
NL: list[tuple[str, str]] = [
    ("dev_hash", "git cherry-pick {hash}"),
    ("dev_hash", "sha256sum firmware.bin\n{sha}  firmware.bin"),
    ("uuid", "request_id={uuid} status=200 duration=41ms"),
    ("command_no_value", "mysql -u choir -p choir_db"),
    ("command_no_value", "psql -h db.zooclinic.internal -U vet -W"),
    ("command_no_value", "ssh keeper@lighthouse-pi.local"),
    (
        "error_message",
        "ERROR 1045 (28000): Access denied for user 'ferry'@'localhost' (using password: YES)",
    ),
    ("error_message", "keeper@10.0.0.5: Permission denied (publickey,password)."),
    ("placeholder", "DB_PASSWORD=${DB_PASSWORD}\nAPI_KEY=${{ secrets.API_KEY }}"),
    ("placeholder", "curl -H 'Authorization: Bearer <token>' https://api.example.com/v1/heats"),
    ("version", "pip install regatta-timer=={ver}"),
    ("uuid", "docker ps → {short} kiln-scheduler Up 3 hours"),
    ("dev_hash", "git show {hash} --stat"),
    ("dev_hash", "Digest: sha256:{sha}"),
    ("version", "npm install regatta-timer@{ver}"),
    ("error_message", 'FATAL:  password authentication failed for user "app"'),
    ("error_message", 'HTTP/1.1 401 Unauthorized\nWWW-Authenticate: Basic realm="nas"'),
    ("command_no_value", "redis-cli -h 127.0.0.1 --askpass"),
    (
        "command_no_value",
        "docker login registry.example.io -u brassband --password-stdin < token.txt",
    ),
    ("command_no_value", 'ssh-keygen -t ed25519 -C "keeper@lighthouse"'),
    ("placeholder", 'curl -u "$USER:$PASS" https://api.example.org/heats'),
    ("placeholder", 'export API_KEY="<paste-your-key>"'),
    ("public_key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{pub} keeper@pi"),
    ("uuid", "{uuid}.log rotated at {time}"),
    ("version", "pip freeze | grep requests\nrequests=={ver}"),
    ("error_message", "KeyError: 'DB_PASSWORD'"),
    ("order_number", "GET /api/v2/orders/{order} 200 12ms"),
    ("dev_hash", "commit {sha}\nAuthor: Ana <ana@example.org>\nDate: {date}"),
]

Fill = Callable[[random.Random], str]


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def card(r: random.Random) -> str:
    prefix = r.choice(["4", "51", "53", "55", "2221", "6011", "37"])
    length = 15 if prefix == "37" else 16
    body = prefix + "".join(r.choice("0123456789") for _ in range(length - len(prefix) - 1))
    check = next(c for c in "0123456789" if luhn_ok(body + c))
    n = body + check
    if length == 15:
        return f"{n[:4]} {n[4:10]} {n[10:]}"
    return r.choice([" ", "-", ""]).join(n[i : i + 4] for i in range(0, 16, 4))


def badnum(r: random.Random) -> str:
    while True:
        n = "".join(r.choice("0123456789") for _ in range(16))
        if not luhn_ok(n):
            return " ".join(n[i : i + 4] for i in range(0, 16, 4))


def seed(r: random.Random, n: int) -> str:
    ent = bytes(r.randrange(256) for _ in range(n * 4 // 3))
    bits = "".join(f"{b:08b}" for b in ent)
    cs = "".join(f"{b:08b}" for b in hashlib.sha256(ent).digest())[: len(ent) * 8 // 32]
    allbits = bits + cs
    return " ".join(WORDS[int(allbits[i : i + 11], 2)] for i in range(0, len(allbits), 11))


def seed_ok(words: list[str]) -> bool:
    if len(words) not in (12, 15, 18, 21, 24) or any(w not in WORDS for w in words):
        return False
    bits = "".join(f"{WORDS.index(w):011b}" for w in words)
    cut = len(bits) * 32 // 33
    ent = int(bits[:cut], 2).to_bytes(cut // 8, "big")
    return (
        "".join(f"{b:08b}" for b in hashlib.sha256(ent).digest())[: len(bits) - cut] == bits[cut:]
    )


def rs(r: random.Random, n: int, alphabet: str = B62) -> str:
    return "".join(r.choice(alphabet) for _ in range(n))


PW_PARTS = {
    "en": ["Otter", "kettle", "Maple", "harbour"],
    "de": ["Zwiebel", "Möwe", "Kater", "Brezel"],
    "fr": ["Crêpe", "mouette", "Hibou", "tartine"],
    "es": ["Tortuga", "ñandú", "Limón", "churro"],
    "it": ["Gabbiano", "pesto", "Volpe", "cornetto"],
    "pt": ["Jabuti", "caju", "Sabiá", "pão"],
    "nl": ["Stroopwafel", "meeuw", "Egel", "klomp"],
    "sv": ["Älgen", "kanel", "Måsen", "fika"],
    "pl": ["Łódź", "żubr", "Pierog", "wiewiórka"],
    "ru": ["Лиса", "чайка", "Мишка", "пельмень"],
    "tr": ["Martı", "simit", "Kedi", "çay"],
    "ja": ["さくら", "Neko", "たぬき", "Umi"],
    "ko": ["하늘", "Bada", "고양이", "Kimchi"],
    "zh": ["熊猫", "Longjing", "月亮", "Baozi"],
    "ar": ["قمر", "Sahara", "نخلة", "Falafel"],
}


def make_fills(lang: str) -> dict[str, Fill]:
    def pw(r: random.Random) -> str:
        style = r.randrange(4)
        if style == 0:
            return r.choice(PW_PARTS[lang]) + str(r.randrange(10, 9999)) + r.choice("!?#$%&*")
        if style == 1:
            return rs(r, r.randrange(10, 16), B62 + "!#%&*-_")
        if style == 2:
            return "-".join(r.sample(WORDS, 3)) + str(r.randrange(10, 99))
        return (
            r.choice(PW_PARTS[lang])
            + "_"
            + r.choice(PW_PARTS[lang]).lower()
            + str(r.randrange(100, 999))
        )

    return {
        "pw": pw,
        "pw2": pw,
        "puk": lambda r: str(r.randrange(10**7, 10**8)),
        "hf": lambda r: "hf_" + rs(r, 34),
        "ant": lambda r: "sk-ant-api03-" + rs(r, 86, B62 + "-_") + "AA",
        "eckey": lambda r: "\n".join(rs(r, 64, B62 + "+/") for _ in range(3)),
        "wifi": lambda r: rs(r, r.randrange(12, 20)),
        "pin": lambda r: (
            str(r.randrange(1000, 10000)) if r.random() < 0.7 else str(r.randrange(100000, 1000000))
        ),
        "door": lambda r: str(r.randrange(1000, 1000000)) + r.choice(["", "", "#", "*"]),
        "otp": lambda r: str(r.randrange(100000, 1000000)),
        "rec": lambda r: (
            rs(r, 4, "abcdefghjkmnpqrstuvwxyz23456789")
            + "-"
            + rs(r, 4, "abcdefghjkmnpqrstuvwxyz23456789")
        ),
        "rec2": lambda r: rs(r, 5, "0123456789") + "-" + rs(r, 5, "0123456789"),
        "card": card,
        "cvv": lambda r: str(r.randrange(100, 1000)),
        "ssn": lambda r: (
            f"{r.choice([r.randrange(1, 666), r.randrange(667, 900)]):03d}-{r.randrange(1, 100):02d}-{r.randrange(1, 10000):04d}"
        ),
        "seed": lambda r: seed(r, r.choice([12, 12, 24])),
        "gh": lambda r: "ghp_" + rs(r, 36),
        "discord": lambda r: rs(r, 24) + "." + rs(r, 6) + "." + rs(r, 38, B62 + "-_"),
        "tgid": lambda r: str(r.randrange(10**9, 8 * 10**9)),
        "tg": lambda r: "AA" + rs(r, 33, B62 + "-_"),
        "jwt": lambda r: (
            "eyJhbGciOiJIUzI1NiJ9." + rs(r, 40, B62 + "-_") + "." + rs(r, 43, B62 + "-_")
        ),
        "akid": lambda r: "AKIA" + rs(r, 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
        "aws": lambda r: rs(r, 40, B62 + "/+"),
        "oai": lambda r: "sk-proj-" + rs(r, 48),
        "stripe": lambda r: "sk_live_" + rs(r, 24),
        "slack": lambda r: (
            f"xoxb-{r.randrange(10**11, 10**12)}-{r.randrange(10**11, 10**12)}-{rs(r, 24)}"
        ),
        "sshkey": lambda r: "\n".join(rs(r, 70, B62 + "+/") for _ in range(5)),
    }


MONTHS = {"en": "Mar", "de": "März", "fr": "mars", "es": "marzo", "it": "marzo", "pt": "março"}


def lookalike_fills(lang: str) -> dict[str, Fill]:
    cur = {
        "en": "£{}.50",
        "de": "{},90 €",
        "fr": "{},50 €",
        "es": "{},95 €",
        "it": "{},00 €",
        "pt": "R$ {},90",
        "nl": "€ {},50",
        "sv": "{} kr",
        "pl": "{},99 zł",
        "ru": "{} ₽",
        "tr": "{} TL",
        "ja": "{}円",
        "ko": "{}원",
        "zh": "{}元",
        "ar": "{} ريال",
    }[lang]

    def date(r: random.Random) -> str:
        d, m = r.randrange(1, 29), r.randrange(1, 13)
        if lang in ("en", "ja", "zh", "ko", "sv"):
            return f"2027-{m:02d}-{d:02d}"
        sep = {"de": ".", "ru": ".", "pl": ".", "tr": ".", "nl": "-"}.get(lang, "/")
        return f"{d:02d}{sep}{m:02d}{sep}2027"

    def isbn(r: random.Random) -> str:
        d = "978" + "".join(r.choice("0123456789") for _ in range(9))
        c = (10 - sum(int(x) * (1 if i % 2 == 0 else 3) for i, x in enumerate(d)) % 10) % 10
        return f"{d[:3]}-{d[3]}-{d[4:8]}-{d[8:]}-{c}"

    def words(r: random.Random) -> str:
        while True:
            w = r.sample(WORDS, 12)
            if not seed_ok(w):
                return ", ".join(w)

    return {
        "order": lambda r: f"{r.randrange(100, 999)}-{r.randrange(1000000, 9999999)}",
        "track": lambda r: (
            r.choice(["1Z", "JD", "RR"])
            + str(r.randrange(10**9, 10**10))
            + r.choice(["DE", "CN", "SE", ""])
        ),
        "gate": lambda r: r.choice("ABCD") + str(r.randrange(1, 40)),
        "ver": lambda r: f"{r.randrange(1, 6)}.{r.randrange(0, 20)}.{r.randrange(0, 9)}",
        "ver2": lambda r: f"{r.randrange(6, 9)}.{r.randrange(0, 20)}.{r.randrange(0, 9)}",
        "price": lambda r: cur.format(r.randrange(12, 90)),
        "phone": lambda r: (
            f"+{r.choice(['44', '49', '33', '34', '39', '81', '82', '86', '90', '7', '46', '48', '31', '351', '966'])} {r.randrange(100, 999)} {r.randrange(100, 999)} {r.randrange(1000, 9999)}"
        ),
        "flight": lambda r: (
            r.choice(["LH", "AF", "IB", "SK", "TK", "JL", "KE", "CA", "SV", "KL"])
            + str(r.randrange(100, 2999))
        ),
        "seat": lambda r: f"{r.randrange(1, 40)}{r.choice('ABCDEF')}",
        "time": lambda r: f"{r.randrange(6, 23):02d}:{r.choice(['00', '15', '30', '45'])}",
        "date": lambda r: date(r),
        "room": lambda r: str(r.randrange(2, 340)),
        "isbn": isbn,
        "hash": lambda r: rs(r, 7, "0123456789abcdef"),
        "sha": lambda r: rs(r, 64, "0123456789abcdef"),
        "uuid": lambda r: "-".join(rs(r, n, "0123456789abcdef") for n in (8, 4, 4, 4, 12)),
        "short": lambda r: rs(r, 12, "0123456789abcdef"),
        "car": lambda r: str(r.randrange(1, 17)),
        "last4": lambda r: str(r.randrange(1000, 10000)),
        "pub": lambda r: rs(r, 43, B62 + "+/"),
        "badnum": badnum,
        "words": words,
    }


FIELD = re.compile(r"\{(\w+)\}|\{=([^}]+)=\}")
LABEL = re.compile(r"\[\[([^\]]+)\]\]")
HOMO = {
    "a": "а",
    "e": "е",
    "o": "о",
    "p": "р",
    "c": "с",
    "x": "х",
    "а": "a",
    "о": "o",
    "е": "e",
    "р": "p",
}


def obfuscate(r: random.Random, word: str) -> str:
    kind = r.randrange(3)
    if kind == 0 and len(word) > 1:
        i = r.randrange(1, len(word))
        return word[:i] + r.choice(["\u200b", "\u200c", "\u2060"]) + word[i:]
    if kind == 1 and all(ord(c) < 127 for c in word):
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in word)
    swaps = [i for i, c in enumerate(word) if c in HOMO]
    if swaps:
        i = r.choice(swaps)
        return word[:i] + HOMO[word[i]] + word[i + 1 :]
    return word


#: Label words the generator may obfuscate in a situation line (the first one before a secret).
LABEL_WORDS = (
    "password",
    "Passwort",
    "Kennwort",
    "mot de passe",
    "mdp",
    "contraseña",
    "clave",
    "senha",
    "wachtwoord",
    "lösenord",
    "lösen",
    "hasło",
    "haslo",
    "пароль",
    "şifresi",
    "şifre",
    "パスワード",
    "暗証番号",
    "비번",
    "비밀번호",
    "密码",
    "كلمة المرور",
    "باسورد",
    "PIN",
    "pin",
    "Code",
    "code",
    "código",
    "codice",
    "kod",
    "код",
    "wifi",
    "WiFi",
    "Wi-Fi",
    "wi-fi",
    "CVV",
    "cvv",
    "CVC",
    "token",
    "SSN",
    "pw",
    "PW",
    "pass",
    "TAN",
)


def obfuscate_label(r: random.Random, text: str, secrets: list[str]) -> str:
    first = min((text.find(s) for s in secrets), default=-1)
    best = -1
    word = ""
    for w in LABEL_WORDS:
        i = text.find(w)
        if 0 <= i < first and (best < 0 or i < best):
            best, word = i, w
    if best < 0:
        return text
    return text[:best] + obfuscate(r, word) + text[best + len(word) :]


def fill(
    r: random.Random, tpl: str, fills: dict[str, Fill], secret: bool, label_obf: bool
) -> tuple[str, list[str]]:
    secrets: list[str] = []

    def sub(m: re.Match[str]) -> str:
        if m.group(2):
            secrets.append(m.group(2))
            return m.group(2)
        name = m.group(1)
        if name == "exp":
            return f"{r.randrange(1, 13):02d}/{r.randrange(27, 32)}"
        if name not in fills:
            return m.group(0)
        value = fills[name](r)
        if secret and name not in ("akid", "tgid"):
            secrets.append(value.split(":")[-1] if name == "tg" else value)
        return value

    text = FIELD.sub(sub, tpl)
    obf = secret and label_obf and r.random() < 0.2
    if LABEL.search(text):
        text = LABEL.sub(lambda m: obfuscate(r, m.group(1)) if obf else m.group(1), text)
    elif obf:
        text = obfuscate_label(r, text, secrets)
    return text, secrets


def norm(text: str) -> str:
    return ZW.sub("", unicodedata.normalize("NFKC", text))


def ok(text: str, secrets: list[str], kind: str) -> bool:
    for s in secrets:
        if text.count(s) != 1 or norm(text).count(norm(s)) != 1:
            return False
        n = min(6, len(s))
        rest = text.replace(s, "\0")
        if any(s[i : i + n] in rest for i in range(len(s) - n + 1)):
            return False
    if kind == "lookalike":
        for run in re.findall(r"\d[\d -]{11,}\d", text):
            digits = re.sub(r"\D", "", run)
            if 13 <= len(digits) <= 19 and luhn_ok(digits):
                return False
        tokens = re.findall(r"[a-z]+", text)
        for n in (12, 15, 18, 21, 24):
            if any(seed_ok(tokens[i : i + n]) for i in range(len(tokens) - n + 1)):
                return False
    return True


def build() -> list[dict[str, object]]:
    r = random.Random(SEED)
    rows: list[tuple[str, str, str, str, list[str], str]] = []
    seen: set[str] = set()

    def add(
        lang: str, kind: str, cat: str, tpl: str, fills: dict[str, Fill], situation: str
    ) -> None:
        for _ in range(200):
            text, secrets = fill(r, tpl, fills, kind == "secret", not situation.startswith("n"))
            if text not in seen and ok(text, secrets, kind):
                seen.add(text)
                rows.append((lang, kind, cat, text, secrets, situation))
                return
        raise RuntimeError(f"cannot fill {situation}")

    for kind, table in (("secret", S), ("lookalike", L)):
        keyed: dict[str, list[tuple[str, str, str]]] = {}
        for lang in LANGS:
            seen_cat: dict[str, int] = {}
            for cat, tpl in table[lang]:
                k = seen_cat.get(cat, 0)
                seen_cat[cat] = k + 1
                keyed.setdefault(f"{cat}#{k}", []).append((lang, cat, tpl))
        for j, key in enumerate(sorted(keyed)):
            avail = keyed[key]
            start = (4 * j) % len(avail)
            for lang, cat, tpl in (avail + avail)[start : start + min(4, len(avail))]:
                fills = make_fills(lang) if kind == "secret" else lookalike_fills(lang)
                add(lang, kind, cat, tpl, fills, f"f{kind[0]}-{key}")
    for i, (cat, texts) in enumerate(SIT_S):
        for lang, tpl in texts.items():
            add(lang, "secret", cat, tpl, make_fills(lang), f"s-{i}")
    for i, (cat, texts) in enumerate(SIT_L):
        for lang, tpl in texts.items():
            add(lang, "lookalike", cat, tpl, lookalike_fills(lang), f"l-{i}")
    for i, (cat, body) in enumerate(NS):
        for lang in r.sample(LANGS, 4):
            add(
                lang, "secret", cat, r.choice(LEAD[lang]) + "\n" + body, make_fills(lang), f"ns-{i}"
            )
    for i, (cat, body) in enumerate(NL):
        for lang in r.sample(LANGS, 4):
            add(
                lang,
                "lookalike",
                cat,
                r.choice(LEAD[lang]) + "\n" + body,
                lookalike_fills(lang),
                f"nl-{i}",
            )
    r.shuffle(rows)
    counters: dict[tuple[str, str], int] = {}
    out: list[dict[str, object]] = []
    for lang, kind, cat, text, secrets, situation in rows:
        pair = (lang, kind)
        counters[pair] = counters.get(pair, 0) + 1
        rid = f"t10-{lang}-{'s' if kind == 'secret' else 'l'}{counters[pair]:03d}"
        out.append(
            {
                "id": rid,
                "lang": lang,
                "kind": kind,
                "category": cat,
                "text": text,
                "secrets": secrets,
                "situation": situation,
            }
        )
    return out


def main() -> None:
    rows = build()
    with (HERE / "test.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(
                json.dumps({k: v for k, v in row.items() if k != "situation"}, ensure_ascii=False)
                + "\n"
            )
    with (HERE / "situations.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps({"id": row["id"], "situation": row["situation"]}) + "\n")


if __name__ == "__main__":
    main()
