"""The words of labelled secrets, per language: labels, connectors, and the words that follow
a label in ordinary talk ("the password is *wrong*"), which are never taken for a value.

Data, not code: :mod:`memory_worker.privacy.masking.labels` reads these tables (and the
words of ordinary talk around a label in :mod:`memory_worker.privacy.masking.ordinary`).
The languages are the project's own (EN, RU, DE, ES, FR, UK) and PT, IT, PL, ZH, JA, KO,
AR, TR, NL, SV, CS, ID, DA/NO, FI, HU, RO, VI, EL, HE, HI, FA. In ZH, JA, KO and AR a
label is matched inside a word (no spaces, or particles and prefixes glued to it) and its
value is the run of ASCII after it.
A label belongs to a family, which decides what may follow it:

- ``password``: any value that is not an ordinary word of :data:`NOT_VALUES`
  (a password can be a plain word: "the wifi password is swordfish");
- ``pass``: the same, but only after a connector (``pass: …``, "la pass è …"),
  or bare after a user name ("user admin pass …"), never alone: a *boarding pass* is not
  a label; English ``key`` is of this family too ("the key is …": a value that reads as
  generated, not "the key is patience");
- ``key``: only a value that reads as generated (a digit, a symbol, inner
  upper case): "the secret is patience" is advice, "the secret is Xk2-…" is not;
- ``pin``: 3–8 digits (PINs, CVVs, door, gate and alarm codes, a safe's combination),
  also after a few words naming what it opens ("пин-код карты 9921", "door code for
  the garage 4821"); ``code``: 4–8 digits, unless the word before says what
  kind of code it is (zip, error, status…: :data:`NOT_SECRET_CODES`);
- ``pair``: a credentials label whose value is ``user / password`` (the
  password is the part after the slash): "creds for the vpn: bob / Xk2…".
"""

from __future__ import annotations

from memory_worker.privacy.masking.needles import trie_pattern, words

#: Keys next to each other on a QWERTY keyboard (Spanish ``ñ`` beside ``l``, German and
#: Swedish ``ö`` too): a finger that slips.
_NEIGHBOURS = {
    "q": "wa",
    "w": "qes",
    "e": "wrd",
    "r": "etf",
    "t": "ryg",
    "y": "tuh",
    "u": "yij",
    "i": "uok",
    "o": "ipl",
    "p": "o",
    "a": "qsz",
    "s": "awdz",
    "d": "sefx",
    "f": "drgc",
    "g": "fthv",
    "h": "gyjb",
    "j": "hukn",
    "k": "jilm",
    "l": "kopñö",
    "z": "asx",
    "x": "zsdc",
    "c": "xdfv",
    "v": "cfgb",
    "b": "vghn",
    "n": "bhjm",
    "m": "njk",
    "ñ": "l",
    "ö": "l",
}
_PLAIN = str.maketrans("äöüßéèêñçãõáíóúàâłśćźżąęşğı", "aouseeencaoaiouaalsczzaesgi")


#: Words that a mistyped label would spell: never taken for the label.
_NOT_TYPOS = frozenset({"sena", "seha", "helo", "haso", "hasl"})
#: The first four letters of every mistyped label form (:func:`typos`): its needles.
TYPO_NEEDLES: set[str] = set()


def typos(word: str) -> str:
    """A label as people mistype it, as one alternation: one letter left out (of a five-letter
    word, not its last) or one struck beside it on the keyboard (words of six letters or more), two neighbours swapped (not the second and third of a short word: a
    name, "Sneha"), one letter doubled, and the word without its
    diacritics ("paswort", "senah", "passowrd", "losenord"). The first letter is kept."""
    forms = {word, word.translate(_PLAIN)}
    for i in range(1, len(word)):
        if len(word) >= 6 or (len(word) == 5 and i < 4):
            forms.add(word[:i] + word[i + 1 :])
            forms.update(word[:i] + key + word[i + 1 :] for key in _NEIGHBOURS.get(word[i], ""))
        if i + 1 < len(word) and (i > 1 or len(word) >= 6):  # not "sneha" for "senha"
            forms.add(word[:i] + word[i + 1] + word[i] + word[i + 2 :])
        forms.add(word[:i] + word[i] + word[i:])
    forms -= _NOT_TYPOS
    TYPO_NEEDLES.update(form[:4].casefold() for form in forms)
    return trie_pattern(sorted(forms))


#: Label patterns (regular expressions, case-insensitive) by family and language.
PASSWORD_LABELS: dict[str, tuple[str, ...]] = {
    "en": (
        r"password",
        typos("password"),
        r"p[a@4][s$5]{1,3}w[o0]r[dt]",
        r"paswrd|pswrd|pswd|passwrd|paswd",
        r"p[a@]s{1,3}w[o0]?r?d",
        r"pas(?:s?wr|s?ow|rw|wro)[o]?d",
        r"passwrod",
        r"passwd",
        r"passphrase",
        r"pass(?:\s+|[-–—_.·])word",
        r"p a s s w o r d|p\.a\.s\.s\.w\.o\.r\.d",
        r"passcode",
        r"pwd",
        r"pw",
        r"psw",
        r"passw",
        r"pword",
        r"wi-?fi\s+key",
        r"(?:security|secret)\s+answer",
        r"answer\s+to\s+(?:the|my)\s+security\s+question",
        r"network\s+key",
        r"wpa2?\s+key",
        r"login\s+code",
        r"mima",  # 密码 in pinyin, typed on a Latin keyboard
    ),
    "de": (
        r"kennantwort",
        r"antwort\s+auf\s+die\s+sicherheitsfrage",
        r"\w*passwort",
        r"\w*kennwort",
        typos("passwort"),
        typos("kennwort"),
        r"kennw\.?|passw\.?",  # cut short, as a note writes it
        r"zugangscode",
        r"wlan-?schlüssel",
        r"(?:wlan|wi-?fi)-?code",
        r"netzwerkschlüssel",
    ),
    "fr": (
        r"r[ée]ponse\s+[àa]\s+la\s+question\s+(?:de\s+s[ée]curit[ée]|secr[èe]te)",
        r"mot\s*(?:de|2|d['’]?)\s*pas{1,3}e?",
        r"mdp",
        r"code\s+d['’]acc[eè]s",
        r"code\s+secret",
    ),
    "es": (
        r"respuesta\s+(?:a\s+la\s+)?pregunta\s+de\s+seguridad",
        r"contrase[ñn]i?a",
        typos("contraseña"),
        r"clave\s+del?\s+(?:acceso|wifi|wi-fi|red|router)",
        r"c[oó]digo\s+de\s+acceso",
    ),
    "pt": (
        r"resposta\s+(?:da|[àa])\s+pergunta\s+de\s+seguran[çc]a",
        typos("senha"),
        r"palavra-passe",
        r"c[oó]digo\s+de\s+acesso",
    ),
    "it": (
        r"risposta\s+alla\s+domanda\s+(?:di\s+sicurezza|segreta)",
        r"parola\s+d['’]ordine",
        r"codice\s+di\s+accesso",
        r"chiave\s+(?:del\s+)?wi-?fi",
    ),
    "pl": (
        r"odpowied[źz]\s+na\s+pytanie\s+bezpiecze[ńn]stwa",
        r"sekretna\s+odpowied[źz]",
        r"c?has(?:ło|ła|łem|le|lo)",
        r"has(?:e[łl]k(?:o|a|iem|u))",  # said fondly: "hasełko do netflixa to …"
        typos("hasło"),
        r"kod\s+dost[eę]pu",
    ),
    "ru": (
        r"секретн(?:ый|ого)\s+ответ",
        r"п[ао]р[оа]л(?:ь|я|ю|ем|е)",
        r"паролик(?:а|у|ом|е)?",  # said fondly
        typos("пароль"),
        r"код\s+доступа",
        r"пасс?ворд",
        r"parol(?:ya|yu|em|e|i|j|')?",
    ),
    "uk": (r"парол(?:ь|я|ю|ем|і)", r"гасло", r"код\s+доступу"),
    "zh": (r"密保问题答案", r"密保问题的答案", r"[密蜜秘觅][码碼马玛]", r"口令"),
    "nl": (
        r"geheim\s+antwoord",
        r"antwoord\s+(?:op|voor)\s+de\s+beveiligingsvraag",
        r"\w*wachtwo?o?r[dt](?:en)?",
        typos("wachtwoord"),
        r"paswoord",
        r"wachtw\.?",  # cut short, as a note writes it
        r"inlogcode",
        r"wifi-?sleutel",
        r"wi-?fi-?code",
    ),
    "sv": (
        r"hemligt\s+svar(?:et)?",
        r"svar(?:et)?\s+på\s+säkerhetsfrågan",
        r"\w*l[öo]senord(?:et)?",
        typos("lösenord"),
        r"l[öo]sen(?:et)?",
        r"wifi-?nyckel(?:n)?",
    ),
    "tr": (
        r"gizli\s+cevab[ıi]",
        r"[şs]ifre(?:m|n|si|miz|niz|mi|yi|sini)?",
        typos("şifre"),
        r"parola(?:m|n|sı|mız|yı)?",
    ),
    "cs": (r"hesl(?:o|a|em|u)", r"přístupový\s+kód"),
    "id": (
        r"kata\s+(?:sandi|laluan)(?:nya|ku|mu)?",
        r"sandi(?:nya|ku|mu)?",
        r"password(?:nya|ku|mu)",
    ),
    "da": (r"adgangskode(?:n)?", r"kodeord(?:et)?", r"passord(?:et)?"),
    "fi": (r"salasana(?:ni|si|n|mme)?", r"tunnussana"),
    "hu": (r"jelsz(?:ó|ava|avam|ót)",),
    "ro": (r"parol(?:a|ă|ei)",),
    "vi": (r"m[ậa]t\s+kh[ẩa]u",),
    "el": (r"κωδικ(?:ός|ό|ου)(?:\s+πρόσβασης)?", r"συνθηματικό"),
    "he": (r"ה?סיסמ[הא]",),
    "hi": (r"पासवर्ड",),
    "fa": (r"رمز\s+عبور", r"گذرواژه", r"پسورد"),
    # kana of either kind, mixed as a phone's input may leave them ("パすワード")
    "ja": (r"[パぱ][スす][ワわ][ーｰ]?[ドど]", r"パス"),
    "ko": (r"비[밀빌빈민]번호", r"비[번반빈븐]", r"패스워드", r"암호(?!화)"),
    "ar": (
        r"[وفبل]?جواب\s+سؤال\s+الأمان(?:\s+السري)?",
        r"[وفبل]?(?:ال)?جواب\s+السري",
        r"[وفبل]?إجابة\s+سؤال\s+الأمان",
        r"[وفبل]?كلم[ةه]\s+(?:ال)?(?:مرور|سر|السر)",
        r"[وفبل]?(?:ال)?باس?وورد",
        r"[وفبل]?(?:ال)?باسورد",
        r"[وفبل]?رمز\s+المرور",
        r"kelmet\s+(?:el\s+)?(?:ser|sir|serr|morour|mrour)",
    ),
}
KEY_LABELS: dict[str, tuple[str, ...]] = {
    "en": (
        r"api[\s_-]?(?:key|token|secret)",
        r"apikey",
        r"access[\s_-]?(?:key|token)",
        r"secret(?:[\s_-]+access)?(?:[\s_-]?key)?",
        r"client[\s_-]?secret",
        r"auth(?:entication)?[\s_-]?token",
        r"(?:refresh|bearer|session|bot|personal\s+access|deploy)[\s_-]?token",
        r"token",
        r"private[\s_-]?key",
        r"(?:license|licence|product|signing|encryption|master|recovery)[\s_-]?key",
        r"webhook[\s_-]?secret",
        r"recovery[\s_-]?code",
        r"backup[\s_-]?codes?",
        r"(?:2fa|mfa)[\s_-]?(?:backup|recovery)[\s_-]?codes?",
    ),
    "de": (r"api-?schlüssel", r"geheimer?\s+schlüssel", r"privater?\s+schlüssel", r"\w*schlüssel"),
    "fr": (r"cl[ée](?:\s+(?:api|secr[èe]te|priv[ée]e|d['’]api|d['’]acc[eè]s))?", r"jeton"),
    "es": (r"clave(?:\s+(?:api|secreta|privada))?", r"llave(?:\s+(?:api|secreta|privada))?"),
    "pt": (r"chave(?:\s+(?:de\s+)?(?:api|secreta|privada|acesso))?",),
    "it": (r"chiave(?:\s+(?:api|segreta|privata|di\s+accesso))?",),
    "pl": (r"klucz(?:a|em)?(?:\s+(?:api|prywatny|tajny|dost[eę]pu))?",),
    "ru": (
        r"ключ(?:а|ом)?(?:\s+api)?",
        r"api[\s-]?ключ",
        r"токен(?:а|ом)?",
        r"(?:секретный|приватный|закрытый)\s+ключ",
        r"приватник(?:а|ом|у)?",
    ),
    "uk": (r"ключ(?:а|ем)?(?:\s+api)?", r"токен(?:а|ом)?", r"секретний\s+ключ"),
    "zh": (r"密钥", r"秘钥", r"私钥", r"令牌", r"访问令牌", r"API\s*密钥"),
    "nl": (r"\w*sleutel",),
    "sv": (r"\w*nyckel(?:n)?",),
    "tr": (r"(?:api\s+)?anahtar(?:ı|ım)?",),
    "cs": (r"(?:api\s+)?klíč",),
    "id": (r"kunci(?:\s+api)?",),
    "ja": (
        r"APIキー",
        r"(?:暗号化|復号化?|ライセンス|プロダクト|マスター|リカバリー?)キー",
        r"トークン",
        r"秘密鍵",
        r"アクセストークン",
        r"シークレット",
    ),
    "ko": (
        r"API\s*키",
        r"(?:암호화|복호화|라이선스|제품|마스터|복구|개인|비밀|시크릿)\s*키",
        r"토큰",
    ),
    "ar": (r"[وفبل]?مفتاح(?:\s+(?:ال)?API)?", r"[وفبل]?(?:ال)?توكن"),
}
PASS_LABELS: dict[str, tuple[str, ...]] = {
    "en": (r"pass",),
    "nl": (r"ww",),
    "es": (r"contra",),
    "ru": (r"пасс",),
    "ko": (r"패스",),
    # a transliterated "pass" after a user name ("يوزر admin باس …"), never inside a word
    "ar": (
        r"(?<![^\W\d_])و?(?:ال)?باس(?![^\W\d_])",
        # "and the code" after a network's name, before a value typed in Latin letters (not
        # before digits: a PIN's or a gate's code, which the code family reads)
        r"(?<![^\W\d_])والرمز(?![ \t]*[:：]?[ \t]*[\d٠-٩])",
    ),
}
PAIR_LABELS: dict[str, tuple[str, ...]] = {
    "en": (r"creds", r"credentials", r"login", r"wi-?fi", r"vpn"),
    "de": (r"zugang(?:sdaten)?", r"wlan", r"anmeldedaten"),
    "fr": (r"identifiants", r"acc[eè]s"),
    "es": (r"credenciales", r"acceso"),
    "pt": (r"credenciais", r"acesso"),
    "it": (r"credenziali", r"accesso"),
    "pl": (r"dane\s+logowania", r"dost[eę]p"),
    "ru": (r"доступы?", r"логин", r"вход"),
    "uk": (r"доступи?", r"логін", r"вхід"),
    "zh": (r"账号密码", r"账号"),
    "nl": (r"inloggegevens",),
    "sv": (r"inloggningsuppgifter",),
    "tr": (r"giriş\s+bilgileri",),
}
CODE_LABELS: dict[str, tuple[str, ...]] = {
    "en": (r"code",),
    "de": (r"code",),
    "fr": (r"code",),
    "es": (r"c[oó]digo",),
    "pt": (r"c[oó]digo",),
    "it": (r"codice",),
    "pl": (r"kod(?:em|u)?",),
    "ru": (r"код(?:ом|а|у)?",),
    "uk": (r"код(?:ом|у)?",),
    "nl": (r"code",),
    "sv": (r"kod(?:en)?",),
    "tr": (r"kod(?:u|um)?",),
    "cs": (r"kód(?:em|u)?",),
    "id": (r"kode",),
    "da": (r"kode(?:n)?",),
    "fi": (r"koodi",),
    "ja": (r"コード",),
    "ko": (r"코드",),
    "ar": (r"[وفبل]?(?:ال)?كود", r"[وفبل]?(?:ال)?رمز"),
}
PIN_LABELS: dict[str, tuple[str, ...]] = {
    "en": (
        r"(?:safe|strongbox|strong\s+box|cash\s+register|till\s+(?:code|pin)|screen\s+lock|lock\s+screen|server\s+room(?:\s+door)?)",
        r"punch(?:\s+in)?",
        r"key\s+in",
        r"(?:phone|screen)\s+unlock",
        r"pin(?:[\s-]?(?:code|kod|код|kodu))?",
        r"puk(?:[\s-]?(?:code|kod|код|kodu))?\d?",
        r"otp",
        r"(?:2fa|sms|verification|one[\s-]time)\s+code",
        r"2fa|mfa|totp",
        r"(?:door|gate|entry|keypad|alarm|garage(?:\s+door)?|lockbox|key\s*box|safe|disarm|buzzer|"
        r"intercom|building|front\s+door|house|access)\s+(?:code|pin)",
        r"(?:safe|lock|padlock|locker)\s+(?:combination|combo)",
        r"lock\s*box",
        r"key\s*(?:box|safe)",
        r"intercom",
        r"buzzer",
        r"keypad",
        r"p i n|p\.i\.n\.?",  # spelt out, to slip past a filter
        r"combination",
        r"combo",
        r"alarm",
        r"disarm",
        r"unlock\s+(?:code|pin)",
        r"blik(?:\s+code)?",
        r"bankid(?:\s+code)?",
        r"(?:login|sign[\s-]?in|confirmation|security|auth(?:entication)?|access)\s+code",
        r"one[\s-]?time\s+(?:password|passcode|pin)",
    ),
    "de": (
        r"tresor",
        r"safe",
        r"kasse",
        r"bildschirmsperre",
        r"entsperr\w*",
        r"geheimzahl",
        r"pin-?nummer",
        r"bestätigungscode",
        r"(?:tür|tor|alarm|alarmanlagen|tresor|haustür|zahlen|sicherheits|entsperr)-?code",
        r"alarmanlage",
        r"(?:tresor|safe|schloss|zahlen)?-?kombination",
        r"einmal(?:code|passwort|kennwort)",
        r"schlüssel(?:tresor|safe|box|kasten)",
        r"(?:m|sms|push|chip|photo)?-?tan",
        r"\w+code",
    ),
    "fr": (
        r"coffre(?:-fort)?",
        r"caisse",
        r"(?:code\s+de\s+)?d[ée]verrouillage",
        r"code\s+pin",
        r"code\s+de\s+(?:v[ée]rification|confirmation)",
        r"digicode",
        r"code\s+(?:de\s+(?:la\s+|l['’])?)?(?:porte|portail|alarme|immeuble|entr[ée]e|coffre)",
        r"alarme",
        r"code\s+(?:à\s+usage\s+unique|unique|de\s+d[ée]verrouillage)",
        r"combinaison",
        r"code\s+(?:sim|interphone|cb|carte|bip|badge|garage)",
        r"bo[iî]te\s+(?:[àa]\s+)?cl[ée]s",
        r"num[ée]ro\s+secret",
    ),
    "es": (
        r"caja\s+fuerte",
        r"tpv",
        r"(?:c[oó]digo\s+de\s+)?desbloqueo",
        r"bloqueo\s+de\s+pantalla",
        r"c[oó]digo\s+pin",
        r"c[oó]digo\s+de\s+verificaci[oó]n",
        r"c[oó]digo\s+de(?:\s+la|l)?\s+(?:puerta|alarma|portal|port[oó]n|caja\s+fuerte|portero)",
        r"alarma",
        r"c[oó]digo\s+(?:de\s+un\s+solo\s+uso|de\s+desbloqueo|de\s+confirmaci[oó]n|de\s+acceso)",
        r"combinaci[oó]n",
        r"(?:n[uú]mero|c[oó]digo)\s+secreto",
        r"clave\s+(?:del?\s+(?:la\s+)?)?(?:cajero|tarjeta|banco|alarma|portal)",
        r"caja\s+(?:de\s+)?llaves",
    ),
    "pt": (
        r"cofre",
        r"caixa(?:\s+registradora)?",
        r"desbloqueio",
        r"bloqueio\s+de\s+tela",
        r"c[oó]digo\s+pin",
        r"c[oó]digo\s+de\s+verifica[cç][aã]o",
        r"c[oó]digo\s+d[oa]\s+(?:port[ãa]o|porta|alarme|cofre|pr[ée]dio)",
        r"senha\s+do\s+cart[ãa]o",
        r"segredo\s+do\s+cofre",
        r"(?:caixa|cofre)\s+(?:de\s+|das\s+)?chaves",
        r"n[uú]mero\s+secreto",
        r"alarme",
        r"c[oó]digo\s+(?:de\s+uso\s+[úu]nico|de\s+desbloqueio|de\s+confirma[cç][ãa]o)",
        r"combina[çc][ãa]o",
    ),
    "it": (
        r"cassaforte",
        r"cassa",
        r"sblocco",
        r"blocco\s+schermo",
        r"codice\s+pin",
        r"codice\s+di\s+verifica",
        r"codice\s+(?:del(?:l['’]\s*|la\s+)?)?(?:portone|porta|cancello|allarme|citofono|cassaforte)",
        r"(?:codice\s+)?antifurto",
        r"allarme",
        r"codice\s+(?:monouso|di\s+sblocco|di\s+conferma|otp)",
        r"combinazione",
        r"cassett(?:a|ina)\s+(?:delle\s+|per\s+le\s+)?chiavi",
        r"(?:numero|codice)\s+segreto",
    ),
    "pl": (
        r"kasa",
        r"odblokowani[ae]",
        r"blokad[aay]\s+ekranu",
        r"kod\s+pin",
        r"kod\s+weryfikacyjny",
        r"pin\s+do\s+karty",
        r"kod\s+(?:do\s+)?(?:drzwi|domofonu|alarmu|bramy|sejfu|furtki)",
        r"kod\s+jednorazowy",
        r"(?:kod\s+)?blik(?:\s+kod)?",
        r"kod\s+(?:sms|potwierdzaj[aą]cy|autoryzacyjny)",
        r"kombinacj[aię]",
        r"skrytk[aięi]\s+(?:na|z)\s+klucz(?:e|ami)",
        r"sejf(?:u)?",
    ),
    "ru": (
        r"сейф(?:а|у)?",
        r"касс[аыу]",
        r"разблокировк[аиу]",
        r"пук(?:-?код)?",
        r"(?:пин|pin)(?:-?код)?",
        r"код\s+(?:из\s+смс|подтверждения|для\s+входа|из\s+sms)",
        r"код\s+(?:от\s+)?(?:двери|дверей|домофона|подъезда|сигнализации|сигналки|замка|сейфа|"
        r"калитки|ворот)",
        r"сигнализаци[яиюей]",
        r"сигналк[аиуе]",
        r"одноразов(?:ый|ого)\s+код",
        r"комбинаци[яиюе]",
        r"ключниц[аеуы]",
    ),
    "uk": (
        r"сейф(?:а|у)?",
        r"розблокуванн[яю]",
        r"(?:пін|pin)(?:-?код)?",
        r"код\s+(?:з\s+смс|із\s+смс|підтвердження|для\s+входу)",
        r"код\s+(?:від\s+)?(?:дверей|домофона|під['’]їзду|сигналізації|замка|сейфа|хвіртки)",
        r"сигналізаці[яїюєй]",
        r"одноразов(?:ий|ого)\s+код",
        r"комбінаці[яїюєй]",
    ),
    "zh": (
        r"保险[柜箱]",
        r"收银机?",
        r"锁屏",
        r"屏幕锁",
        r"PUK码?",
        r"验证码",
        r"PIN码",
        r"支付密码",
        r"开门密码",
        r"门禁码",
        r"动态(?:码|密码)",
        r"确认码",
        r"报警器?(?:密码|码)",
        r"(?:报警器?|警报器?)?(?:解锁|解除|撤防)码",
    ),
    "nl": (
        r"kluis",
        r"kassa",
        r"ontgrendel\w*",
        r"schermvergrendeling",
        r"pincode",
        r"deurcode",
        r"alarmcode",
        r"toegangscode",
        r"verificatiecode",
        r"poortcode",
        r"eenmalige\s+code",
        r"\w+code",
        r"combinatie",
        r"alarmsysteem",
        r"sleutel(?:kluis|kastje|box)(?:je)?",
    ),
    "sv": (
        r"kassaskåp(?:et)?",
        r"kassa(?:n)?",
        r"skärmlås(?:et)?",
        r"upplåsning\w*",
        r"pinkod(?:en)?",
        r"portkod(?:en)?",
        r"larmkod(?:en)?",
        r"dörrkod(?:en)?",
        r"verifieringskod(?:en)?",
        r"engångskod(?:en)?",
        r"bankid-?kod(?:en)?",
        r"\w+kod(?:en)?",
        r"larm(?:et)?",
        r"kombination(?:en)?",
        r"nyckel(?:box|skåp|gömma)(?:en)?",
    ),
    "tr": (
        r"(?:çelik\s+)?kasa",
        r"ekran\s+kilidi",
        r"kilit\s+kodu",
        r"pin\s+kod(?:u|um)",
        r"(?:kapı|alarm|kasa)\s+(?:şifresi|kodu)",
        r"(?:doğrulama|onay|sms|giriş)\s+kodu(?:n|nuz|m|muz)?",
        r"tek\s+kullanımlık\s+(?:kod|şifre)",
        r"anahtar\s+kutusu(?:nun)?",
    ),
    "cs": (r"kód\s+(?:od|k|ke)\s+(?:dveří|bráně|alarmu|trezoru)", r"ověřovací\s+kód"),
    "id": (r"kode\s+(?:pintu|alarm|otp|verifikasi|keamanan|brankas)",),
    "da": (r"pinkode(?:n)?", r"dørkode(?:n)?", r"alarmkode(?:n)?", r"portkode(?:n)?"),
    "fi": (r"pin-?koodi", r"ovikoodi", r"hälytyskoodi"),
    "ja": (
        r"金庫",
        r"レジ",
        r"ロック解除",
        r"画面ロック",
        r"暗証番号",
        r"(?:解除|PIN|認証|確認|ワンタイム|ログイン)コード",
        r"認証番号",
        r"ワンタイムパスワード",
        r"(?:オートロック|玄関|ドア|金庫|ロッカー|キーボックス)の?(?:番号|暗証番号|コード|パスコード)",
        r"オートロック",
        r"(?:警報|アラーム)(?:の)?(?:解除)?(?:番号|コード)",
    ),
    "ko": (
        r"금고",
        r"포스",
        r"잠금\s*해제",
        r"화면\s*잠금",
        r"핀\s*번호",
        r"PIN\s*번호",
        r"인증\s*(?:번호|코드)",
        r"확인\s*코드",
        r"해제\s*코드",
        r"(?:공동\s*)?(?:현관|도어락|금고|경보|키\s*박스|대문|사물함|게이트)\s*(?:해제\s*)?(?:번호|비번|비밀번호|코드)",
        r"해제\s*(?:번호|코드)",
    ),
    "ar": (
        r"[وفبل]?(?:ال)?خزنة",
        r"[وفبل]?(?:ال)?خزينة",
        r"[وفبل]?(?:ال)?كاشير",
        r"[وفبل]?قفل\s+الشاشة",
        r"[وفبل]?(?:ال)?رقم(?:\s+\S+)?\s+(?:ال)?سري",
        r"[وفبل]?(?:ال)?رمز\s+(?:ال)?سري",
        r"[وفبل]?رمز\s+(?:الباب|الإنذار|الانذار|التحقق|الدخول|البوابة|التأكيد|التفعيل)",
        r"[وفبل]?كود\s+(?:التحقق|التفعيل|التأكيد)",
        r"[وفبل]?(?:ال)?إنذار",
        r"[وفبل]?رقم\s+(?:ال)?(?:خزنة|خزينة|باب|بوابة|إنذار|انذار)",
        r"[وفبل]?(?:ال)?انذار",
    ),
    "he": (r"ה?קוד\s+(?:ל|ה)?(?:כניסה|דלת|אזעקה|סודי|בניין|אימות)",),
    "hi": (r"पिन",),
    "el": (r"PIN",),
}

#: A bank's code word, a secret word, a security answer: a plain word is their value.
WORD_LABELS: dict[str, tuple[str, ...]] = {
    "en": (
        r"code\s*word",
        r"secret\s+word",
        r"memorable\s+(?:word|answer|phrase)",
        r"(?:security|secret)\s+(?:question\s+)?answer",
        r"answer\s+to\s+(?:the|my)\s+security\s+question",
        r"(?:mother|mum|mom|mam|ma)'?s\s+maiden\s+name",
        r"safe\s*word",
    ),
    "ru": (
        r"кодов(?:ое|ого)\s+слов[оа]",
        r"секретн(?:ое|ого)\s+слов[оа]",
        r"ответ\s+на\s+(?:секретный|контрольный)\s+вопрос",
    ),
    "uk": (r"кодов(?:е|ого)\s+слов[оа]", r"секретн(?:е|ого)\s+слов[оа]"),
    "de": (r"(?:code|kenn|losungs|geheim|kontroll)wort", r"sicherheitsantwort"),
    "fr": (r"mot\s+(?:secret|de\s+code|code)", r"r[ée]ponse\s+secr[èe]te"),
    "es": (r"palabra\s+secreta", r"respuesta\s+(?:secreta|de\s+seguridad)"),
    "it": (r"parola\s+segreta", r"risposta\s+segreta"),
    "pt": (r"palavra[\s-]secreta", r"resposta\s+secreta"),
    "pl": (
        r"s[łl]owo\s+(?:kodowe|has[łl]o)",
        r"has[łl]o\s+do\s+banku(?:\s+telefonicznego)?",
    ),
    "nl": (r"(?:code|geheim)woord",),
    "sv": (r"kodord(?:et)?", r"hemligt\s+ord(?:et)?"),
    "tr": (r"gizli\s+kelime(?:si|niz)?", r"güvenlik\s+(?:sorusu(?:nun)?\s+)?cevab[ıi]"),
    "ja": (r"合言葉", r"秘密の(?:質問の)?答え"),
    "ko": (r"보안\s*(?:질문\s*)?(?:답변|답)", r"비밀\s*질문\s*답"),
    "zh": (r"密保答案", r"安全问题答案"),
    "ar": (r"[وفبل]?(?:ال)?كلمة\s+(?:ال)?سرية",),
}

#: Labels said only with a connector, of a value that reads as generated ("the key is …").
SAID_KEY_LABELS: dict[str, tuple[str, ...]] = {
    "en": (r"key",),
}
#: A card's verification code: 3–4 digits, with or without a connector.
CVV_LABELS: dict[str, tuple[str, ...]] = {
    "en": (
        r"(?:cvv|cvc)2?(?:[\s-]?(?:code|kod(?:en|u)?|kode|код|nummer|number|numarası|번호))?",
        r"cvn",
        r"csc",
        r"security\s+code",
        r"(?:3|4|three|four)\s+digits\s+(?:on|at)\s+the\s+back(?:\s+of\s+(?:the|my|your)\s+card)?",
        r"code\s+on\s+the\s+back(?:\s+of\s+(?:the|my|your)\s+card)?",
    ),
    "de": (
        r"(?:karten)?prüf(?:nummer|ziffer)",
        r"sicherheitscode",
        r"(?:3|4|drei|vier)\s+ziffern\s+(?:hinten\s+)?auf\s+der\s+r[üu]ckseite",
        r"code\s+auf\s+der\s+r[üu]ckseite",
    ),
    "fr": (
        r"cryptogramme(?:\s+visuel)?",
        r"code\s+de\s+s[ée]curit[ée]",
        r"(?:3|4|trois|quatre)\s+chiffres\s+(?:au\s+dos|derri[èe]re)(?:\s+de\s+la\s+carte)?",
    ),
    "es": (
        r"c[oó]digo\s+de\s+seguridad",
        r"(?:3|4|tres|cuatro)\s+d[íi]gitos\s+(?:de\s+atr[áa]s|del\s+reverso|de\s+detr[áa]s)",
    ),
    "pt": (
        r"c[oó]digo\s+de\s+seguran[cç]a",
        r"(?:3|4|tr[êe]s|quatro)\s+d[íi]gitos\s+(?:do\s+verso|de\s+tr[áa]s|atr[áa]s)",
    ),
    "it": (
        r"codice\s+di\s+sicurezza",
        r"(?:3|4|tre|quattro)\s+cifre\s+(?:sul\s+retro|dietro)",
    ),
    "ru": (
        r"код\s+безопасности",
        r"cvv-?код",
        r"свв",
        r"(?:3|4|три|четыре)\s+цифры\s+(?:на\s+обороте|сзади|на\s+обратной\s+стороне)",
    ),
    "uk": (r"код\s+безпеки", r"(?:3|4|три|чотири)\s+цифри\s+(?:на\s+звороті|ззаду)"),
    "zh": (r"安全码", r"CVV码", r"校验码", r"背面的?(?:三|四|3|4)位(?:数字?|码)?"),
    "ja": (r"セキュリティコード", r"裏面?の?(?:3|4|三|四)桁"),
    "ko": (r"보안\s*코드", r"CVC\s*번호", r"뒷면\s*(?:3|4|세|네)\s*자리"),
    "ar": (
        r"[وفبل]?رمز\s+(?:ال)?(?:أمان|الامان|التحقق\s+من\s+البطاقة)",
        r"(?:ال)?أرقام\s+(?:ال)?ثلاث(?:ة)?\s+(?:على|في)\s+ظهر\s+(?:ال)?بطاقة",
    ),
    "tr": (r"güvenlik\s+kodu", r"arka(?:s[ıi]ndaki|daki)\s+(?:3|4|üç|dört)\s+(?:rakam|hane)"),
    "nl": (
        r"beveiligingscode",
        r"(?:3|4|drie|vier)\s+cijfers\s+(?:op\s+de\s+achterkant|achterop)",
    ),
    "sv": (r"säkerhetskod(?:en)?", r"(?:3|4|tre|fyra)\s+siffrorna\s+(?:på\s+baksidan|bak)"),
    "pl": (r"(?:3|4|trzy|cztery)\s+cyfry\s+(?:z\s+tyłu|na\s+odwrocie)(?:\s+karty)?",),
}

#: Copulas between a label and its value, per language ("is", "ist", "est", "это", …);
#: every language also takes English's and the symbols (``:``, ``=``, ``-``, ``→``).
CONNECTOR_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("is", "was", "will be", "reads", "it's", "its", "it is"),
    "de": ("ist", "lautet", "war", "heißt", "wäre"),
    "fr": ("est", "c['’]est", "était", "sera"),
    "es": ("es", "era", "será", "sería"),
    "pt": ("é", "era", "será", "seria"),
    "it": ("è", "e['’]", "era", "sarà"),
    "pl": ("to", "jest", "brzmi", "było", "będzie"),
    "ru": ("это", "был", "была", "будет", "такой", "такая", "це"),
    "uk": ("це", "був", "була", "буде", "такий", "таке", "это"),
    "zh": ("是", "为", "為", "就是", "改成", "改为", "设为", "设置为", "换成"),
    "nl": ("is", "was", "luidt", "wordt", "blijft"),
    "sv": ("är", "var", "blir", "lyder"),
    "tr": ("şu", "şöyle", "ise"),
    "cs": ("je", "bylo", "zní", "bude"),
    "id": ("adalah", "yaitu", "ialah", "yakni"),
    "da": ("er", "var", "bliver"),
    "fi": ("on", "oli"),
    "hu": ("pedig",),
    "ro": ("este", "e"),
    "vi": ("là",),
    "el": ("είναι", "ήταν"),
    "he": ("הוא", "היא", "זה"),
    "hi": ("है",),
    "fa": ("است",),
    "ja": ("は", "が", "も", "を", "＝"),
    "ko": ("는", "은", "가", "이", "를", "을", "도"),
    "ar": ("هي", "هو", "هى", "كالتالي"),
}

# --- identifiers (env names, JSON and YAML keys, code) ------------------------------------------

#: Parts of an identifier (split at ``_ - .`` and camelCase) that name a password.
NAME_PASSWORD_PARTS = words(
    """
    password passwd pwd pass passphrase passcode pw passwort kennwort senha haslo mdp
    motdepasse contrasena contrasenya wachtwoord losenord lösenord sifre şifre parola
    parolachiave hasło пароль parol palavrapasse losen clave ww mima bimil bimilbeonho amho
    pasuwado
    """
)
#: Parts that name a token, key or other secret.
NAME_KEY_PARTS = words(
    """
    secret secrets token apikey credential credentials privatekey auth key sig signature
    chiave klucz schluessel schlussel sleutel nyckel anahtar
    """
)
#: Parts that make a name *about* a secret, not one (``TOKEN_FILE``, ``max_tokens``).
NAME_NOT_SECRET_PARTS = words(
    """
    length len count max min limit limits ttl expiry expires expire expiration size file
    files path dir url uri name names id ids type mode enabled enable disabled header field
    param env var hint policy reset rotation strength prompt label required changed at
    updated created public pub usage used budget per rate timeout seconds ms format version
    algorithm alg regex pattern placeholder input form button message error valid
    validation manager strategy source provider kind index idx column tokens keys passwords
    primary foreign sort partition cache idempotency dedup routing row map lookup group
    object bucket ssh gpg author authors authority authorize authorized oauth2 sign
    keyboard keyword keywords passport passenger compass bypass
    """
)

# --- needles: a text holding none of them holds no label (a property test checks every label) --

LABEL_NEEDLES = words(
    """
    pass pw psw mdp key code kennwort schlüssel contra digo senha ordine codice chiave hasł
    hasle kod парол пас гасло код 密码 口令 密碼 api token secret auth clé cle jeton clave
    llave chave klucz ключ токен секрет 密钥 秘钥 私钥 令牌 pin cvv cvc otp geheimzahl пин пін
    验证码 cred login wifi wi-fi vpn zugang wlan anmelde identifiant acc aces logowania dost
    доступ логин логін вход вхід 账号
    wachtw paswoord inlog sleutel lösen nyckel kod şifre parola anahtar hesl klíč kód sandi
    laluan kunci adgangs kodeord passord kode salasana tunnussana koodi jelsz parol khau khẩu
    κωδικ συνθηματ סיסמ קוד पासवर्ड رمز گذرواژه پسورد パス 合言葉 キー トークン 秘密鍵 シークレット
    コード 暗証 비밀번호 비번 패스 암호 키 토큰 시크릿 번호 코드 كلمة باس مفتاح توكن كود الرقم رقم
    combination cvn csc cryptogramme prüf digicode alarm disarm antifurto allarme сигнал
    word wort слов mot palabra parola palavra słow slow woord kodord hemlig kelime 合言葉 秘密の 보안 비밀
    密保 安全问题 暗号 سرية blik bankid tan login sign confirmation security access conferma
    confirmaci confirma autoryz potwierdz подтвержд входа входу підтвердж giriş 認証 確認 ログイン
    인증 확인 动态 确认 التأكيد التفعيل التحقق كلمه answer combo kombin p4s pa$ p@$ p4$ pa5 p@5
    p45 ответ réponse reponse risposta respuesta resposta cevab antwort maiden combina комбин lock keybox intercom einmal engångs larm eenmalige jednoraz одноразов tek ww ぱす パスワ パす ぱス 번호 비반 비빈 비븐 비민 금고 ロック
    현관 도어락 경보 警報 アラーム 番号 報警 报警 动态 إنذار انذار unlock unique usage memorable
    蜜码 蜜碼 蜜马 蜜玛 秘码 秘碼 秘马 秘玛 觅码 觅碼 觅马 觅玛 密马 密玛 parol
    安全码 开门 门禁 código codice pincode deurcode puk पिन приватн mima kelmet segredo комбін
    larmkod portkod dörrkod pinkod وورد bilgi pas p@s losen sifre haslo wachtw порол парал порал seguridad seguran sicurezza безопасн безпек свв 校验
    セキュリティ 보안 أمان الامان güvenlik beveiliging säkerhet sicherheits
    segret sejf chiav 解锁 解除 撤防 buzzer keypad p.i.n p.a.s.s
    safe strong register till screen punch server tresor kasse bildschirm entsperr coffre caisse
    verrouill caja tpv desbloq bloqueo cofre caixa bloqueio cassa sblocco blocco kasa odblok
    blokad сейф касс разблок пук розблок kluis kassa ontgrendel scherm kassaskåp skärmlås
    upplås kilid kilit 保险 收银 锁屏 屏幕 puk 金庫 レジ 画面 금고 포스 잠금 화면 خزن خزين كاشير قفل
    kennantw antwoord svar cevab odpowied sekretna 密保 جواب إجابة haseł hasel
    digits ziffern chiffres dígitos digitos cifre cijfers siffror cyfry цифры цифри rakam 桁
    뒷면 背面 أرقام 2fa mfa arka
    """
)
#: Labels spelt out letter by letter ("P I N", "p a s s w o r d").
LABEL_NEEDLES = LABEL_NEEDLES | frozenset(TYPO_NEEDLES) | {"p i n", "p a s s"}
#: Needles of secret-named identifiers (:func:`~memory_worker.privacy.masking.labels.assigned_values`).
NAME_NEEDLES = frozenset(
    {"pass", "pw", "secret", "token", "key", "auth", "cred", "sig"}
    | {"haslo", "hasło", "sifre", "şifre", "senha", "mdp", "contrase", "wachtwoord", "losen"}
    | {"lösen", "kennwort", "parol", "clave", "chiave", "klucz", "sleutel", "nyckel", "anahtar"}
    | {"schluessel", "schlussel", "motdepasse", "пароль", "_ww", "mima", "bimil", "amho"}
    | {"pasuwado"}
)
