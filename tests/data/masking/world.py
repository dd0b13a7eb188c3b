"""The train rows of the secrets as people write them, in 18 languages: labels of every
language, a value on the line after its label, "<value> is my password", PINs, door and
alarm codes, a CVV beside a card number, US SSNs, BIP-39 seed phrases, Discord and
Telegram bot tokens, credentials in command lines and basic-auth URLs, labels hidden
with zero-width, full-width or homoglyph characters — and their look-alikes.

Read by ``generate.py`` (batch ``world``), with a seed of its own so the first batches
stay as they were. Every value is made up; a seed phrase is random words of the public
BIP-39 list (``memory_worker/data/bip39_english.txt``).
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Callable, Iterator
from pathlib import Path

WORDLIST = Path(__file__).resolve().parents[3] / "memory_worker" / "data" / "bip39_english.txt"
rng = random.Random(20_260_601)
ALNUM = string.ascii_letters + string.digits

LANGS = [
    "en",
    "ru",
    "de",
    "es",
    "fr",
    "uk",
    "pt",
    "it",
    "pl",
    "zh",
    "ja",
    "ko",
    "ar",
    "tr",
    "nl",
    "sv",
    "cs",
    "id",
]


def pick(chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def strong() -> str:
    style = rng.randrange(4)
    word = rng.choice(["tiger", "Maple", "sol", "Kaffee", "luna", "Panda", "nord", "Zorro"])
    if style == 0:
        return f"{word}{rng.randrange(10, 9999)}"
    if style == 1:
        return f"{word.capitalize()}{rng.choice(['2024', '2025', '88'])}{rng.choice('!#$%&*?')}"
    if style == 2:
        return pick(ALNUM + "!#$%&*-_", rng.randrange(9, 15))
    return f"{pick(string.ascii_lowercase, 3)}{rng.randrange(100, 999)}{pick(string.ascii_uppercase, 2)}"


def pin() -> str:
    return str(rng.randrange(0, 10**6)).zfill(rng.choice([4, 4, 4, 5, 6]))


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


def card() -> str:
    prefix = rng.choice(["4", "51", "55", "2221", "6011", "2200"])
    number = luhn_complete(prefix, 16)
    sep = rng.choice([" ", "-", "", " "])
    return sep.join(number[i : i + 4] for i in range(0, 16, 4))


def ssn() -> str:
    area = rng.choice([n for n in range(1, 900) if n != 666])
    return f"{area:03d}-{rng.randrange(1, 100):02d}-{rng.randrange(1, 10000):04d}"


def seed() -> str:
    """A phrase as a wallet writes it: random entropy and its SHA-256 checksum bits."""
    words = WORDLIST.read_text(encoding="utf-8").split()
    size = rng.choice([16, 16, 32])  # bytes of entropy: 12 or 24 words
    entropy = bytes(rng.randrange(256) for _ in range(size))
    bits = "".join(f"{b:08b}" for b in entropy)
    bits += f"{hashlib.sha256(entropy).digest()[0]:08b}"[: size // 4]
    return " ".join(words[int(bits[i : i + 11], 2)] for i in range(0, len(bits), 11))


def discord() -> str:
    user_id = str(rng.randrange(10**17, 10**19))
    import base64

    head = base64.b64encode(user_id.encode()).decode().rstrip("=")
    return f"{head}.{pick(ALNUM + '_-', 6)}.{pick(ALNUM + '_-', 38)}"


def telegram() -> str:
    return f"{rng.randrange(10**8, 10**10)}:AA{pick(ALNUM + '_-', 33)}"


def exp() -> str:
    return f"{rng.randrange(1, 13):02d}/{rng.randrange(26, 32)}"


USERS = ["admin", "bob", "root", "deploy", "maria", "svc_backup", "kenji"]
MAKERS: dict[str, Callable[[], str]] = {
    "strong": strong,
    "pin": pin,
    "cvv": lambda: str(rng.randrange(100, 1000)),
    "card": card,
    "ssn": ssn,
    "seed": seed,
    "discord": discord,
    "telegram": telegram,
    "word": lambda: rng.choice(["sunflower", "marmalade", "tortuga", "kirschbaum", "girasole"]),
}
#: Placeholders drawn but not secret.
PLAIN: dict[str, Callable[[], str]] = {
    "user": lambda: rng.choice(USERS),
    "exp": exp,
}


def fill(template: str) -> tuple[str, list[str]]:
    """``template`` with each ``{name}`` drawn fresh; the secret values in order."""
    values: list[str] = []
    out = template
    for name, maker in {**MAKERS, **PLAIN}.items():
        while "{" + name + "}" in out:
            value = maker()
            if name in MAKERS:
                values.append(value)
            out = out.replace("{" + name + "}", value, 1)
    return out, values


# --- secrets said in each language: (category, template) ---------------------------------------

SAID: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("next_line", "wifi password:\n{strong}"),
        ("next_line", "Here's the login for the NAS\nuser: {user}\npassword\n{strong}"),
        ("before_label", "{strong} is my password for the bank app"),
        ("before_label", "ok so {strong} is the new wifi password"),
        ("user_pass", "user {user} pass {strong}"),
        ("key_is", "the key is {strong}"),
        ("door_code", "door code is {pin}"),
        ("door_code", "gate code for the building: {pin}#"),
        ("alarm_code", "the alarm code is {pin}, disarm it when you come in"),
        ("pin", "PIN for my debit card {pin}"),
        ("cvv", "card {card} exp {exp} cvv {cvv}"),
        ("cvv", "{card} {exp} {cvv}"),
        ("ssn", "my SSN is {ssn}"),
        ("ssn", "social security number: {ssn}"),
        ("seed", "my seed phrase: {seed}"),
        ("seed", "{seed}"),
    ],
    "ru": [
        ("next_line", "пароль от вайфая:\n{strong}"),
        ("before_label", "{strong} — это мой пароль от почты"),
        ("password", "пароль у меня {strong}"),
        ("pin", "пин-код карты {pin}"),
        ("door_code", "код от двери {pin}"),
        ("door_code", "код домофона — {pin}"),
        ("alarm_code", "код сигнализации {pin}"),
        ("cvv", "карта {card}, срок {exp}, CVV {cvv}"),
        ("seed", "сид-фраза: {seed}"),
        ("user_pass", "логин {user} пасс {strong}"),
    ],
    "de": [
        ("next_line", "WLAN-Passwort:\n{strong}"),
        ("before_label", "{strong} ist mein Passwort fürs Onlinebanking"),
        ("door_code", "der Türcode ist {pin}"),
        ("alarm_code", "Alarmanlage Code: {pin}"),
        ("pin", "PIN meiner EC-Karte {pin}"),
        ("cvv", "Karte {card} gültig bis {exp} Prüfnummer {cvv}"),
        ("seed", "Wiederherstellungsphrase: {seed}"),
        ("user_pass", "Benutzer {user} Passwort {strong}"),
    ],
    "es": [
        ("next_line", "contraseña del wifi:\n{strong}"),
        ("before_label", "{strong} es mi contraseña del banco"),
        ("door_code", "el código de la puerta es {pin}"),
        ("alarm_code", "código de la alarma: {pin}"),
        ("pin", "el PIN de la tarjeta es {pin}"),
        ("cvv", "tarjeta {card} vence {exp} CVV {cvv}"),
        ("seed", "frase semilla: {seed}"),
        ("user_pass", "usuario {user} contraseña {strong}"),
    ],
    "fr": [
        ("next_line", "mot de passe wifi :\n{strong}"),
        ("before_label", "{strong} c'est mon mot de passe"),
        ("door_code", "le digicode c'est {pin}"),
        ("alarm_code", "code de l'alarme : {pin}"),
        ("pin", "code PIN de ma carte : {pin}"),
        ("cvv", "carte {card} exp {exp} cryptogramme {cvv}"),
        ("seed", "phrase de récupération : {seed}"),
        ("user_pass", "identifiant {user} mdp {strong}"),
    ],
    "uk": [
        ("next_line", "пароль від вайфаю:\n{strong}"),
        ("before_label", "{strong} — це мій пароль"),
        ("door_code", "код від дверей {pin}"),
        ("alarm_code", "код сигналізації {pin}"),
        ("pin", "пін-код картки {pin}"),
        ("cvv", "картка {card}, термін {exp}, CVV {cvv}"),
        ("seed", "сід-фраза: {seed}"),
    ],
    "pt": [
        ("next_line", "senha do wifi:\n{strong}"),
        ("before_label", "{strong} é a minha senha do banco"),
        ("door_code", "o código do portão é {pin}"),
        ("alarm_code", "código do alarme: {pin}"),
        ("pin", "a senha do cartão é {pin}"),
        ("cvv", "cartão {card} validade {exp} CVV {cvv}"),
        ("seed", "frase de recuperação: {seed}"),
        ("user_pass", "usuário {user} senha {strong}"),
    ],
    "it": [
        ("next_line", "password del wifi:\n{strong}"),
        ("before_label", "{strong} è la mia password"),
        ("door_code", "il codice del portone è {pin}"),
        ("alarm_code", "codice dell'allarme: {pin}"),
        ("pin", "il PIN del bancomat è {pin}"),
        ("cvv", "carta {card} scad. {exp} CVV {cvv}"),
        ("seed", "frase di recupero: {seed}"),
        ("user_pass", "utente {user} password {strong}"),
    ],
    "pl": [
        ("next_line", "hasło do wifi:\n{strong}"),
        ("before_label", "{strong} to moje hasło do banku"),
        ("door_code", "kod do drzwi to {pin}"),
        ("alarm_code", "kod do alarmu: {pin}"),
        ("pin", "PIN do karty {pin}"),
        ("cvv", "karta {card} ważna do {exp} CVV {cvv}"),
        ("seed", "fraza odzyskiwania: {seed}"),
        ("user_pass", "login {user} hasło {strong}"),
    ],
    "zh": [
        ("next_line", "wifi密码：\n{strong}"),
        ("before_label", "{strong} 是我的密码"),
        ("password", "我的登录密码{strong}"),
        ("door_code", "门禁密码是{pin}"),
        ("alarm_code", "报警器密码 {pin}"),
        ("pin", "银行卡密码{pin}"),
        ("cvv", "卡号 {card} 有效期 {exp} 安全码 {cvv}"),
        ("seed", "助记词：{seed}"),
    ],
    "ja": [
        ("password", "パスワードは{strong}です"),
        ("password", "Wi-Fiのパスワード：{strong}"),
        ("password", "ログインパスワード {strong}"),
        ("next_line", "パスワード\n{strong}"),
        ("before_label", "{strong} が私のパスワードです"),
        ("pin", "暗証番号は{pin}です"),
        ("door_code", "玄関の暗証番号：{pin}"),
        ("alarm_code", "警報装置の解除コードは{pin}"),
        ("cvv", "カード番号 {card} 有効期限 {exp} セキュリティコード {cvv}"),
        ("seed", "シードフレーズ：{seed}"),
        ("token", "APIキーは{strong}{strong}です"),
    ],
    "ko": [
        ("password", "비밀번호는 {strong}이야"),
        ("password", "와이파이 비번: {strong}"),
        ("password", "내 패스워드 {strong}"),
        ("next_line", "비밀번호\n{strong}"),
        ("before_label", "{strong} 이게 내 비밀번호야"),
        ("pin", "카드 비밀번호 {pin}"),
        ("door_code", "현관 도어락 비밀번호는 {pin}"),
        ("alarm_code", "경보기 해제 코드 {pin}"),
        ("cvv", "카드번호 {card} 유효기간 {exp} CVC {cvv}"),
        ("seed", "시드 구문: {seed}"),
        ("token", "API 키: {strong}{strong}"),
    ],
    "ar": [
        ("password", "كلمة المرور هي {strong}"),
        ("password", "كلمة السر: {strong}"),
        ("password", "باسورد الواي فاي {strong}"),
        ("next_line", "كلمة المرور:\n{strong}"),
        ("before_label", "{strong} هي كلمة المرور الخاصة بي"),
        ("pin", "الرقم السري للبطاقة {pin}"),
        ("door_code", "رمز الباب {pin}"),
        ("alarm_code", "رمز الإنذار هو {pin}"),
        ("cvv", "البطاقة {card} تنتهي {exp} رمز CVV {cvv}"),
        ("seed", "عبارة الاسترداد: {seed}"),
        ("token", "مفتاح API: {strong}{strong}"),
    ],
    "tr": [
        ("password", "şifrem {strong}"),
        ("password", "wifi şifresi: {strong}"),
        ("password", "parola {strong} olarak değişti"),
        ("next_line", "Şifre:\n{strong}"),
        ("before_label", "{strong} benim şifrem"),
        ("pin", "kartın PIN kodu {pin}"),
        ("door_code", "kapı şifresi {pin}"),
        ("alarm_code", "alarm kodu: {pin}"),
        ("cvv", "kart {card} son kullanma {exp} CVV {cvv}"),
        ("seed", "kurtarma ifadesi: {seed}"),
        ("user_pass", "kullanıcı adı {user} şifre {strong}"),
    ],
    "nl": [
        ("password", "het wachtwoord is {strong}"),
        ("password", "wifi wachtwoord: {strong}"),
        ("password", "mijn wachtwoord is {word}"),
        ("next_line", "Wachtwoord:\n{strong}"),
        ("before_label", "{strong} is mijn wachtwoord"),
        ("pin", "pincode van mijn pas: {pin}"),
        ("door_code", "de deurcode is {pin}"),
        ("alarm_code", "alarmcode {pin}"),
        ("cvv", "kaart {card} geldig tot {exp} CVC {cvv}"),
        ("seed", "herstelzin: {seed}"),
        ("user_pass", "gebruikersnaam {user} wachtwoord {strong}"),
    ],
    "sv": [
        ("password", "lösenordet är {strong}"),
        ("password", "wifi-lösenord: {strong}"),
        ("password", "mitt lösenord är {word}"),
        ("next_line", "Lösenord:\n{strong}"),
        ("before_label", "{strong} är mitt lösenord"),
        ("pin", "pinkoden till kortet är {pin}"),
        ("door_code", "portkoden är {pin}"),
        ("alarm_code", "larmkoden: {pin}"),
        ("cvv", "kort {card} giltigt till {exp} CVC {cvv}"),
        ("seed", "återställningsfras: {seed}"),
        ("user_pass", "användarnamn {user} lösenord {strong}"),
    ],
    "cs": [
        ("password", "heslo je {strong}"),
        ("password", "heslo k wifi: {strong}"),
        ("next_line", "Heslo:\n{strong}"),
        ("before_label", "{strong} je moje heslo"),
        ("pin", "PIN ke kartě {pin}"),
        ("door_code", "kód od dveří je {pin}"),
        ("alarm_code", "kód alarmu: {pin}"),
        ("cvv", "karta {card} platnost {exp} CVV {cvv}"),
        ("seed", "obnovovací fráze: {seed}"),
    ],
    "id": [
        ("password", "kata sandinya {strong}"),
        ("password", "password wifi: {strong}"),
        ("next_line", "Kata sandi:\n{strong}"),
        ("before_label", "{strong} itu password aku"),
        ("pin", "PIN ATM aku {pin}"),
        ("door_code", "kode pintu {pin}"),
        ("alarm_code", "kode alarm: {pin}"),
        ("cvv", "kartu {card} berlaku sampai {exp} CVV {cvv}"),
        ("seed", "frasa pemulihan: {seed}"),
    ],
}

# --- shapes in each language's carriers: command lines, URLs, bot tokens -------------------------

CARRIERS: dict[str, tuple[str, str]] = {
    "en": ("run this: {x}", "can you check why this fails? {x}"),
    "ru": ("запусти вот это: {x}", "почему не работает? {x}"),
    "de": ("führ das aus: {x}", "warum geht das nicht? {x}"),
    "es": ("ejecuta esto: {x}", "¿por qué falla? {x}"),
    "fr": ("lance ça : {x}", "pourquoi ça plante ? {x}"),
    "uk": ("запусти це: {x}", "чому не працює? {x}"),
    "pt": ("roda isso: {x}", "por que dá erro? {x}"),
    "it": ("esegui questo: {x}", "perché non va? {x}"),
    "pl": ("odpal to: {x}", "czemu to nie działa? {x}"),
    "zh": ("运行这个：{x}", "为什么报错？{x}"),
    "ja": ("これを実行して：{x}", "なぜ失敗する？ {x}"),
    "ko": ("이거 실행해: {x}", "왜 안 되지? {x}"),
    "ar": ("شغّل هذا: {x}", "لماذا يفشل؟ {x}"),
    "tr": ("şunu çalıştır: {x}", "bu neden çalışmıyor? {x}"),
    "nl": ("draai dit: {x}", "waarom werkt dit niet? {x}"),
    "sv": ("kör det här: {x}", "varför funkar inte det här? {x}"),
    "cs": ("spusť tohle: {x}", "proč to nefunguje? {x}"),
    "id": ("jalankan ini: {x}", "kenapa ini gagal? {x}"),
}
SHAPES: list[tuple[str, str]] = [
    ("cli", "curl -u {user}:{strong} https://api.example.com/v1/items"),
    ("cli", "curl --user '{user}:{strong}' -X POST https://ci.example.org/job"),
    ("cli", "mysql -u root -p{strong} shop"),
    ("cli", "sshpass -p '{strong}' ssh {user}@10.0.0.5"),
    ("cli", "docker login -u {user} -p {strong} registry.example.com"),
    ("cli", "redis-cli -h cache -a {strong} ping"),
    ("basic_url", "https://{user}:{strong}@git.example.com/team/repo.git"),
    ("basic_url", "ftp://{user}:{strong}@files.example.net/backup"),
    ("token:discord", "{discord}"),
    ("token:telegram", "bot token {telegram}"),
]
#: Hidden labels: zero-width, full-width, homoglyph.
OBFUSCATED: list[tuple[str, str]] = [
    ("obfuscated", "pass\u200bword: {strong}"),
    ("obfuscated", "ｐａｓｓｗｏｒｄ：{strong}"),
    ("obfuscated", "p\u0430ssword is {strong}"),  # Cyrillic а
    ("obfuscated", "\u0440assword: {strong}"),  # Cyrillic р
    ("obfuscated", "пар\u200dоль {strong}"),
    ("obfuscated", "ＰＩＮ：{pin}"),
    ("obfuscated", "the p\u03bfssword... I mean password is {strong}"),
]

# --- look-alikes in each language ---------------------------------------------------------------

TALK: dict[str, list[str]] = {
    "en": [
        "I forgot my password again, can you reset it?",
        "the door code changed last week, ask the landlord",
        "never share your seed phrase with anyone",
        "the alarm code is on the note in the kitchen drawer",
        "my PIN got blocked after three wrong tries",
        "flight LH 1234 leaves at 14:35 from gate B12",
        "call 555-123-4567 after 6pm",
        "curl -u $USER:$TOKEN https://api.example.com",
        "join our server https://discord.gg/abc123",
        "the key is to stay calm and keep going",
        "the key is under the mat",
        "password\nreset link sent",
        "buy milk bread eggs and coffee on the way home",
        "my social security office appointment is on 2026-03-14",
        "order #4821 shipped, tracking 1Z999AA10123456784",
        "Ctrl+Shift+P opens the command palette",
        "user admin has no password set",
        "the CVV is the 3 digits on the back of the card",
    ],
    "ru": [
        "забыл пароль от почты, надо восстановить",
        "код от домофона поменяли, спроси у соседей",
        "пин-код никому не говори",
        "созвонимся в 18:30, мой номер 8 912 345-67-89",
        "заказ №48213 приедет в пятницу",
        "пароль должен быть не короче 8 символов",
        "сид-фразу храни офлайн",
    ],
    "de": [
        "Passwort vergessen, kannst du es zurücksetzen?",
        "der Türcode wurde geändert, frag den Hausmeister",
        "Termin am 14.03.2026 um 10:30, Raum 4.12",
        "PLZ 10115 Berlin",
        "die PIN ist falsch",
    ],
    "es": [
        "olvidé mi contraseña otra vez",
        "el código de la puerta cambió, pregúntale al portero",
        "la contraseña es incorrecta",
        "nos vemos a las 18:30 en la puerta 4",
        "pedido 48213 enviado",
    ],
    "fr": [
        "j'ai oublié mon mot de passe",
        "le digicode a changé, demande au gardien",
        "le mot de passe est trop court",
        "rendez-vous le 14/03 à 18h30, bâtiment 4",
        "commande n° 48213 expédiée",
    ],
    "uk": [
        "забув пароль від пошти",
        "код від дверей змінили, спитай у сусідів",
        "пароль неправильний",
        "замовлення №48213 в дорозі",
    ],
    "pt": [
        "esqueci minha senha de novo",
        "o código do portão mudou, pergunta pro porteiro",
        "a senha está errada",
        "pedido 48213 enviado, chega dia 14",
    ],
    "it": [
        "ho dimenticato la password",
        "il codice del portone è cambiato, chiedi al portiere",
        "la password è sbagliata",
        "ordine 48213 spedito",
    ],
    "pl": [
        "zapomniałem hasła do poczty",
        "kod do drzwi się zmienił, zapytaj sąsiada",
        "hasło jest nieprawidłowe",
        "zamówienie 48213 wysłane",
    ],
    "zh": [
        "我忘记密码了",
        "门禁密码改了，问一下物业",
        "密码错误，请重试",
        "订单号 48213 已发货",
        "会议在 14:30，3楼 302 室",
    ],
    "ja": [
        "パスワードを忘れました",
        "パスワードが間違っています",
        "暗証番号を3回間違えてロックされた",
        "会議は14時30分から、302号室です",
        "注文番号 48213 は発送済みです",
        "パスワードを変更してください",
        "パスワードは8文字以上にしてください",
        "シードフレーズは誰にも教えないで",
        "電話番号は 03-1234-5678 です",
    ],
    "ko": [
        "비밀번호를 잊어버렸어",
        "비밀번호가 틀렸습니다",
        "도어락 비밀번호 바뀌었대, 관리실에 물어봐",
        "회의는 14시 30분, 302호",
        "주문번호 48213 발송됨",
        "비밀번호 변경해 주세요",
        "비밀번호는 8자 이상이어야 합니다",
        "시드 구문은 절대 공유하지 마세요",
        "전화번호 010-1234-5678",
    ],
    "ar": [
        "نسيت كلمة المرور",
        "كلمة المرور غير صحيحة",
        "تغير رمز الباب، اسأل الحارس",
        "الاجتماع الساعة 14:30 في الغرفة 302",
        "الطلب رقم 48213 تم شحنه",
        "كلمة المرور يجب أن تكون 8 أحرف على الأقل",
        "لا تشارك عبارة الاسترداد مع أي شخص",
        "رقم الهاتف 0501234567",
        "رمز الباب تغير أمس",
    ],
    "tr": [
        "şifremi unuttum",
        "şifre yanlış, tekrar dene",
        "kapı şifresi değişti, yöneticiye sor",
        "toplantı 14:30'da, 302 numaralı oda",
        "sipariş numarası 48213 kargoya verildi",
        "şifre en az 8 karakter olmalı",
        "kurtarma ifadeni kimseyle paylaşma",
        "telefon 0532 123 45 67",
        "alarm kodu değişti, yöneticiye sor",
    ],
    "nl": [
        "ik ben mijn wachtwoord vergeten",
        "het wachtwoord is onjuist",
        "de deurcode is veranderd, vraag het de beheerder",
        "afspraak om 14:30 in kamer 302",
        "bestelling 48213 is verzonden",
        "het wachtwoord moet minimaal 8 tekens zijn",
        "deel je herstelzin nooit",
        "bel 06-12345678 na zes uur",
        "de pincode is geblokkeerd",
    ],
    "sv": [
        "jag har glömt mitt lösenord",
        "lösenordet är fel",
        "portkoden har ändrats, fråga hyresvärden",
        "mötet är 14:30 i rum 302",
        "order 48213 har skickats",
        "lösenordet måste vara minst 8 tecken",
        "dela aldrig din återställningsfras",
        "ring 070-123 45 67",
        "pinkoden är spärrad",
    ],
    "cs": [
        "zapomněl jsem heslo",
        "heslo je špatně",
        "kód od dveří se změnil, zeptej se správce",
        "schůzka ve 14:30 v místnosti 302",
        "heslo musí mít alespoň 8 znaků",
        "nikdy nesdílej obnovovací frázi",
        "volej 602 123 456",
        "PIN je zablokovaný",
        "objednávka 48213 odeslána",
    ],
    "id": [
        "aku lupa kata sandi",
        "kata sandi salah, coba lagi",
        "kode pintu sudah diganti, tanya satpam",
        "rapat jam 14:30 di ruang 302",
        "kata sandi minimal 8 karakter",
        "jangan bagikan frasa pemulihan",
        "telepon 0812-3456-7890",
        "PIN terblokir",
        "pesanan 48213 sudah dikirim",
    ],
}
#: Look-alikes of the shapes, in any language's carriers.
SHAPE_LOOKS = [
    "curl -H 'Accept: application/json' https://api.example.com/v1/items",
    "mysql -u root -p shop",
    "ssh deploy@10.0.0.5 -p 2222",
    "https://git.example.com/team/repo.git",
    "https://t.me/my_channel",
    "docker login registry.example.com",
    "v2.14.3-rc.1",
    "https://discord.gg/Xk2abc",
    "pip install requests==2.31.0",
]


def rows(next_id: Callable[[str, bool], str]) -> Iterator[dict[str, object]]:
    """Every row of the batch (``next_id(lang, secret)`` numbers them after the first
    batches' rows)."""
    for index, lang in enumerate(LANGS):
        templates = list(SAID[lang])
        for k in range(4):
            templates.append(SHAPES[(index * 4 + k) % len(SHAPES)])
        templates.append(OBFUSCATED[index % len(OBFUSCATED)])
        for category, template in templates:
            if "{x}" not in template and category in {c for c, _ in SHAPES}:
                template = CARRIERS[lang][len(template) % 2].replace("{x}", template)
            text, values = fill(template)
            if "{strong}{strong}" in template:
                values = ["".join(values)]
            if category == "key_is":
                category = "password"
            yield {
                "id": next_id(lang, True),
                "lang": lang,
                "kind": "secret",
                "category": category,
                "text": text,
                "secrets": values,
                "batch": "world",
            }
        looks = [("talk", t) for t in TALK[lang]]
        for k in range(2):
            look = SHAPE_LOOKS[(index * 2 + k) % len(SHAPE_LOOKS)]
            looks.append(("shape", CARRIERS[lang][k].replace("{x}", look)))
        for category, text in looks:
            yield {
                "id": next_id(lang, False),
                "lang": lang,
                "kind": "lookalike",
                "category": category,
                "text": text,
                "secrets": [],
                "batch": "world",
            }
