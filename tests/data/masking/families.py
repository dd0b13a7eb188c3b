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


#: Secrets as people say them, written fresh when the rules were checked on phrasings of no
#: corpus: (lang, text, its secret).
SAID_FRESH: list[tuple[str, str, str]] = [
    ("en", "wifi pass for guests is Gu3st!2024", "Gu3st!2024"),
    ("en", "the garage opener code 58213, don't share", "58213"),
    ("de", "Code für die Garage: 4471", "4471"),
    ("es", "mi pin del banco 5521, no se lo digas a nadie", "5521"),
    ("it", "il pin del bancomat è 1944", "1944"),
    ("pt", "o pin do cartão é 8812", "8812"),
    ("ru", "ПИН 4490", "4490"),
    ("ru", "пин от карты сбера 7781", "7781"),
    ("ru", "PIN-код картки 3302", "3302"),
    ("pl", "kod PIN do karty 6613", "6613"),
    ("pl", "pinkoden till kortet är 9920", "9920"),
    ("nl", "pincode van mijn pinpas 4418", "4418"),
    ("tr", "kart şifrem 7733", "7733"),
    ("ko", "카드 비밀번호 4823", "4823"),
    ("zh", "银行卡密码 661245", "661245"),
    ("zh", "暗証番号 5521", "5521"),
    ("ar", "رقم البطاقة السري 4521", "4521"),
    ("en", "the alarm is 2580 btw", "2580"),
    ("en", "to turn off the alarm enter 1199#", "1199"),
    ("de", "Alarmcode lautet 8811", "8811"),
    ("fr", "l'alarme : 4412 pour la couper", "4412"),
    ("es", "alarma: 7712", "7712"),
    ("fr", "mot de passe wifi:\nLivebox-9F2A", "Livebox-9F2A"),
    ("es", "contraseña del wifi\nMOVISTAR_4F2A", "MOVISTAR_4F2A"),
    ("pl", "hasło do wifi\nUPC8841220", "UPC8841220"),
    ("en", "Netflix login: maria.k@mail.com / Sunflower#88", "Sunflower#88"),
    ("en", "user: admin\npass: Adm1n!2024", "Adm1n!2024"),
    ("en", "login admin password Qwerty!234", "Qwerty!234"),
    ("de", "Benutzer: jens, Passwort: Sommer2024!", "Sommer2024!"),
    ("es", "usuario: pepe contraseña: pepe1234", "pepe1234"),
    ("ru", "логин: ivan пароль: Ivan_1988", "Ivan_1988"),
    ("tr", "kullanıcı adı: ali şifre: Ali.2024", "Ali.2024"),
    ("en", "Sunflower#88 is the pw", "Sunflower#88"),
    ("en", "Kx9!pq2Lm - my gmail password", "Kx9!pq2Lm"),
    ("de", "Sommer2024! ist das neue WLAN-Passwort", "Sommer2024!"),
    ("fr", "Soleil2023! c'est mon mot de passe", "Soleil2023!"),
    ("zh", "Qwerty!234 这是我的密码", "Qwerty!234"),
    ("ja", "Qwerty!234 が私のパスワード", "Qwerty!234"),
    ("ko", "Qwerty!234 이게 내 비밀번호야", "Qwerty!234"),
    ("ar", "Qwerty!234 هي كلمة السر", "Qwerty!234"),
    (
        "en",
        "the api token is ghp_1234567890abcdefghijABCDEFGHIJ123456",
        "ghp_1234567890abcdefghijABCDEFGHIJ123456",
    ),
    ("en", "my 2fa backup codes: 4821-9932 7712-3345", "4821-9932"),
    ("en", "recovery code: X7K2-P9QM-4LZT", "X7K2-P9QM-4LZT"),
    ("en", "security answer: fluffy2009", "fluffy2009"),
    ("en", "the combination for the bike lock is 4-7-2-1", "4-7-2-1"),
    ("en", "locker combo 31-22-08", "31-22-08"),
    ("en", "the verification code is 482 193", "482 193"),
    ("en", "your code: 739201", "739201"),
    ("es", "Tu código de verificación es 448812", "448812"),
    ("ru", "Ваш код подтверждения: 552901", "552901"),
    ("zh", "验证码：884213", "884213"),
    ("ja", "認証コード 551920", "551920"),
    ("ko", "인증번호 [552190]", "552190"),
    ("en", "SSN: 123 45 6789", "123 45 6789"),
    ("en", "social security # 212-45-6789", "212-45-6789"),
    ("en", "card 4539 1488 0343 6467 cvc 331", "4539 1488 0343 6467"),
    ("en", "4539148803436467 exp 09/27 cvv 331", "4539148803436467"),
    ("ru", "карта 4539 1488 0343 6467 срок 09/27 код 331", "4539 1488 0343 6467"),
    ("en", "4539-1488-0343-6467\n12/28\n331", "331"),
    ("en", "postgres://app:S3cr3t!pw@db.internal:5432/app", "S3cr3t!pw"),
    ("en", "mongodb+srv://admin:Hunter22x@cluster0.abc.mongodb.net", "Hunter22x"),
    (
        "en",
        "git clone https://oauth2:glpat-aBcDeFgHiJkLmNoPqRsT@gitlab.com/x/y.git",
        "glpat-aBcDeFgHiJkLmNoPqRsT",
    ),
    ("en", "PGPASSWORD=Zx8!kq psql -h db -U app", "Zx8!kq"),
    ("en", "mysql -uroot -pS3cr3tPw shop", "S3cr3tPw"),
    (
        "en",
        'export OPENAI_API_KEY="sk-proj-abc123DEF456ghi789JKL012mno345"',
        "sk-proj-abc123DEF456ghi789JKL012mno345",
    ),
    ("en", '"password": "Tr0ub4dor&3"', "Tr0ub4dor&3"),
    ("en", "password = 'hunter2hunter2'", "hunter2hunter2"),
    ("en", "secret_key: 'dj4ng0-s3cr3t-k3y-xyz'", "dj4ng0-s3cr3t-k3y-xyz"),
    (
        "en",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----",
        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW",
    ),
    (
        "en",
        "PrivateKey = yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=",
        "yAnz5TF+lXXJte14tji3zlMNq+hd2rYUIgJBgB3fBmk=",
    ),
    (
        "en",
        "AGE-SECRET-KEY-1QQPQ8Z4XKJ7R5SN2W3E8Y9T0U6V4A2B3C5D6E7F8G9H0J1K2L3M4N5P6Q7R8S9",
        "AGE-SECRET-KEY-1QQPQ8Z4XKJ7R5SN2W3E8Y9T0U6V4A2B3C5D6E7F8G9H0J1K2L3M4N5P6Q7R8S9",
    ),
    (
        "en",
        "eth private key 0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
        "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318",
    ),
    ("cs", "heslo k wifi je Kocicka2020!", "Kocicka2020!"),
    ("id", "kata sandi wifi kantor: Kantor#2024", "Kantor#2024"),
    ("de", "Passwort lautet jetzt: Zugspitze_2962", "Zugspitze_2962"),
    ("de", "pw ist Zugspitze_2962", "Zugspitze_2962"),
    ("fr", "mdp: Bretagne_29!", "Bretagne_29!"),
    ("fr", "le mdp du compte c'est Bretagne_29!", "Bretagne_29!"),
    ("es", "la contra del wifi es Casa_1234", "Casa_1234"),
    ("pt", "a senha é Brasil@2022", "Brasil@2022"),
    ("it", "la password è Milano_1899", "Milano_1899"),
    ("pl", "hasło to Gdansk#1997", "Gdansk#1997"),
    ("ru", "пароль: Москва_2024", "Москва_2024"),
    ("ru", "пароль Kyiv_2022!", "Kyiv_2022!"),
    ("nl", "het wachtwoord: Amsterdam#1", "Amsterdam#1"),
    ("sv", "lösenordet: Malmo_2024!", "Malmo_2024!"),
    ("tr", "şifrem Istanbul_34!", "Istanbul_34!"),
    ("ja", "パスワード：Tokyo_2024!", "Tokyo_2024!"),
    ("ko", "비밀번호는 Seoul_2024!", "Seoul_2024!"),
    ("zh", "密码是 Beijing_2024", "Beijing_2024"),
    ("ar", "كلمة السر Cairo_2024!", "Cairo_2024!"),
    ("de", "Passwort:\n  Zugspitze_2962", "Zugspitze_2962"),
    ("fr", "mot de passe :\n\nBretagne_29!", "Bretagne_29!"),
    ("pt", "senha do wifi\n👉 Brasil@2022", "Brasil@2022"),
    ("ru", "пароль от почты ниже\nMoskva_2024!", "Moskva_2024!"),
    ("de", "Zugspitze_2962 ist mein Passwort", "Zugspitze_2962"),
    ("fr", "Bretagne_29! est mon mot de passe", "Bretagne_29!"),
    ("pt", "Brasil@2022 é minha senha", "Brasil@2022"),
    ("it", "Milano_1899 è la mia password", "Milano_1899"),
    ("pl", "Gdansk#1997 to moje hasło", "Gdansk#1997"),
    ("nl", "Amsterdam#1 is mijn wachtwoord", "Amsterdam#1"),
    ("sv", "Malmo_2024! är mitt lösenord", "Malmo_2024!"),
    ("tr", "Istanbul_34! benim şifrem", "Istanbul_34!"),
    ("ja", "Tokyo_2024! がパスワードです", "Tokyo_2024!"),
    ("en", "login: root / Toor_2024!", "Toor_2024!"),
    ("de", "Benutzername admin Passwort Admin_2024", "Admin_2024"),
    ("fr", "identifiant : jdupont mot de passe : Paris_75!", "Paris_75!"),
    ("es", "usuario admin clave Admin_2024", "Admin_2024"),
    ("ru", "логин admin пароль Admin_2024", "Admin_2024"),
    ("en", "user=deploy pass=Dep10y_!x", "Dep10y_!x"),
    ("en", "sshpass -p 'S3rv3r!pw' ssh root@10.0.0.1", "S3rv3r!pw"),
    ("en", "redis-cli -a R3d1sPass! -h cache", "R3d1sPass!"),
    ("en", "docker login -u bob -p D0ck3r_pw registry.io", "D0ck3r_pw"),
    ("en", 'psql "postgresql://app:Pg_S3cret@db:5432/app"', "Pg_S3cret"),
    ("en", "amqp://guest:Rabb1t_pw@mq.local:5672", "Rabb1t_pw"),
    ("en", "redis://:R3d1sPass!@cache.local:6379/0", "R3d1sPass!"),
    ("en", "https://bob:Gh_p4ss@git.example.com/repo.git", "Gh_p4ss"),
    ("de", "PIN meiner Bankkarte: 4821", "4821"),
    ("es", "mi PIN es 4821", "4821"),
    ("fr", "le code de ma CB : 4821", "4821"),
    ("ru", "PIN карты 4821", "4821"),
    ("uk", "PIN-код від картки: 4821", "4821"),
    ("tr", "kartın şifresi 4821", "4821"),
    ("en", "ATM PIN 4821", "4821"),
    ("sv", "pinkoden är 4821", "4821"),
    ("nl", "de pincode is 4821", "4821"),
    ("de", "türcode 4821#", "4821"),
    ("fr", "code portail 4821B", "4821B"),
    ("es", "código del portal 4821", "4821"),
    ("it", "codice del cancello: 4821", "4821"),
    ("pl", "kod do bramy 4821", "4821"),
    ("ru", "код домофона 4821К", "4821"),
    ("en", "intercom code 48#21", "48#21"),
    ("en", "key safe code 4821, the box is by the door", "4821"),
    ("en", "lockbox 4821", "4821"),
    ("de", "Tresor-Kombination 12-34-56", "12-34-56"),
    ("en", "alarm code 4821, panel in the hallway", "4821"),
    ("fr", "code alarme 4821", "4821"),
    ("de", "Alarmcode: 4821", "4821"),
    ("ru", "код сигнализации 4821", "4821"),
    ("pl", "kod alarmu 4821", "4821"),
    ("sv", "larmkoden är 4821", "4821"),
    ("de", "alarmcode 4821", "4821"),
    ("ja", "電話のロック解除コード 4821", "4821"),
    ("zh", "手机锁屏密码 4821", "4821"),
    ("ko", "휴대폰 잠금 비밀번호 4821", "4821"),
    ("en", "SIM PIN 4821, PUK 12345678", "4821"),
    ("de", "Handy-PIN 4821", "4821"),
    ("en", "iPhone passcode 482193", "482193"),
    ("en", "the code from the text is 482193", "482193"),
    ("de", "Bestätigungscode 482193", "482193"),
    ("fr", "code de vérification : 482193", "482193"),
    ("pl", "kod weryfikacyjny 482193", "482193"),
    ("ru", "код подтверждения 482-193", "482-193"),
    ("en", "G-482193 is your Google verification code", "482193"),
    ("en", "482193 is your verification code", "482193"),
    ("en", "Your OTP is 482193", "482193"),
    ("en", "wifi: Casa-5G / Casa_1234", "Casa_1234"),
    ("en", "SSID Casa-5G password Casa_1234", "Casa_1234"),
    ("fr", "réseau Livebox-9F2A clé Bretagne_29!", "Bretagne_29!"),
    ("es", "red MOVISTAR_4F2A clave Casa_1234", "Casa_1234"),
    ("de", "WLAN FritzBox-7590 Schlüssel 1234 5678 9012 3456", "1234 5678 9012 3456"),
    (
        "en",
        "the encryption key: 7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b",
        "7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b",
    ),
    ("en", "AES key = 7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b", "7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b"),
    (
        "fr",
        "la clé de chiffrement est 7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b",
        "7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b",
    ),
    (
        "de",
        "der Schlüssel ist 7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b",
        "7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b",
    ),
    (
        "pl",
        "klucz szyfrowania: 7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b",
        "7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b",
    ),
    ("zh", "加密密钥 7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b", "7f3e9a1b2c4d5e6f7a8b9c0d1e2f3a4b"),
    (
        "en",
        "Bitlocker recovery key 123456-234567-345678-456789-567890-678901-789012-890123",
        "123456-234567-345678-456789-567890-678901-789012-890123",
    ),
    ("en", "Windows product key XJ7K2-PQ9M4-LZT8R-W3N6V-B5H2C", "XJ7K2-PQ9M4-LZT8R-W3N6V-B5H2C"),
    ("en", "SSN 078-05-1120", "078-05-1120"),
    ("es", "mi número de seguro social es 212-45-6789", "212-45-6789"),
    ("de", "Sozialversicherungsnummer (US) 212 45 6789", "212 45 6789"),
    ("en", "card: 5425 2334 3010 9903, 04/27, cvv 123", "123"),
    ("de", "Karte 5425233430109903 Ablauf 04/27 CVC 123", "123"),
    ("fr", "carte 5425 2334 3010 9903 exp 04/27 crypto 123", "123"),
    ("es", "tarjeta 5425 2334 3010 9903 cad 04/27 cvv: 123", "123"),
    ("ru", "карта 5425 2334 3010 9903 04/27 cvc 123", "123"),
]
#: Their look-alikes: (lang, text).
LOOKS_FRESH: list[tuple[str, str]] = [
    ("en", "the token limit is 128000 tokens for this model"),
    ("en", "context window: 200000 tokens, max output 8192"),
    ("en", "the key is in the mailbox under the mat"),
    ("en", "key of the song is F#m, capo 2"),
    ("en", "keynote at 1400 in hall B"),
    ("en", "alarm set for 6:45 tomorrow"),
    ("en", "Alarm um 7 Uhr, nicht vergessen"),
    ("en", "the alarm code changed, ask Tom for the new one"),
    ("es", "el código no llegó, reenvíalo"),
    ("ru", "код не пришёл уже 5 минут"),
    ("de", "der Code ist nach 10 Minuten abgelaufen"),
    ("es", "el código expira en 300 segundos"),
    ("en", "PIN: I don't remember it, the bank will send a new one"),
    ("en", "the door code is on the whiteboard in the office"),
    ("pl", "alarm went off twice last night around 0315"),
    ("en", "my alarm clock rings at 0600 every day"),
    ("it", "codice fiscale RSSMRA85T10A562S"),
    ("pl", "kod pocztowy 00-950 Warszawa"),
    ("en", "order 114-3941689-8772232 shipped"),
    ("en", "tracking 1Z999AA10123456784"),
    ("en", "call me at 0612345678"),
    ("en", "room 1204, floor 12"),
    ("en", "build 4521 passed, version 2.14.3"),
    ("en", "commit 3f2a9c0 fixed the password reset bug"),
    ("en", "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    ("en", "request id 550e8400-e29b-41d4-a716-446655440000"),
    ("en", "the wifi password is on the sticker under the router"),
    ("en", "wifi: CafeGuest, no password needed"),
    ("en", "password: ${DB_PASS}"),
    ("en", "DB_PASSWORD_FILE=/run/secrets/db"),
    ("en", "api_key: !vault |"),
    ("en", "use your password manager, never reuse passwords"),
    ("en", "I changed my password yesterday, the old one was too short"),
    ("en", "my bank PIN got blocked after 3 attempts"),
    ("en", "the safe in the hotel room uses a 4 digit code you choose"),
    ("en", "alarm: 3 false alarms this week, the technician comes at 1430"),
    ("en", "pin the message please"),
    ("en", "pinned 3 messages in the channel"),
    ("en", "passport number is in the booking"),
    ("en", "passage 12 of the book"),
    ("en", "password strength meter says 72/100"),
    ("en", "code review at 1500"),
    ("en", "the code is on github under MIT"),
    ("en", "error code 0x80070005"),
    ("en", "zip code 10115"),
    ("en", "Promo code SUMMER2024 gives 20% off"),
    ("en", "gift card balance 2500 rubles"),
    ("en", "the combination of both approaches works"),
    ("en", "my social media handle is @Anna_1990"),
    ("en", "social: 3 posts a week"),
    ("en", "blood pressure 120/80, pulse 72"),
    ("de", "Ich habe den Code 4 mal eingegeben, geht nicht"),
    ("fr", "le code de la porte a changé, demande au gardien"),
    ("es", "la contraseña es demasiado corta"),
    ("pl", "hasło musi mieć 8 znaków"),
    ("ru", "пароль должен быть не короче 8 символов"),
    ("zh", "密码至少8位"),
    ("ja", "パスワードは8文字以上"),
    ("ko", "비밀번호는 8자 이상"),
    ("ar", "كلمة المرور يجب أن تكون 8 أحرف"),
    ("tr", "şifre en az 8 karakter olmalı"),
    ("nl", "wachtwoord moet minstens 8 tekens zijn"),
    ("sv", "lösenordet måste vara minst 8 tecken"),
    ("en", "the encryption key rotates every 90 days"),
    ("en", "encryption key id: kms-key-2024-prod"),
    ("en", "private key is stored in the HSM, never exported"),
    ("fr", "clé privée : dans le coffre, pas ici"),
    ("it", "chiave privata? non la mando in chat"),
    ("pl", "klucz prywatny trzymam na pendrive"),
    ("ru", "ключ шифрования лежит в сейфе"),
    ("de", "Schlüssel liegt beim Nachbarn"),
    ("nl", "de sleutel ligt onder de mat"),
    ("sv", "nyckeln ligger under mattan"),
    ("tr", "anahtarı komşuya bıraktım"),
    ("en", "Meeting2024\nthat's the name of the calendar, the password is elsewhere"),
    ("en", "v2.3.1\nthis is the version where the password field broke"),
    ("en", "ABC-123\nthat's my parking spot, not a password"),
    ("en", "to disarm the bomb in the game you press 4 buttons"),
    ("en", "alarm: the fire drill is at 1030"),
    ("en", "the alarm company called, invoice 45821 is overdue"),
    ("de", "Alarmanlage Rechnung 45821 noch offen"),
    ("fr", "alarme incendie: exercice à 1030"),
    ("es", "la alarma del coche saltó 3 veces, factura 55210"),
    ("ru", "сигнализация сработала в 0330, соседи жалуются"),
    ("ru", "сигнализация за 15000 рублей, ставили в 2021"),
    ("pl", "kod rabatowy 45120 na 10%"),
    ("ru", "код товара 44512 в каталоге"),
    ("it", "codice sconto 55120"),
    ("es", "código postal 28013 Madrid"),
    ("en", "the card ending in 4821 was declined"),
    ("en", "card code expired yesterday"),
    ("en", "my ID card number is on the form"),
    ("en", "door 12, code of conduct applies"),
    ("en", "our unlock event is at 2100 on saturday"),
    ("en", "phone battery 4500 mAh"),
    ("en", "the safe room is 4 floors down"),
    ("pl", "engångskoden kom inte fram"),
    ("de", "einmalcode ist abgelaufen"),
    ("en", "one-time password expired, send again"),
    ("en", "the password for the 2024 tax return is on the form"),
    ("en", "password of the account from 2019 is the old one"),
    ("de", "Passwort für den Zugang ab 2025 kommt per Post"),
    ("en", "SSN field is required, format 000-00-0000"),
    ("en", "social security office at 1400 on main street"),
    ("en", "my social is a mess lately"),
    ("en", "ISBN 978-3-16-148410-0"),
    ("en", "IMEI 356938035643809"),
    ("en", "use ssh-keygen -t rsa -b 4096 and set a passphrase"),
    ("en", "gpg --full-generate-key and pick a passphrase"),
    ("en", "openssl rand -hex 32 gives you a new key"),
    ("en", 'the api key lives in 1Password under "prod"'),
    ("en", "API key: see vault path secret/data/prod/api"),
    ("en", "token: stored in GitHub secrets as NPM_TOKEN"),
    ("en", "export GITHUB_TOKEN=$(gh auth token)"),
    ("en", "password=$(cat /run/secrets/db)"),
    ("en", "MYSQL_ROOT_PASSWORD_FILE: /run/secrets/root"),
    ("es", "clave: la de siempre"),
    ("pt", "senha: a mesma do email"),
    ("pl", "hasło: takie samo jak do poczty"),
    ("ru", "пароль: как обычно"),
    ("de", "Passwort: wie immer"),
    ("fr", "mot de passe : le même que d'habitude"),
    ("nl", "wachtwoord: hetzelfde als altijd"),
    ("sv", "lösenord: samma som vanligt"),
    ("tr", "şifre: her zamanki"),
    ("ja", "パスワード: いつもの"),
    ("ko", "비밀번호: 평소랑 같아"),
    ("zh", "密码：老样子"),
    ("ar", "كلمة المرور: نفس القديمة"),
    ("en", "the key for the 3rd floor is 3F-217"),
    ("en", "my locker is 217, the key hangs inside"),
    ("en", "Beatles Abbey Road track 7 in key of A"),
    ("en", "pin 3 on the gpio header"),
    ("en", "pin 13 goes to the LED"),
    ("pl", "pinkode: ring til banken"),
    ("en", "PINs are 4 to 6 digits"),
    ("en", "the intercom is broken, knock instead"),
    ("en", "intercom at 1400? no, at 2pm"),
    ("en", "lockbox is on the left of the door, ask me for the code"),
    ("en", "combination of 3 factors: price, time and 2 people"),
    ("de", "Kombination aus 2 Farben"),
    ("fr", "la combinaison gagnante 12 34 56 au loto"),
    ("en", "apartment 12B, floor 4"),
    ("fr", "code portail: demande au gardien"),
    ("en", "room 4821B is booked"),
    ("en", "code 2024A of the regulation"),
    ("en", "the new A380 code share with Lufthansa"),
    ("en", "phone: 0612 345 678 9012"),
    ("en", "IBAN DE89 3704 0044 0532 0130 00"),
    ("en", "my password\n\nis too long to remember"),
    ("en", "password reset:\n👉 https://example.com/reset"),
    ("de", "WLAN Name: FritzBox 7590 (Passwort steht hinten drauf)"),
    ("de", "Schlüsselnummer 1234 5678 auf dem Zettel"),
    ("en", "tracking 1234 5678 9012 3456 7890"),
    ("en", "order 1234-5678-9012 shipped"),
    ("en", "the key shipped in box 1234 5678 9012"),
    ("en", "BitLocker is on, the recovery key is in my Microsoft account"),
    ("en", "serial 123456-234567 on the back"),
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
    for lang, text, secret in SAID_FRESH:
        yield {
            "id": next_id(lang, True),
            "lang": lang,
            "kind": "secret",
            "category": "said_fresh",
            "text": text,
            "secrets": [secret],
            "batch": "families",
        }
    for category, lang, text in [*LOOKS, *(("fresh", lang, text) for lang, text in LOOKS_FRESH)]:
        yield {
            "id": next_id(lang, False),
            "lang": lang,
            "kind": "lookalike",
            "category": category,
            "text": text,
            "secrets": [],
            "batch": "families",
        }
