"""Secret situations of test10: each a scene and its phrasing, written in at most four
languages (natively, not word for word). Placeholders as in ``frames_s.py``."""

from __future__ import annotations

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\n{sshkey}\n-----END OPENSSH PRIVATE KEY-----"

SIT_S: list[tuple[str, dict[str, str]]] = [
    # cycle 1
    (
        "password",
        {
            "en": "{pw} ← that's the login for the regatta results page, username is race_office",
            "de": "Regatta-Ergebnisdienst, Benutzer regattabuero, Passwort in der nächsten Zeile\n{pw}",
            "fr": "pour saisir les résultats de la régate : identifiant comite_course / mdp {pw}",
            "es": "la clave del programa de resultados de la regata es {pw}, usuario oficina",
        },
    ),
    (
        "wifi",
        {
            "it": "wifi del backstage dell'auditorium: rete Orchestra_Ospiti, chiave {wifi}",
            "pt": "a senha do wi-fi do camarim da sala de concertos é {wifi} (rede Orquestra_Camarim)",
            "nl": "wifi backstage concertzaal: Orkest_Gast / {wifi}",
            "sv": "wifi bakom scenen i konserthuset, nätet heter Orkester och koden är {wifi}",
        },
    ),
    (
        "lock_code",
        {
            "pl": "kłódka do przyczepy ze sprzętem szkoły cyrkowej: {door}",
            "ru": "код замка на вагончике цирковой школы {door}, трапеции внутри",
            "tr": "sirk okulunun malzeme karavanının asma kilit şifresi {door}",
            "ja": "サーカス学校の機材トレーラー、南京錠の番号は{door}です",
        },
    ),
    (
        "password",
        {
            "ko": "댄스학원 인스타 계정 아이디 studio_move 비번 {pw} 강사들만 봐요",
            "zh": "舞蹈工作室小红书账号：dance_studio，密码：{pw}，只给老师们",
            "ar": "حساب إنستغرام استوديو الرقص: اليوزر dance.studio والباسورد {pw} للمدربين بس",
            "en": "studio insta for the dance teachers → user move.studio / pw {pw} pls dont change it w/o telling me",
        },
    ),
    (
        "card",
        {
            "de": "Sprachnachricht: Karte… also die Nummer ist {card} Ablauf {exp} und die drei Ziffern hinten {cvv}",
            "fr": "(message vocal) alors la carte c'est {card} expire {exp} et les trois chiffres derrière {cvv}",
            "es": "audio transcrito: la tarjeta es {card} caduca {exp} y los tres numeritos de atrás {cvv}",
            "it": "vocale: il numero della carta è {card} scade {exp} e le tre cifre dietro {cvv}",
        },
    ),
    (
        "otp",
        {
            "pt": 'Encaminhada: "Seu código de verificação do app do dojo é {otp}. Não compartilhe."',
            "nl": 'Doorgestuurd bericht:\n"Je verificatiecode is {otp}" — is die voor de dojo-app?',
            "sv": "Vidarebefordrat: Din engångskod är {otp}. Gäller 10 min. (karateklubbens app?)",
            "pl": "Przekazana wiadomość: Twój kod SMS: {otp} (logowanie do aplikacji dojo)",
        },
    ),
    (
        "security_answer",
        {
            "ru": "в клубе бриджа спросили контрольный вопрос, я указала кличку собаки — {=Тузик-второй=}",
            "tr": "briç kulübü sitesinde gizli soru 'annenizin kızlık soyadı' — cevap {=Karabacak=}",
            "ja": "ブリッジクラブの秘密の質問、母の旧姓は{=小野寺=}で登録した",
            "ko": "브릿지 클럽 보안질문 '첫 학교' 답은 {=해송초=}로 해놨어",
        },
    ),
    (
        "ssn",
        {
            "zh": "我在美国打工的报税表上要填SSN：{ssn}，帮我看看格式对不对",
            "ar": "رقم الضمان الاجتماعي الأمريكي حقي {ssn} عشان استمارة الرواتب في فريق الرجبي",
            "en": "new rugby coach onboarding: SSN {ssn}, W-4 attached",
            "de": "für den Vertrag beim US-Rugbyteam: meine Social Security Number ist {ssn}",
        },
    ),
    (
        "seed_phrase",
        {
            "fr": "j'ai recopié la phrase de récupération du Ledger de papa, dis-moi si c'est lisible :\n{seed}",
            "es": "las palabras del Trezor de mi hermano (las paso por aquí para que no se pierdan): {seed}",
            "it": "mio zio mi ha dettato le parole del portafoglio al telefono: {seed}",
            "pt": "as palavras da carteira do meu pai, copiei do papel:\n{seed}",
        },
    ),
    (
        "door_code",
        {
            "nl": "Tramremise, kantine: druk {door} en dan de groene knop",
            "sv": "spårvagnshallen, personalingången: koden är {door}",
            "pl": "zajezdnia tramwajowa, wejście dla motorniczych – kod {door}",
            "ru": "трамвайное депо, вход для водителей: код {door}",
        },
    ),
    (
        "password",
        {
            "tr": "şarj istasyonu uygulaması\nkullanıcı: filo_ofis\nşifre:\n{pw}",
            "ja": "EV充電アプリ（社用車）\nID: fleet_office\nPW\n{pw}",
            "ko": "전기차 충전 앱 회사 계정\n아이디 fleet_office\n비번\n{pw}",
            "zh": "充电桩App公司账号\n账号：fleet_office\n密码\n{pw}",
        },
    ),
    (
        "safe_code",
        {
            "ar": "رمز الخزنة في غرفة الحمام المغربي {door} لا تنسيه",
            "en": "spa day! the in-room safe code is {door}, passports inside",
            "de": "Wellnesshotel: Safe-Code {door}, Pässe liegen drin",
            "fr": "code du coffre de la chambre au spa : {door}, les passeports sont dedans",
        },
    ),
    (
        "recovery_code",
        {
            "es": "códigos de respaldo de la cuenta de fotos de la familia:\n{rec}\n{rec2}",
            "it": "codici di backup per l'account foto di famiglia: {rec} · {rec2}",
            "pt": "códigos de backup da conta de fotos da família → {rec} e {rec2}",
            "nl": "backupcodes voor het familie-fotoaccount: {rec}, {rec2}",
        },
    ),
    (
        "pin",
        {
            "sv": "utbytesstudentens nya SIM: PIN {pin} PUK {puk}",
            "pl": "karta SIM dla studentki z wymiany: PIN {pin}, PUK {puk}",
            "ru": "симка для студента по обмену: PIN {pin}, PUK {puk}",
            "tr": "değişim öğrencisinin yeni hattı: PIN {pin} PUK {puk}",
        },
    ),
    (
        "password",
        {
            "ja": "{pw} これがカラオケ会員アプリのパスね、ポイント使っていいよ",
            "ko": "{pw} 이게 피시방 회원 비번, 시간 남은 거 써",
            "zh": "{pw} 这个是KTV会员账号的密码，积分你随便用",
            "ar": "{pw} هذا باسورد تطبيق نادي الكاريوكي، استخدم النقاط عادي",
        },
    ),
    # cycle 2
    (
        "password",
        {
            "en": "Hi! Your wedding gallery is up 🎉 password: {pw} (case sensitive)",
            "de": "Eure Hochzeitsgalerie ist online! Das Kennwort lautet {pw}",
            "fr": "Votre galerie de mariage est en ligne, mot de passe : {pw}",
            "es": "¡Ya está la galería de la boda! clave de acceso: {pw}",
        },
    ),
    (
        "api_token",
        {
            "it": "il bot telegram della squadra: token {tgid}:{tg} non girarlo",
            "pt": "token do bot do telegram do time: {tgid}:{tg}",
            "nl": "telegrambot voor het elftal, token = {tgid}:{tg}",
            "sv": "token till lagets telegrambot: {tgid}:{tg}",
        },
    ),
    (
        "multi",
        {
            "pl": "bank żywności, magazyn:\nalarm {door}\nwifi {wifi}",
            "ru": "продуктовый банк, склад:\nсигнализация {door}\nвайфай {wifi}",
            "tr": "gıda bankası deposu:\nalarm kodu {door}\nwifi şifresi {wifi}",
            "ja": "フードバンク倉庫\n警備解除 {door}\nWi-Fi {wifi}",
        },
    ),
    (
        "password",
        {
            "ko": "학원 강사 포털 아이디 t_kim 비반 {pw}",
            "zh": "补习班老师后台 账号t_wang 密马 {pw}",
            "ar": "بوابة معلمي المعهد: يوزر t_ali باسوورد {pw}",
            "en": "tutoring centre portal: user t_ellis passwrod {pw}",
        },
    ),
    (
        "pin",
        {
            "de": "Platzbuchung Tennisverein: Mitgliedsnr. 214, PIN {pin}",
            "fr": "réservation des courts : n° adhérent 214, code personnel {pin}",
            "es": "reservas de pista del club de tenis: socio 214, PIN {pin}",
            "it": "prenotazione campi tennis: tessera 214, PIN {pin}",
        },
    ),
    (
        "gate_code",
        {
            "pt": "garagem do prédio novo: o portão abre com {door}",
            "nl": "parkeergarage: slagboom opent met code {door}",
            "sv": "garaget: bommen öppnas med {door}",
            "pl": "garaż podziemny: szlaban otwiera kod {door}",
        },
    ),
    (
        "card",
        {
            "ru": "оплати очки в оптике с моей карты: {card}, срок {exp}",
            "tr": "gözlükçüye ödemeyi benim kartla yap: {card} SKT {exp}",
            "ja": "眼鏡屋の支払い、私のカードで：{card} 有効期限{exp}",
            "ko": "안경점 결제 내 카드로 해줘 {card} 유효 {exp}",
        },
    ),
    (
        "otp",
        {
            "zh": "[09:01] 老周：验证器上的码？\n[09:01] 小林：{otp}\n[09:02] 老周：登上了",
            "ar": "[09:01] خالد: كود المصادقة لحساب نادي المظلات؟\n[09:01] ريم: {otp}",
            "en": "[09:01] Sam: authenticator code for the paragliding club admin?\n[09:02] Ivy: {otp} hurry it rolls over",
            "de": "[09:01] Jonas: Code aus dem Authenticator?\n[09:02] Pia: {otp}, schnell",
        },
    ),
    (
        "password",
        {
            "fr": "serveur de projection du ciné : user projo pass {pw}",
            "es": "servidor de proyección del cine: user proyec pass {pw}",
            "it": "server di proiezione del cinema: utente proiez pass {pw}",
            "pt": "servidor de projeção do cinema: user projetor senha {pw}",
        },
    ),
    (
        "password",
        {
            "nl": "voor de stamboomdatabase van de vereniging: login archief, password {pw}",
            "sv": "släktforskarföreningens databas: login arkiv, lösenord {pw}",
            "pl": "baza towarzystwa genealogicznego: login archiwum, hasło {pw}",
            "ru": "база генеалогического общества: логин archive, пароль {pw}",
        },
    ),
    (
        "wifi",
        {
            "tr": "kaplıca otelinin wifi'si: Onsen_Misafir / {wifi}",
            "ja": "旅館のWi-Fi、パスワードは{wifi}（部屋の案内に書いてあった）",
            "ko": "료칸 와이파이 비번 {wifi}",
            "zh": "温泉旅馆WiFi密码{wifi}",
        },
    ),
    (
        "security_answer",
        {
            "ar": "سؤال الأمان في حساب وكالة السفر: مدينة الميلاد؟ الجواب {=المنصورة=}",
            "en": "the travel agency account asks 'street you grew up on' — I put {=Wexford Lane=}",
            "de": "Reisebüro-Konto, Sicherheitsfrage Lieblingslehrer: {=Frau Grünwald=}",
            "fr": "compte de l'agence de voyages, question secrète 'rue d'enfance' : {=rue des Glycines=}",
        },
    ),
    (
        "card",
        {
            "es": "alquiler de la furgo para el bolo: tarjeta {card}, CVV {cvv}",
            "it": "noleggio furgone per il concerto: carta {card} cvv {cvv}",
            "pt": "aluguel da van pro show: cartão {card} cvv {cvv}",
            "nl": "busje huren voor het optreden: kaart {card} cvc {cvv}",
        },
    ),
    (
        "lock_code",
        {
            "sv": "brandtornet: hänglåset på luckan har koden {door}",
            "pl": "wieża obserwacyjna straży leśnej, kłódka na klapie: {door}",
            "ru": "пожарная вышка, замок на люке: {door}",
            "tr": "yangın gözetleme kulesi kapak kilidi: {door}",
        },
    ),
    (
        "otp",
        {
            "ja": "銀行から来たワンタイムパスワード{otp}、これ入れればいい？",
            "ko": "은행 OTP {otp} 이거 넣으면 돼?",
            "zh": "银行发的动态码{otp}，填这个吗？",
            "ar": "رمز التحقق من البنك {otp} أدخله هنا؟",
        },
    ),
    # cycle 3
    (
        "password",
        {
            "en": "marathon reg platform admin\nlogin: racedir\npassword:\n{pw}",
            "de": "Marathon-Anmeldeportal\nLogin: orga\nPasswort:\n{pw}",
            "fr": "plateforme d'inscription du marathon\nlogin : orga\nmot de passe :\n{pw}",
            "es": "plataforma de inscripciones del maratón\nusuario: orga\ncontraseña:\n{pw}",
        },
    ),
    (
        "password",
        {
            "it": "app dell'inverter dei pannelli solari: email del nonno e password {pw}",
            "pt": "app do inversor solar: e-mail da vó e senha {pw}",
            "nl": "omvormer-app van de zonnepanelen: mail van opa, wachtwoord {pw}",
            "sv": "solcellsväxelriktarens app: morfars mejl, lösen {pw}",
        },
    ),
    (
        "pin",
        {
            "pl": "dałam Zosi kartę na urodziny w parku trampolin, PIN {pin}",
            "ru": "дала сыну карту на день рождения в батутном парке, пин-код {pin}",
            "tr": "oğluma trambolin parkı için kartımı verdim, şifresi {pin}",
            "ja": "トランポリンパーク用に娘にカード渡した、暗証番号{pin}",
        },
    ),
    (
        "door_code",
        {
            "ko": "오피스텔 현관 비번 {door} 누르고 들어와",
            "zh": "公寓大门密码{door}，按完按#",
            "ar": "رمز باب العمارة {door} وبعدها اضغط الجرس",
            "en": "building door: {door} then the bell icon. my flat is 4B",
        },
    ),
    (
        "password",
        {
            "de": "Brausteuerung im Sudhaus: Benutzer braumeister / {pw}",
            "fr": "automate de la brasserie : utilisateur brasseur / {pw}",
            "es": "control de la cervecera: usuario maestro / {pw}",
            "it": "centralina del birrificio: utente mastro / {pw}",
        },
    ),
    (
        "recovery_code",
        {
            "pt": "código de recuperação da conta do lava-jato: {rec}",
            "nl": "herstelcode voor het wasstraat-abonnement: {rec}",
            "sv": "återställningskod till biltvättens konto: {rec}",
            "pl": "kod odzyskiwania konta myjni: {rec}",
        },
    ),
    (
        "multi",
        {
            "ru": "уезжаю на конференцию, если что:\nноут — {pw}\nтелефон — {pin}",
            "tr": "konferanstayım, gerekirse:\nlaptop şifresi {pw}\ntelefon {pin}",
            "ja": "学会中なので何かあれば\nノートPC：{pw}\nスマホ：{pin}",
            "ko": "학회 가는 동안 필요하면\n노트북 {pw}\n폰 {pin}",
        },
    ),
    (
        "api_token",
        {
            "zh": "众筹页面的Stripe密钥 {stripe} 先别提交到仓库",
            "ar": "مفتاح سترايب لصفحة التبرعات {stripe} لا ترفعه على GitHub",
            "en": "stripe key for the crowdfunding page is {stripe}, DON'T commit it",
            "de": "Stripe-Key für die Crowdfunding-Seite: {stripe} – nicht ins Repo!",
        },
    ),
    (
        "wifi",
        {
            "fr": "wifi de l'internat\n{wifi}\n(réseau Internat-Eleves)",
            "es": "wifi del internado\n{wifi}",
            "it": "wifi del convitto\n{wifi}",
            "pt": "wi-fi do internato\n{wifi}",
        },
    ),
    (
        "otp",
        {
            "nl": "pakketkluis bij de supermarkt, ophaalcode {otp}",
            "sv": "paketskåpet vid Ica, uthämtningskod {otp}",
            "pl": "paczkomat pod blokiem, kod odbioru {otp}",
            "ru": "постамат у дома, код получения {otp}",
        },
    ),
    (
        "api_token",
        {
            "tr": "discord botumuzun tokeni {discord} sunucuya ekledim",
            "ja": "鯖のDiscord botのトークン {discord}",
            "ko": "디코 봇 토큰 {discord}",
            "zh": "Discord机器人token：{discord}",
        },
    ),
    (
        "password",
        {
            "ar": "حساب التبرعات للجنة المسجد: المستخدم lajna وكلمة المرور {pw}",
            "en": "community hall donations account: lajna / {pw}",
            "de": "Spendenkonto vom Gemeindehaus, Online-Zugang: gemeinde / {pw}",
            "fr": "compte des dons de la salle communale : comite / {pw}",
        },
    ),
    (
        "pin",
        {
            "es": "el PIN de administrador del datáfono de la quesería es {pin}",
            "it": "PIN amministratore del POS del caseificio: {pin}",
            "pt": "PIN de admin da maquininha da queijaria: {pin}",
            "nl": "beheerders-pin van de pinautomaat in de kaaswinkel: {pin}",
        },
    ),
    (
        "keysafe",
        {
            "sv": "bastuföreningens stuga: nyckeln i boxen, koden {door}",
            "pl": "domek klubu saunowego: klucz w skrzynce, kod {door}",
            "ru": "домик банного клуба: ключ в ящике, код {door}",
            "tr": "sauna kulübünün kulübesi: anahtar kutuda, kod {door}",
        },
    ),
    (
        "card",
        {
            "ja": "寄付の支払い、私のカードで\n番号 {card}\n期限 {exp}\nCVC {cvv}",
            "ko": "기부 결제 내 카드로\n번호 {card}\n유효기간 {exp}\nCVC {cvv}",
            "zh": "帮我捐款用这张卡\n卡号 {card}\n有效期 {exp}\nCVV {cvv}",
            "ar": "ادفع التبرع ببطاقتي\nالرقم {card}\nالانتهاء {exp}\nالرمز {cvv}",
        },
    ),
    # cycle 4
    (
        "seed_phrase",
        {
            "en": "note to self (delete later!!) metamask: {seed}",
            "de": "Notiz an mich (später löschen!) Wallet: {seed}",
            "fr": "note pour moi (à effacer !) portefeuille : {seed}",
            "es": "nota para mí (¡borrar!) cartera: {seed}",
        },
    ),
    (
        "ssn",
        {
            "it": "per il visto J-1 mi hanno dato il social security number {ssn}",
            "pt": "meu SSN do intercâmbio nos EUA é {ssn}",
            "nl": "mijn Amerikaanse SSN voor de belastingaangifte: {ssn}",
            "sv": "mitt amerikanska SSN är {ssn}, behövs för deklarationen",
        },
    ),
    (
        "wifi",
        {
            "pl": "zeskanowałem kod QR z routera w świetlicy: WIFI:T:WPA;S:Swietlica;P:{wifi};;",
            "ru": "из QR-кода на роутере в клубе: WIFI:T:WPA;S:Klub;P:{wifi};;",
            "tr": "derneğin router QR kodu: WIFI:T:WPA;S:Dernek;P:{wifi};;",
            "ja": "公民館のルーターのQR読んだら WIFI:T:WPA;S:Kominkan;P:{wifi};; だった",
        },
    ),
    (
        "alarm_code",
        {
            "ko": "꽃집 오픈조: 경보 해제 {door} 먼저",
            "zh": "花店报警器解除码{door}，早上先按这个",
            "ar": "محل الورد: رمز إلغاء الإنذار {door} أول ما تفتح",
            "en": "florist opening shift: alarm off code {door} first thing",
        },
    ),
    (
        "otp",
        {
            "de": "Die TAN für die Überweisung an den Dachdecker ist {otp}, schnell eingeben",
            "fr": "le code de validation pour le virement au couvreur : {otp}",
            "es": "el código para la transferencia al tejador: {otp}",
            "it": "codice per il bonifico al lattoniere: {otp}",
        },
    ),
    (
        "multi",
        {
            "pt": "entrega do motorhome: caixinha da chave {door}, wi-fi do camper {wifi}",
            "nl": "camper ophalen: sleutelkastje {door}, wifi in de bus {wifi}",
            "sv": "husbilen: nyckelboxen {door}, wifi {wifi}",
            "pl": "kamper: skrzynka na klucz {door}, wifi {wifi}",
        },
    ),
    (
        "security_answer",
        {
            "ru": "контрольный вопрос в приложении банка — любимое блюдо: {=оливье с горошком=}",
            "tr": "banka uygulamasında güvenlik sorusu: en sevdiğin yemek → {=mantı ve yoğurt=}",
            "ja": "銀行アプリの秘密の質問、好きな食べ物：{=肉じゃが=}",
            "ko": "은행 앱 보안질문 좋아하는 음식 {=김치찌개=}",
        },
    ),
    (
        "password",
        {
            "zh": "「{pw}」就是工作室NAS的密码😂别外传",
            "ar": "«{pw}» هذا باسورد الـNAS في الاستوديو 😂",
            "en": '"{pw}" is the studio NAS password 😂 keep it quiet',
            "de": "„{pw}“ ist das Passwort vom Studio-NAS 😂 psst",
        },
    ),
    (
        "locker_code",
        {
            "fr": "piscine : casier des maîtres-nageurs, code {door}",
            "es": "piscina: taquilla de socorristas, código {door}",
            "it": "piscina: armadietto bagnini, combinazione {door}",
            "pt": "piscina: armário dos salva-vidas, combinação {door}",
        },
    ),
    (
        "password",
        {
            "nl": "het password van de router in de kantine is {pw} btw",
            "sv": "password till routern i fikarummet: {pw}",
            "pl": "password do routera w pokoju socjalnym: {pw}",
            "ru": "password от роутера в подсобке: {pw}",
        },
    ),
    (
        "recovery_code",
        {
            "tr": "yedek kodlar\n{rec}\n{rec2}",
            "ja": "バックアップコード\n{rec}\n{rec2}",
            "ko": "백업 코드\n{rec}\n{rec2}",
            "zh": "备用码\n{rec}\n{rec2}",
        },
    ),
    (
        "pin",
        {
            "ar": "رمز فتح جوال أبوي {pin} إذا احتجت الصور",
            "en": "dad's phone unlock pin {pin} if you need the photos",
            "de": "Papas Handy-Code {pin}, falls du die Fotos brauchst",
            "fr": "le code du téléphone de papa c'est {pin} si tu veux les photos",
        },
    ),
    (
        "multi",
        {
            "es": "mamá me pasó todo por whatsapp 🙈 clave del banco {pw} y la tarjeta {card}",
            "it": "mia madre mi ha scritto tutto su whatsapp 🙈 password home banking {pw} e carta {card}",
            "pt": "minha mãe me mandou tudo no zap 🙈 senha do banco {pw} e cartão {card}",
            "nl": "mijn moeder appte alles 🙈 bankwachtwoord {pw} en pas {card}",
        },
    ),
    (
        "otp",
        {
            "sv": "röstmeddelande: hej det är jag koden som kom är {otp} ring sen",
            "pl": "wiadomość głosowa: cześć kod który przyszedł to {otp} zadzwoń",
            "ru": "голосовое: привет код пришёл {otp} перезвони",
            "tr": "sesli mesaj: selam gelen kod {otp} sonra ara",
        },
    ),
    (
        "ssn",
        {
            "ja": "米国の社会保障番号{ssn}、W-2に書く",
            "ko": "미국 소셜번호 {ssn} 세금 서류에 적어야 돼",
            "zh": "美国社安号{ssn}，填税表用",
            "ar": "رقم السوشيال الأمريكي {ssn} للإقرار الضريبي",
        },
    ),
    # cycle 5
    (
        "door_code",
        {
            "en": "recording studio door is {door}, red light means we're tracking so wait",
            "de": "Tonstudio-Tür: {door}, rotes Licht = Aufnahme, bitte warten",
            "fr": "porte du studio d'enregistrement : {door}, voyant rouge = on enregistre",
            "es": "puerta del estudio de grabación: {door}, luz roja = grabando",
        },
    ),
    (
        "api_token",
        {
            "it": "ti ho creato un token per il repo della corale: {gh} scade tra 30 giorni",
            "pt": "criei um token pro repositório do coral: {gh}",
            "nl": "token voor de repo van het koor: {gh}",
            "sv": "token till körens repo: {gh} gäller 30 dagar",
        },
    ),
    (
        "password",
        {
            "pl": "haslo do drukarki w świetlicy wiejskiej: {pw}",
            "ru": "пароль к принтеру в сельском клубе: {pw}",
            "tr": "köy konağındaki yazıcının şifresi {pw}",
            "ja": "公民館プリンターのパスワード {pw}",
        },
    ),
    (
        "wifi",
        {
            "ko": "홈스테이 와이파이 {wifi} 공유기 뒤에 붙어 있었음",
            "zh": "寄宿家庭的WiFi是{wifi}，路由器背后贴着",
            "ar": "واي فاي العائلة المضيفة {wifi} مكتوب ورا الراوتر",
            "en": "host family wifi: {wifi} (sticker on the router)",
        },
    ),
    (
        "seed_phrase",
        {
            "de": "Hier die Wörter, die mir die Wallet-App angezeigt hat: {seed}",
            "fr": "voilà les mots que l'appli du wallet m'a affichés : {seed}",
            "es": "estas son las palabras que me dio la app: {seed}",
            "it": "ecco le parole che mi ha dato l'app: {seed}",
        },
    ),
    (
        "card",
        {
            "pt": "pode debitar a mensalidade do ciclismo deste cartão: {card}",
            "nl": "contributie wielerclub mag van deze kaart: {card}",
            "sv": "cykelklubbens avgift kan dras från {card}",
            "pl": "składkę klubu kolarskiego pobierz z karty {card}",
        },
    ),
    (
        "gate_code",
        {
            "ru": "калитка на даче теперь с кодом {door}",
            "tr": "yazlığın bahçe kapısı şifreli oldu: {door}",
            "ja": "別荘の門、暗証番号{door}に変えた",
            "ko": "별장 대문 비번 {door}로 바꿈",
        },
    ),
    (
        "api_token",
        {
            "zh": "测试用的token {jwt} 你调一下接口",
            "ar": "هذا التوكن للاختبار {jwt} جرب الـAPI",
            "en": "here's my session token for testing {jwt}",
            "de": "Session-Token zum Testen: {jwt}",
        },
    ),
    (
        "pin",
        {
            "fr": "carte SIM de mamie : code PIN {pin}, code PUK {puk}",
            "es": "la SIM de la abuela: PIN {pin} PUK {puk}",
            "it": "SIM della nonna: PIN {pin} PUK {puk}",
            "pt": "chip da vó: PIN {pin} PUK {puk}",
        },
    ),
    (
        "security_answer",
        {
            "nl": "geheime vraag van de energieleverancier: geboorteplaats oma → {=Hoogezand=}",
            "sv": "säkerhetsfrågan hos elbolaget: mormors födelseort → {=Haparanda=}",
            "pl": "pytanie bezpieczeństwa u dostawcy prądu: miejsce urodzenia babci → {=Przemyśl=}",
            "ru": "контрольный вопрос у энергосбыта: место рождения бабушки → {=Кинешма=}",
        },
    ),
    (
        "password",
        {
            "tr": 'İletildi: "Okul servisi uygulaması giriş şifreniz: {pw}"',
            "ja": "転送：「スクールバスアプリの初期パスワードは{pw}です」",
            "ko": '전달: "통학버스 앱 임시 비밀번호 {pw}"',
            "zh": "转发：“校车App初始密码：{pw}”",
        },
    ),
    (
        "api_token",
        {
            "ar": "مفاتيح AWS للمشروع: ID {akid} والسر {aws}",
            "en": "aws creds for the demo: key id {akid} secret {aws}",
            "de": "AWS-Zugang fürs Demo: Key-ID {akid}, Secret {aws}",
            "fr": "accès AWS pour la démo : id {akid} secret {aws}",
        },
    ),
    (
        "wifi",
        {
            "es": "la wiifi del bar de la peña es {wifi}",
            "it": "la wifii del circolo è {wifi}",
            "pt": "o wiifi do boteco é {wifi}",
            "nl": "de wiefie van het clubhuis is {wifi}",
        },
    ),
    (
        "multi",
        {
            "sv": "förrådet: grinden {door}, larmet {pin}",
            "pl": "magazyn samoobsługowy: brama {door}, alarm {pin}",
            "ru": "склад хранения: ворота {door}, сигналка {pin}",
            "tr": "depo: kapı {door}, alarm {pin}",
        },
    ),
    (
        "otp",
        {
            "ja": "【認証コード】{otp} このコードを他人に教えないでください ←これ送ればいい？",
            "ko": "[인증번호] {otp} 타인에게 절대 알려주지 마세요 ← 이거 보내면 돼?",
            "zh": "【验证码】{otp}，请勿泄露给他人 ←发你这个？",
            "ar": "رمز التحقق {otp} لا تشاركه مع أحد ← أرسله لك؟",
        },
    ),
    # cycle 6
    (
        "private_key",
        {
            "en": "my deploy key for the marathon site, dont lose it:\n" + KEY,
            "de": "Deploy-Key für die Vereinsseite:\n" + KEY,
            "fr": "clé de déploiement du site du club :\n" + KEY,
            "es": "clave de despliegue de la web del club:\n" + KEY,
        },
    ),
    (
        "password",
        {
            "it": "{pw} è la mia password del registro elettronico, non dirlo a nessuno",
            "pt": "{pw} é minha senha do portal da faculdade, segredo",
            "nl": "{pw} is mijn wachtwoord van de schoolapp, niet doorvertellen",
            "sv": "{pw} är mitt lösen till skolplattformen, säg inget",
        },
    ),
    (
        "card",
        {
            "pl": "{card} {exp} {cvv} — to do biletów na festiwal",
            "ru": "{card} {exp} {cvv} это для билетов на фестиваль",
            "tr": "{card} {exp} {cvv} festival biletleri için",
            "ja": "{card} {exp} {cvv} フェスのチケット用",
        },
    ),
    (
        "seed_phrase",
        {
            "ko": "니모닉 {seed} 백업해둬",
            "zh": "助记词 {seed} 帮我存一下",
            "ar": "الكلمات السرية للمحفظة {seed} احفظها",
            "en": "mnemonic: {seed} — back it up somewhere offline",
        },
    ),
    (
        "safe_code",
        {
            "de": "Bürotresor: Kombination {door}",
            "fr": "coffre du bureau : combinaison {door}",
            "es": "caja fuerte de la oficina: combinación {door}",
            "it": "cassaforte dell'ufficio: combinazione {door}",
        },
    ),
    (
        "password",
        {
            "pt": "manda a senha do e-mail da escola?\nclaro:\n{pw}",
            "nl": "stuur je het wachtwoord van de schoolmail?\nhier:\n{pw}",
            "sv": "kan du skicka lösenordet till skolmejlen?\nhär:\n{pw}",
            "pl": "podeślesz hasło do maila szkolnego?\nproszę:\n{pw}",
        },
    ),
    (
        "api_token",
        {
            "ru": "токен бота в слаке {slack}",
            "tr": "slack bot tokenı {slack}",
            "ja": "Slackのボットトークン {slack}",
            "ko": "슬랙 봇 토큰 {slack}",
        },
    ),
    (
        "gate_code",
        {
            "zh": "学校侧门的密码是{door}，接孩子走这边",
            "ar": "رمز البوابة الجانبية للمدرسة {door}",
            "en": "school side gate keypad {door}, quicker for pickup",
            "de": "Seitentor der Schule: {door}, geht schneller beim Abholen",
        },
    ),
    (
        "otp",
        {
            "fr": "[18:40] Manon : le code de la banque ?\n[18:41] Papa : {otp}",
            "es": "[18:40] Irene: ¿el código del banco?\n[18:41] Papá: {otp}",
            "it": "[18:40] Sara: il codice della banca?\n[18:41] Papà: {otp}",
            "pt": "[18:40] Ana: o código do banco?\n[18:41] Pai: {otp}",
        },
    ),
    (
        "recovery_code",
        {
            "nl": "2FA-noodcodes van de penningmeester: {rec} {rec2}",
            "sv": "kassörens reservkoder: {rec} {rec2}",
            "pl": "kody awaryjne skarbnika: {rec} {rec2}",
            "ru": "резервные коды казначея: {rec} {rec2}",
        },
    ),
    (
        "password",
        {
            "tr": "hat hesabının şifresi {pw}",
            "ja": "携帯会社のマイページ パスワード：{pw}",
            "ko": "통신사 앱 비밀번호: {pw}",
            "zh": "营业厅App登录密码：{pw}",
        },
    ),
    (
        "card",
        {
            "ar": "البطاقة:\n{card}\nCVV:\n{cvv}",
            "en": "card:\n{card}\ncvv:\n{cvv}",
            "de": "Karte:\n{card}\nPrüfnummer:\n{cvv}",
            "fr": "carte :\n{card}\ncryptogramme :\n{cvv}",
        },
    ),
    (
        "alarm_code",
        {
            "es": "la alarma del local de la peña se quita con {door}",
            "it": "l'allarme della sede si disinserisce con {door}",
            "pt": "o alarme da sede desarma com {door}",
            "nl": "het alarm van het clubhuis gaat uit met {door}",
        },
    ),
    (
        "seed_phrase",
        {
            "sv": "frasen från hårdvaruplånboken: {seed}",
            "pl": "słowa z portfela sprzętowego: {seed}",
            "ru": "слова из аппаратного кошелька: {seed}",
            "tr": "donanım cüzdanının kelimeleri: {seed}",
        },
    ),
    (
        "wifi",
        {
            "ja": "カフェのWi-Fi、SSIDはcafe_guest、キーは{wifi}",
            "ko": "카페 와이파이 cafe_guest 비번 {wifi}",
            "zh": "咖啡馆WiFi cafe_guest 密码{wifi}",
            "ar": "واي فاي الكافيه cafe_guest الرمز {wifi}",
        },
    ),
    # cycle 7
    (
        "pin",
        {
            "en": "voicemail pin is {pin} if you need to check messages while I'm away",
            "de": "Mailbox-PIN {pin}, falls du meine Nachrichten abhören musst",
            "fr": "code de la messagerie vocale : {pin}",
            "es": "el PIN del buzón de voz es {pin}",
        },
    ),
    (
        "door_code",
        {
            "it": "pulizie appartamento: portone {door}, chiave nella cassetta",
            "pt": "faxina do apê: portaria {door}",
            "nl": "schoonmaak appartement: voordeur {door}",
            "sv": "städning lägenheten: porten {door}",
        },
    ),
    (
        "multi",
        {
            "pl": "lista dla taty:\n- bank: {pw}\n- poczta: {pw2}",
            "ru": "для папы:\n- банк: {pw}\n- почта: {pw2}",
            "tr": "babam için:\n- banka: {pw}\n- e-posta: {pw2}",
            "ja": "父用メモ\n・銀行：{pw}\n・メール：{pw2}",
        },
    ),
    (
        "security_answer",
        {
            "ko": "게임 계정 보안질문 '가장 친한 친구' → {=박서준이=}",
            "zh": "游戏账号密保「最好的朋友」→{=胖虎=}",
            "ar": "سؤال الأمان في حساب اللعبة 'أعز صديق' → {=أبو فهد=}",
            "en": "game account security q 'best friend in school' → {=Danny Okafor=}",
        },
    ),
    (
        "otp",
        {
            "de": "Authenticator zeigt gerade {otp}, läuft in 10 s ab",
            "fr": "l'appli affiche {otp}, ça expire dans 10 s",
            "es": "el autenticador marca {otp}, caduca en 10 s",
            "it": "l'authenticator dice {otp}, scade tra 10 s",
        },
    ),
    (
        "ssn",
        {
            "pt": "formulário da universidade americana pede SSN: {ssn}",
            "nl": "het formulier van de Amerikaanse uni vraagt SSN: {ssn}",
            "sv": "formuläret från amerikanska universitetet: SSN {ssn}",
            "pl": "formularz z amerykańskiej uczelni: SSN {ssn}",
        },
    ),
    (
        "wifi",
        {
            "ru": "вайфай в коворкинге: сеть Hub, пароль {wifi}",
            "tr": "ortak çalışma alanının wifi'si: Hub / {wifi}",
            "ja": "コワーキングのWi-Fi：Hub / {wifi}",
            "ko": "코워킹 와이파이 Hub / {wifi}",
        },
    ),
    (
        "card",
        {
            "zh": "卡号{card}帮我订个酒店",
            "ar": "رقم البطاقة {card} احجز الفندق",
            "en": "cc {card} book the hotel pls",
            "de": "kk-nr {card} buch bitte das Hotel",
        },
    ),
    (
        "password",
        {
            "fr": "mot de passe de la mutuelle : « {pw} »",
            "es": "contraseña de la mutua: «{pw}»",
            "it": "password della mutua: «{pw}»",
            "pt": "senha do plano de saúde: «{pw}»",
        },
    ),
    (
        "lock_code",
        {
            "nl": "fietsslot van de bakfiets: {door}",
            "sv": "cykellåset på lådcykeln: {door}",
            "pl": "zapięcie do roweru cargo: {door}",
            "ru": "кодовый замок на велике: {door}",
        },
    ),
    (
        "card",
        {
            "tr": "kart no {card} son kullanma {exp} güvenlik kodu {cvv} otel için",
            "ja": "カード番号{card} 有効期限{exp} セキュリティコード{cvv} ホテル予約用",
            "ko": "카드번호 {card} 유효기간 {exp} CVC {cvv} 호텔 예약",
            "zh": "卡号{card} 有效期{exp} CVV{cvv} 订酒店",
        },
    ),
    (
        "door_code",
        {
            "ar": "رمز باب المكتب الجديد {door}",
            "en": "new office entry code {door} from monday",
            "de": "neuer Türcode Büro ab Montag: {door}",
            "fr": "nouveau code porte du bureau à partir de lundi : {door}",
        },
    ),
    (
        "api_token",
        {
            "es": "la API key de OpenAI del proyecto de clase: {oai}",
            "it": "la chiave OpenAI del progetto: {oai}",
            "pt": "a chave da OpenAI do projeto: {oai}",
            "nl": "de OpenAI-sleutel van het project: {oai}",
        },
    ),
    (
        "password",
        {
            "sv": "{pw} funkar till föreningens instagram",
            "pl": "{pw} działa do insta stowarzyszenia",
            "ru": "{pw} подходит к инсте клуба",
            "tr": "{pw} derneğin instagramına giriyor",
        },
    ),
    (
        "pin",
        {
            "ja": "子どものゲーム機の保護者PIN {pin}",
            "ko": "애들 게임기 보호자 PIN {pin}",
            "zh": "孩子游戏机家长控制PIN {pin}",
            "ar": "رقم التحكم الأبوي لجهاز الألعاب {pin}",
        },
    ),
    # cycle 8
    (
        "multi",
        {
            "en": "Fwd from Tom:\n> boat shed {door}\n> laptop {pw}\n> wifi {wifi}",
            "de": "Weitergeleitet von Tom:\n> Bootsschuppen {door}\n> Laptop {pw}\n> WLAN {wifi}",
            "fr": "Transféré de Tom :\n> hangar {door}\n> portable {pw}\n> wifi {wifi}",
            "es": "Reenviado de Tom:\n> cobertizo {door}\n> portátil {pw}\n> wifi {wifi}",
        },
    ),
    (
        "pin",
        {
            "it": "il codice della carta prepagata di Luca è {pin}",
            "pt": "a senha do cartão pré-pago do Lucas é {pin}",
            "nl": "pincode van Lucas' prepaidkaart: {pin}",
            "sv": "Lucas förbetalda kort har kod {pin}",
        },
    ),
    (
        "otp",
        {
            "pl": "kod BLIK {otp} – wpisz szybko",
            "ru": "код из СМС {otp}, введи быстрее",
            "tr": "SMS ile gelen onay kodu {otp}, çabuk gir",
            "ja": "SMSの確認コード{otp}、早く入れて",
        },
    ),
    (
        "password",
        {
            "ko": "회사 그룹웨어 🔑\n{pw}",
            "zh": "公司OA 🔑\n{pw}",
            "ar": "نظام الشركة 🔑\n{pw}",
            "en": "work intranet 🔑\n{pw}",
        },
    ),
    (
        "seed_phrase",
        {
            "de": "Seed-Backup:\n{seed}",
            "fr": "sauvegarde de la seed :\n{seed}",
            "es": "copia de la semilla:\n{seed}",
            "it": "backup del seed:\n{seed}",
        },
    ),
    (
        "alarm_code",
        {
            "pt": "alarme da casa da praia: desarma com {door}",
            "nl": "alarm van het strandhuis: uitzetten met {door}",
            "sv": "larmet i sommarhuset: stäng av med {door}",
            "pl": "alarm w domku letniskowym: wyłącz kodem {door}",
        },
    ),
    (
        "recovery_code",
        {
            "ru": "коды восстановления для аккаунта игры: {rec}, {rec2}",
            "tr": "oyun hesabının kurtarma kodları: {rec}, {rec2}",
            "ja": "ゲームアカウントの復旧コード {rec} {rec2}",
            "ko": "게임 계정 복구코드 {rec} {rec2}",
        },
    ),
    (
        "pin",
        {
            "zh": "我的银行卡取款密码{pin}，帮我取点钱",
            "ar": "الرقم السري لبطاقة الصراف {pin} اسحب لي فلوس",
            "en": "atm pin {pin}, grab 60 for me?",
            "de": "Geheimzahl {pin}, hol mir 60 € ab?",
        },
    ),
    (
        "password",
        {
            "fr": "mdp de la box du camping-car : {pw} (l'étiquette est effacée)",
            "es": "la contra del router de la autocaravana es {pw}, la pegatina ya no se lee",
            "it": "la pass del router del camper è {pw}, l'etichetta è illeggibile",
            "pt": "a senha do roteador do motorhome é {pw}, a etiqueta apagou",
        },
    ),
    (
        "door_code",
        {
            "nl": "code van de fietsenstalling bij het station: {door}",
            "sv": "koden till cykelgaraget vid stationen: {door}",
            "pl": "kod do wiaty rowerowej przy dworcu: {door}",
            "ru": "код велопарковки у вокзала: {door}",
        },
    ),
    (
        "seed_phrase",
        {
            "tr": "babamın cüzdanının 12 kelimesi, fotoğraftan yazdım: {seed}",
            "ja": "父のウォレットの復元ワード（写真から書き起こし）{seed}",
            "ko": "아빠 지갑 복구 단어, 사진 보고 옮김 {seed}",
            "zh": "我爸钱包的恢复词，照着照片抄的：{seed}",
        },
    ),
    (
        "otp",
        {
            "ar": "وصلني كود من واتساب {otp} هل هو لك؟ قلت لي أرسله",
            "en": "you said to forward it so here: WhatsApp code {otp}",
            "de": "du meintest, ich soll ihn weiterleiten: WhatsApp-Code {otp}",
            "fr": "tu m'as dit de te le transférer : code WhatsApp {otp}",
        },
    ),
    (
        "multi",
        {
            "es": "para la canguro:\n- puerta {door}\n- wifi {wifi}\n- tarjeta para la compra {card}",
            "it": "per la babysitter:\n- portone {door}\n- wifi {wifi}\n- carta per la spesa {card}",
            "pt": "pra babá:\n- portão {door}\n- wi-fi {wifi}\n- cartão do mercado {card}",
            "nl": "voor de oppas:\n- voordeur {door}\n- wifi {wifi}\n- pinpas boodschappen {card}",
        },
    ),
    (
        "password",
        {
            "sv": "lösen till hemtjänstappen för mormor står här:\n{pw}",
            "pl": "hasło do aplikacji opiekunki babci, niżej:\n{pw}",
            "ru": "пароль от приложения сиделки для бабушки, ниже:\n{pw}",
            "tr": "anneannemin bakıcı uygulamasının şifresi aşağıda:\n{pw}",
        },
    ),
    (
        "card",
        {
            "ja": "ネットスーパー用、母のカード {card}（期限{exp}）",
            "ko": "장보기 앱에 엄마 카드 {card} ({exp})",
            "zh": "买菜App绑我妈的卡 {card}（{exp}）",
            "ar": "بطاقة أمي لتطبيق البقالة {card} ({exp})",
        },
    ),
]
