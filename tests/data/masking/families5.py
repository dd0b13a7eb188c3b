"""The train rows of round 7: the concepts the dev6 part (test6, scored once as held out, then
read) showed the rules missing or over-reaching, each written fresh in several of the fifteen
languages of the split (EN DE FR ES IT PT NL SV PL RU TR JA KO ZH AR), never a dev6 line:

- a label hidden by look-alike letters beyond the common ones (Greek lunate sigma ``Ϲ``,
  Cyrillic ``Ԝ``, ``Ԛ``, ``Һ``, ``Ӏ``, ``Ү``), and the last guard reading the folded text;
- a label with its qualifier in brackets glued to it and a colon with no space
  (``password(VPN):…``, full-width ``（路由器）：``);
- an env or config key naming the password in another language, spelt in ASCII
  (``DB_HASLO``, ``SMTP_LOSEN``, ``APP_SIFRE``, ``MAIL_SENHA``);
- a card's verification code named by what it is ("the 3 digits on the back", "les trois
  chiffres au dos") or after a comma and a copula;
- a one-time code named 2FA, MFA or TOTP; a label with a Turkish case ending after an
  apostrophe (``PIN'i``, ``CVV'si``); a keypad's digits after "punch" or "tap in";
- a passphrase of several words ending in digits after its label or as a chat answer; a
  wifi key after the network's name; an answer word with no colon after a security question;
- and the look-alikes that over-reached: a command that asks for its password itself, a
  placeholder that names what to put there (``ここにパスワード``, ``your-key-here``), "never"
  said of a secret, a time such as ``10am`` beside a password word.

Read by ``generate.py`` (batch ``families5``). Every value is made up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from batch import Look, Secret, batch_rows  # type: ignore[import-not-found]  # the shared rows()

#: (category, lang, text, the secret).
SECRETS: list[tuple[str, str, str, str]] = [
    # look-alike letters beyond the common ones
    ("confusable", "en", "\u03f9ode for the side door: 40317", "40317"),
    ("confusable", "en", "\u051cifi password: Brisk_Otter_81", "Brisk_Otter_81"),
    ("confusable", "de", "\u051cLAN-Passwort: Kiefer#2290", "Kiefer#2290"),
    ("confusable", "fr", "mot de passe \u03f9anal+ : Vrl7!dune", "Vrl7!dune"),
    ("confusable", "es", "\u03f9lave del wifi: Nube.Roja77", "Nube.Roja77"),
    ("confusable", "pt", "\u03f9\u043edigo do alarme: 70412", "70412"),
    ("confusable", "it", "passw\u043erd del NAS: Gufo%8812", "Gufo%8812"),
    ("confusable", "nl", "\u051cw van de router: Tulp-Zand-73", "Tulp-Zand-73"),
    ("confusable", "sv", "l\u00f6senord till \u051cLAN: Myra!5501", "Myra!5501"),
    ("confusable", "pl", "has\u0142o do \u051ci-Fi: Sowa_Lato42", "Sowa_Lato42"),
    ("confusable", "tr", "\u051ci-Fi \u015fifresi: Kartal.9915", "Kartal.9915"),
    ("confusable", "en", "\u0500B password = Qv8!lantern", "Qv8!lantern"),
    ("confusable", "ja", "\u03f9ODE\uff1a88420", "88420"),
    ("confusable", "ko", "\ube44\u200b\ubc00\ubc88\ud638\uff1aHanul77!x", "Hanul77!x"),
    ("confusable", "zh", "\u5bc6\u200b\u7801\uff1aZhu_Lin_6621", "Zhu_Lin_6621"),
    # small capitals, the Latin alpha, Greek epsilon and omega (written with their rule)
    (
        "confusable",
        "en",
        "\u1d18\u1d00ss\u1d21\u1d0f\u0280\u1d05 for the NAS: Trq4!melon",
        "Trq4!melon",
    ),
    ("confusable", "de", "\u1d18\u026a\u0274 vom Handy: 58210", "58210"),
    ("confusable", "fr", "mot de p\u0251sse de la box : Vsk2!orage", "Vsk2!orage"),
    ("confusable", "de", "K\u03b5nnwort Drucker: Lmz4!tanne", "Lmz4!tanne"),
    ("confusable", "en", "pass\u03c9ord (router): Qx7#harbor", "Qx7#harbor"),
    # a label's qualifier in brackets, glued, and a colon with no space
    ("qualified_label", "en", "password(NAS):Trv5_kolmar", "Trv5_kolmar"),
    ("qualified_label", "en", "pwd(vpn):Hx7yTq2LmW", "Hx7yTq2LmW"),
    ("qualified_label", "de", "Passwort(Drucker):Bmw9xLq2pz", "Bmw9xLq2pz"),
    ("qualified_label", "fr", "mdp(box):Lapin7Bleu3", "Lapin7Bleu3"),
    ("qualified_label", "es", "contraseña(router):Gato_Azul_58", "Gato_Azul_58"),
    ("qualified_label", "pt", "senha(wifi):Caju-Verde-12", "Caju-Verde-12"),
    ("qualified_label", "it", "password(posta):Rospo44Fiume", "Rospo44Fiume"),
    ("qualified_label", "pl", "hasło(skrzynka):Lis8Wrzos2", "Lis8Wrzos2"),
    ("qualified_label", "ru", "пароль(почта):Zvezda_0471", "Zvezda_0471"),
    ("qualified_label", "tr", "şifre(modem):Deniz_Yel_33", "Deniz_Yel_33"),
    ("qualified_label", "ja", "パスワード（社内Wi-Fi）：Umi_Kaze_903", "Umi_Kaze_903"),
    ("qualified_label", "ja", "ｐａｓｓ（ＮＡＳ）：Tori77Mori", "Tori77Mori"),
    ("qualified_label", "ko", "비밀번호（공유기）：Bada_Sori_48", "Bada_Sori_48"),
    ("qualified_label", "zh", "密码（打印机）：Lvse_Shan_27", "Lvse_Shan_27"),
    ("qualified_label", "zh", "ｐａｓｓｗｏｒｄ（邮箱）：Yun8Hai2Qw", "Yun8Hai2Qw"),
    ("qualified_label", "ar", "كلمة المرور(الراوتر):Nakhla_Zaq_61", "Nakhla_Zaq_61"),
    # an env or config key naming the password in another language, in ASCII
    ("env_native_key", "pl", "plik konfiguracyjny:\nSMTP_HASLO=Wq81mZpLc0TxR", "Wq81mZpLc0TxR"),
    ("env_native_key", "pl", "FTP_HASLO: kP9vLr2ZqXy4", "kP9vLr2ZqXy4"),
    ("env_native_key", "sv", "config:\nWIFI_LOSEN=Rv4PqN8sXk2t", "Rv4PqN8sXk2t"),
    ("env_native_key", "sv", "DB_LÖSEN=Hm2kR9vQ7pLs", "Hm2kR9vQ7pLs"),
    ("env_native_key", "tr", "ayarlar:\nMAIL_SIFRE=Gt6ZmP3qLw9R", "Gt6ZmP3qLw9R"),
    ("env_native_key", "tr", "ADMIN_PAROLA=bQ4nX8kLz2Vt", "bQ4nX8kLz2Vt"),
    ("env_native_key", "pt", "APP_SENHA=Jr5TqW2mXk8P", "Jr5TqW2mXk8P"),
    ("env_native_key", "fr", "SMTP_MDP=Lq7Vn3ZpKx9T", "Lq7Vn3ZpKx9T"),
    ("env_native_key", "es", "BD_CLAVE=Pz4Rk8WmQ2Lv", "Pz4Rk8WmQ2Lv"),
    ("env_native_key", "es", "DB_CONTRASENA=Tx2Lq9VmRk5Z", "Tx2Lq9VmRk5Z"),
    ("env_native_key", "nl", "MAIL_WACHTWOORD=Kv8Zq3LpXm2R", "Kv8Zq3LpXm2R"),
    ("env_native_key", "de", "FTP_KENNWORT=Wn6Rx2QpLz9K", "Wn6Rx2QpLz9K"),
    ("env_native_key", "ru", "DB_PAROL=Mx3Kq8ZvLr2T", "Mx3Kq8ZvLr2T"),
    ("env_native_key", "it", "SMTP_CHIAVE=Rq9Lx2VmPk7Z", "Rq9Lx2VmPk7Z"),
    # a card's verification code named by what it is, or after a comma and a copula
    (
        "cvv_described",
        "en",
        "card's already saved, it only wants the three digits on the back: 731",
        "731",
    ),
    ("cvv_described", "en", "the code on the back of the card is 4082", "4082"),
    ("cvv_described", "de", "die drei Ziffern auf der Rückseite: 519", "519"),
    ("cvv_described", "fr", "les trois chiffres au dos de la carte : 286", "286"),
    ("cvv_described", "fr", "il demande le code de sécurité, c'est 947", "947"),
    ("cvv_described", "es", "los tres dígitos de atrás de la tarjeta: 604", "604"),
    ("cvv_described", "es", "me pide el código de seguridad, es 318", "318"),
    ("cvv_described", "it", "le tre cifre sul retro: 852", "852"),
    ("cvv_described", "pt", "os três dígitos do verso do cartão: 467", "467"),
    ("cvv_described", "nl", "de drie cijfers op de achterkant: 390", "390"),
    ("cvv_described", "sv", "de tre siffrorna på baksidan: 725", "725"),
    ("cvv_described", "pl", "trzy cyfry z tyłu karty: 148", "148"),
    ("cvv_described", "ru", "три цифры на обороте карты: 563", "563"),
    ("cvv_described", "tr", "kartın arkasındaki 3 rakam: 209", "209"),
    ("cvv_described", "ja", "カード裏の3桁：614", "614"),
    ("cvv_described", "ko", "카드 뒷면 3자리: 872", "872"),
    ("cvv_described", "zh", "卡背面的三位数：395", "395"),
    ("cvv_described", "ar", "الأرقام الثلاثة على ظهر البطاقة: 481", "481"),
    ("cvv_described", "en", "CVC, it's 226", "226"),
    # a one-time code named 2FA, MFA or TOTP
    ("otp_abbrev", "en", "the 2FA for the shared inbox: 551093", "551093"),
    ("otp_abbrev", "de", "MFA vom Firmenkonto: 208817", "208817"),
    ("otp_abbrev", "fr", "le 2FA du compte pro : 774120", "774120"),
    ("otp_abbrev", "pt", "o 2FA da conta: 390655", "390655"),
    ("otp_abbrev", "it", "il TOTP del server: 612044", "612044"),
    ("otp_abbrev", "pl", "kod 2FA z aplikacji: 845301", "845301"),
    ("otp_abbrev", "nl", "de MFA van het portaal: 117920", "117920"),
    ("otp_abbrev", "sv", "2FA till banken: 663218", "663218"),
    ("otp_abbrev", "tr", "2FA kodu: 930441", "930441"),
    ("otp_abbrev", "ja", "2FAコード：481502", "481502"),
    ("otp_abbrev", "ru", "2FA от почты: 270196", "270196"),
    # a Turkish case ending after an apostrophe
    ("label_suffix", "tr", "telefonun PIN'i 6620", "6620"),
    ("label_suffix", "tr", "kartın CVV'si: 418", "418"),
    ("label_suffix", "tr", "SIM kartın PUK'u: 84120733", "84120733"),
    ("label_suffix", "tr", "modemin Wi-Fi'si şifresi: Leylek_77x", "Leylek_77x"),
    ("label_suffix", "tr", "laptopun PIN'ini 3391 yaptım", "3391"),
    # a keypad's digits after punch or tap in
    ("keypad_verb", "en", "side entrance: punch 40951 and push hard", "40951"),
    ("keypad_verb", "en", "at the bike shed just punch 7714#", "7714#"),
    ("keypad_verb", "en", "garage keypad, tap in 55210 then wait for the beep", "55210"),
    # a passphrase of several words ending in digits
    (
        "passphrase",
        "ko",
        "와이파이 비번 tiger lemon garden rocket27",
        "tiger lemon garden rocket27",
    ),
    (
        "passphrase",
        "ja",
        "ルーターのパスワード maple orbit candle frost19",
        "maple orbit candle frost19",
    ),
    ("passphrase", "zh", "家里wifi密码 river cloud pepper stone88", "river cloud pepper stone88"),
    (
        "passphrase",
        "en",
        "wifi password: copper violet ladder moon42",
        "copper violet ladder moon42",
    ),
    (
        "passphrase",
        "de",
        "WLAN-Passwort ist nebel fichte karte sonne31",
        "nebel fichte karte sonne31",
    ),
    (
        "passphrase",
        "fr",
        "[20:02] Zoé : c'est quoi le mot de passe du wifi ?\n[20:03] Malo : lampe fleuve orage piano64",
        "lampe fleuve orage piano64",
    ),
    (
        "passphrase",
        "es",
        "[08:10] Ana: ¿la clave del wifi?\n[08:11] Leo: cactus nube tren playa09",
        "cactus nube tren playa09",
    ),
    ("passphrase", "nl", "wifi-wachtwoord: fiets molen kaas regen55", "fiets molen kaas regen55"),
    ("passphrase", "pl", "hasło do wifi to zamek rzeka las chmura13", "zamek rzeka las chmura13"),
    ("passphrase", "ar", "باسورد الواي فاي desert lamp olive wind73", "desert lamp olive wind73"),
    # a wifi key after the network's name
    ("wifi_key", "en", "guest wifi: SSID CafeNet, key amber_fox_river_62", "amber_fox_river_62"),
    ("wifi_key", "de", "WLAN im Keller: SSID Kellernetz / Key Tanne_Moos_48", "Tanne_Moos_48"),
    (
        "wifi_key",
        "fr",
        "wifi du gîte : réseau Gite5G, clé pomme_vent_rouge_19",
        "pomme_vent_rouge_19",
    ),
    ("wifi_key", "nl", "wifi zolder: SSID Zolder24 key bloem_dak_trein_70", "bloem_dak_trein_70"),
    ("wifi_key", "sv", "wifi i stugan: SSID Stugan nyckel gran_sjo_vind_35", "gran_sjo_vind_35"),
    # an answer word with no colon after a security question
    ("answer_word", "ko", "은행 보안 질문(어릴 적 별명) 답 Dorimaru12", "Dorimaru12"),
    ("answer_word", "en", "security question (first school) answer Brightwell77", "Brightwell77"),
    ("answer_word", "de", "Sicherheitsfrage (erstes Haustier) Antwort Flocki2009", "Flocki2009"),
    ("answer_word", "ja", "秘密の質問（母の旧姓）答え Kawanori5", "Kawanori5"),
    ("answer_word", "zh", "密保问题（小学名称）答案 Xinghua88", "Xinghua88"),
    ("answer_word", "tr", "güvenlik sorusu (ilk okul) cevap Yildizkent3", "Yildizkent3"),
    # a question naming the credential, quoted, then its answer on the same line
    (
        "question_answer",
        "nl",
        'mail van de klant: "wat is het ww van de kassa?" antwoord: Rk8vTq2Lmz',
        "Rk8vTq2Lmz",
    ),
    (
        "question_answer",
        "en",
        'ticket: "what is the pw for the demo admin?" reply: Zq4mXv9Lrt',
        "Zq4mXv9Lrt",
    ),
    (
        "question_answer",
        "de",
        'Frage im Chat: "wie ist das PW vom Gast-WLAN?" Antwort: Pq7Lz2Xv8m',
        "Pq7Lz2Xv8m",
    ),
    (
        "question_answer",
        "fr",
        "question du client : « quel est le mdp du test ? » réponse : Vz3Kq8Lm2x",
        "Vz3Kq8Lm2x",
    ),
    # a value with an equals sign inside, after a copula
    ("value_equals", "es", "la contraseña del club es Xp4=Qm7+Lv, no la compartáis", "Xp4=Qm7+Lv"),
    ("value_equals", "en", "the new password is Rt8=vW2+kQ, keep it to yourself", "Rt8=vW2+kQ"),
    ("value_equals", "de", "das Passwort ist Lm5=Zq9+Tx, bitte nicht weitergeben", "Lm5=Zq9+Tx"),
]

#: (lang, text): what must be kept as written.
LOOKS: list[tuple[str, str]] = [
    # a command that asks for its password itself
    ("de", "`ssh admin@nas` – das Passwort fragt er danach ab"),
    ("de", "`sudo apt update` fragt nach dem Passwort, dann läuft es"),
    ("en", "`docker login registry.example.com` asks for the password itself"),
    ("en", "`psql -h db -U app` will prompt for the password afterwards"),
    ("fr", "`ssh root@box` demande le mot de passe ensuite"),
    ("es", "`docker login` te pide la contraseña después"),
    ("it", "`mysql -u root -p` chiede la password subito"),
    ("pt", "`docker login` pede a senha depois"),
    ("nl", "`docker login ghcr.io` vraagt zelf om het wachtwoord"),
    ("sv", "`ssh pi@raspberry` frågar efter lösenordet sedan"),
    ("pl", "`sudo` zapyta o hasło potem"),
    ("pl", "`ssh root@serwer` i podaj hasło po zapytaniu"),
    ("ru", "`docker login` сам спросит пароль потом"),
    ("tr", "`docker login` şifreyi kendisi soruyor"),
    # a placeholder that names what to put there
    ("en", "set OPENAI_API_KEY=sk-...paste-your-key... in the .env"),
    ("en", "API_TOKEN=<your token> goes in the config"),
    ("ja", "設定ファイルに DB_PASSWORD=ここにパスワードを入力 と書く"),
    ("ja", "PASSWORD=パスワードをここに のままにしないで"),
    ("ko", "설정에 DB_PW=여기에_비밀번호 라고 적어 두세요"),
    ("ko", "APP_PASSWORD=비밀번호입력 으로 바꾸세요"),
    ("zh", "配置文件里 DB_PASSWORD=请输入密码 先别改"),
    ("zh", "SECRET_KEY=这里填密钥"),
    ("ar", "في الملف PASSWORD=ضع_كلمة_المرور_هنا"),
    # "never" said of a secret
    ("pt", "a vovó perguntou se o banco pede a senha: nunca"),
    ("es", "¿el banco te pide la contraseña por SMS? nunca"),
    ("tr", "banka şifreyi soruyor mu: asla"),
    ("fr", "la banque demande le mot de passe : jamais"),
    ("de", "fragt die Bank nach dem Passwort? niemals"),
    ("pl", "czy bank pyta o hasło: nigdy"),
    ("nl", "vraagt de bank om je wachtwoord: nooit"),
    ("sv", "frågar banken efter lösenordet: aldrig"),
    ("ru", "спрашивает ли банк пароль: никогда"),
    ("it", "la banca chiede la password: mai"),
    ("en", "does the bank ask for your password: never"),
    (
        "en",
        "\u1d1b\u029c\u1d00\u0274\u1d0bs \u0493\u1d0f\u0280 \u1d1b\u029c\u1d07 \u1d18\u1d00ss\u1d21\u1d0f\u0280\u1d05 \u1d1b\u026a\u1d18",
    ),
    # a time beside a password word
    ("en", "busy day: dentist 9am, the wifi password got changed so reconnect, gym at 6pm"),
    ("en", "reminder: password rotation meeting moved to 11am tomorrow"),
    # a wifi key said of a place, digits of a card that are no CVV
    ("en", "wifi: SSID CafeNet, key is on the sticker under the router"),
    ("en", "the three digits on the back are worn off, I'll call the bank"),
    ("fr", "les trois chiffres au dos sont effacés"),
    ("es", "los tres dígitos de atrás ya no se leen"),
    ("en", "2FA is on for everyone since 2023"),
    ("de", "MFA: Pflicht ab 01.04."),
    ("en", "punch 2 holes in the card and tap in at the gate"),
    ("tr", "PIN'i 4 haneli olmalı"),
    ("ko", "보안 질문 답 기억 안 나요"),
    ("en", "security question answer forgotten again"),
    ("en", "password: four random words like correct horse battery staple"),
]


#: A second set, written fresh after the first fixes as a blind author might (a CVV alone, a
#: wifi named with its network, env keys in other scripts, a door or gate opened by its digits,
#: login codes, PINs), scored before the rules changed for it: 52 of 72 caught, 2 of 59
#: look-alikes changed (then fixed by concept: an entry opened or keyed by its digits, a CVV
#: label glued to a particle, a security protocol between label and value, romanised env
#: keys, a network's name or a standard's number is no value).
FRESH: list[tuple[str, str, str, str]] = [
    ("cvv_alone", "en", "the bank app wants the CVV only, it's 845", "845"),
    ("cvv_alone", "de", "nur noch die Prüfziffer fehlt: 372", "372"),
    ("cvv_alone", "es", "solo falta el CVV: 193", "193"),
    ("cvv_alone", "it", "mi chiede solo il CVV, è 284", "284"),
    ("cvv_alone", "nl", "alleen de CVC nog: 551", "551"),
    ("cvv_alone", "pl", "kod CVV z tyłu karty to 662", "662"),
    ("cvv_alone", "ru", "CVV на обороте — 719", "719"),
    ("cvv_alone", "ja", "カードのセキュリティコードは 408 です", "408"),
    ("cvv_alone", "zh", "卡的安全码是 227", "227"),
    ("cvv_alone", "ko", "CVC는 913이에요", "913"),
    ("cvv_alone", "ar", "رمز الأمان 386", "386"),
    ("cvv_alone", "tr", "kartın güvenlik kodu 574", "574"),
    ("cvv_alone", "sv", "CVC-koden är 238", "238"),
    ("cvv_alone", "pt", "o código de segurança do cartão é 961", "961"),
    ("cvv_alone", "fr", "le CVV c'est 504", "504"),
    (
        "wifi_network",
        "en",
        "home wifi → network: Kestrel5G / pass: Ember-Tide-2291",
        "Ember-Tide-2291",
    ),
    (
        "wifi_network",
        "de",
        "WLAN-Schlüssel fürs Gästenetz: 6617 2290 1187 4432",
        "6617 2290 1187 4432",
    ),
    (
        "wifi_network",
        "fr",
        "le wifi de mamie : réseau Livebox-81A2, clé WPA 9c4F2a7e11Bd",
        "9c4F2a7e11Bd",
    ),
    ("wifi_network", "es", "wifi del bar: red Pepe_5G contraseña gato-luna-88", "gato-luna-88"),
    ("wifi_network", "it", "wifi dell'ufficio: rete Ufficio24 password Cedro!449", "Cedro!449"),
    ("wifi_network", "pt", "rede do escritório: Escritorio_2G, senha praia.sol.91", "praia.sol.91"),
    ("wifi_network", "nl", "wifi thuis: netwerk Ziggo7712, ww Kaasje!2020", "Kaasje!2020"),
    ("wifi_network", "sv", "wifi på landet: nätverk Stugan, lösen Blabar_88", "Blabar_88"),
    ("wifi_network", "pl", "wifi u babci: sieć Orange_33, hasło Pierogi77!", "Pierogi77!"),
    ("wifi_network", "ru", "вайфай на даче: сеть Dacha_5G, пароль Malina_2024", "Malina_2024"),
    ("wifi_network", "tr", "ev wifi: ağ TurkNet_42, şifre Simit.Cay.55", "Simit.Cay.55"),
    (
        "wifi_network",
        "ja",
        "実家のWi-Fi\u3000SSID: Jikka_5G\u3000パスワード: neko_kotatsu_42",
        "neko_kotatsu_42",
    ),
    ("wifi_network", "ko", "카페 와이파이 이름 Cafe_Mong 비번 latte2580", "latte2580"),
    ("wifi_network", "zh", "公司wifi 名称 Office_5G 密码 Qiye@8866", "Qiye@8866"),
    ("wifi_network", "ar", "واي فاي البيت: الشبكة Beit_5G وكلمة السر Yasmin_1990", "Yasmin_1990"),
    (
        "env_native_key",
        "en",
        ".env\nSTRIPE_WEBHOOK_SIGNING=whsec_9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "whsec_9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    ),
    ("env_native_key", "de", "meine .env:\nMAIL_KENNWORT=Gr8vXq2LmZ5t", "Gr8vXq2LmZ5t"),
    ("env_native_key", "fr", "config.yml :\n  mot_de_passe: Trq8Lm2vXz9K", "Trq8Lm2vXz9K"),
    (
        "env_native_key",
        "es",
        'settings.json: {"usuario": "admin", "clave_acceso": "Hx2Pq8vLm4Zt"}',
        "Hx2Pq8vLm4Zt",
    ),
    ("env_native_key", "it", "nel file .env:\nDB_PASS_PROD=Kz7Qv2Lm8Xp4", "Kz7Qv2Lm8Xp4"),
    ("env_native_key", "pt", "arquivo .env:\nSENHA_BANCO=Vq2Lx8Zm4Tp9", "Vq2Lx8Zm4Tp9"),
    ("env_native_key", "nl", ".env bestand:\nSMTP_WW=Lp4Xq8Zv2Mt7", "Lp4Xq8Zv2Mt7"),
    ("env_native_key", "ru", "мой .env:\nPOSTGRES_PAROL=Zx8Lq2Vm4Tp7", "Zx8Lq2Vm4Tp7"),
    ("env_native_key", "ja", ".envファイル:\nDB_PASSWORD_PROD=Tq8Zx2Lm4Vp6", "Tq8Zx2Lm4Vp6"),
    ("env_native_key", "zh", ".env 文件:\nREDIS_MIMA=Kp2Zx8Lq4Vm7", "Kp2Zx8Lq4Vm7"),
    ("env_native_key", "ko", ".env:\nDB_BIMIL=Lq8Zx2Vm4Tp6", "Lq8Zx2Vm4Tp6"),
    ("env_native_key", "tr", ".env:\nVERITABANI_PAROLASI=Mq8Zx2Lv4Tp5", "Mq8Zx2Lv4Tp5"),
    ("entry_keyed", "en", "garage: enter 4471 and press the bell", "4471"),
    ("entry_keyed", "de", "Hoftor: 7731 eingeben, dann Raute", "7731"),
    ("entry_keyed", "fr", "portail : taper 2580 puis valider", "2580"),
    ("entry_keyed", "es", "el portal se abre con el 9031", "9031"),
    ("entry_keyed", "it", "il cancello si apre con 6620#", "6620#"),
    ("entry_keyed", "pt", "o portão abre com 3317", "3317"),
    ("entry_keyed", "nl", "de poort gaat open met 4408", "4408"),
    ("entry_keyed", "sv", "grinden öppnas med 8852", "8852"),
    ("entry_keyed", "pl", "furtka otwiera się kodem 1975", "1975"),
    ("entry_keyed", "ru", "калитка открывается кодом 3344", "3344"),
    ("entry_keyed", "tr", "bahçe kapısı 5566 ile açılıyor", "5566"),
    ("entry_keyed", "ja", "裏門は 7420 で開きます", "7420"),
    ("entry_keyed", "ko", "공동현관은 1234* 누르면 열려요", "1234*"),
    ("entry_keyed", "zh", "小区大门按 8068# 就开", "8068#"),
    ("otp", "ar", "البوابة تفتح بالرقم 6240", "6240"),
    ("otp", "en", "your login code: 839 204 — don't share it", "839 204"),
    ("otp", "es", "tu código de acceso es 551 903", "551 903"),
    ("otp", "de", "Anmeldecode: 447019", "447019"),
    ("otp", "fr", "code de connexion 662 018", "662 018"),
    ("otp", "ja", "認証コード 530129", "530129"),
    ("otp", "ko", "인증번호 [481920]", "481920"),
    ("otp", "zh", "验证码：730215，5分钟内有效", "730215"),
    ("otp", "ru", "код для входа: 903 117", "903 117"),
    ("otp", "tr", "doğrulama kodun 774 201", "774 201"),
    ("pin", "ar", "رمز التحقق 550318", "550318"),
    ("pin", "en", "my banking app PIN is the same as the door: 0419", "0419"),
    ("pin", "it", "PIN del bancomat: 5527", "5527"),
    ("pin", "pt", "PIN do cartão 8810", "8810"),
    ("pin", "sv", "pinkoden till kortet 4471", "4471"),
    ("pin", "nl", "pincode van de bankpas: 3390", "3390"),
]
#: Its look-alikes: commands that ask for their password, placeholders in every language,
#: talk about a change, rules, agendas, PIN pads and gates that open at a time.
FRESH_LOOKS: list[tuple[str, str]] = [
    ("en", "`ssh -i ~/.ssh/id_ed25519 deploy@10.0.0.4` no password needed"),
    ("en", "run `gh auth login` and follow the prompts"),
    ("de", "`az login` öffnet den Browser, kein Passwort nötig"),
    ("fr", "lance `sudo systemctl restart nginx`, il te demandera ton mot de passe"),
    ("es", "ejecuta `mysql -u root -p` y escribe la clave cuando la pida"),
    ("it", "`ssh pi@192.168.1.20` poi inserisci la password"),
    ("nl", "`kinit jan@CORP.LOCAL` vraagt om je wachtwoord"),
    ("sv", "`sudo -i` och skriv ditt lösenord"),
    ("pl", "`psql -U postgres` zapyta o hasło"),
    ("ru", "`ssh admin@nas.local`, пароль он спросит сам"),
    ("tr", "`sudo su` yazınca şifreni soracak"),
    ("ja", "`ssh user@host` を実行するとパスワードを聞かれます"),
    ("ko", "`sudo reboot` 하면 비밀번호 물어봐요"),
    ("zh", "运行 `mysql -u root -p` 然后输入密码"),
    ("ar", "شغل `ssh root@server` وسيطلب كلمة المرور"),
    ("en", "PASSWORD=<insert password here>"),
    ("en", "DB_PASS=changeme_in_prod"),
    ("de", "PASSWORT=dein_passwort_hier"),
    ("fr", "MOT_DE_PASSE=votre_mot_de_passe"),
    ("es", "CLAVE=tu_clave_aqui"),
    ("it", "PASSWORD=inserisci_la_password"),
    ("pt", "SENHA=sua_senha_aqui"),
    ("nl", "WACHTWOORD=jouw_wachtwoord"),
    ("sv", "LOSENORD=ditt_losenord_har"),
    ("pl", "HASLO=twoje_haslo_tutaj"),
    ("ru", "PASSWORD=ваш_пароль"),
    ("tr", "SIFRE=sifrenizi_yazin"),
    ("ja", "PASSWORD=パスワード"),
    ("ko", "PASSWORD=비밀번호"),
    ("zh", "PASSWORD=你的密码"),
    ("ar", "PASSWORD=كلمة_المرور"),
    ("en", "did you change the wifi password? yes, yesterday"),
    ("de", "Passwort vom WLAN geändert? ja, gestern"),
    ("fr", "t'as changé le mot de passe ? oui hier soir"),
    ("es", "¿cambiaste la contraseña? sí, ayer"),
    ("pt", "a senha mudou? sim, semana passada"),
    ("it", "la password è cambiata? sì, stamattina"),
    ("nl", "is het wachtwoord veranderd? ja, vanochtend"),
    ("sv", "har lösenordet ändrats? ja, i morse"),
    ("pl", "zmieniłeś hasło? tak, wczoraj"),
    ("ru", "пароль поменял? да, вчера"),
    ("tr", "şifreyi değiştirdin mi? evet, dün"),
    ("en", "password tips: at least 12 chars, mix in numbers like 7 or 42"),
    ("en", "the password must be 8-64 characters, see RFC 8018"),
    ("en", "Tuesday: dentist 3pm, reset bank password, pick up kids 5:30pm, gym 7pm"),
    ("de", "Montag 8 Uhr Zahnarzt, dann Passwort fürs Portal erneuern, 14h Meeting Raum B12"),
    ("fr", "lundi 9h réunion, penser à changer le mot de passe du wifi, 18h foot"),
    ("es", "martes 10h médico, cambiar la contraseña del banco, 20h cena con Ana"),
    ("en", "the PIN pad is broken at register 3"),
    ("en", "PIN entry failed 3 times, card blocked until 2025-01-15"),
    ("en", "my CVV wore off, ordering a new card"),
    ("en", "enter 2024 in the year field"),
    ("de", "gib 2024 als Jahr ein"),
    ("en", "SSID: HomeNet_5G (password on the router sticker)"),
    ("en", "the gate opens at 0700 every day"),
    ("fr", "le portail s'ouvre à 7h00"),
    ("en", "2FA codes are 6 digits and expire in 30 s"),
    ("en", "security question: what was your first car? (I picked that one)"),
    ("en", "answer: 42 people came"),
]


def rows(next_id: Callable[[str, bool], str]) -> Iterator[dict[str, object]]:
    """Every row of the batch (``next_id(lang, secret)`` numbers them after the earlier
    batches' rows)."""
    secrets: list[Secret] = [(category, lang, t, [s]) for category, lang, t, s in SECRETS]
    secrets += [(category, lang, t, [s]) for category, lang, t, s in FRESH]
    looks: list[Look] = [("round7", lang, text) for lang, text in LOOKS]
    looks += [("round7_fresh", lang, text) for lang, text in FRESH_LOOKS]
    yield from batch_rows("families5", next_id, secrets, looks)
