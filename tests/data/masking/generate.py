"""Writes ``train.jsonl``: realistic secrets and look-alike non-secrets, in ten languages.

Run ``python tests/data/masking/generate.py`` to regenerate (deterministic: a fixed
seed). Every value is made up with the shape of the real thing (Luhn-valid card
numbers, tokens of each provider's length and alphabet, base64 key bodies); none
is a live credential. See ``README.md`` for the fields.
"""

from __future__ import annotations

import base64
import json
import random
import string
from collections.abc import Callable, Iterator
from pathlib import Path

import families  # type: ignore[import-not-found]  # the batch of the families the dev part showed (its own seed)
import families2  # type: ignore[import-not-found]  # the batch of the families the dev2 part showed (its own seed)
import families3  # type: ignore[import-not-found]  # the batch of the families the dev3 part showed (its own seed)
import families4  # type: ignore[import-not-found]  # round 6: the mechanisms the dev5 part showed
import families5  # type: ignore[import-not-found]  # round 7: the concepts the dev6 part showed
import families6  # type: ignore[import-not-found]  # round 8: the concepts the dev7 part showed
import families7  # type: ignore[import-not-found]  # round 9: the concepts the dev8 part showed
import families8  # type: ignore[import-not-found]  # round 10: the concepts the dev9 part showed
import world  # type: ignore[import-not-found]  # the batch of the families and languages added later (its own seed)

HERE = Path(__file__).resolve().parent
rng = random.Random(20_260_314)
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"


def pick(chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


# --- made-up values ----------------------------------------------------------------------------

WORDS = {
    "en": ["sunflower", "dragon", "pancake", "meadow", "harbor", "falcon"],
    "de": ["Schmetterling", "Sonnenblume", "Kuckuck", "Brezel", "Wolke"],
    "fr": ["papillon", "chaton", "soleil", "baguette", "nuage"],
    "es": ["mariposa", "gato", "girasol", "playa", "estrella"],
    "pt": ["borboleta", "saudade", "laranja", "jabuti", "praia"],
    "it": ["farfalla", "girasole", "gelato", "tramonto", "cielo"],
    "pl": ["motyl", "kotek", "pierogi", "słonko", "zamek"],
    "ru": ["ромашка", "котик", "солнышко", "берёза", "медведь"],
    "uk": ["соняшник", "котик", "калина", "зірка", "вишня"],
    "zh": ["panda", "dragon", "tiger", "lotus", "jade"],
}


def password(lang: str, style: int | None = None) -> str:
    """A password as people make them: word+digits, word+year+symbol, generated, passphrase."""
    word = rng.choice(WORDS[lang])
    style = rng.randrange(5) if style is None else style
    if style == 0:
        return f"{word}{rng.randrange(10, 9999)}"
    if style == 1:
        return f"{word.capitalize()}{rng.choice(['2023', '2024', '2025', '1987'])}{rng.choice('!#$%&*?')}"
    if style == 2:
        return pick(ALNUM + "!#$%&*-_", rng.randrange(10, 17))
    if style == 3:
        return "-".join(rng.choice(WORDS["en"]) for _ in range(3)) + str(rng.randrange(10))
    return f"{pick(string.ascii_lowercase, 2)}{rng.randrange(100, 999)}{word}"


def strong(lang: str) -> str:
    """A password with letters and digits (the kind typed without a connector)."""
    return password(lang, rng.choice([0, 1, 2, 4]))


def pin() -> str:
    return str(rng.randrange(1000, 999_999)).zfill(rng.choice([4, 4, 6]))


def luhn_complete(prefix: str, length: int) -> str:
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
            return number
    raise AssertionError("unreachable")


def not_luhn(number: str) -> str:
    last = (int(number[-1]) + rng.randrange(1, 10)) % 10
    return number[:-1] + str(last)


CARD_BRANDS = [
    ("4", 16),
    ("51", 16),
    ("55", 16),
    ("2221", 16),
    ("37", 15),
    ("6011", 16),
    ("62", 16),
    ("2200", 16),
    ("4", 13),
    ("36", 14),
    ("35", 16),
    ("6", 19),
]
SEPARATORS = [" ", "-", ".", "\u00a0", "  ", "", " - ", "\u202f"]


def group(number: str, sep: str) -> str:
    if len(number) == 15 or len(number) == 14:
        parts = [number[:4], number[4:10], number[10:]]
    else:
        parts = [number[i : i + 4] for i in range(0, len(number), 4)]
    return sep.join(parts)


def card(sep: str | None = None) -> str:
    prefix, length = rng.choice(CARD_BRANDS)
    return group(luhn_complete(prefix, length), rng.choice(SEPARATORS) if sep is None else sep)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


TOKENS: dict[str, Callable[[], str]] = {
    "openai": lambda: "sk-proj-" + pick(ALNUM + "_-", 56),
    "openai_legacy": lambda: "sk-" + pick(ALNUM, 48),
    "sk_live": lambda: "sk-live-" + pick(ALNUM, 32),
    "anthropic": lambda: "sk-ant-api03-" + pick(ALNUM + "_-", 93) + "AA",
    "stripe": lambda: rng.choice(["sk_live_", "rk_live_", "sk_test_"]) + pick(ALNUM, 24),
    "github_pat": lambda: (
        "github_pat_11" + pick(string.ascii_uppercase + string.digits, 20) + "_" + pick(ALNUM, 59)
    ),
    "github": lambda: rng.choice(["ghp_", "gho_", "ghs_"]) + pick(ALNUM, 36),
    "gitlab": lambda: "glpat-" + pick(ALNUM + "_-", 20),
    "huggingface": lambda: "hf_" + pick(string.ascii_letters, 34),
    "npm": lambda: "npm_" + pick(ALNUM, 36),
    "sendgrid": lambda: "SG." + pick(ALNUM + "_-", 22) + "." + pick(ALNUM + "_-", 43),
    "slack": lambda: (
        f"xox{rng.choice('bpa')}-{rng.randrange(10**11, 10**12)}-"
        f"{rng.randrange(10**11, 10**12)}-" + pick(ALNUM, 24)
    ),
    "slack_webhook": lambda: (
        "https://hooks.slack.com/services/T"
        + pick(string.ascii_uppercase + string.digits, 8)
        + "/B"
        + pick(string.ascii_uppercase + string.digits, 10)
        + "/"
        + pick(ALNUM, 24)
    ),
    "discord_webhook": lambda: (
        f"https://discord.com/api/webhooks/{rng.randrange(10**17, 10**18)}/"
        + pick(ALNUM + "_-", 68)
    ),
    "aws_access_key": lambda: "AKIA" + pick(string.ascii_uppercase + "234567", 16),
    "google": lambda: "AIza" + pick(ALNUM + "_-", 35),
    "telegram": lambda: f"{rng.randrange(10**8, 10**10)}:AA" + pick(ALNUM + "_-", 33),
    "jwt": lambda: (
        b64url(b'{"alg":"HS256","typ":"JWT"}')
        + "."
        + b64url(json.dumps({"sub": str(rng.randrange(10**6)), "exp": 1_900_000_000}).encode())
        + "."
        + pick(ALNUM + "_-", 43)
    ),
    "pypi": lambda: "pypi-AgEIcHlwaS5vcmc" + pick(ALNUM + "_-", 60),
}


def aws_secret() -> str:
    return pick(ALNUM + "/+", 40)


def pem_lines(n: int) -> list[str]:
    return ["MII" + pick(B64, 61)] + [pick(B64, 64) for _ in range(n - 2)] + [pick(B64, 22) + "=="]


def basic(lang: str) -> str:
    return base64.b64encode(
        f"{rng.choice(['admin', 'bob', 'deploy'])}:{strong(lang)}".encode()
    ).decode()


# --- secrets said in running text, per language -------------------------------------------------
# (kind, template): {pw} any password, {strong} letters+digits, {word} a plain word,
# {pin} digits, {user} a user name (not a secret)

SAID: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("password", "the wifi password for the office is {pw}"),
        ("password", "my password's {pw}"),
        ("password", "login bob pass: {pw}"),
        ("password", "Password: {pw}"),
        ("password", "new password is {pw}, don't lose it"),
        ("password", "the admin password = {pw}"),
        ("password", "use {user} / password {strong}"),
        ("password", "server login: {user}, password: {pw}"),
        ("password", "guest wifi is CafeNet, password {strong}"),
        ("password", "the password to the staging db is {pw}"),
        ("password", "Password for the shared drive: {pw}"),
        ("password", "our netflix password is now {pw}"),
        ("password", "the password is {word}"),
        ("password", "pw: {pw}"),
        ("password", "pwd={pw}"),
        ("password", "my bank password was {pw} lol"),
        ("password", "router admin passphrase: {pw}"),
        ("password", "the wifi key is {strong}"),
        ("pin", "my PIN is {pin}"),
        ("pin", "door code / PIN: {pin}"),
        ("pin", "the verification code is {pin}"),
        ("token", "the api key is {strong}{strong}"),
        ("token", "client secret: {strong}{strong}"),
        ("token", "license key: {strong}-{strong}"),
    ],
    "de": [
        ("password", "Das WLAN-Passwort lautet {pw}"),
        ("password", "Passwort: {pw}"),
        ("password", "mein Passwort ist {pw}"),
        ("password", "Kennwort für den Server: {pw}"),
        ("password", "Zugangsdaten: Benutzer {user}, Passwort {strong}"),
        ("password", "das neue Passwort ist jetzt {pw}"),
        ("password", "Passwort fürs Büro-WLAN ist {pw}"),
        ("password", "Hier das Passwort für den Router: {pw}"),
        ("password", "das Kennwort lautet {word}"),
        ("password", "Login {user} / Passwort {strong}"),
        ("password", "WLAN-Schlüssel: {strong}"),
        ("password", "Passwort = {pw}"),
        ("password", "der Zugangscode ist {strong}"),
        ("pin", "PIN: {pin}"),
        ("pin", "Die Geheimzahl ist {pin}"),
        ("pin", "meine PIN ist {pin}"),
        ("token", "der API-Schlüssel ist {strong}{strong}"),
    ],
    "fr": [
        ("password", "le mot de passe du wifi est {pw}"),
        ("password", "mot de passe : {pw}"),
        ("password", "mon mdp c'est {pw}"),
        ("password", "mdp: {pw}"),
        ("password", "identifiant : {user} / mot de passe : {pw}"),
        ("password", "voici le mot de passe de la box : {pw}"),
        ("password", "le mot de passe est maintenant {pw}"),
        ("password", "le mot de passe c'est {word}"),
        ("password", "Mot de passe = {pw}"),
        ("password", "mot de passe {strong}"),
        ("password", "le code d'accès est {strong}"),
        ("pin", "le code PIN est {pin}"),
        ("pin", "mon code pin : {pin}"),
        ("token", "la clé API est {strong}{strong}"),
        ("token", "jeton : {strong}{strong}"),
    ],
    "es": [
        ("password", "la contraseña del wifi es {pw}"),
        ("password", "contraseña: {pw}"),
        ("password", "mi contraseña es {pw}"),
        ("password", "usuario: {user}, contraseña: {pw}"),
        ("password", "la clave del wifi es {pw}"),
        ("password", "te paso la contraseña: {pw}"),
        ("password", "la contraseña ahora es {pw}"),
        ("password", "la contraseña es {word}"),
        ("password", "Contraseña = {pw}"),
        ("password", "contraseña {strong}"),
        ("password", "el código de acceso es {strong}"),
        ("pin", "el PIN es {pin}"),
        ("pin", "mi código pin: {pin}"),
        ("token", "la clave API es {strong}{strong}"),
        ("token", "la clave secreta: {strong}{strong}"),
    ],
    "pt": [
        ("password", "a senha do wifi é {pw}"),
        ("password", "senha: {pw}"),
        ("password", "minha senha é {pw}"),
        ("password", "usuário {user} senha {strong}"),
        ("password", "a palavra-passe é {pw}"),
        ("password", "a senha agora é {pw}"),
        ("password", "a senha é {word}"),
        ("password", "Senha = {pw}"),
        ("password", "segue a senha do roteador: {pw}"),
        ("pin", "o PIN é {pin}"),
        ("pin", "código pin: {pin}"),
        ("token", "a chave da API é {strong}{strong}"),
    ],
    "it": [
        ("password", "la password del wifi è {pw}"),
        ("password", "password: {pw}"),
        ("password", "la mia password è {pw}"),
        ("password", "utente: {user}, password: {pw}"),
        ("password", "ecco la password: {pw}"),
        ("password", "la password ora è {pw}"),
        ("password", "la password è {word}"),
        ("password", "Password = {pw}"),
        ("password", "la chiave del wifi è {strong}"),
        ("pin", "il PIN è {pin}"),
        ("pin", "codice pin: {pin}"),
        ("token", "la chiave API è {strong}{strong}"),
    ],
    "pl": [
        ("password", "hasło do wifi to {pw}"),
        ("password", "hasło: {pw}"),
        ("password", "moje hasło to {pw}"),
        ("password", "login: {user}, hasło: {pw}"),
        ("password", "hasło brzmi {pw}"),
        ("password", "nowe hasło: {pw}"),
        ("password", "hasło to teraz {pw}"),
        ("password", "hasło to {word}"),
        ("password", "Hasło = {pw}"),
        ("password", "hasło {strong}"),
        ("pin", "PIN to {pin}"),
        ("pin", "kod pin: {pin}"),
        ("token", "klucz API: {strong}{strong}"),
    ],
    "ru": [
        ("password", "пароль от вайфая {strong}"),
        ("password", "пароль: {pw}"),
        ("password", "мой пароль {strong}"),
        ("password", "пароль — {pw}"),
        ("password", "пароль это {pw}"),
        ("password", "логин {user} пароль {strong}"),
        ("password", "вот пароль от почты: {pw}"),
        ("password", "новый пароль {strong}"),
        ("password", "пароль теперь {pw}"),
        ("password", "пароль от роутера — {word}"),
        ("password", "Пароль = {pw}"),
        ("password", "пароль такой: {pw}"),
        ("password", "код доступа {strong}"),
        ("pin", "пин-код {pin}"),
        ("pin", "пинкод от карты {pin}"),
        ("pin", "код из смс: {pin}"),
        ("token", "токен бота: {strong}{strong}"),
        ("token", "ключ API: {strong}{strong}"),
    ],
    "uk": [
        ("password", "пароль від вайфаю {strong}"),
        ("password", "мій пароль: {pw}"),
        ("password", "пароль — {pw}"),
        ("password", "ось пароль до пошти: {pw}"),
        ("password", "гасло: {pw}"),
        ("password", "новий пароль {strong}"),
        ("password", "пароль тепер {pw}"),
        ("password", "пароль це {word}"),
        ("password", "Пароль = {pw}"),
        ("password", "логін {user} пароль {strong}"),
        ("password", "код доступу {strong}"),
        ("pin", "пін-код {pin}"),
        ("pin", "пін-код від картки: {pin}"),
        ("token", "токен: {strong}{strong}"),
    ],
    "zh": [
        ("password", "wifi密码是{pw}"),
        ("password", "我的密码：{pw}"),
        ("password", "密码: {pw}"),
        ("password", "账号 {user} 密码 {strong}"),
        ("password", "登录密码是 {pw}"),
        ("password", "路由器密码为{pw}"),
        ("password", "新密码就是{pw}"),
        ("password", "口令：{pw}"),
        ("pin", "支付密码 {pin}"),
        ("pin", "验证码：{pin}"),
        ("token", "API密钥是{strong}{strong}"),
        ("token", "访问令牌：{strong}{strong}"),
    ],
}
USERS = ["bob", "admin", "anna.k", "deploy", "root", "marta_s", "ivan"]

# --- secrets of every language's chats: tokens, URLs, cards, config, headers, keys -------------

CARRIERS = {
    "en": [
        "here's the key: {x}",
        "use {x} for staging",
        "I pasted {x} into the config, works now",
        "can you check why {x} is rejected?",
        "connect with {x}",
    ],
    "de": [
        "hier der Schlüssel: {x}",
        "nimm {x} für Staging",
        "ich hab {x} in die Config kopiert",
        "verbinde dich mit {x}",
        "warum wird {x} abgelehnt?",
    ],
    "fr": [
        "voici la clé : {x}",
        "utilise {x} pour la préprod",
        "j'ai collé {x} dans la config",
        "connecte-toi avec {x}",
        "pourquoi {x} est refusé ?",
    ],
    "es": [
        "aquí está la clave: {x}",
        "usa {x} para staging",
        "pegué {x} en la config",
        "conéctate con {x}",
        "¿por qué rechaza {x}?",
    ],
    "pt": [
        "segue a chave: {x}",
        "usa {x} no staging",
        "colei {x} na config",
        "conecta com {x}",
        "por que {x} é recusado?",
    ],
    "it": [
        "ecco la chiave: {x}",
        "usa {x} per lo staging",
        "ho incollato {x} nella config",
        "collegati con {x}",
        "perché {x} viene rifiutato?",
    ],
    "pl": [
        "oto klucz: {x}",
        "użyj {x} na stagingu",
        "wkleiłem {x} do configu",
        "połącz się przez {x}",
        "czemu {x} jest odrzucany?",
    ],
    "ru": [
        "держи ключ: {x}",
        "используй {x} для стейджинга",
        "я вставил {x} в конфиг",
        "подключайся через {x}",
        "почему {x} не принимается?",
    ],
    "uk": [
        "ось ключ: {x}",
        "використай {x} для стейджингу",
        "я вставив {x} у конфіг",
        "підключайся через {x}",
        "чому {x} не приймається?",
    ],
    "zh": [
        "这是密钥：{x}",
        "测试环境用 {x}",
        "我把 {x} 粘贴到配置里了",
        "用 {x} 连接",
        "为什么 {x} 被拒绝了？",
    ],
}
CARD_CARRIERS = {
    "en": ["pay with {x}, exp 04/27", "my card number is {x}", "card: {x} cvv on the back"],
    "de": ["meine Kartennummer: {x}", "zahl einfach mit {x}", "Karte {x}, gültig bis 09/26"],
    "fr": ["ma carte : {x}", "numéro de carte {x}", "paie avec {x} stp"],
    "es": ["mi tarjeta es {x}", "paga con {x}", "número de tarjeta: {x}"],
    "pt": ["o número do cartão é {x}", "cartão: {x}", "paga com {x}"],
    "it": ["il numero della carta è {x}", "carta: {x}", "paga con {x}"],
    "pl": ["numer karty: {x}", "zapłać kartą {x}", "karta {x} ważna do 11/27"],
    "ru": ["номер карты {x}", "скинь на карту {x}", "карта: {x}"],
    "uk": ["номер картки {x}", "кинь на картку {x}", "картка: {x}"],
    "zh": ["我的卡号是 {x}", "银行卡：{x}", "转到这张卡 {x}"],
}
URLS = [
    "postgres://admin:{pw}@db.internal:5432/app",
    "redis://:{pw}@cache:6379/0",
    "mongodb+srv://app:{pw}@cluster0.example.net/db",
    "https://{user}:{pw}@git.example.com/team/repo.git",
    "amqp://guest:{pw}@mq.local:5672/",
    "mysql://root:{pw}@10.0.0.5:3306/shop",
    "ftp://upload:{pw}@files.example.org/in",
    "rediss://default:{pw}@redis.example.cloud:6380",
]
CONFIGS = [
    "DB_PASSWORD={pw}",
    "export AWS_SECRET_ACCESS_KEY={aws}",
    "aws_secret_access_key = {aws}",
    "POSTGRES_PASSWORD: {pw}",
    '{{"user": "{user}", "password": "{pw}"}}',
    "{{'api_key': '{strong}{strong}'}}",
    "SECRET_KEY={strong}{strong}",
    "smtp_pass={pw}",
    'REDIS_PASSWORD="{pw}"',
    "client_secret: {strong}{strong}",
    'apiKey: "{strong}{strong}"',
    "MYSQL_ROOT_PASSWORD={pw}",
    "the AWS secret key: {aws}",
    '"db": {{"host": "db1", "pass": "{pw}"}}',
]
HEADERS = [
    "Authorization: Basic {basic}",
    "curl -H 'Authorization: Bearer {tok}' https://api.example.com/v1/me",
    'curl -u x -H "Authorization: Basic {basic}" https://ci.example.org',
    "Proxy-Authorization: Basic {basic}",
    "Authorization: Bearer {jwt}",
]
PEM_KINDS = [
    "RSA PRIVATE KEY",
    "PRIVATE KEY",
    "EC PRIVATE KEY",
    "OPENSSH PRIVATE KEY",
    "ENCRYPTED PRIVATE KEY",
]

# --- look-alikes: what must stay as written ---------------------------------------------------

TALK: dict[str, list[str]] = {
    "en": [
        "I forgot my password again",
        "here is the password reset link: https://accounts.example.org/reset",
        "the password is wrong, try again",
        "your password must be at least 12 characters",
        "where do I find the wifi password?",
        "any password manager you'd recommend?",
        "the password is on the sticky note by the router",
        "change your password every 90 days, says IT",
        "the secret is patience",
        "token-based auth is fine for this",
        "we hit the token limit: 8192 tokens per call",
        "Bob's token collection is huge",
        "the bearer of bad news was me",
        "basic understanding of SQL is enough",
        "the key is to stay calm",
        "PIN the message so everyone sees it",
        "my pin number? I never remember it",
        "password: see the vault entry",
        "password: required",
        "I changed the password yesterday",
    ],
    "de": [
        "Passwort vergessen? Kein Problem",
        "das Passwort ist falsch",
        "Passwort muss mindestens 8 Zeichen haben",
        "Ich habe mein Passwort geändert",
        "wo steht das WLAN-Passwort?",
        "der Schlüssel liegt unter der Matte",
        "der Schlüssel ist im Auto",
        "Passwortmanager sind sinnvoll",
        "die PIN habe ich vergessen",
        "Kennwort abgelaufen, bitte neu setzen",
        "das Geheimnis ist Geduld",
        "der Token-Verbrauch ist zu hoch",
    ],
    "fr": [
        "mot de passe oublié",
        "le mot de passe est incorrect",
        "le mot de passe est trop court",
        "j'ai changé mon mot de passe hier",
        "où est le mot de passe du wifi ?",
        "la clé est sous le paillasson",
        "la clé du succès, c'est le travail",
        "le code PIN est bloqué",
        "mot de passe : voir le coffre",
        "un gestionnaire de mots de passe, c'est utile",
        "le secret est la patience",
    ],
    "es": [
        "olvidé mi contraseña",
        "la contraseña es incorrecta",
        "la contraseña es demasiado corta",
        "cambié la contraseña ayer",
        "¿dónde está la contraseña del wifi?",
        "la clave es la paciencia",
        "la clave está debajo del felpudo",
        "el PIN está bloqueado",
        "contraseña: la de siempre",
        "un gestor de contraseñas es útil",
        "el secreto es practicar",
    ],
    "pt": [
        "esqueci minha senha",
        "a senha está errada",
        "a senha é muito curta",
        "mudei a senha ontem",
        "onde está a senha do wifi?",
        "a chave está debaixo do tapete",
        "a chave é a paciência",
        "o PIN foi bloqueado",
        "um gerenciador de senhas ajuda",
    ],
    "it": [
        "ho dimenticato la password",
        "la password è sbagliata",
        "la password è troppo corta",
        "ho cambiato la password ieri",
        "dov'è la password del wifi?",
        "la chiave è sotto lo zerbino",
        "la chiave è la pazienza",
        "il PIN è bloccato",
        "un password manager è utile",
    ],
    "pl": [
        "zapomniałem hasła",
        "hasło jest nieprawidłowe",
        "hasło jest za krótkie",
        "zmieniłem hasło wczoraj",
        "gdzie jest hasło do wifi?",
        "klucz jest pod wycieraczką",
        "kluczem jest cierpliwość",
        "PIN jest zablokowany",
        "menedżer haseł się przydaje",
    ],
    "ru": [
        "я забыл пароль",
        "пароль неверный, попробуй ещё раз",
        "пароль должен быть не короче 8 символов",
        "я поменял пароль вчера",
        "где пароль от вайфая?",
        "ключ под ковриком",
        "ключ к успеху — терпение",
        "пин-код заблокирован",
        "менеджер паролей — полезная штука",
        "пароль: как обычно",
        "токены закончились, лимит 8192",
    ],
    "uk": [
        "я забув пароль",
        "пароль неправильний",
        "пароль має бути не коротший за 8 символів",
        "я змінив пароль учора",
        "де пароль від вайфаю?",
        "ключ під килимком",
        "пін-код заблоковано",
        "менеджер паролів — корисна річ",
        "пароль: як завжди",
    ],
    "zh": [
        "我忘记密码了",
        "密码错误",
        "密码至少需要8位",
        "我昨天改了密码",
        "wifi密码在哪里？",
        "钥匙在门垫下面",
        "令牌桶算法很常见",
        "密码管理器很好用",
        "验证码过期了",
    ],
}
LOOK = {
    "version": [
        "upgrade to 2.14.3 first",
        "Python 3.11.4 is installed",
        "v1.2.3-rc.1 is out",
        "release 2024.10.1 fixed it",
    ],
    "phone": [
        "call +49 151 23456789",
        "+7 (912) 345-67-89",
        "+33 6 12 34 56 78",
        "(415) 555-0100",
        "+86 138 0013 8000",
        "+351 912 345 678",
    ],
    "isbn": ["ISBN 978-3-16-148410-0", "ISBN 9780306406157", "978 0 306 40615 7"],
    "date": ["2026-03-05 14:30", "05.03.2026", "12/31/2025 at 9:15", "2025-11-30T08:00:00Z"],
    "order_number": [],  # filled with non-Luhn numbers below
    "uuid": ["550e8400-e29b-41d4-a716-446655440000", "req 7d444840-9dc0-11d1-b245-5ffdce74fad2"],
    "hash": [
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ],
    "url": [
        "https://example.org/docs?page=2#intro",
        "https://github.com/org/repo/pull/123",
        "http://localhost:8080/health",
        "https://user@example.org/profile",
    ],
    "identifier": [
        "MAX_TOKENS=4096",
        "password_min_length = 12",
        "token_count: 512",
        "from huggingface_hub import hf_hub_download",
        "npm_config_cache=/tmp/npm",
        "def check_password(user, candidate):",
        "TOKEN_FILE=/run/secrets/token",
        "DB_PASSWORD=${DB_PASSWORD}",
        "password: <your password>",
        "api_key: YOUR_API_KEY",
        "sk-learn is not a thing, sklearn is",
        "if not password: raise ValueError",
        "primary_key=id",
    ],
    "iban": ["IBAN DE89 3704 0044 0532 0130 00", "FR76 3000 6000 0112 3456 7890 189"],
    "imei": ["IMEI 490154203237518", "IMEI 356938035643809"],
    "amount": ["€1.234,56", "1 234 567 руб.", "$4,111.11 total"],
    "ip": ["10.0.0.5:3306", "192.168.178.1", "2001:db8::1"],
}
LOOK_CARRIERS = {
    "en": ["{x}", "fyi {x}", "see {x}"],
    "de": ["{x}", "zur Info: {x}", "siehe {x}"],
    "fr": ["{x}", "pour info : {x}", "voir {x}"],
    "es": ["{x}", "para que sepas: {x}", "mira {x}"],
    "pt": ["{x}", "pra saber: {x}", "veja {x}"],
    "it": ["{x}", "per info: {x}", "vedi {x}"],
    "pl": ["{x}", "dla info: {x}", "zobacz {x}"],
    "ru": ["{x}", "к сведению: {x}", "смотри {x}"],
    "uk": ["{x}", "до відома: {x}", "дивись {x}"],
    "zh": ["{x}", "供参考：{x}", "看 {x}"],
}
ORDER_CARRIERS = {
    "en": "order {x} shipped",
    "de": "Bestellung {x} ist unterwegs",
    "fr": "commande {x} expédiée",
    "es": "pedido {x} enviado",
    "pt": "pedido {x} enviado",
    "it": "ordine {x} spedito",
    "pl": "zamówienie {x} wysłane",
    "ru": "заказ {x} отправлен",
    "uk": "замовлення {x} відправлено",
    "zh": "订单 {x} 已发货",
}


# --- held-out batch: written after the first batch was tuned, measured once before any fix ---

SAID_MORE: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("password", "creds for the vpn: {user} / {strong}"),
        ("password", "psw: {pw}"),
        ("password", "Wi-Fi: CafeNet / {strong}"),
        ("password", "password (case-sensitive): {pw}"),
        ("password", "here's the password → {pw}"),
        ("password", "username: {user}\npassword: {pw}"),
        ("password", "my apple id password is {pw}"),
        ("password", "I set the password to {pw}"),
        ("password", "pass for the wifi: {pw}"),
        ("password", "Password is '{pw}' (without quotes)"),
        ("password", "The password you need is {pw}."),
        ("password", "ssh {user}@host, pw {strong}"),
        ("password", "mysql -u root -p{pw}"),
        ("password", "PGPASSWORD={pw} psql -h db -U app"),
        ("pin", "the PIN for my card is {pin}"),
        ("pin", "the code for the gate is {pin}"),
    ],
    "de": [
        ("password", "Passwort lautet: {pw}"),
        ("password", "PW: {pw}"),
        ("password", "das Passwort für das Gäste-WLAN lautet {pw}"),
        ("password", "Benutzername {user} Kennwort {strong}"),
        ("password", "Ich hab das Passwort auf {pw} geändert"),
        ("password", "Zugang: {user} / {strong}"),
    ],
    "fr": [
        ("password", "le mdp du wifi : {pw}"),
        ("password", "mot de passe provisoire : {pw}"),
        ("password", "j'ai mis {pw} comme mot de passe"),
        ("password", "mdp = {pw}"),
    ],
    "es": [
        ("password", "la contra es {pw}"),
        ("password", "pass: {pw}"),
        ("password", "contraseña nueva: {pw}"),
        ("password", "la clave del router: {pw}"),
    ],
    "pt": [
        ("password", "senha provisória: {pw}"),
        ("password", "a senha do banco é {pw}"),
        ("password", "login {user} / senha {strong}"),
    ],
    "it": [
        ("password", "password provvisoria: {pw}"),
        ("password", "la pass è {pw}"),
        ("password", "pw: {pw}"),
    ],
    "pl": [
        ("password", "hasło tymczasowe: {pw}"),
        ("password", "hasło do konta: {pw}"),
        ("password", "pass: {pw}"),
    ],
    "ru": [
        ("password", "пасс: {pw}"),
        ("password", "вот пароль: {pw}"),
        ("password", "пароль на вайфай {strong}"),
        ("password", "пароль от админки — {pw}"),
    ],
    "uk": [
        ("password", "пароль на wifi: {pw}"),
        ("password", "тимчасовий пароль: {pw}"),
        ("password", "гасло від пошти {strong}"),
    ],
    "zh": [
        ("password", "密码 {pw}"),
        ("password", "WiFi 密码：{pw}"),
        ("password", "初始密码为 {pw}"),
        ("password", "把密码改成{pw}了"),
    ],
}
TALK_MORE: dict[str, list[str]] = {
    "en": [
        "password123 is the most common password",
        "never share your password: not even with IT",
        "Password: ******",
        "the password field is empty",
        "passwords are hashed with bcrypt",
        "the secret ingredient is love",
        "token: expired",
        "api key rotation is due on Monday",
        "the pin code is printed on the back",
        "Use a PIN of at least 6 digits",
        "wifi password: ask at the desk",
        "OTP sent to your phone",
        "const token = getToken();",
        "password = request.form['password']",
        "secret_key = os.environ['SECRET_KEY']",
        "TOKEN = os.getenv('TOKEN')",
    ],
    "de": [
        "das Passwort steht auf der Rückseite",
        "Passwort: bitte beim Admin erfragen",
        "Token abgelaufen",
        "die Geheimzahl kommt per Post",
    ],
    "fr": [
        "le mot de passe est envoyé par SMS",
        "mot de passe : demande à l'accueil",
        "jeton expiré",
    ],
    "es": ["la contraseña se envía por SMS", "contraseña: pregunta en recepción", "token caducado"],
    "pt": ["a senha chega por SMS", "senha: pergunte na recepção"],
    "it": ["la password arriva via SMS", "password: chiedi alla reception"],
    "pl": ["hasło przyjdzie SMS-em", "hasło: zapytaj w recepcji"],
    "ru": ["пароль придёт по смс", "пароль: спроси у админа", "токен истёк"],
    "uk": ["пароль прийде в смс", "пароль: спитай в адміна"],
    "zh": ["密码会通过短信发送", "密码：请问前台", "令牌已过期"],
}
LOOK_MORE = [
    ("tracking", "tracking 1Z999AA10123456784"),
    ("account", "account 12345678, sort code 20-00-00"),
    ("phone", "звоните 8 800 555 35 35"),
    ("phone", "+380 67 123 4567"),
    ("ean", "EAN 4006381333931"),
    ("ean", "barcode 4012345678901"),
    ("ean", "EAN-13: 5901234123457"),
    ("version", "build 20240115.3 on 1.2.3.4"),
    ("date", "at 14:30:00 on 2025-12-01"),
]


# --- third batch: written after the second was tuned, measured once before any fix ----------

SAID_THIRD: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("password", "btw the new wifi pw is {pw}"),
        ("password", "Password => {pw}"),
        ("password", "password: `{pw}`"),
        ("password", "pass = {pw}"),
        ("password", "they gave me {strong} as the temp password"),
        ("password", "login is {user}, password is {pw}"),
        ("password", "the root password on the NAS is {pw}"),
        ("password", "password for grandma's laptop: {pw}"),
        ("password", "wifi name CafeNet, wifi password {strong}"),
        ("pin", "my code for the alarm is {pin}"),
        ("pin", "card pin {pin}"),
        ("password", "here are the creds — user: {user} pass: {pw}"),
        ("pin", "Your one-time password is {pin}"),
        ("password", "temporary password: {pw}"),
        ("password", "the password has been changed to {pw}"),
    ],
    "de": [
        ("password", "das WLAN Passwort ist {pw}"),
        ("password", "Kennwort lautet jetzt {pw}"),
        ("password", "PW fürs NAS: {pw}"),
        ("password", "Passwort vom Router: {pw}"),
        ("pin", "hier dein Einmalpasswort: {pin}"),
        ("password", "Benutzer: {user} Passwort: {pw}"),
    ],
    "fr": [
        ("password", "le mdp c'est {pw}"),
        ("password", "mot de passe temporaire : {pw}"),
        ("password", "le mot de passe du compte admin est {pw}"),
        ("password", "mot de passe wifi: {pw}"),
        ("pin", "code de la porte : {pin}"),
    ],
    "es": [
        ("password", "la contraseña de la wifi es {pw}"),
        ("password", "contraseña temporal: {pw}"),
        ("password", "usuario {user} y contraseña {strong}"),
        ("token", "la clave es {strong}"),
        ("pin", "pin de la tarjeta: {pin}"),
    ],
    "pt": [
        ("password", "senha do wifi: {pw}"),
        ("password", "a senha nova é {pw}"),
        ("password", "senha temporária {strong}"),
        ("pin", "o código do portão é {pin}"),
    ],
    "it": [
        ("password", "la password del router è {pw}"),
        ("password", "password temporanea: {pw}"),
        ("password", "la password nuova è {pw}"),
        ("pin", "codice del cancello: {pin}"),
    ],
    "pl": [
        ("password", "hasło do routera: {pw}"),
        ("password", "tymczasowe hasło to {pw}"),
        ("password", "nowe hasło to {pw}"),
        ("pin", "kod do bramy: {pin}"),
    ],
    "ru": [
        ("password", "пароль от wifi: {pw}"),
        ("password", "временный пароль {strong}"),
        ("password", "пароль для входа — {pw}"),
        ("pin", "код от домофона {pin}"),
        ("password", "пароль от компа {strong}"),
        ("password", "пароль поменял на {strong}"),
    ],
    "uk": [
        ("password", "пароль від роутера: {pw}"),
        ("password", "тимчасовий пароль {strong}"),
        ("password", "новий пароль — {pw}"),
        ("pin", "код від домофона {pin}"),
    ],
    "zh": [
        ("password", "wifi 密码: {pw}"),
        ("password", "临时密码是{pw}"),
        ("password", "管理员密码：{pw}"),
        ("pin", "门禁密码 {pin}"),
    ],
}
TALK_THIRD: dict[str, list[str]] = {
    "en": [
        "reset password flow is broken",
        "password strength: weak",
        "the password policy changed",
        "I typed my password wrong 3 times",
        "password-protected zip, ask me for it",
        "Enter password:",
        "the token expires in 3600 seconds",
        "session token expired",
        "API key? ask Maria",
        "Secret: the cake is a lie",
        "my PIN got blocked after 3 tries",
        "zip code 10115",
        "error code 4031",
        "status code: 503",
        "promo code SUMMER2024",
        "gate B12, seat 14C, flight LH1234",
        "invoice INV-2024-00123",
        "ticket #48213",
        "+1 800 555 0199",
        "IMEI 35-209900-176148-1",
    ],
    "de": [
        "Passwort zurücksetzen geht nicht",
        "das Passwort muss Sonderzeichen enthalten",
        "PLZ 10115",
        "Fehlercode 4031",
        "Rechnung Nr. 2024-00123",
        "Kennwort: siehe Zettel",
    ],
    "fr": [
        "mot de passe à changer tous les 3 mois",
        "code postal 75011",
        "le code d'erreur est 500",
        "référence 2024-00123",
    ],
    "es": [
        "restablecer contraseña no funciona",
        "código postal 28013",
        "contraseña: mínimo 8 caracteres",
    ],
    "pt": ["redefinir senha", "CEP 01310-100", "código de erro 4031"],
    "it": ["reimposta la password", "CAP 00184", "codice errore 4031"],
    "pl": ["resetuj hasło", "kod pocztowy 00-950", "kod błędu 4031"],
    "ru": [
        "сбросить пароль не получается",
        "индекс 101000",
        "код ошибки 4031",
        "пароль должен содержать цифры",
        "пароль: минимум 8 символов",
    ],
    "uk": ["скинути пароль", "індекс 01001", "код помилки 4031", "пароль: мінімум 8 символів"],
    "zh": ["重置密码", "邮编 100000", "错误代码 4031", "密码长度至少8位"],
}
THIRD_SHARED = [
    ("config", "OPENAI_API_KEY={tok}"),
    ("url_credential", "jdbc:postgresql://db:5432/app?user=app&password={pw}"),
    ("url_credential", "smtp://mailer:{pw}@smtp.example.com:587"),
]

# --- building the corpus ------------------------------------------------------------------------

LANGS = list(SAID)
URL_SAFE = ALNUM + "!*-_~"


def url_password() -> str:
    return (
        pick(string.ascii_letters, 3)
        + pick(URL_SAFE, rng.randrange(8, 14))
        + str(rng.randrange(10))
    )


def fill(template: str, lang: str, **fixed: str) -> tuple[str, list[str]]:
    """``template`` with each placeholder drawn fresh; the secret values drawn, in order."""
    values: list[str] = []
    makers: dict[str, Callable[[], str]] = {
        "pw": lambda: password(lang),
        "strong": lambda: strong(lang),
        "word": lambda: rng.choice(WORDS[lang] if lang != "zh" else WORDS["en"]).lower(),
        "pin": pin,
        "aws": aws_secret,
        "basic": lambda: basic(lang),
        "tok": TOKENS["openai"],
        "jwt": TOKENS["jwt"],
    }
    out = template
    for name, maker in makers.items():
        while "{" + name + "}" in out:
            value = fixed.get(name) or maker()
            values.append(value)
            out = out.replace("{" + name + "}", value, 1)
    out = out.replace("{user}", rng.choice(USERS)).replace("{{", "{").replace("}}", "}")
    return out, values


def joined_strong(values: list[str]) -> list[str]:
    """Two {strong} side by side make one value."""
    return ["".join(values)] if len(values) == 2 else values


def said(lang: str) -> Iterator[tuple[str, str, list[str]]]:
    templates = SAID[lang]
    rounds = max(1, -(-30 // len(templates)))  # at least ~30 per language
    for _ in range(rounds):
        for kind, template in templates:
            text, values = fill(template, lang)
            if "{strong}{strong}" in template or "{strong}-{strong}" in template:
                values = [text[text.index(values[0]) : text.index(values[-1]) + len(values[-1])]]
            yield kind, text, values


def pem(kind: str, variant: str) -> tuple[str, list[str]]:
    lines = pem_lines(rng.randrange(4, 8))
    header = (
        []
        if kind != "RSA PRIVATE KEY" or variant != "encrypted"
        else ["Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC," + pick("0123456789ABCDEF", 32), ""]
    )
    if variant == "truncated":
        lines = lines[:3]
        return "\n".join([f"-----BEGIN {kind}-----", *lines]), lines
    body = [f"-----BEGIN {kind}-----", *header, *lines, f"-----END {kind}-----"]
    sep = " " if variant == "one line" else "\n"
    return sep.join(body), lines


def shared(lang: str, index: int) -> Iterator[tuple[str, str, list[str]]]:
    """Tokens, URLs, cards, config, headers and keys, in ``lang``'s carriers; ``index``
    rotates the families across languages so every family appears in several."""
    families = list(TOKENS)
    for k in range(9):
        family = families[(index * 9 + k) % len(families)]
        value = TOKENS[family]()
        carrier = CARRIERS[lang][k % len(CARRIERS[lang])]
        yield f"token:{family}", carrier.replace("{x}", value), [value]
    for k in range(4):
        number = card(SEPARATORS[(index + k) % len(SEPARATORS)])
        yield "card_number", CARD_CARRIERS[lang][k % 3].replace("{x}", number), [number]
    for k in range(3):
        url, values = fill(URLS[(index * 3 + k) % len(URLS)], lang, pw=url_password())
        yield "url_credential", CARRIERS[lang][(k + 1) % 5].replace("{x}", url), values
    for k in range(4):
        text, values = fill(CONFIGS[(index * 4 + k) % len(CONFIGS)], lang)
        yield "config", text, joined_strong(values)
    for k in range(2):
        text, values = fill(HEADERS[(index * 2 + k) % len(HEADERS)], lang)
        yield "auth_header", text, values
    variant = ["block", "one line", "truncated", "encrypted"][index % 4]
    text, values = pem(PEM_KINDS[index % len(PEM_KINDS)], variant)
    yield "private_key", CARRIERS[lang][0].replace("{x}", "\n" + text), values


def look_alikes(lang: str, index: int) -> Iterator[tuple[str, str]]:
    for text in TALK[lang]:
        yield "talk", text
    carriers = LOOK_CARRIERS[lang]
    for k, (kind, texts) in enumerate(sorted(LOOK.items())):
        if kind == "order_number":
            for _ in range(3):
                prefix, length = rng.choice(CARD_BRANDS)
                number = group(not_luhn(luhn_complete(prefix, length)), rng.choice(SEPARATORS[:4]))
                yield kind, ORDER_CARRIERS[lang].replace("{x}", number)
            continue
        for j, text in enumerate(texts):
            if (j + index) % 2 == 0 or len(texts) <= 2:
                yield kind, carriers[(k + j) % len(carriers)].replace("{x}", text)


def held_out(lang: str, index: int) -> Iterator[tuple[bool, str, str, list[str]]]:
    for kind, template in SAID_MORE[lang]:
        text, values = fill(template, lang)
        yield True, kind, text, values
    for text in TALK_MORE[lang]:
        yield False, "talk", text, []
    kind, text = LOOK_MORE[index % len(LOOK_MORE)]
    yield False, kind, LOOK_CARRIERS[lang][1].replace("{x}", text), []


def third(lang: str, index: int) -> Iterator[tuple[bool, str, str, list[str]]]:
    for kind, template in SAID_THIRD[lang]:
        text, values = fill(template, lang)
        yield True, kind, text, values
    kind, template = THIRD_SHARED[index % len(THIRD_SHARED)]
    pw = url_password() if kind == "url_credential" else None
    text, values = fill(template, lang, **({"pw": pw} if pw else {}))
    yield True, kind, text, values
    for text in TALK_THIRD[lang]:
        yield False, "talk", text, []


def corpus() -> Iterator[dict[str, object]]:
    for index, lang in enumerate(LANGS):
        n = m = 0
        for kind, text, values in [*said(lang), *shared(lang, index)]:
            n += 1
            yield {
                "id": f"{lang}-s{n:03d}",
                "lang": lang,
                "kind": kind,
                "secret": True,
                "text": text,
                "values": values,
                "batch": "tuned",
            }
        for kind, text in look_alikes(lang, index):
            m += 1
            yield {
                "id": f"{lang}-n{m:03d}",
                "lang": lang,
                "kind": kind,
                "secret": False,
                "text": text,
                "batch": "tuned",
            }
        later = [
            (b, *row)
            for b, rows in (("held_out", held_out(lang, index)), ("third", third(lang, index)))
            for row in rows
        ]
        for batch, secret, kind, text, values in later:
            if secret:
                n += 1
                yield {
                    "id": f"{lang}-s{n:03d}",
                    "lang": lang,
                    "kind": kind,
                    "secret": True,
                    "text": text,
                    "values": values,
                    "batch": batch,
                }
            else:
                m += 1
                yield {
                    "id": f"{lang}-n{m:03d}",
                    "lang": lang,
                    "kind": kind,
                    "secret": False,
                    "text": text,
                    "batch": batch,
                }


def heldout_format(row: dict[str, object]) -> dict[str, object]:
    """A row in the split's format (``tests/data/masking/README.md``); a webhook's secret is
    its path after the fixed part (the host and ``/services/`` stay, as masking keeps them)."""
    values = [str(v) for v in row.get("values", [])]  # type: ignore[attr-defined]
    if str(row["kind"]).endswith("_webhook"):
        values = [v.split("/services/")[-1].split("/webhooks/")[-1] for v in values]
    return {
        "id": row["id"],
        "lang": row["lang"],
        "kind": "secret" if row["secret"] else "lookalike",
        "category": row["kind"],
        "text": row["text"],
        "secrets": values,
        "batch": row["batch"],
    }


def main() -> None:
    rows = [heldout_format(r) for r in corpus()]
    counts: dict[tuple[str, bool], int] = {}
    for row in rows:
        key = (str(row["lang"]), row["kind"] == "secret")
        counts[key] = counts.get(key, 0) + 1

    def next_id(lang: str, secret: bool) -> str:
        counts[lang, secret] = counts.get((lang, secret), 0) + 1
        return f"{lang}-{'s' if secret else 'n'}{counts[lang, secret]:03d}"

    rows += list(world.rows(next_id))
    rows += list(families.rows(next_id))
    rows += list(families2.rows(next_id))
    rows += list(families3.rows(next_id))
    rows += list(families4.rows(next_id))
    rows += list(families5.rows(next_id))
    rows += list(families6.rows(next_id))
    rows += list(families7.rows(next_id))
    rows += list(families8.rows(next_id))
    path = HERE / "train.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    secrets = sum(1 for r in rows if r["kind"] == "secret")
    print(f"{path}: {secrets} secrets, {len(rows) - secrets} look-alikes")


if __name__ == "__main__":
    main()
