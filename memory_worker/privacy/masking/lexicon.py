"""The words of labelled secrets, per language: labels, connectors, and the words that follow
a label in ordinary talk ("the password is *wrong*"), which are never taken for a value.

Data, not code: :mod:`memory_worker.privacy.masking.labels` reads these tables. The
languages are the project's own (EN, RU, DE, ES, FR, UK) and PT, IT, PL, ZH.
A label belongs to a family, which decides what may follow it:

- ``password``: any value that is not an ordinary word of :data:`NOT_VALUES`
  (a password can be a plain word: "the wifi password is swordfish");
- ``pass``: the same, but only after a connector (``pass: …``, "la pass è …"),
  never bare: a *boarding pass* is not a label;
- ``key``: only a value that reads as generated (a digit, a symbol, inner
  upper case): "the secret is patience" is advice, "the secret is Xk2-…" is not;
- ``pin``: 3–8 digits; ``code``: 4–8 digits, unless the word before says what
  kind of code it is (zip, error, status…: :data:`NOT_SECRET_CODES`);
- ``pair``: a credentials label whose value is ``user / password`` (the
  password is the part after the slash): "creds for the vpn: bob / Xk2…".
"""

from __future__ import annotations


def _words(text: str) -> frozenset[str]:
    """The whitespace-separated words of a block of text (a word list kept readable)."""
    return frozenset(text.split())


#: Label patterns (regular expressions, case-insensitive) by family and language.
PASSWORD_LABELS: dict[str, tuple[str, ...]] = {
    "en": (
        r"password",
        r"passwd",
        r"passphrase",
        r"passcode",
        r"pwd",
        r"pw",
        r"psw",
        r"passw",
        r"pword",
        r"wi-?fi\s+key",
        r"network\s+key",
        r"wpa2?\s+key",
        r"login\s+code",
    ),
    "de": (
        r"\w*passwort",
        r"\w*kennwort",
        r"zugangscode",
        r"wlan-?schlüssel",
        r"netzwerkschlüssel",
    ),
    "fr": (r"mot\s+de\s+passe", r"mdp", r"code\s+d['’]acc[eè]s", r"code\s+secret"),
    "es": (
        r"contrase[ñn]a",
        r"clave\s+del?\s+(?:acceso|wifi|wi-fi|red|router)",
        r"c[oó]digo\s+de\s+acceso",
    ),
    "pt": (r"senha", r"palavra-passe", r"c[oó]digo\s+de\s+acesso"),
    "it": (r"parola\s+d['’]ordine", r"codice\s+di\s+accesso", r"chiave\s+(?:del\s+)?wi-?fi"),
    "pl": (r"has(?:ło|ła|łem|le)", r"kod\s+dost[eę]pu"),
    "ru": (r"парол(?:ь|я|ю|ем|е)", r"код\s+доступа", r"пасс?ворд"),
    "uk": (r"парол(?:ь|я|ю|ем|і)", r"гасло", r"код\s+доступу"),
    "zh": (r"密码", r"口令", r"密碼"),
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
        r"backup[\s_-]?code",
    ),
    "de": (r"api-?schlüssel", r"geheimer?\s+schlüssel", r"privater?\s+schlüssel", r"schlüssel"),
    "fr": (r"cl[ée](?:\s+(?:api|secr[èe]te|priv[ée]e|d['’]api|d['’]acc[eè]s))?", r"jeton"),
    "es": (r"clave(?:\s+(?:api|secreta|privada))?", r"llave\s+(?:api|secreta|privada)"),
    "pt": (r"chave(?:\s+(?:de\s+)?(?:api|secreta|privada|acesso))?",),
    "it": (r"chiave(?:\s+(?:api|segreta|privata|di\s+accesso))?",),
    "pl": (r"klucz(?:a|em)?(?:\s+(?:api|prywatny|tajny|dost[eę]pu))?",),
    "ru": (r"ключ(?:а|ом)?(?:\s+api)?", r"api[\s-]?ключ", r"токен(?:а|ом)?", r"секретный\s+ключ"),
    "uk": (r"ключ(?:а|ем)?(?:\s+api)?", r"токен(?:а|ом)?", r"секретний\s+ключ"),
    "zh": (r"密钥", r"秘钥", r"私钥", r"令牌", r"访问令牌", r"API\s*密钥"),
}
PASS_LABELS: dict[str, tuple[str, ...]] = {
    "en": (r"pass",),
    "es": (r"contra",),
    "ru": (r"пасс",),
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
}
CODE_LABELS: dict[str, tuple[str, ...]] = {
    "en": (r"code",),
    "de": (r"code",),
    "fr": (r"code",),
    "es": (r"c[oó]digo",),
    "pt": (r"c[oó]digo",),
    "it": (r"codice",),
    "pl": (r"kod",),
    "ru": (r"код",),
    "uk": (r"код",),
}
#: Words before "code" that say it is not a secret ("zip code 10115", "error code 1234").
NOT_SECRET_CODES = _words(
    """
    zip postal post area country error status exit return http response source color colour
    dial iso currency airport product bar qr tracking order event language tax sort promo
    discount coupon voucher dress genetic morse machine program python
    postleitzahl fehler fehlercode postal postale erreur error errore erro pocztowy błędu
    почтовый ошибки поштовий помилки d'erreur
    """
)
PIN_LABELS: dict[str, tuple[str, ...]] = {
    "en": (
        r"pin(?:[\s-]?code)?",
        r"cvv2?",
        r"cvc2?",
        r"security\s+code",
        r"otp",
        r"(?:2fa|sms|verification|one[\s-]time)\s+code",
    ),
    "de": (r"geheimzahl", r"pin-?nummer", r"bestätigungscode"),
    "fr": (r"code\s+pin", r"code\s+de\s+(?:v[ée]rification|confirmation)"),
    "es": (r"c[oó]digo\s+pin", r"c[oó]digo\s+de\s+verificaci[oó]n"),
    "pt": (r"c[oó]digo\s+pin", r"c[oó]digo\s+de\s+verifica[cç][aã]o"),
    "it": (r"codice\s+pin", r"codice\s+di\s+verifica"),
    "pl": (r"kod\s+pin", r"kod\s+weryfikacyjny"),
    "ru": (r"пин(?:-?код)?", r"код\s+(?:из\s+смс|подтверждения)"),
    "uk": (r"пін(?:-?код)?", r"код\s+(?:з\s+смс|підтвердження)"),
    "zh": (r"验证码", r"PIN码", r"支付密码"),
}

#: Copulas between a label and its value, per language ("is", "ist", "est", "это", …);
#: every language also takes English's and the symbols (``:``, ``=``, ``-``, ``→``).
CONNECTOR_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("is", "was", "will be", "reads"),
    "de": ("ist", "lautet", "war", "heißt", "wäre"),
    "fr": ("est", "c['’]est", "était", "sera"),
    "es": ("es", "era", "será", "sería"),
    "pt": ("é", "era", "será", "seria"),
    "it": ("è", "e['’]", "era", "sarà"),
    "pl": ("to", "jest", "brzmi", "było", "będzie"),
    "ru": ("это", "был", "была", "будет", "такой", "такая", "це"),
    "uk": ("це", "був", "була", "буде", "такий", "таке", "это"),
    "zh": ("是", "为", "為", "就是", "改成", "改为", "设为", "设置为", "换成"),
}
#: Words that may stand between a connector and the value ("the password is *now* …").
FILLER_ADVERBS = _words(
    """
    now still currently simply just literally actually jetzt nun einfach maintenant
    simplement ahora simplemente agora ora adesso semplicemente teraz po prostu
    теперь сейчас просто тепер зараз
    """
)
#: Words after a label that say the phrase is about the secret, not giving it
#: ("password *manager* is great", "password *policy*: 12 characters").
NOT_FILLERS = _words(
    """
    manager managers policy policies reset hint field length strength requirement
    requirements rule rules change changes generator recovery expiry prompt protection
    protected hash hashes form page screen dialog strength checker
    gestionnaire gestor gerenciador menedżer менеджер менеджера manager-а politique política
    richtlinie regeln правила политика
    flow process procedure link
    """
)
#: Prepositions of a change ("set the password *to* …", "Passwort *auf* … geändert",
#: "changé le mot de passe *en* …", "поменял пароль *на* …"); English ``to`` only after a
#: verb of change (:data:`CHANGE_VERBS`), elsewhere it is a destination.
CHANGE_PREPOSITIONS = _words("to auf en a para in na на")
CHANGE_VERBS = _words("set sets setting change changed changing reset update updated")
#: Words between a value and its label ("Xk2… *as my* password", "… *comme* mot de passe").
AS_WORDS = _words("as als comme como come jako как як")
#: Words that may stand between a label and a bare value ("senha *temporária* Xk2…").
FILLER_ADJECTIVES = _words(
    """
    new temporary temp initial default old admin root master one-time neue neues temporäres
    nouveau temporaire provisoire nueva temporal provisional nova temporária provisória nuovo
    nuova temporanea provvisoria nowe tymczasowe новый временный старый новий тимчасовий
    """
)
#: Words before a label that make it an action, not a secret ("*reset* password flow").
NOT_BEFORE = _words("reset forgot forgotten forget lost recover")
#: Words that open a phrase naming what the secret is for ("пароль от вайфая", "für das WLAN").
PREPOSITIONS = _words(
    """
    for to of on от для к до від на für zum zur vom de du del da do di per dla od
    """
)

#: Words that follow a label in ordinary talk; never a value ("password: required").
NOT_VALUES = _words(
    """
    a an the this that these those it its is was are were be been being will would can
    could should must may might has have had do does did done not no yes ok okay nope wrong
    incorrect correct right required expired invalid valid too very so in on at under over
    into onto from for to of with without by as and or but if then than written saved
    stored same different changed reset weak strong short long secure safe still now also
    already set missing empty blank needed necessary mandatory optional hidden encrypted
    hashed shared somewhere there here mine yours his her hers their theirs our ours my
    your me you we they he she him them us what which why how where when who easy hard
    simple complicated forgotten forgot lost known unknown secret important private public
    printed inside below above attached sent generated random managed protected enabled
    disabled again yet probably maybe just only really such something nothing anything
    everything unique personal temporary new old updated rotated revoked leaked compromised
    stolen invalidated case-sensitive sensitive obvious standard usual same enough needs
    need please thanks thank see check ask use using none null nil undefined true false on
    off n/a na tbd todo xxx value example placeholder redacted hide hidden another other
    one two three four five six seven eight nine ten all any every each sticky note fridge
    wall card paper email mail chat message dm pm slack vault manager 1password lastpass
    bitwarden keepass keychain falsch richtig abgelaufen ungültig gültig zu nicht kein
    keine der die das den dem des ein eine einen einem im in auf unter noch schon jetzt
    geändert vergessen geheim sicher unsicher kurz lang schwach stark erforderlich
    notwendig gleich anders hier dort mein meine dein deine sein seine ihr ihre unser euer
    bei mit für von und oder aber wie was wo wann leer gespeichert verschlüsselt neu alt
    zurückgesetzt korrekt inkorrekt zettel incorrect faux bon mauvais expiré invalide
    valide trop pas ne le la les un une des dans sur sous encore déjà maintenant changé
    oublié sûr court long faible fort requis obligatoire même différent ici là mon ma mes
    ton ta son sa notre votre leur avec pour du et ou mais comme quoi où quand vide
    enregistré chiffré nouveau nouvelle ancien réinitialisé dessous ci-dessous quoi
    incorrecta incorrecto correcta correcto mala caducada caducado inválida válida
    demasiado el los las una en sobre bajo todavía ya ahora cambiada olvidada secreta
    segura corta larga débil fuerte obligatoria necesaria misma diferente aquí allí mi tu
    su nuestra con para del y o pero qué dónde cuándo vacía guardada cifrada nueva vieja
    muy esta esa este ese incorreta correta errada expirada inválida muito não o os as um
    uma em no na ainda já agora mudada alterada esquecida fraca forte obrigatória
    necessária aqui ali minha meu sua seu com do e ou mas que onde quando salva velha
    sbagliata errata corretta scaduta non troppo il lo gli le nel nella sul sulla ancora
    già adesso ora cambiata dimenticata segreta sicura debole obbligatoria stessa diversa
    qui lì mia mio tua per di della ma cosa dove vuota salvata vecchia molto nieprawidłowe
    błędne złe poprawne prawidłowe wygasło nieważne za nie w pod jeszcze już teraz
    zmienione zapomniane tajne bezpieczne krótkie długie słabe silne wymagane potrzebne
    takie samo inne tutaj tam moje twoje jego jej nasze z dla od i lub albo ale jak co
    gdzie kiedy puste zapisane nowe stare bardzo неверный неверен неправильный правильный
    верный истёк истек недействителен слишком не в на под ещё еще уже теперь сейчас изменён
    изменен поменял забыл забыла забыт секретный надёжный надежный короткий длинный слабый
    сильный обязателен нужен такой же тот другой здесь там мой моя твой его её ее наш ваш
    их с для от до и или но как что где когда пустой сохранён сохранен новый старый очень
    знаю помню не невірний неправильний правильний вірний закінчився занадто у під ще вже
    тепер зараз змінено забув забула секретний надійний короткий довгий слабкий сильний
    потрібен такий той інший тут мій твій її наш ваш їх з від і й або але як що де коли
    порожній збережений новий старий дуже
    raise return continue break print else elif def lambda yield await async import class
    try except finally while del assert throw const let var function
    see voir siehe ver vedi zobacz смотри дивись veja utile useful nützlich útil
    bitte erfragen demande demander pregunta pregunte pergunte chiedi zapytaj спроси спитай
    ask request que
    minimum mindestens mínimo minimo minimalnie минимум мінімум broken kaputt cassé roto
    """
)

# --- identifiers (env names, JSON and YAML keys, code) ------------------------------------------

#: Parts of an identifier (split at ``_ - .`` and camelCase) that name a password.
NAME_PASSWORD_PARTS = _words(
    """
    password passwd pwd pass passphrase passcode pw passwort kennwort senha haslo mdp
    """
)
#: Parts that name a token, key or other secret.
NAME_KEY_PARTS = _words(
    """
    secret secrets token apikey credential credentials privatekey auth key sig signature
    """
)
#: Parts that make a name *about* a secret, not one (``TOKEN_FILE``, ``max_tokens``).
NAME_NOT_SECRET_PARTS = _words(
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

LABEL_NEEDLES = _words(
    """
    pass pw psw mdp key code kennwort schlüssel contra digo senha ordine codice chiave hasł
    hasle kod парол пас гасло код 密码 口令 密碼 api token secret auth clé cle jeton clave
    llave chave klucz ключ токен секрет 密钥 秘钥 私钥 令牌 pin cvv cvc otp geheimzahl пин пін
    验证码 cred login wifi wi-fi vpn zugang wlan anmelde identifiant acc aces logowania dost
    доступ логин логін вход вхід 账号
    """
)
#: Needles of secret-named identifiers (:func:`~memory_worker.privacy.masking.labels.assigned_values`).
NAME_NEEDLES = frozenset({"pass", "pw", "secret", "token", "key", "auth", "cred", "sig"})
