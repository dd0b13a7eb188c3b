"""The words of ordinary talk around a label: what may stand between a label and its value,
what says a phrase is *about* a secret, and the words that follow a label in ordinary talk
("the password is *wrong*", "het wachtwoord is *onjuist*", "lösenordet är *fel*"), which are
never taken for a value.

Data, not code, per language: :mod:`memory_worker.privacy.masking.labels` reads these tables
beside the labels of :mod:`memory_worker.privacy.masking.lexicon`.
"""

from __future__ import annotations

from memory_worker.privacy.masking.needles import words

#: Words before "code" that say it is not a secret ("zip code 10115", "error code 1234").
NOT_SECRET_CODES = words(
    """
    zip postal post area alan country error status exit return http response source color colour
    dial iso currency airport product bar qr tracking order event language tax sort promo
    discount coupon voucher dress genetic morse machine program python
    postleitzahl fehler fehlercode postal postale erreur error errore erro pocztowy błędu
    почтовый ошибки поштовий помилки d'erreur
    producto produit prodotto produto produktu produkt продукта товара товару artikel
    article articolo artículo artigo referencia référence riferimento referência
    reference ref model modelo modello modell модели barcode posta postcode postnummer
    postnumret cep hata hatası fout foutcode fel felkod pocztowego kreskowy штрих
    invoice bill order ticket rechnung bestellung facture commande factura pedido fattura
    ordine fatura faktura zamówienie счёт счет заказ рахунок замовлення factuur bestelling
    räkning beställning sipariş rabatowy rabatt rabais descuento sconto desconto скидка
    знижка korting promo coupon gutschein rabattcode quell strich streck länder land farb
    steuer kampanj actie bestell kortings loto lotto lottery lotería lotteria loteria
    lotterie лотерея lotek المنتج заказа замовлення
    منتج الموديل الخطأ البريدي
    """
)
#: Words of a value that stands for one: "tu_contraseña_aquí", "sua_senha_aqui",
#: "buraya_sifreni_yaz", "your-token-here" (whose, where, a verb of typing, the secret's
#: own name), in the languages of the labels.
PLACEHOLDER_WORDS = words(
    """
    your yours tu tua tuo tus sua seu su votre vos ton ta dein deine deinen ihr ihre twoje
    twój twoja twoj ваш ваша твой твоя твій твоя jouw uw ditt din senin kendi sizin
    here aquí aqui ici hier qui qua tutaj здесь тут här buraya burada 여기에 여기 ここに ここ
    这里 在这里 هنا
    put enter insert write type paste yaz gir mettre metti inserisci insira coloque
    introduce escribe pon wpisz введи введите впиши вставь vul ange skriv
    password passwort kennwort contraseña contrasena senha sifre şifre sifreni şifreni
    sifrenizi şifrenizi mot passe motdepasse hasło haslo пароль wachtwoord lösenord losenord
    key token secret clave chiave klucz ключ chave schlüssel cle clé example sample dummy
    placeholder changeme ejemplo exemple esempio exemplo beispiel przykład пример
    """
)
#: What a placeholder written in a language without spaces holds: the secret's own name or
#: a word of "put it here" ("ここにパスワード", "비밀번호를_입력하세요", "在此填写密码",
#: "ضع_كلمة_المرور_هنا"): a value holding one, and no ASCII letter or digit, is none.
PLACEHOLDER_PIECES = words(
    """
    パスワード 暗証番号 ここ 入力 記入 비밀번호 비번 암호 여기 입력 密码 密碼 密钥 口令 这里 此处 在此
    填写 填入 输入 كلمة المرور هنا ضع أدخل اكتب
    """
)
#: Words that may stand between a connector and the value ("the password is *now* …"); one
#: word each (Polish "po prostu" is ``prostu``: ``po`` alone is "after", "hasło po zapytaniu").
FILLER_ADVERBS = words(
    """
    now still currently simply just literally actually jetzt nun einfach maintenant
    simplement ahora simplemente agora ora adesso semplicemente teraz prostu
    теперь сейчас просто тепер зараз nu artık şimdi sekarang nyní
    """
)
#: Words between a label and its value that give the label another sense: a password in a
#: film or a book ("the password in the movie was 'swordfish'"), a queue's ticket, which
#: Portuguese and Spanish call a "senha" or a "turno" ("a senha do atendimento é B-42"). After
#: one of them only a value no sentence would hold is taken.
OTHER_SENSES = words(
    """
    movie movies film films book books novel story stories series episode cartoon anime manga
    comic comics fairytale
    filmen buch roman serie märchen geschichte comic
    livre roman série histoire conte bd
    peli película pelicula libro novela cuento historia telenovela
    romanzo storia fiaba fumetto
    filme livro romance história historia conto novela desenho
    boek verhaal sprookje
    boken bok romanen serien sagan
    filmie filmu książce książki powieści serialu bajce
    фильме фильма фильм книге книги романе сериале сказке мультике
    filmde filmdeki kitapta kitaptaki dizide dizideki masalda
    映画 小説 漫画 アニメ ドラマ 영화 소설 드라마 만화 电影 小说 电视剧 漫画 动画
    الفيلم فيلم الرواية المسلسل
    atendimento fila guichê guiche balcão turno espera ventanilla cola guichet attente
    warteschlange wartenummer coda sportello wachtrij kön kölapp kolejce kolejki kolejka
    очереди очередь талон sıra sırası
    """
)
#: Words after a label that say the phrase is about the secret, not giving it
#: ("password *manager* is great", "password *policy*: 12 characters").
NOT_FILLERS = words(
    """
    manager managers policy policies reset hint field length strength requirement
    requirements rule rules change changes generator recovery expiry prompt protection
    protected hash hashes form page screen dialog strength checker
    gestionnaire gestor gerenciador menedżer менеджер менеджера manager-а politique política
    richtlinie regeln правила политика
    public publique publics público pública publico publica pubblico pubblica publiczny
    publicznego öffentlicher öffentliche öffentlichen публичный открытый публічний
    відкритий publiek publieke publik publika genel fingerprint fingerprints
    flow process procedure link count counts
    clock clocks wecker réveil despertador sveglia budzik будильник будильника wekker väckarklocka
    """
)
#: Words after a key's label that say what follows is not the key: its hash, fingerprint or id,
#: a commit ("key fingerprint …", "token id …"), a token's limit or budget ("token limit is
#: 128000").
NOT_NEAR_KEYS = words(
    """
    hash checksum sha256 sha-256 sha1 md5 commit id uuid хеш хэш prüfsumme fingerprint
    ssh-ed25519 ssh-rsa ssh-dss authorized_keys known_hosts ecdsa-sha2-nistp256
    отпечаток відбиток empreinte huella impronta impressão odcisk vingerafdruk
    fingeravtryck parmak izi 指纹 指紋 지문 بصمة
    limit limits count usage budget size window lifetime ttl type format endpoint quota file
    """
)
#: Prepositions of a change ("set the password *to* …", "Passwort *auf* … geändert",
#: "changé le mot de passe *en* …", "поменял пароль *на* …"); English ``to`` only after a
#: verb of change (:data:`CHANGE_VERBS`), elsewhere it is a destination.
CHANGE_PREPOSITIONS = words("to auf en a para in na на")
CHANGE_VERBS = words("set sets setting change changed changing reset update updated")
#: Words between a value and its label ("Xk2… *as my* password", "… *comme* mot de passe").
AS_WORDS = words("as als comme como come jako как як")
#: Words that may stand between a label and a bare value ("senha *temporária* Xk2…").
FILLER_ADJECTIVES = words(
    """
    new temporary temp initial default old admin root master one-time neue neues temporäres
    nouveau temporaire provisoire nueva temporal provisional nova temporária provisória nuovo
    nuova temporanea provvisoria nowe tymczasowe новый временный старый новий тимчасовий
    wpa wpa2 wpa3 wep psk wpa-psk wpa2-psk
    """
)
#: Words before a label that make it an action, not a secret ("*reset* password flow").
NOT_BEFORE = words(
    "reset forgot forgotten forget lost recover public pub publishable host öffentlicher "
    "öffentliche öffentlichen publique pública publica público pubblica publiczny publiczna "
    "публичный открытый відкритий публічний publieke publiek publika publik açık genel "
    "сброс сброса сбросить восстановление восстановить забыл забыла скидання скинути забув "
    "забула zurücksetzen vergessen vergessenes réinitialiser réinitialisation oublié oubliée "
    "restablecer restablecimiento olvidé olvidada redefinir redefinição esqueci esquecida "
    "reimpostare reimpostazione dimenticato dimenticata zresetuj resetowanie zapomniałem "
    "zapomniałam vergeten herstellen återställ återställa glömt glömde sıfırla sıfırlama "
    "unuttum"
)
#: Words before "pass" that make it a ticket or a verb, not a password, when no connector
#: follows ("boarding pass BA2490X", "I will pass Test123 on"): "wifi pass Xk2…" is one.
PASS_NOT_BEFORE = words(
    """
    boarding bus season day week weekly month monthly annual year ski hall backstage press
    vip museum rail eurail interrail travel transit metro train subway tram gym event
    festival park parking guest visitor game battle free mountain i we you they he she it
    will would can could to not don't didn't won't must should and or then please
    """
)
#: What a "pass" opens, named right after it ("pass wifi Xk2…", "pass vpn: …").
PASS_TARGETS = words(
    "wifi wi-fi wlan vpn mail email e-mail gmail router modem admin root db ssh ftp nas server "
    "netflix laptop pc"
)
#: Words that open a phrase naming what the secret is for ("пароль от вайфая", "für das WLAN").
PREPOSITIONS = words(
    """
    for to of on от для к до від на für zum zur vom de du del da do di per dla od у в
    van voor bij op till för på av från al della dello dei dal dalla dos das ao pour
    na ze z із з для od için untuk dari ke pro pre beta3 bta3 btaa3 bita3 a à fürs beim
    ins aufs ot vid dlya
    """
)

#: Words that follow a label in ordinary talk; never a value ("password: required").
NOT_VALUES = words(
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
    zapomniałam zapomniałem zapomniałeś zapomniałaś забыл забыла забув забула vergessen oublié
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
    elsewhere anywhere nowhere gone woanders ailleurs otra otro altrove gdzie
    şifreniz şifrenizi şifreni sifreniz sifrenizi parolanız parolanızı parolan
    hatırlamıyorum bilmiyorum unuttum hatırlamadım
    claro sure yep yeah yes да так ja oui tak evet sí si sim 네 是 はい idk dunno
    """
)
#: The same, in the languages added beside the project's own (NL, SV, TR, CS, ID, DA/NO, FI,
#: HU, RO, VI; in ZH, JA, KO, AR, EL, HE, HI and FA a value is ASCII, so no word of theirs
#: is taken for one).
NOT_VALUES_MORE = words(
    """
    onjuist fout verkeerd juist goed correct verlopen ongeldig geldig te kort lang zwak sterk
    nieuw nieuwe oud oude veranderd gewijzigd vergeten geheim veilig hetzelfde anders leeg
    opgeslagen versleuteld minimaal niet nog al nu hier daar mijn jouw jou zijn haar ons onze
    hun en of maar wat waar wanneer hoe verplicht nodig een de het dit dat gewoon oké ja nee
    vereist zelfde bekend onbekend verstuurd verzonden gestuurd gereset veranderd aangepast
    skickat skickad återställt uppdaterat gesendet verschickt aktualisiert envoyé envoyée
    enviado enviada inviato inviata wysłany wysłane отправлен отправлено надіслано
    gönderildi
    fel rätt korrekt ogiltigt ogiltig utgånget för kort långt svagt starkt nytt gammalt ändrat
    glömt bortglömt glömd okänt hemligt samma annat tomt sparat krypterat minst inte här där mitt ditt hans hennes
    vårt ert deras och eller men som vad när bra dåligt okej nej klart viktigt känsligt
    obligatoriskt
    yanlış hatalı doğru geçersiz geçerli süresi dolmuş çok kısa uzun zayıf güçlü yeni eski
    değişti değiştirildi unuttum unutuldu gizli güvenli aynı farklı boş kaydedildi şifreli
    az değil henüz zaten şimdi burada orada benim senin onun bizim sizin ve veya ama ne
    nerede gerekli zorunlu bir bu şu o tamam evet hayır nedir neydi lazım
    špatně špatné chybné správné správně neplatné vypršelo příliš krátké dlouhé slabé silné
    nové staré změněno zapomenuté tajné bezpečné stejné jiné prázdné uložené alespoň
    nejméně není ještě už teď tady tam moje tvoje jeho její naše vaše jejich nebo ale kde
    kdy povinné potřeba ten ano
    salah benar kadaluarsa tidak terlalu pendek panjang lemah kuat baru lama diganti diubah
    lupa rahasia aman sama beda kosong disimpan minimal belum sudah sekarang di sini sana
    saya aku kamu dia kami kita dan atau tapi apa mana kapan wajib perlu ini itu oke ya
    forkert rigtig ugyldig udløbet kort lang svag stærk ny gammel ændret glemt hemmelig
    samme anden tom gemt ikke endnu allerede nu her der min din hans hendes vores jeres og
    eller men hvad hvor hvornår feil riktig utløpt endret glemt hemmelig
    väärä oikein virheellinen vanhentunut liian lyhyt pitkä heikko vahva uusi vanha
    vaihdettu unohtunut salainen sama eri tyhjä ei vielä jo nyt täällä siellä minun sinun
    hibás helyes érvénytelen lejárt túl rövid hosszú gyenge erős új régi megváltozott
    elfelejtett titkos nem még már most itt ott
    greșită greșit corectă corect invalidă expirată prea scurtă lungă slabă puternică nouă
    veche schimbată uitată secretă aceeași goală nu încă deja acum aici acolo mea ta lui
    sai đúng hết hạn quá ngắn dài yếu mạnh mới cũ đã đổi quên bí mật không vẫn rồi bây giờ
    never always sometimes nunca siempre jamais toujours parfois niemals immer manchmal nie
    nigdy zawsze czasem nooit altijd soms aldrig alltid ibland никогда всегда иногда ніколи
    завжди іноді asla hiç hiçbir daima bazen mai sempre talvolta às vezes sempre
    忘了 忘记了 不知道 不记得 忘れた 知らない 覚えてない 몰라 몰라요 잊었어 잊어버렸어 기억 안 나
    monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday tonight
    montag dienstag mittwoch donnerstag freitag samstag sonntag heute morgen gestern
    lundi mardi mercredi jeudi vendredi samedi dimanche aujourd'hui demain hier
    lunes martes miércoles jueves viernes sábado domingo hoy mañana ayer
    lunedì martedì mercoledì giovedì venerdì sabato domenica oggi domani ieri
    segunda terça quarta quinta sexta sábado domingo hoje amanhã ontem
    maandag dinsdag woensdag donderdag vrijdag zaterdag zondag vandaag gisteren
    måndag tisdag onsdag torsdag fredag lördag söndag idag imorgon igår
    poniedziałek wtorek środa czwartek piątek sobota niedziela dziś dzisiaj jutro wczoraj
    понедельник вторник среда четверг пятница суббота воскресенье сегодня завтра вчера
    pazartesi salı çarşamba perşembe cuma cumartesi pazar bugün yarın dün
    """
)
#: Words that name who logs in: a bare value after ``pass`` may follow them ("user admin pass
#: …", "логин bob пасс …").
USER_LABELS = words(
    """
    user username usr uname login id benutzer benutzername nutzer usuario usuário utilisateur
    identifiant utente użytkownik login: логин юзер пользователь логін користувач gebruiker
    gebruikersnaam användare användarnamn kullanıcı kullanıcı adı uživatel pengguna
    brugernavn käyttäjä felhasználó utilizator 用户名 账号 ユーザー名 ユーザー 아이디 사용자
    يوزر اليوزر يوزرنيم مستخدم المستخدم 유저 用户 帐号 帳號 ユーザ ユーザーid юзернейм
    """
)
#: Words that deny what follows ("Xk2… is *not* my password").
NEGATIONS = words(
    """
    not no isn't wasn't never nicht kein keine pas ne n'est no nunca não nao non nie не ні
    niet geen inte ej değil nije není tidak bukan ikke ei nem nu không 不 不是 아니 아냐 ليس ليست
    """
)
#: Words that join a value to a label named after it ("Xk2… *is my* password", "… *ist mein*
#: Passwort", "… *это мой* пароль", "… *benim* şifrem", "… *itu* password aku").
BEFORE_WORDS = words(
    """
    is was will be would as as: = : - — – -> → <- <-- <= ← ⬅ 's 're c it's its that's thats ist war wäre als
    est était c'est comme es era será como é era será è e' era sarà come to jest było jako это
    был была будет как це був була буде як är var blir som je bylo itu adalah yaitu ialah er
    on oli az este e là είναι ήταν הוא היא זה है است هي هو 是 就是 为 が は も 이게 이건 이거 게
    건 benim bizim ayrıca mijn mitt min moje mój moja mein meine mon ma mes mi mis minha meu
    la mia il mio мой моя мій моя my our the a new old current wifi bank email mail
    내 제 나의 우리 이 가 私の 僕の 俺の うちの 我的 我们的 我家 这是 这就是 那是 这个是 これが これは
    それが
    """
)
#: Words that open a line naming the value on the line above ("*that's* the pw", "*это*
#: пароль", "*dat* is het wachtwoord", "*ده* باسورد").
DEMONSTRATIVES = frozenset(
    words(
        """
        this that that's thats it's its here's это вот це ось das dies diese dieser c'est
        c’est ce cela ça esa ese esta este eso esto questa questo quella quello essa esse
        isso to tamto ten dat dit det detta bu şu ده دي دا هذا هذه هذي 这 那 上面 これ
        それ 上の 이게 이건 그게 위에
        """
    )
)
#: Units and currencies after a number: an amount, not a code ("15000 рублей", "4500 mAh").
UNITS = words(
    """
    rub руб рублей рубля рубль грн гривень гривні eur euro euros evro usd dollars dollar
    zł zl złotych pln kr kronor kroner sek nok dkk tl lira lire chf yen yuan won lei ft
    mah mb gb kb tb km kg mm cm ml mg ms min sec seconds minutes hours stunden minuten cents cent
    ريال درهم دينار جنيه ليرة
    sekunden secondes segundos secondi секунд минут часов
    """
)
#: Words that open an answer before its value ("it's Kx9…", "claro: …", "да, Kx9…").
ASSENT_WORDS = frozenset(
    [
        *words(
            """
            it's its here's here sure yes yeah yep ok okay sí si claro vale oui ouais voilà ja
            jo klar hier tak da да ага так ось вот evet tabii sim certo ecco eccola aqui aquí
            här burada 네 응 是 好 はい ええ نعم
            """
        ),
        "it is",
    ]
)
#: Words after which a code's digits are a time or a count, not the code ("PIN changed *at*
#: 1400", "door code for *over* 2000 flats").
DIGIT_STOPS = frozenset(
    [
        "at",
        "in",
        "on",
        "since",
        "until",
        "after",
        "before",
        "every",
        "than",
        "about",
        "around",
        "over",
        "under",
        "within",
        "by",
        "um",
        "am",
        "seit",
        "bis",
        "в",
        "с",
        "до",
        "после",
        "через",
        "à",
        "depuis",
        "avant",
        "après",
        "desde",
        "hasta",
        "antes",
        "después",
        "for",
        "a",
        "las",
        "o",
        "om",
        "klockan",
        "kl",
        "às",
        "alle",
        "from",
        "von",
        "aus",
        "dès",
        "dal",
        "från",
        "van",
        "od",
        "з",
        "für",
        "pour",
        "alle",
        "ore",
        "kl",
        "saat",
        "godz",
        # an alarm that went off at a time ("larmet gick 0300 i natt")
        "went",
        "goes",
        "rang",
        "rings",
        "sounded",
        "sonó",
        "suena",
        "sonne",
        "sonné",
        "klingelt",
        "ging",
        "gick",
        "går",
        "ringde",
        "suona",
        "suonato",
        "tocou",
        "toca",
        "zadzwonił",
        "сработала",
        "сработал",
        "çaldı",
    ]
)

#: Words that bind prose (articles, prepositions, pronouns, a few verbs of talk): a phrase
#: holding one is a sentence, not a passphrase ("check the fridge note page12").
PHRASE_STOPS = words(
    """
    the a an to of in on at for is are was my your our his her its it this that and or with
    from by as be me you we they check see ask use page room gate
    le la les de du des et un une est au aux sur dans pour mon ton son
    el los las del y en es por con mi tu su
    der die das den dem und ein eine zu von mit ist im am auf für
    het een van en op voor met is mijn
    och att för på med är min
    il lo gli di che per con mio
    o os as do da em um uma com meu
    w z na do i jest to
    """
)

#: Words that judge a value named before its label as an example, not give it as one's own
#: ("password123 is a *terrible* password", "qwerty ist ein *schlechtes* Passwort").
JUDGEMENTS = words(
    """
    terrible bad weak common good strong typical classic popular worst best example examples
    famous default obvious horrible awful dumb stupid insecure secure unsafe guessable
    schlechtes schlechter schlecht schwaches schwach typisches typisch beliebtes bekanntes
    sicheres unsicheres gutes beispiel mauvais faible classique typique exemple nul
    malo mala débil típica típico clásica ejemplo buena segura insegura pessima debole
    tipica classica esempio buona sicura péssima fraca clássica exemplo boa slecht zwak
    typisch voorbeeld goed onveilig dåligt svagt typiskt exempel säkert osäkert złe słabe
    typowe przykład dobre плохой слабый типичный пример хороший ненадёжный kötü zayıf
    tipik örnek iyi güvensiz
    """
)

#: Words that join two things named together ("usuário *e* senha", "username *and* password").
CONJUNCTIONS = words("and & e und et y en och i и і ve and/or oraz или або と 和 및 و")
