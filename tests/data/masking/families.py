"""The train rows of the families of phrasing the dev part showed the rules missing (or
masking wrongly), each in several languages, written fresh for the train part: a value
alone on its line named by the next one, mistyped and transliterated labels, alarm and
unlock codes, one-time codes, codes of a card, a door or a phone a few words on, compound
key labels and a long key on the line after its label, generated passwords with a dot in
configs, ``define()``, a CVV named after a card, SSNs said in passing, labels hidden by a
whole word of look-alike capitals, digits of other scripts — and the look-alikes of each:
placeholders in every language, public keys and fingerprints, an address before a label,
a label followed by words, product and postal codes, alarm times, hashes near a key label.

Read by ``generate.py`` (batch ``families``), with a seed of its own so the earlier batches
stay as they were. Every value is made up.
"""

from __future__ import annotations

import base64
import random
import string
from collections.abc import Callable, Iterator

rng = random.Random(20_260_715)
ALNUM = string.ascii_letters + string.digits


def pick(chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def strong() -> str:
    style = rng.randrange(5)
    word = rng.choice(["kirsche", "Nebel", "corvo", "Lisboa", "sakura", "Wolga", "tulipan"])
    if style == 0:
        return f"{word}{rng.randrange(10, 9999)}"
    if style == 1:
        return f"{word.capitalize()}{rng.choice(['2019', '77', '2026'])}{rng.choice('!#$%&*?@')}"
    if style == 2:
        return pick(ALNUM + "!#$%&*-_", rng.randrange(10, 16))
    if style == 3:
        return f"{word}_{rng.randrange(100, 9999)}"
    return f"{pick(ALNUM, 5)}.{pick(ALNUM, 6)}"


def pin() -> str:
    return str(rng.randrange(0, 10**6)).zfill(rng.choice([4, 4, 5, 6]))


def luhn_card() -> str:
    prefix = rng.choice(["4", "52", "2200", "6011", "37"])
    length = 15 if prefix == "37" else 16
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for check in string.digits:
        number = body + check
        total = 0
        for i, char in enumerate(reversed(number)):
            value = int(char)
            if i % 2:
                value = value * 2 - 9 if value > 4 else value * 2
            total += value
        if total % 10 == 0:
            sep = rng.choice([" ", "", "-", "."])
            if length == 15:
                return sep.join([number[:4], number[4:10], number[10:]])
            return sep.join(number[i : i + 4] for i in range(0, 16, 4))
    raise AssertionError("unreachable")


def ssn() -> str:
    area = rng.choice([n for n in range(1, 900) if n != 666])
    sep = rng.choice(["-", " ", ""])
    return f"{area:03d}{sep}{rng.randrange(1, 100):02d}{sep}{rng.randrange(1, 10000):04d}"


MAKERS: dict[str, Callable[[], str]] = {
    "strong": strong,
    "pin": pin,
    "otp": lambda: f"{rng.randrange(100, 1000)}{rng.choice(['-', ' '])}{rng.randrange(100, 1000)}",
    "hex32": lambda: pick("0123456789abcdef", 32),
    "hex64": lambda: pick("0123456789abcdef", 64),
    "b64": lambda: base64.b64encode(bytes(rng.randrange(256) for _ in range(32))).decode(),
    "card": luhn_card,
    "cvv": lambda: str(rng.randrange(100, 1000)),
    "ssn": ssn,
    "keypad": lambda: f"{rng.randrange(10, 100)}{rng.choice('AB')}{rng.randrange(10, 100)}",
    "randcase": lambda: "".join(
        rng.choice(string.ascii_lowercase)
        + pick(string.ascii_uppercase, 2)
        + pick(string.ascii_lowercase, 2)
        for _ in range(3)
    ),
    "arabic_pin": lambda: "".join("٠١٢٣٤٥٦٧٨٩"[int(d)] for d in str(rng.randrange(1000, 10000))),
}
#: Placeholders drawn but not secret.
PLAIN: dict[str, Callable[[], str]] = {
    "exp": lambda: f"{rng.randrange(1, 13):02d}{rng.choice('/-')}{rng.randrange(26, 31)}",
}


def fill(template: str) -> tuple[str, list[str]]:
    """``template`` with each ``{name}`` drawn fresh; the secret values in order (an
    Arabic-Indic PIN is listed as written)."""
    values: list[str] = []
    out = template
    for name, maker in {**MAKERS, **PLAIN}.items():
        while "{" + name + "}" in out:
            value = maker()
            if name in MAKERS:
                values.append(value)
            out = out.replace("{" + name + "}", value, 1)
    return out, values


# --- secrets: (category, lang, template) -------------------------------------------------------

SECRETS: list[tuple[str, str, str]] = [
    # a value alone on its line, named by the next one
    ("value_above", "en", "{strong}\n👆 that's the router password"),
    ("value_above", "en", "{strong}\nthis is the pw for the family iCloud"),
    ("value_above", "de", "{strong}\n^ das ist das WLAN-Passwort"),
    ("value_above", "fr", "{strong}\n⬆️ c'est le mot de passe de la box"),
    ("value_above", "es", "{strong}\n☝🏽 esa es la contraseña de netflix"),
    ("value_above", "it", "{strong}\n↑ questa è la password del wifi"),
    ("value_above", "pt", "{strong}\nessa é a senha do roteador"),
    ("value_above", "ru", "{strong}\n↑ это пароль от роутера"),
    ("value_above", "uk", "{strong}\nце пароль від пошти"),
    ("value_above", "pl", "{strong}\n👆 to hasło do routera"),
    ("value_above", "nl", "{strong}\n^ dat is het wachtwoord van de router"),
    ("value_above", "tr", "{strong}\n👆 bu modem şifresi"),
    ("value_above", "ja", "{strong}\n👆 これがWi-Fiのパスワード"),
    ("value_above", "ko", "{strong}\n👆 이게 와이파이 비번"),
    ("value_above", "zh", "{strong}\n👆 这是路由器密码"),
    ("value_above", "ar", "{strong}\n👆 هذا باسورد الراوتر"),
    # mistyped and transliterated labels
    ("label_typo", "en", "pasword for the nas: {strong}"),
    ("label_typo", "en", "passowrd {strong}"),
    ("label_typo", "de", "Pasword vom Router: {strong}"),
    ("label_typo", "de", "kenwort fürs Tablet {strong}"),
    ("label_typo", "fr", "mot de pass du wifi : {strong}"),
    ("label_typo", "es", "contrasela del router: {strong}"),
    ("label_typo", "es", "contrasena del wifi {strong}"),
    ("label_typo", "pt", "senhaa da conta: {strong}"),
    ("label_typo", "pt", "senah do wifi {strong}"),
    ("label_typo", "sv", "losenord till routern: {strong}"),
    ("label_typo", "nl", "wachtwoort van de laptop: {strong}"),
    ("label_typo", "pl", "haslo do wifi {strong}"),
    ("label_typo", "pl", "hałso do poczty: {strong}"),
    ("label_typo", "ru", "пороль от ноута {strong}"),
    ("label_typo", "ru", "parol ot wifi: {strong}"),
    ("label_typo", "tr", "modem sifresi {strong}"),
    ("label_typo", "ja", "ぱすわーどは {strong}"),
    ("label_typo", "ko", "와이파이 비반 {strong}"),
    ("label_typo", "zh", "wifi秘码 {strong}"),
    # alarm, disarm and unlock codes
    ("alarm_code", "en", "to disarm the alarm punch in {pin} on the keypad by the door"),
    ("alarm_code", "en", "alarm: type {pin} within 30 seconds of coming in"),
    ("alarm_code", "de", "die Alarmanlage schaltest du mit {pin} aus"),
    ("alarm_code", "fr", "pour couper l'alarme tape {pin} sur le boîtier"),
    ("alarm_code", "es", "la alarma se desactiva con {pin}"),
    ("alarm_code", "it", "l'allarme si spegne con {pin}"),
    ("alarm_code", "pt", "o alarme desliga com {pin} no teclado"),
    ("alarm_code", "ru", "сигнализацию отключай кодом {pin}"),
    ("alarm_code", "uk", "сигналізація вимикається кодом {pin}"),
    ("alarm_code", "pl", "alarm rozbrajasz kodem {pin} przy drzwiach"),
    ("alarm_code", "nl", "het alarm zet je uit met {pin}"),
    ("alarm_code", "sv", "larmet stänger du av med {pin}"),
    ("device_code", "en", "phone unlock code {pin}, don't lose it"),
    ("device_code", "es", "código de desbloqueo del móvil: {pin}"),
    ("device_code", "it", "codice di sblocco del telefono {pin}"),
    ("device_code", "ar", "رمز فتح الهاتف {pin}"),
    ("device_code", "ru", "код от шкафчика в спортзале {pin}"),
    ("device_code", "pl", "kod do sejfu w biurze {pin}"),
    ("device_code", "de", "Code vom Fahrradschloss {pin}"),
    # one-time codes
    ("otp", "en", "one-time passcode is {otp}"),
    ("otp", "de", "Einmalcode: {otp}"),
    ("otp", "fr", "code à usage unique : {otp}"),
    ("otp", "es", "código de un solo uso {otp}"),
    ("otp", "pl", "kod jednorazowy {otp}"),
    ("otp", "ru", "одноразовый код {otp}, срочно"),
    ("otp", "nl", "eenmalige code: {otp}"),
    ("otp", "sv", "engångskoden är {otp}"),
    ("otp", "tr", "tek kullanımlık kod {otp}"),
    ("otp", "ja", "ワンタイムパスワード来た: {pin}"),
    ("otp", "uk", "код із смс {otp}"),
    # codes of a card, a door, a safe a few words on
    ("card_code", "fr", "le code de ma carte bleue c'est {pin}"),
    ("card_code", "fr", "et le code de la carte de crédit {pin}"),
    ("card_code", "ru", "код от карты сбера {pin}"),
    ("card_code", "uk", "пін від картки моно {pin}"),
    ("card_code", "es", "clave de acceso de la app del banco {pin}"),
    ("card_code", "pt", "código do cartão {pin}"),
    ("door_code", "fr", "digicode {keypad} puis 2e gauche"),
    ("door_code", "fr", "le digicode c'est {keypad}"),
    ("door_code", "ko", "현관 비번 {pin}#"),
    ("door_code", "zh", "门禁密码 {pin}#，到了打给我"),
    ("door_code", "ja", "オートロックは {pin} です"),
    ("door_code", "ja", "玄関の暗証番号 {pin}"),
    # compound key labels, a long key after a few words or on the next line
    ("key_near", "nl", "de api-sleutel is {hex32}"),
    ("key_near", "nl", "backupsleutel: {b64}"),
    ("key_near", "sv", "krypteringsnyckel {hex32}"),
    ("key_near", "de", "Verschlüsselungsschlüssel: {b64}"),
    ("key_near", "ja", "ライセンスキーは {hex32}"),
    ("key_near", "ko", "암호화 키: {b64}"),
    ("key_near", "ru", "ключ шифрования диска {hex32}, храни его"),
    ("key_near", "en", "encryption key for the backups {hex64}"),
    ("key_near", "en", "here is the private key for the wallet, delete after\n{hex64}"),
    ("key_near", "es", "la clave privada del servidor, bórrala luego\n{hex64}"),
    ("key_near", "pl", "klucz prywatny do portfela\n0x{hex64}"),
    ("key_near", "ko", "지갑 개인키야, 저장하고 지워\n{hex64}"),
    ("key_near", "fr", "clé privée du serveur, efface après\n{hex64}"),
    # configs: a generated password with a dot, define(), calls
    ("config", "en", "my .env:\nDB_USER=shop\nDB_PASSWORD={strong}"),
    ("config", "de", "application.yml:\nspring:\n  datasource:\n    password: {strong}"),
    ("config", "fr", "wp-config :\ndefine( 'DB_PASSWORD', '{strong}' );"),
    ("config", "es", 'en el php tengo define("SMTP_PASS", "{strong}");'),
    ("config", "it", "os.environ.setdefault('API_TOKEN', '{strong}')"),
    ("config", "pt", "docker run -e POSTGRES_PASSWORD={strong} postgres:16"),
    # a card, its expiry and a CVV named after it
    ("card_cvv", "en", "{card} {exp} {cvv}"),
    ("card_cvv", "en", "card {card}\nexp {exp}\nsecurity code on the back {cvv}"),
    ("card_cvv", "ru", "{card} до {exp}\nкод сзади {cvv}"),
    ("card_cvv", "de", "Karte {card}, gültig {exp}, Code hinten {cvv}"),
    ("card_cvv", "es", "tarjeta {card} caduca {exp} el código de atrás {cvv}"),
    ("card_cvv", "ar", "رقم البطاقة {card} الانتهاء {exp} الرمز {cvv}"),
    # SSNs said in passing
    ("ssn", "en", "my social is {ssn} if they ask"),
    ("ssn", "es", "su SSN es {ssn}"),
    ("ssn", "pt", "o SSN dele é {ssn}"),
    ("ssn", "fr", "son SSN c'est {ssn}"),
    ("ssn", "ar", "رقم SSN تبعه {ssn}"),
    # long label phrases before a colon; "now" in more languages
    ("password", "es", "contraseña de la cuenta compartida de Spotify: {strong}"),
    ("password", "nl", "wachtwoord voor het account van mijn moeder bij bol.com: {strong}"),
    ("password", "de", "Passwort für das neue Konto bei der Sparkasse: {strong}"),
    ("password", "tr", "wifi şifresi artık {strong}"),
    ("password", "nl", "het wachtwoord is nu {strong}"),
    ("password", "sv", "lösenordet är nu {strong}"),
    ("password", "nl", "ww:\n{strong}"),
    # hidden labels: a whole word of look-alike capitals, Latin letters beyond ASCII, digits
    ("obfuscated", "de", "die \u03a1\u0399\u039d von der Karte ist {pin}"),
    ("obfuscated", "en", "my \u0420IN is {pin}"),
    ("obfuscated", "pl", "has\u0142\u03bf: {strong}"),
    ("obfuscated", "ar", "الرقم السري {arabic_pin}"),
    ("obfuscated", "ar", "رمز الباب {arabic_pin}"),
    # a value named after, with a possessive before the label
    ("before_label", "ko", "{strong} 내 넷플릭스 비번"),
    ("before_label", "ja", "{strong} 私のパスワード"),
    ("before_label", "zh", "{strong} 我的邮箱密码"),
    # a random-case value after a label without a connector
    ("password", "ko", "와이파이 비번 {randcase}"),
    ("password", "en", "guest wifi password {randcase}"),
]

# --- look-alikes: (category, lang, text) -------------------------------------------------------

LOOKS: list[tuple[str, str, str]] = [
    ("placeholder", "es", "en la plantilla pone API_KEY=tu_clave_aqui, cámbiala"),
    ("placeholder", "pt", 'no .env de exemplo tem SENHA="coloque_sua_senha", troque'),
    ("placeholder", "it", 'nel file di esempio c\'è PASSWORD="la_tua_password_qui"'),
    ("placeholder", "fr", "le modèle dit DB_PASS=ton_mot_de_passe_ici"),
    ("placeholder", "de", 'im Beispiel steht PASSWORT="dein_passwort_hier"'),
    ("placeholder", "ru", "в примере стоит PASSWORD=ваш_пароль_здесь"),
    ("placeholder", "pl", 'w przykładzie jest HASLO="wpisz_haslo_tutaj"'),
    ("placeholder", "nl", "in het voorbeeld staat WACHTWOORD=jouw_wachtwoord_hier"),
    ("placeholder", "tr", 'örnek dosyada SIFRE="sifreni_buraya_yaz" yazıyor'),
    ("placeholder", "en", "the template has SECRET_KEY=... and DEBUG=true, fill them in"),
    ("public_key", "en", "my public key:\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx0Rk9p me@work"),
    (
        "public_key",
        "de",
        "mein öffentlicher Schlüssel:\nssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQC7 anna@nas",
    ),
    ("public_key", "fr", "ma clé publique : ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHq2x luc@pc"),
    ("public_key", "pt", "minha chave pública:\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIPq7 ana@note"),
    (
        "public_key",
        "nl",
        "mijn publieke sleutel:\nssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKd9 jan@werk",
    ),
    ("public_key", "es", "la huella de la clave del servidor es SHA256:Ym9vdHN0cmFwL2Zvb2Jhcg"),
    ("public_key", "en", "the host key fingerprint is SHA256:q0x8Bz2mLkP4vN7tR1sW9eY3uI6oA5dF"),
    ("cli_no_secret", "en", "run ssh-copy-id deploy@buildbox, it asks for the password once"),
    ("cli_no_secret", "de", 'ssh-keygen -C "anna@laptop" und das Passwort leer lassen'),
    ("cli_no_secret", "ru", "mysql -u root -p, пароль спросит сам"),
    ("cli_no_secret", "es", "mysql -u admin -p; la contraseña te la pide luego"),
    ("label_no_value", "en", "password: I'll send it on signal"),
    ("label_no_value", "de", "Passwort: schick ich dir gleich per SMS"),
    ("label_no_value", "fr", "mot de passe : je te l'envoie ce soir"),
    ("label_no_value", "es", "contraseña: te la digo luego en persona"),
    ("config_no_secret", "es", "en settings.py tengo 'PASSWORD': os.environ['DB_PASS']"),
    (
        "config_no_secret",
        "en",
        "docker run -e MYSQL_PASSWORD_FILE=/run/secrets/db, the password sits in the secret",
    ),
    ("config_no_secret", "de", "define('DB_PASSWORD', getenv('DB_PASSWORD'));"),
    ("other_code", "es", "código de producto 48213, talla M"),
    ("other_code", "tr", "posta kodu 06520, Ankara"),
    ("other_code", "it", "codice prodotto 55120 nel catalogo"),
    ("other_code", "pt", "código do produto 77821 na nota"),
    ("other_code", "ar", "كود المنتج 88231-B"),
    ("other_code", "de", "Alarmanlage Modell 4500 von Bosch"),
    ("alarm_talk", "en", "set the alarm for 0630 tomorrow"),
    ("alarm_talk", "en", "the alarm went off at 0300 again"),
    ("alarm_talk", "de", "die Alarmanlage ist von 2019 und piept ständig"),
    ("alarm_talk", "ru", "будильник на 7:30, не проспи"),
    ("alarm_talk", "es", "la alarma sonó a las 0415"),
    ("alarm_talk", "pl", "alarm w samochodzie wył o 2300"),
    (
        "hash_near_key",
        "en",
        "the key rotation landed in commit 3f2a9c0d4e5b6a7f8c9d0e1f2a3b4c5d6e7f8a9b",
    ),
    ("hash_near_key", "en", "api key id a1b2c3d4e5f60718293a4b5c6d7e8f90 (not the key itself)"),
    (
        "hash_near_key",
        "de",
        "SHA-256 der Schlüsseldatei: hash 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ),
    ("pointed_talk", "en", "v2.14.3\n^ that's the version with the password manager fix"),
    ("pointed_talk", "ru", "Ticket-4821\nэто тикет про сброс пароля, который мы обсуждали вчера"),
    ("pointed_talk", "de", "Raum 3.14\ndas ist der Raum, wo das Passwort-Training stattfindet"),
    ("typo_talk", "pt", "a Sneha disse que vem amanhã às 14h"),
    ("typo_talk", "en", "passport number is on the booking, not here"),
    ("random_case", "ko", "비번 바꿨어 MacBookPro에서"),
    ("random_case", "en", "password for the iPhoneXS box is written inside"),
]


def rows(next_id: Callable[[str, bool], str]) -> Iterator[dict[str, object]]:
    """Every row of the batch (``next_id(lang, secret)`` numbers them after the earlier
    batches' rows)."""
    for category, lang, template in SECRETS:
        text, values = fill(template)
        yield {
            "id": next_id(lang, True),
            "lang": lang,
            "kind": "secret",
            "category": category,
            "text": text,
            "secrets": values,
            "batch": "families",
        }
    for category, lang, text in LOOKS:
        yield {
            "id": next_id(lang, False),
            "lang": lang,
            "kind": "lookalike",
            "category": category,
            "text": text,
            "secrets": [],
            "batch": "families",
        }
