"""The train rows of the families of phrasing the dev2 part (the second held-out set, read
once it had been scored) showed the rules missing or masking wrongly, each written fresh in
several languages: lists of backup codes under their label, a Wi-Fi QR code's text, the
answer under a question with words after it, passwords of dotted words ending in digits,
PUKs, an entrance code with a letter, a safe's combination, an SSN a few words after its
label, labels mistyped or transliterated (``chaslo``, ``비빌번호``, ``kelmet el ser``,
``mima``, ``contraseñia``), a wallet's "приватник", a Troy card, ``mysql -p'…'`` quoted,
a safe word — and the look-alikes of each: a ``curl -u`` placeholder, an SSH public key
near "key", an area code, a placeholder in Korean, codes that are not a backup list.

Read by ``generate.py`` (batch ``families2``), with a seed of its own so the earlier batches
stay as they were. Every value is made up.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterator

from batch import Secret, batch_rows  # type: ignore[import-not-found]  # the shared rows()

rng = random.Random(20_261_207)
ALNUM = string.ascii_letters + string.digits
LOWER = string.ascii_lowercase + string.digits


def pick(chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def backup() -> str:
    return f"{pick(LOWER, 4)}-{pick(LOWER, 3)}{rng.choice(string.digits)}"


def dotted() -> str:
    words = ["tulipa", "mango", "kirsche", "lodka", "yildiz", "sakura", "zefir", "oliva"]
    return f"{rng.choice(words)}.{rng.choice(words)}{rng.randrange(10, 9999)}"


def strong() -> str:
    return pick(ALNUM, 3) + rng.choice("!#%*") + pick(ALNUM, 8) + str(rng.randrange(10, 99))


def troy() -> str:
    while True:
        body = "9792" + pick(string.digits, 11)
        total = 0
        for i, ch in enumerate(reversed(body)):
            d = int(ch) * (2 if i % 2 == 0 else 1)
            total += d - 9 if d > 9 else d
        number = body + str((10 - total % 10) % 10)
        return " ".join(number[i : i + 4] for i in range(0, 16, 4))


def ssn() -> str:
    area = rng.choice([n for n in range(1, 900) if n != 666])
    return f"{area:03d}{rng.choice(['', ' '])}{rng.randrange(10, 100)}{rng.choice(['', ' '])}{rng.randrange(1000, 10000)}"


MAKERS: dict[str, Callable[[], str]] = {
    "backup": backup,
    "dotted": dotted,
    "strong": strong,
    "pin": lambda: str(rng.randrange(1000, 10000)),
    "puk": lambda: str(rng.randrange(10**7, 10**8)),
    "combo": lambda: "-".join(f"{rng.randrange(10, 100)}" for _ in range(3)),
    "gate": lambda: f"{rng.choice('ABCD')}{rng.randrange(1000, 10000)}",
    "hex64": lambda: pick("0123456789abcdef", 64),
    "troy": troy,
    "ssn": ssn,
    "word": lambda: rng.choice(["Pistachio", "Lighthouse", "Brombeere", "Tortuga", "Lavanda"]),
}


def fill(template: str) -> tuple[str, list[str]]:
    values: list[str] = []
    out = template
    for name, maker in MAKERS.items():
        while "{" + name + "}" in out:
            value = maker()
            values.append(value)
            out = out.replace("{" + name + "}", value, 1)
    return out, values


SECRETS: list[tuple[str, str, str]] = [
    ("backup_codes", "en", "Google backup codes (print them):\n{backup}\n{backup}\n{backup}"),
    ("backup_codes", "de", "Backup-Codes für GitHub: {backup} {backup} {backup} {backup}"),
    ("backup_codes", "ru", "резервные коды от почты:\n{backup}, {backup}, {backup}"),
    ("backup_codes", "es", "códigos de respaldo de la cuenta: {backup} {backup} {backup}"),
    ("backup_codes", "it", "codici di backup: {backup} / {backup} / {backup}"),
    ("backup_codes", "nl", "herstelcodes:\n- {backup}\n- {backup}"),
    ("backup_codes", "ja", "リカバリーコード {backup} {backup} {backup}"),
    ("backup_codes", "ko", "복구 코드: {backup} {backup}"),
    ("backup_codes", "zh", "恢复码：{backup} {backup} {backup}"),
    ("backup_codes", "tr", "kurtarma kodları: {backup} {backup} {backup}"),
    ("wifi_qr", "en", "the QR on the fridge decodes to WIFI:S:Kitchen5G;T:WPA;P:{strong};;"),
    ("wifi_qr", "de", "WIFI:T:WPA;S:FRITZ!Box Gast;P:{dotted};H:false;; (aus dem QR-Code)"),
    ("wifi_qr", "pl", "kod QR z routera: WIFI:T:WPA2;S:Dom_5G;P:{strong};;"),
    ("answer_words", "en", "what was the nas password again?\n{strong} (the new one)"),
    ("answer_words", "de", "wie war das Passwort vom Drucker?\n{strong} glaube ich"),
    ("answer_words", "es", "¿cuál es la contraseña del router?\n{dotted} creo"),
    ("answer_words", "pl", "jakie jest hasło do wifi?\n{strong} chyba"),
    ("answer_words", "zh", "wifi密码是多少？\n{strong} 吧"),
    ("dotted", "it", "password del nas {dotted}"),
    ("dotted", "pt", "senha: {dotted}"),
    ("dotted", "tr", "modem şifresi {dotted}"),
    ("dotted", "en", "new passcode {dotted} for the tablet"),
    ("puk", "de", "SIM-PIN {pin}, PUK {puk}"),
    ("puk", "en", "PUK code {puk} is on the card holder"),
    ("puk", "pl", "PUK {puk}, PIN {pin}"),
    ("entrance", "es", "el código del portón es {gate}"),
    ("entrance", "fr", "digicode {gate} puis 2e étage"),
    ("entrance", "ko", "현관 비번 {gate}"),
    ("combination", "uk", "комбінація від сейфа {combo}"),
    ("combination", "pt", "segredo do cofre: {combo}"),
    ("combination", "en", "safe combination {combo}"),
    ("ssn_gap", "en", "SSN for the lease application: {ssn}"),
    ("ssn_gap", "de", "meine SSN aus der Zeit in Ohio: {ssn}"),
    ("typo_label", "pl", "chasło do laptopa {strong}"),
    ("typo_label", "ko", "비빌번호: {strong}"),
    ("typo_label", "ar", "kelmet el sir {strong}"),
    ("typo_label", "zh", "mima {dotted}"),
    ("typo_label", "es", "contraseñia del correo: {strong}"),
    ("wallet_key", "ru", "приватник от метамаска {hex64}"),
    ("troy_card", "tr", "kart numarası {troy} son kullanma 04/29"),
    ("mysql_quoted", "en", "mysqldump -u admin -p'{strong}' crm > crm.sql"),
    ("mysql_quoted", "de", 'mysql -h db -u app -p"{strong}" shop'),
    ("safe_word", "en", "our safe word is {word}"),
]

LOOKS: list[tuple[str, str, str]] = [
    ("placeholder", "en", "docs: curl -u <username>:<token> https://api.example.org/me"),
    ("placeholder", "ko", "예: DB_PASSWORD=여기에_입력"),
    ("placeholder", "ja", "PASSWORD=ここに_パスワード と書く"),
    (
        "public_key",
        "en",
        "here's my public key for the server: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7x",
    ),
    ("public_key", "de", "mein Key fürs authorized_keys: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHk2"),
    ("area_code", "tr", "alan kodu 0312, dahili 4471"),
    ("codes_not_backup", "en", "backup finished at 02:00, 1432 files, 2 warnings"),
    ("codes_not_backup", "de", "Backup-Codes? hab ich nie bekommen"),
    ("codes_not_backup", "en", "recovery codes are shown once when you enable 2FA, save them"),
    ("answer_words", "en", "what's the wifi password?\nno idea, ask the landlord"),
    ("answer_words", "es", "¿cuál es la contraseña?\nla tiene María"),
    ("dotted", "en", "the password policy is in docs.security.md"),
    ("dotted", "en", "password hashing moved to auth.utils2 in v3"),
    ("combination", "en", "the safe combination changed, ask Ana for it"),
    ("entrance", "en", "the gate is at entrance B, the code comes by SMS"),
    ("ssn_gap", "en", "SSN format is three digits, two, four; the form has 9 boxes"),
    ("wifi_qr", "en", "WIFI:T:WPA;S:Guest;; has no password field, it's an open network"),
    ("puk", "en", "the PUK is on the plastic card the SIM came in"),
    ("typo_label", "pl", "chasło? zapomniałam"),
    ("wallet_key", "ru", "приватник никому не показывай, даже поддержке"),
]


def rows(next_id: Callable[[str, bool], str]) -> Iterator[dict[str, object]]:
    """Every row of the batch (``next_id(lang, secret)`` numbers them after the earlier
    batches' rows)."""
    secrets: list[Secret] = [(c, lang, *fill(t)) for c, lang, t in SECRETS]
    yield from batch_rows("families2", next_id, secrets, LOOKS)
