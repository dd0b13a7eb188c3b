"""The train rows of round 4: the families of phrasing the test3 part (scored once as held
out, then read as dev3) showed the rules missing, each written fresh in all fifteen
languages of the split (EN DE FR ES IT PT NL SV PL RU TR JA KO ZH AR) and in several
phrasings, never a dev3 line: the value answering a question in a timestamped chat log
(asked with a question mark, or as a request: "教えて", "알려줘", "stp", "скинь"); PINs of a
card, a SIM, a phone, a banking app, in ASCII, full-width and Arabic-Indic digits; password
labels as people shorten them (pw, pwd, pass, mdp, contra, senha, hasło, пасс, şifre, パス,
비번, 密码, الباسورد, ww, lösen…); alarm, door, gate, intercom, safe and lockbox codes; labels
obfuscated with Greek or Cyrillic letters, full-width forms and zero-width characters; the
value on the next line and the value first; US SSNs said in passing — and the hard
look-alikes of each: talk about a secret without its value, placeholders, the label words in
other senses, PIN-length talk ("my PIN has 4 digits"), and numbers that are not secrets
(order numbers, phones, dates, prices, versions, rooms) in the same shapes and chat logs.

Read by ``generate.py`` (batch ``families3``), with a seed of its own so the earlier batches
stay as they were. Every value is made up.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterator

from batch import Look, Secret, batch_rows  # type: ignore[import-not-found]  # the shared rows()

rng = random.Random(20_261_207_4)
ALNUM = string.ascii_letters + string.digits
_WORDS = [
    "Fuchs",
    "maple",
    "Bada",
    "kiwi",
    "Tortuga",
    "pippa",
    "Luna",
    "zorro",
    "Aurora",
    "nebbia",
    "fiets",
    "sommar",
    "wiosna",
    "Sakura",
    "Kedi",
    "hana",
    "Dalia",
    "osito",
    "Falke",
    "mirtillo",
]
_FULL = str.maketrans("0123456789", "０１２３４５６７８９")
_ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


def pick(chars: str, n: int) -> str:
    return "".join(rng.choice(chars) for _ in range(n))


def strong() -> str:
    """A generated password: letters, digits and a symbol or two."""
    return pick(ALNUM, 4) + rng.choice("!#%*+@^&") + pick(ALNUM, rng.randrange(6, 11))


def memorable() -> str:
    """A password people make: a word and digits, joined or with ``_``, ``-`` or ``.``."""
    first, second = rng.sample(_WORDS, 2)
    style = rng.randrange(4)
    if style == 0:
        return f"{first}{rng.randrange(1970, 2024)}"
    if style == 1:
        return f"{first}_{second}{rng.randrange(10, 99)}"
    if style == 2:
        return f"{first.lower()}-{second.lower()}{rng.randrange(10, 99)}"
    return f"{first.capitalize()}{rng.randrange(100, 999)}{rng.choice('!?#')}"


def ssn() -> str:
    area = rng.choice([n for n in range(1, 900) if n != 666])
    group, serial = rng.randrange(1, 100), rng.randrange(1, 10000)
    sep = rng.choice([" ", "-", ""])
    return f"{area:03d}{sep}{group:02d}{sep}{serial:04d}"


MAKERS: dict[str, Callable[[], str]] = {
    "pw": strong,
    "word": memorable,
    "pin6": lambda: f"{rng.randrange(0, 10**6):06d}",
    "pin5": lambda: f"{rng.randrange(0, 10**5):05d}",
    "pin": lambda: f"{rng.randrange(0, 10**4):04d}",
    "fwpin": lambda: f"{rng.randrange(1000, 10**4)}".translate(_FULL),
    "arpin": lambda: f"{rng.randrange(1000, 10**4)}".translate(_ARABIC),
    "gate": lambda: f"{rng.randrange(1000, 10**4)}{rng.choice('AB#')}",
    "ssn": ssn,
}


def fill(template: str) -> tuple[str, list[str]]:
    """``template`` with each ``{name}`` drawn fresh; the secret values in order."""
    values: list[str] = []
    out = template
    while "{" in out:
        at = out.index("{")
        name = out[at + 1 : out.index("}", at)]
        value = MAKERS[name]()
        values.append(value)
        out = out[:at] + value + out[at + len(name) + 2 :]
    return out, values


# --- secrets: (category, lang, template) -------------------------------------------------------

CHAT_LOG: list[tuple[str, str]] = [
    ("en", "[21:40] kim: what's the garage code\n[21:41] me: {pin}\n[21:41] kim: thx"),
    ("en", "14:02 <dave> which pass for the nas?\n14:03 <me> {pw}"),
    ("en", "[08:12] Jo: wifi pw?\n[08:12] You: {word}"),
    ("en", "[Mon 19:03] Priya: send me the lockbox code pls\n[Mon 19:05] Sam: {pin}"),
    ("de", "[07:12] Ole: wie war nochmal das Passwort vom NAS?\n[07:13] ich: {pw}"),
    ("de", "[19:55] Mia: Code fürs Tor?\n[19:56] Paul: {pin}"),
    ("de", "[22:10] Lena: schick mal das WLAN-Passwort\n[22:11] Ben: {word}"),
    ("fr", "[12:01] Hugo : le mdp du wifi stp\n[12:02] moi : {word}"),
    ("fr", "[08:30] Inès : c'est quoi le digicode ?\n[08:31] Tom : {gate}"),
    ("fr", "[20:44] Chloé : tu me donnes le code de l'alarme ?\n[20:45] moi : {pin}"),
    ("es", "[10:15] Lucía: ¿cuál es la clave del wifi?\n[10:16] yo: {word}"),
    ("es", "[22:03] Pablo: pásame el pin de la tarjeta\n[22:04] yo: {pin}"),
    ("es", "[18:20] Marta: ¿y el código de la puerta?\n[18:21] Dani: {pin5}"),
    ("it", "[09:10] Giulia: qual è la password del wifi?\n[09:11] io: {word}"),
    ("it", "[18:40] Marco: codice del cancello?\n[18:41] Sara: {pin}"),
    ("it", "[13:05] Luca: mi mandi il pin della carta\n[13:06] io: {pin}"),
    ("pt", "[11:20] Ana: qual é a senha do wifi?\n[11:21] eu: {word}"),
    ("pt", "[20:05] João: me passa o código do portão\n[20:06] eu: {pin}"),
    ("pt", "[09:30] Rita: e a senha do alarme?\n[09:31] eu: {pin}"),
    ("nl", "[16:45] Daan: wat is het wachtwoord van de wifi?\n[16:46] ik: {word}"),
    ("nl", "[07:58] Emma: code van de poort?\n[07:59] ik: {pin}"),
    ("nl", "[21:12] Bram: stuur even het ww van de nas\n[21:13] ik: {pw}"),
    ("sv", "[13:12] Oskar: vad är lösenordet till wifin?\n[13:13] jag: {word}"),
    ("sv", "[21:30] Maja: portkoden?\n[21:31] jag: {pin}"),
    ("sv", "[10:02] Erik: vilket lösen har routern?\n[10:03] jag: {pw}"),
    ("pl", "[10:02] Kasia: jakie jest hasło do wifi?\n[10:03] ja: {word}"),
    ("pl", "[17:20] Tomek: kod do bramy?\n[17:21] ja: {pin}"),
    ("pl", "[19:40] Ola: podeślij pin do karty\n[19:41] ja: {pin}"),
    ("ru", "[09:41] Дима: какой пароль от вайфая?\n[09:42] я: {word}"),
    ("ru", "[23:10] Оля: код от домофона скинь\n[23:11] я: {pin}"),
    ("ru", "[12:00] Саша: пасс от роутера какой\n[12:01] я: {pw}"),
    ("tr", "[14:30] Emre: wifi şifresi neydi?\n[14:31] ben: {word}"),
    ("tr", "[08:05] Zeynep: kapı kodu ne?\n[08:06] ben: {pin}"),
    ("tr", "[20:20] Can: alarmın şifresini atar mısın\n[20:21] ben: {pin}"),
    ("ja", "[12:30] 佐藤: Wi-Fiのパスワード教えて\n[12:31] 自分: {word}"),
    ("ja", "[18:02] 母: 玄関の暗証番号なんだっけ？\n[18:03] 私: {pin}"),
    ("ja", "[09:15] 鈴木: NASのパスは？\n[09:16] 自分: {pw}"),
    ("ko", "[15:20] 민수: 와이파이 비번 뭐야?\n[15:21] 나: {word}"),
    ("ko", "[09:00] 지영: 현관 비밀번호 알려줘\n[09:01] 나: {pin}"),
    ("ko", "[22:40] 형: 공유기 암호 좀\n[22:41] 나: {pw}"),
    ("zh", "[20:15] 小王: wifi密码多少\n[20:16] 我: {word}"),
    ("zh", "[07:40] 妈妈: 门禁密码是多少？\n[07:41] 我: {pin}"),
    ("zh", "[11:11] 老李: 发一下路由器的密码\n[11:12] 我: {pw}"),
    ("ar", "[10:10] سارة: شو كلمة السر تبع الواي فاي؟\n[10:11] أنا: {word}"),
    ("ar", "[19:00] أحمد: رمز البوابة؟\n[19:01] أنا: {pin}"),
    ("ar", "[08:08] ليلى: ابعتلي الباسورد\n[08:09] أنا: {pw}"),
]

PIN: list[tuple[str, str]] = [
    ("en", "my debit card pin is {pin}"),
    ("en", "pin for mum's visa {pin}, don't lose it"),
    ("en", "SIM pin {pin}"),
    ("en", "phone unlock pin: {pin6}"),
    ("en", "the banking app pin is {pin6}"),
    ("de", "PIN von Omas Karte ist {pin}"),
    ("de", "die PIN für die EC-Karte meiner Mutter lautet {pin}"),
    ("de", "SIM-PIN {pin}"),
    ("de", "Handy-PIN: {pin6}"),
    ("fr", "le code de ma carte bleue c'est {pin}"),
    ("fr", "code pin de la carte de mon père : {pin}"),
    ("fr", "code SIM {pin}"),
    ("fr", "le code de déverrouillage du tel est {pin6}"),
    ("es", "el pin de la tarjeta de crédito de mi padre es {pin}"),
    ("es", "mi clave del cajero es {pin}"),
    ("es", "número secreto de la tarjeta: {pin}"),
    ("es", "el pin de la app del banco es {pin6}"),
    ("it", "il pin del bancomat di mia madre è {pin}"),
    ("it", "pin della carta {pin}"),
    ("it", "codice pin della sim: {pin}"),
    ("it", "il pin dell'app della banca è {pin6}"),
    ("pt", "o pin do cartão da minha mãe é {pin}"),
    ("pt", "senha do cartão de débito {pin}"),
    ("pt", "pin do chip: {pin}"),
    ("pt", "a senha de 4 dígitos do caixa eletrônico é {pin}"),
    ("nl", "de pincode van mijn moeders pas is {pin}"),
    ("nl", "pin van de bankpas: {pin}"),
    ("nl", "sim pincode {pin}"),
    ("nl", "pincode van de bank-app is {pin5}"),
    ("sv", "pinkoden till mammas kort är {pin}"),
    ("sv", "PIN till kortet: {pin}"),
    ("sv", "SIM-koden {pin}"),
    ("sv", "koden till bankappen är {pin6}"),
    ("pl", "PIN do karty mamy to {pin}"),
    ("pl", "pin karty: {pin}"),
    ("pl", "PIN do telefonu {pin}"),
    ("pl", "kod PIN do aplikacji banku {pin6}"),
    ("ru", "пин от маминой карты {pin}"),
    ("ru", "пин-код от сим-карты: {pin}"),
    ("ru", "пинкод карты сбера {pin}"),
    ("ru", "ПИН банковской карты — {pin}"),
    ("tr", "annemin kartının şifresi {pin}"),
    ("tr", "kart şifresi: {pin}"),
    ("tr", "SIM PIN kodu {pin}"),
    ("tr", "banka uygulaması şifresi {pin6}"),
    ("ja", "母のキャッシュカードの暗証番号は{pin}"),
    ("ja", "カードの暗証番号 {fwpin}"),
    ("ja", "SIMのPINコード {pin}"),
    ("ja", "スマホのロック解除コードは{pin6}"),
    ("ko", "엄마 카드 비밀번호 {pin}"),
    ("ko", "카드 비번은 {pin}"),
    ("ko", "유심 핀번호 {pin}"),
    ("ko", "은행 앱 비밀번호 {pin6}"),
    ("zh", "我妈银行卡密码是{pin}"),
    ("zh", "卡的取款密码 {pin}"),
    ("zh", "手机卡PIN码：{pin}"),
    ("zh", "支付宝支付密码 {pin6}"),
    ("ar", "الرقم السري لبطاقة أمي {pin}"),
    ("ar", "رمز PIN للبطاقة {arpin}"),
    ("ar", "الرقم السري للشريحة {pin}"),
    ("ar", "الرقم السري لتطبيق البنك {pin6}"),
]

ACCESS: list[tuple[str, str]] = [
    ("en", "alarm code is {pin}, you have 30 seconds"),
    ("en", "gate code {pin5}#"),
    ("en", "intercom: {pin}"),
    ("en", "lockbox by the door, code {pin}"),
    ("en", "safe combo {pin6}"),
    ("de", "Alarmcode {pin}"),
    ("de", "der Code vom Schlüsseltresor ist {pin}"),
    ("de", "Torcode: {pin5}"),
    ("de", "Türcode unten {gate}"),
    ("fr", "code de l'alarme : {pin}"),
    ("fr", "le code du portail est {pin5}"),
    ("fr", "boîte à clés, code {pin}"),
    ("fr", "code interphone {pin}"),
    ("es", "código de la alarma {pin}"),
    ("es", "el código del portal es {pin5}"),
    ("es", "la caja de llaves tiene el código {pin}"),
    ("es", "código de la caja fuerte: {pin6}"),
    ("it", "codice dell'allarme {pin}"),
    ("it", "il codice del cancello è {pin5}"),
    ("it", "cassetta delle chiavi, codice {pin}"),
    ("it", "codice citofono: {pin}"),
    ("pt", "código do alarme {pin}"),
    ("pt", "o código do portão é {pin5}"),
    ("pt", "cofre de chaves: {pin}"),
    ("pt", "código do interfone {pin}"),
    ("nl", "alarmcode {pin}"),
    ("nl", "de code van het hek is {pin5}"),
    ("nl", "sleutelkluis code {pin}"),
    ("nl", "code van de kluis: {pin6}"),
    ("sv", "larmkoden är {pin}"),
    ("sv", "koden till grinden {pin5}"),
    ("sv", "nyckelboxen har kod {pin}"),
    ("sv", "kod till kassaskåpet: {pin6}"),
    ("pl", "kod do alarmu {pin}"),
    ("pl", "kod do furtki to {pin5}"),
    ("pl", "skrytka na klucze, kod {pin}"),
    ("pl", "kod do sejfu: {pin6}"),
    ("ru", "код сигнализации {pin}"),
    ("ru", "код от калитки {pin5}"),
    ("ru", "ключница у двери, код {pin}"),
    ("ru", "код от сейфа: {pin6}"),
    ("tr", "alarm kodu {pin}"),
    ("tr", "bahçe kapısının şifresi {pin5}"),
    ("tr", "anahtar kutusu şifresi {pin}"),
    ("tr", "kasanın şifresi: {pin6}"),
    ("ja", "警報の解除コード {pin}"),
    ("ja", "オートロックの番号は{pin}"),
    ("ja", "キーボックスの番号 {fwpin}"),
    ("ja", "金庫の暗証番号：{pin6}"),
    ("ko", "경보 해제 번호 {pin}"),
    ("ko", "공동현관 비번 {pin5}"),
    ("ko", "키박스 비밀번호 {pin}"),
    ("ko", "금고 번호: {pin6}"),
    ("zh", "报警器解锁码 {pin}"),
    ("zh", "大门密码{pin5}"),
    ("zh", "钥匙盒密码 {pin}"),
    ("zh", "保险箱密码：{pin6}"),
    ("ar", "رمز الإنذار {pin}"),
    ("ar", "كود البوابة {pin5}"),
    ("ar", "رمز صندوق المفاتيح {pin}"),
    ("ar", "رقم الخزنة {pin6}"),
]

PASSWORD: list[tuple[str, str]] = [
    ("en", "pwd for the nas {pw}"),
    ("en", "pw {pw}"),
    ("en", "passwd: {pw}"),
    ("en", "wifi pass {word}"),
    ("en", "the login for the printer is admin / {pw}"),
    ("de", "pw vom router: {pw}"),
    ("de", "Kennwort fürs Intranet {pw}"),
    ("de", "Passwort vom Laptop {word}"),
    ("de", "das pw ist {pw}"),
    ("fr", "mdp du wifi {word}"),
    ("fr", "le mot de passe de la box c'est {word}"),
    ("fr", "mdp gmail: {pw}"),
    ("fr", "pass de la freebox {pw}"),
    ("es", "contraseña del wifi {word}"),
    ("es", "la contra del router es {word}"),
    ("es", "clave del correo: {pw}"),
    ("es", "pass del wifi {pw}"),
    ("it", "password del wifi {word}"),
    ("it", "pw della mail: {pw}"),
    ("it", "la pass del router è {word}"),
    ("it", "chiave del wifi {word}"),
    ("pt", "senha do wifi {word}"),
    ("pt", "a senha do email é {pw}"),
    ("pt", "pass do router {pw}"),
    ("pt", "senha do note: {word}"),
    ("nl", "wachtwoord van de wifi {word}"),
    ("nl", "ww: {pw}"),
    ("nl", "het ww van de router is {word}"),
    ("nl", "wachtwoord laptop {pw}"),
    ("sv", "lösenordet till wifin är {word}"),
    ("sv", "lösen: {pw}"),
    ("sv", "wifi-lösenet {word}"),
    ("sv", "lösenord till mejlen {pw}"),
    ("pl", "hasło do wifi {word}"),
    ("pl", "hasło do maila: {pw}"),
    ("pl", "haslo do routera {word}"),
    ("pl", "pass do wifi {pw}"),
    ("ru", "пасс от вайфая {word}"),
    ("ru", "пароль от почты {pw}"),
    ("ru", "парол от роутера: {pw}"),
    ("ru", "короче пасс {pw}"),
    ("tr", "wifi şifresi {word}"),
    ("tr", "parola: {pw}"),
    ("tr", "mail şifrem {pw}"),
    ("tr", "modemin parolası {word}"),
    ("ja", "Wi-Fiのパス {word}"),
    ("ja", "パスワード：{pw}"),
    ("ja", "メールのパスは{pw}"),
    ("ja", "ルーターのパスワード {word}"),
    ("ko", "와이파이 비번 {word}"),
    ("ko", "비밀번호: {pw}"),
    ("ko", "메일 암호 {pw}"),
    ("ko", "공유기 비번은 {word}"),
    ("zh", "wifi密码 {word}"),
    ("zh", "邮箱密码：{pw}"),
    ("zh", "口令是{pw}"),
    ("zh", "路由器的密碼 {word}"),
    ("ar", "كلمة السر للواي فاي {word}"),
    ("ar", "كلمة المرور: {pw}"),
    ("ar", "الباسورد {pw}"),
    ("ar", "باسورد الراوتر {word}"),
]

NEXT_OR_FIRST: list[tuple[str, str]] = [
    ("en", "netflix login\n{pw}"),
    ("en", "{pw}\n^ netflix pass"),
    ("en", "{pw} <- gmail pw, delete after reading"),
    ("de", "{pw} ist das neue Passwort vom NAS"),
    ("de", "WLAN-Passwort:\n{word}"),
    ("fr", "{pw} c'est le mdp du nas"),
    ("fr", "mdp wifi :\n{word}"),
    ("es", "{pw} es la contraseña del router"),
    ("es", "contraseña de netflix\n{word}"),
    ("it", "{pw} è la password della mail"),
    ("it", "password wifi\n{word}"),
    ("pt", "{pw} é a senha do computador"),
    ("pt", "senha do wifi:\n{word}"),
    ("nl", "{pw} is het wachtwoord van de server"),
    ("nl", "wachtwoord wifi\n{word}"),
    ("sv", "{pw} är lösenordet till servern"),
    ("sv", "lösenord wifi:\n{word}"),
    ("pl", "{pw} to hasło do serwera"),
    ("pl", "hasło do wifi\n{word}"),
    ("ru", "{pw} — это пароль от сервера"),
    ("ru", "пароль от вайфая\n{word}"),
    ("tr", "{pw} sunucunun şifresi"),
    ("tr", "wifi şifresi:\n{word}"),
    ("ja", "{pw} がサーバーのパスワード"),
    ("ja", "Wi-Fiのパスワード\n{word}"),
    ("ko", "{pw} 이게 서버 비번"),
    ("ko", "와이파이 비밀번호\n{word}"),
    ("zh", "{pw} 是服务器的密码"),
    ("zh", "wifi密码\n{word}"),
    ("ar", "{pw} هي كلمة السر للسيرفر"),
    ("ar", "كلمة السر للواي فاي\n{word}"),
]

OBFUSCATED: list[tuple[str, str]] = [
    ("en", "p\u0430ssw\u043erd: {pw}"),
    ("en", "\u03a1\u0399\u039d {pin}"),
    ("de", "\u03a1\u0430sswort: {pw}"),
    ("de", "P\u200bIN {pin}"),
    ("fr", "m\u200bdp : {pw}"),
    ("es", "\u03a1IN de la tarjeta: {pin}"),
    ("es", "contr\u0430seña: {pw}"),
    ("it", "ｐａｓｓｗｏｒｄ：{pw}"),
    ("pt", "s\u0435nha: {pw}"),
    ("pt", "ＰＩＮ {pin}"),
    ("nl", "wacht\u200bwoord: {pw}"),
    ("sv", "l\u00f6sen\u200bord: {pw}"),
    ("pl", "h\u0430sło: {pw}"),
    ("ru", "п\u0430p\u043eль: {pw}"),
    ("ru", "\u0420IN-код {pin}"),
    ("tr", "\u015fif\u200bre: {pw}"),
    ("ja", "パス\u200bワード：{pw}"),
    ("ko", "비밀\u200b번호: {pw}"),
    ("zh", "密\u200b码：{pw}"),
    ("ar", "كلمة\u200b السر: {pw}"),
]

SSN: list[tuple[str, str]] = [
    ("en", "my social is {ssn}"),
    ("en", "social: {ssn}"),
    ("en", "for the credit check they want my social, here {ssn}"),
    ("en", "ssn {ssn} dob 04/12/1988"),
    ("en", "social security # {ssn}"),
    ("de", "meine Social Security Number: {ssn}"),
    ("fr", "mon numéro de sécurité sociale américain est {ssn}"),
    ("es", "mi número de seguro social es {ssn}"),
    ("it", "il mio SSN americano è {ssn}"),
    ("pt", "meu número de seguro social americano: {ssn}"),
    ("nl", "mijn SSN is {ssn}"),
    ("sv", "mitt SSN: {ssn}"),
    ("pl", "mój numer SSN to {ssn}"),
    ("ru", "мой SSN {ssn}"),
    ("tr", "SSN numaram {ssn}"),
    ("ja", "私のSSNは{ssn}"),
    ("ko", "내 SSN {ssn}"),
    ("zh", "我的SSN是{ssn}"),
    ("ar", "رقم الضمان الاجتماعي الأمريكي {ssn}"),
]

SECRETS: list[tuple[str, str, str]] = [
    *(("chat_log", lang, t) for lang, t in CHAT_LOG),
    *(("pin", lang, t) for lang, t in PIN),
    *(("access_code", lang, t) for lang, t in ACCESS),
    *(("password_label", lang, t) for lang, t in PASSWORD),
    *(("next_or_first", lang, t) for lang, t in NEXT_OR_FIRST),
    *(("obfuscated_label", lang, t) for lang, t in OBFUSCATED),
    *(("ssn", lang, t) for lang, t in SSN),
]

# --- look-alikes: (category, lang, text) -------------------------------------------------------

LOOKS: list[tuple[str, str, str]] = [
    # PIN-length talk and talk about a secret without its value
    ("pin_talk", "en", "my PIN has 4 digits, the new cards want 6"),
    ("pin_talk", "en", "the door code changed, ask the concierge"),
    ("pin_talk", "en", "never send your pin over chat"),
    ("pin_talk", "de", "meine PIN hat 4 Stellen"),
    ("pin_talk", "de", "der Türcode wurde geändert, frag den Hausmeister"),
    ("pin_talk", "fr", "le code pin fait 4 chiffres"),
    ("pin_talk", "fr", "le digicode a changé, demande à la gardienne"),
    ("pin_talk", "es", "el pin tiene 4 números"),
    ("pin_talk", "es", "no me acuerdo del código de la alarma"),
    ("pin_talk", "it", "il pin è di 5 cifre"),
    ("pin_talk", "it", "il codice del cancello te lo dico a voce"),
    ("pin_talk", "pt", "o pin tem 4 dígitos"),
    ("pin_talk", "pt", "esqueci a senha do cartão de novo"),
    ("pin_talk", "nl", "de pincode heeft 4 cijfers"),
    ("pin_talk", "nl", "de alarmcode krijg je van de verhuurder"),
    ("pin_talk", "sv", "pinkoden har 4 siffror"),
    ("pin_talk", "sv", "larmkoden får du av hyresvärden"),
    ("pin_talk", "pl", "PIN ma 4 cyfry"),
    ("pin_talk", "pl", "kod do bramy dostaniesz od sąsiada"),
    ("pin_talk", "ru", "пин из 4 цифр"),
    ("pin_talk", "ru", "код от домофона поменяли, спроси у консьержа"),
    ("pin_talk", "tr", "şifre 6 haneli olmalı"),
    ("pin_talk", "tr", "kapı kodunu apartman görevlisine sor"),
    ("pin_talk", "ja", "暗証番号は4桁です"),
    ("pin_talk", "ja", "オートロックの番号は管理人に聞いて"),
    ("pin_talk", "ko", "비밀번호는 6자리예요"),
    ("pin_talk", "ko", "현관 비번 바뀌었대, 경비실에 물어봐"),
    ("pin_talk", "zh", "密码是6位数字"),
    ("pin_talk", "zh", "门禁密码换了，问物业"),
    ("pin_talk", "ar", "الرقم السري من 4 أرقام"),
    ("pin_talk", "ar", "رمز البوابة تغير، اسأل الحارس"),
    ("password_talk", "en", "I changed the wifi password yesterday, it's on the fridge"),
    ("password_talk", "de", "Passwort vergessen, ich setze es zurück"),
    ("password_talk", "fr", "j'ai oublié mon mdp encore une fois"),
    ("password_talk", "es", "cambia la contraseña cada 90 días"),
    ("password_talk", "it", "la password del wifi è sul router"),
    ("password_talk", "pt", "a senha chega por sms"),
    ("password_talk", "nl", "link om je wachtwoord te wijzigen is verstuurd"),
    ("password_talk", "nl", "je wachtwoord is verlopen"),
    ("password_talk", "sv", "lösenordet är för kort"),
    ("password_talk", "pl", "hasło wygasło, trzeba zmienić"),
    ("password_talk", "ru", "пароль поменяли, спроси у админа"),
    ("password_talk", "tr", "şifremi unuttum, sıfırlama linki gönderildi"),
    ("password_talk", "ja", "パスワードを忘れたのでリセットした"),
    ("password_talk", "ko", "비밀번호 재설정 링크 보냈어"),
    ("password_talk", "zh", "密码忘了，已经重置了"),
    ("password_talk", "ar", "نسيت كلمة السر، أرسلوا رابط إعادة التعيين"),
    # placeholders
    ("placeholder", "en", "pin: ****"),
    ("placeholder", "de", "Passwort: <dein-passwort>"),
    ("placeholder", "fr", "mdp : VOTRE_MDP"),
    ("placeholder", "es", "contraseña: xxxxxxxx"),
    ("placeholder", "pt", "senha: SUA_SENHA"),
    ("placeholder", "ru", "пароль: ********"),
    ("placeholder", "ja", "パスワード：＊＊＊＊"),
    ("placeholder", "ko", "비밀번호: ****"),
    # the label words in other senses
    ("other_sense", "en", "pass me the salt"),
    ("other_sense", "en", "pin the message with the schedule"),
    ("other_sense", "en", "the key to success is patience"),
    ("other_sense", "en", "code review at 3, room 4021"),
    ("other_sense", "de", "der Schlüssel liegt unter der Matte"),
    ("other_sense", "fr", "la clé est chez la voisine du 3e"),
    ("other_sense", "es", "la clave es la paciencia"),
    ("other_sense", "es", "la llave está debajo de la maceta"),
    ("other_sense", "it", "la chiave è sotto lo zerbino"),
    ("other_sense", "pt", "a chave está com o porteiro"),
    ("other_sense", "nl", "de sleutel ligt bij de buren"),
    ("other_sense", "sv", "nyckeln ligger under mattan"),
    ("other_sense", "pl", "klucz jest u sąsiadki"),
    ("other_sense", "ru", "ключ под ковриком"),
    ("other_sense", "tr", "anahtar kapının altında"),
    ("other_sense", "ja", "鍵はポストの中"),
    ("other_sense", "ko", "열쇠는 우편함에 있어"),
    ("other_sense", "zh", "钥匙在门垫下面"),
    ("other_sense", "ar", "المفتاح تحت السجادة"),
    # numbers that are not secrets, in the same shapes
    ("number", "en", "order 48213 ships tomorrow"),
    ("number", "en", "room 4021, floor 4, bus 1402"),
    ("number", "de", "Bestellung 48213377 ist unterwegs"),
    ("number", "de", "Termin am 12.03. um 14:30, kostet 1499 €"),
    ("number", "fr", "appelle-moi au 06 12 34 56 78"),
    ("number", "fr", "version 4.2.1 sortie le 12/03"),
    ("number", "es", "el pedido 2231 llega el martes"),
    ("number", "es", "cuesta 1499 euros"),
    ("number", "it", "ordine n. 88213, consegna giovedì"),
    ("number", "pt", "o pedido 55102 saiu para entrega"),
    ("number", "nl", "bestelnummer 88213 is verzonden"),
    ("number", "sv", "ordernummer 88213 skickas i morgon"),
    ("number", "pl", "zamówienie 88213 wysłane"),
    ("number", "ru", "заказ 88213 доставят завтра"),
    ("number", "tr", "sipariş 88213 yola çıktı"),
    ("number", "ja", "注文番号 88213 は明日届きます"),
    ("number", "ko", "주문번호 88213 내일 도착"),
    ("number", "zh", "订单号 88213 明天到"),
    ("number", "ar", "رقم الطلب 88213 يصل غدا"),
    # chat logs whose answer is no secret
    ("chat_log", "en", "[10:01] ana: what's the wifi?\n[10:02] bo: ask Tom"),
    ("chat_log", "en", "[10:01] ana: code for the gate?\n[10:02] bo: it's broken, just push"),
    ("chat_log", "en", "[09:00] ana: what time tomorrow?\n[09:01] bo: 1430"),
    ("chat_log", "en", "[09:00] ana: how many pins does the connector have?\n[09:01] bo: 24"),
    ("chat_log", "en", "[18:00] ana: what's your order number?\n[18:01] bo: 48213377"),
    ("chat_log", "de", "[20:01] Tim: wie ist das WLAN-Passwort?\n[20:02] Jana: steht am Router"),
    ("chat_log", "fr", "[18:22] Léa : c'est quoi le code du portail ?\n[18:23] moi : je sais plus"),
    ("chat_log", "es", "[10:15] Lucía: ¿cuál es la clave del wifi?\n[10:16] yo: ni idea"),
    ("chat_log", "it", "[09:10] Giulia: a che ora?\n[09:11] io: 1830"),
    ("chat_log", "pt", "[11:20] Ana: qual é a senha do wifi?\n[11:21] eu: pergunta pro Zé"),
    ("chat_log", "nl", "[08:55] Sanne: wat is de wifi?\n[08:56] ik: weet ik niet"),
    ("chat_log", "sv", "[17:30] Elin: vad kostar det?\n[17:31] jag: 1499"),
    ("chat_log", "pl", "[10:02] Kasia: hasło do wifi?\n[10:03] ja: nie pamiętam"),
    ("chat_log", "ru", "[09:41] Дима: какой пароль от вайфая?\n[09:42] я: спроси у мамы"),
    ("chat_log", "tr", "[14:30] Emre: kaçta?\n[14:31] ben: 1930"),
    ("chat_log", "ja", "[10:02] 田中: Wi-Fiのパス教えて\n[10:03] 自分: ルーターに書いてある"),
    ("chat_log", "ko", "[15:20] 민수: 몇 시에 만나?\n[15:21] 나: 1830"),
    ("chat_log", "zh", "[20:15] 小王: wifi密码多少\n[20:16] 我: 问我妈"),
    ("chat_log", "ar", "[10:10] سارة: كم السعر؟\n[10:11] أنا: 1499"),
]

#: Look-alikes written while the rules of round 4 changed, to probe each new mechanism's false
#: side (a time or a name asked in a chat log, "pass" as a ticket or a verb, "social" before a
#: number that is not an SSN, an amount after "la clave es", a line naming a value above it
#: with a word of ordinary talk): not scored before the rules, unlike the rows above.
PROBES: list[tuple[str, str, str]] = [
    ("probe", "en", "what is the wifi called?\nHomeNet5G"),
    ("probe", "en", "[10:01] ana: what time is the alarm set for?\n[10:02] bo: 0630"),
    ("probe", "en", "[10:01] ana: code review when?\n[10:02] bo: 1500"),
    ("probe", "en", "[10:01] ana: which gate?\n[10:02] bo: B12"),
    ("probe", "en", "send me the order number pls\n48213377"),
    ("probe", "en", "[09:00] ana: what is your phone?\n[09:01] bo: 0612345678"),
    ("probe", "en", "the social club meets at 555 12 3456"),
    ("probe", "en", "boarding pass BA2490X, gate 12"),
    ("probe", "en", "ski pass AB12CD34 works until sunday"),
    ("probe", "en", "I pass Room2B every day"),
    ("probe", "en", "pass wifi is down again"),
    ("probe", "en", "remember: Meeting2024\nthat's the login screen title"),
    ("probe", "en", "the token is 1234 for the arcade"),
    ("probe", "es", "la clave es 1499 euros"),
    ("probe", "es", "la clave del éxito es 2024"),
    ("probe", "fr", "notre code promo c'est SUMMER2024"),
    ("probe", "pt", "o código do pedido é 88213"),
    ("probe", "de", "[08:00] Jan: wann klingelt der Alarm?\n[08:01] Eva: 0615"),
    ("probe", "ja", "[12:00] 佐藤: Wi-Fiの名前教えて\n[12:01] 自分: Home_5G24"),
    ("probe", "tr", "[12:00] a: kaç tane pin var?\n[12:01] b: 40"),
    ("probe", "ko", "[10:00] 민수: 몇 시에 알람 맞췄어?\n[10:01] 나: 0630"),
    ("probe", "zh", "[10:00] 小王: 闹钟几点？\n[10:01] 我: 0630"),
]


def rows(next_id: Callable[[str, bool], str]) -> Iterator[dict[str, object]]:
    """Every row of the batch (``next_id(lang, secret)`` numbers them after the earlier
    batches' rows)."""
    secrets: list[Secret] = [(c, lang, *fill(t)) for c, lang, t in SECRETS]
    looks: list[Look] = [*LOOKS, *PROBES]
    yield from batch_rows("families3", next_id, secrets, looks)
