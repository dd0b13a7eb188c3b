"""Look-alike situations of test10 (no secret): each in at most four languages."""

from __future__ import annotations

SIT_L: list[tuple[str, dict[str, str]]] = [
    # cycle 1
    (
        "talk_about",
        {
            "en": "changed the wifi password at the boat shed, ask me in person, not putting it here",
            "de": "hab das WLAN-Passwort im Bootsschuppen geändert, fragt mich persönlich",
            "fr": "j'ai changé le mot de passe wifi du hangar, demandez-moi en vrai",
            "es": "cambié la contraseña del wifi del cobertizo, pedídmela en persona",
        },
    ),
    (
        "order_number",
        {
            "it": "codice ordine {order}, il codice di ritiro arriva via mail",
            "pt": "código do pedido {order}, o código de retirada chega por e-mail",
            "nl": "bestelcode {order}, de ophaalcode komt per mail",
            "sv": "ordernummer {order}, uthämtningskoden kommer på mejl",
        },
    ),
    (
        "phone",
        {
            "pl": "numer kierunkowy do Krakowa to 12, a biuro ma {phone}",
            "ru": "код города 495, телефон офиса {phone}",
            "tr": "alan kodu 212, ofis numarası {phone}",
            "ja": "市外局番は03、事務所は{phone}",
        },
    ),
    (
        "version",
        {
            "ko": "앱 {ver} 에서 {ver2}로 올렸더니 로그인 오류 사라짐",
            "zh": "App从{ver}升到{ver2}后登录报错没了",
            "ar": "بعد تحديث التطبيق من {ver} إلى {ver2} اختفى خطأ الدخول",
            "en": "after updating the app from {ver} to {ver2} the login error went away",
        },
    ),
    (
        "flight",
        {
            "de": "Gate {gate}, Flug {flight}, Abflug {time} – Sitz {seat}",
            "fr": "porte {gate}, vol {flight}, départ {time}, place {seat}",
            "es": "puerta {gate}, vuelo {flight}, salida {time}, asiento {seat}",
            "it": "gate {gate}, volo {flight}, partenza {time}, posto {seat}",
        },
    ),
    (
        "luhn_invalid",
        {
            "pt": "número do cartão fidelidade da farmácia: {badnum}",
            "nl": "klantenkaartnummer drogist: {badnum}",
            "sv": "stammiskortets nummer: {badnum}",
            "pl": "numer karty lojalnościowej: {badnum}",
        },
    ),
    (
        "talk_about",
        {
            "ru": "Никогда никому не сообщайте код из СМС, даже сотрудникам банка.",
            "tr": "SMS ile gelen kodu kimseyle paylaşmayın, banka çalışanı bile olsa.",
            "ja": "SMSで届いたコードは銀行員にも絶対に教えないでください。",
            "ko": "문자로 받은 인증번호는 은행 직원에게도 절대 알려주지 마세요.",
        },
    ),
    (
        "dev_hash",
        {
            "zh": "这个bug是{hash}引入的，bisect出来了",
            "ar": "الخطأ دخل مع الكومِت {hash}، طلع من bisect",
            "en": "bisect says {hash} introduced the bug",
            "de": "laut bisect kam der Fehler mit {hash}",
        },
    ),
    (
        "price",
        {
            "fr": "la cotisation passe à {price} à partir du {date}",
            "es": "la cuota sube a {price} desde el {date}",
            "it": "la quota sale a {price} dal {date}",
            "pt": "a mensalidade sobe pra {price} a partir de {date}",
        },
    ),
    (
        "placeholder",
        {
            "nl": "wachtwoord: ******** (staat in de kluis, niet hier)",
            "sv": "lösenord: ******** (finns i valvet, inte här)",
            "pl": "hasło: ******** (jest w sejfie, nie tutaj)",
            "ru": "пароль: ******** (лежит в сейфе, не здесь)",
        },
    ),
    (
        "room_seat",
        {
            "tr": "konser: blok C, sıra {car}, koltuk {seat}",
            "ja": "コンサート：Cブロック {car}列 {seat}番",
            "ko": "콘서트 C구역 {car}열 {seat}",
            "zh": "演唱会 C区{car}排{seat}座",
        },
    ),
    (
        "isbn",
        {
            "ar": "رقم ISBN للكتاب المقرر {isbn}",
            "en": "set text for the book club: ISBN {isbn}",
            "de": "Lesekreis-Buch: ISBN {isbn}",
            "fr": "livre du club de lecture : ISBN {isbn}",
        },
    ),
    (
        "tracking",
        {
            "es": "número de seguimiento {track}, llega el {date}",
            "it": "numero di tracciamento {track}, arriva il {date}",
            "pt": "código de rastreio {track}, chega dia {date}",
            "nl": "trackingnummer {track}, komt {date}",
        },
    ),
    (
        "error_message",
        {
            "sv": 'får bara "Fel lösenord. 2 försök kvar." när jag loggar in i skolappen',
            "pl": 'ciągle "Nieprawidłowe hasło. Pozostały 2 próby." w apce szkolnej',
            "ru": "пишет «Неверный пароль. Осталось 2 попытки» в школьном приложении",
            "tr": 'okul uygulaması "Hatalı şifre. 2 deneme hakkınız kaldı." diyor',
        },
    ),
    (
        "label_other_sense",
        {
            "ja": "このメッセージをピン留めしておいて、集合は{time}",
            "ko": "이 메시지 공지로 고정해줘, 집합 {time}",
            "zh": "把这条消息置顶，{time}集合",
            "ar": "ثبّت هذه الرسالة، التجمع الساعة {time}",
        },
    ),
    # cycle 2
    (
        "bip39_words",
        {
            "en": "spelling list this week: {words}",
            "de": "Englisch-Vokabeln für Montag: {words}",
            "fr": "vocabulaire d'anglais pour lundi : {words}",
            "es": "vocabulario de inglés para el lunes: {words}",
        },
    ),
    (
        "talk_about",
        {
            "it": "il codice è scaduto prima che riuscissi a inserirlo, me ne mandano un altro",
            "pt": "o código expirou antes de eu digitar, vão mandar outro",
            "nl": "de code was al verlopen voordat ik hem invulde, ze sturen een nieuwe",
            "sv": "koden hann gå ut innan jag skrev in den, de skickar en ny",
        },
    ),
    (
        "uuid",
        {
            "pl": "w logach mam request_id {uuid}, możesz sprawdzić?",
            "ru": "в логах request_id {uuid}, глянешь?",
            "tr": "loglarda request_id {uuid} var, bakar mısın?",
            "ja": "ログのrequest_idは{uuid}です、確認お願いします",
        },
    ),
    (
        "date_time",
        {
            "ko": "물리치료 예약 {date} {time}",
            "zh": "理疗预约{date} {time}",
            "ar": "موعد العلاج الطبيعي {date} الساعة {time}",
            "en": "physio appointment {date} at {time}",
        },
    ),
    (
        "command_no_value",
        {
            "de": "einfach `ssh -p 2222 pi@vereinspi.local` und dann nach dem Passwort fragen lassen",
            "fr": "lance `ssh -p 2222 pi@raspi.local`, il te demandera le mot de passe",
            "es": "haz `ssh -p 2222 pi@raspi.local` y te pedirá la contraseña",
            "it": "fai `ssh -p 2222 pi@raspi.local` e ti chiede la password",
        },
    ),
    (
        "last_four",
        {
            "pt": "cobrou duas vezes no cartão final {last4}, vou reclamar",
            "nl": "twee keer afgeschreven van de kaart eindigend op {last4}",
            "sv": "dubbeldragning på kortet som slutar på {last4}",
            "pl": "dwa razy obciążyli kartę kończącą się na {last4}",
        },
    ),
    (
        "postal_code",
        {
            "ru": "почтовый индекс 630090, дом 12, кв. {room}",
            "tr": "posta kodu 34710, daire {room}",
            "ja": "〒150-0041 {room}号室",
            "ko": "우편번호 06236, {room}호",
        },
    ),
    (
        "price",
        {
            "zh": "团购价{price}，原价贵一倍",
            "ar": "السعر بعد الخصم {price}",
            "en": "group price {price} each, normally double",
            "de": "Gruppenpreis {price} pro Person",
        },
    ),
    (
        "talk_about",
        {
            "fr": "Ne communiquez jamais votre code de sécurité, même à un conseiller.",
            "es": "Nunca compartas tu código de seguridad, ni siquiera con un gestor.",
            "it": "Non comunicare mai il codice di sicurezza, neanche al consulente.",
            "pt": "Nunca compartilhe seu código de segurança, nem com o gerente.",
        },
    ),
    (
        "dev_hash",
        {
            "nl": "checksum klopt: {sha}",
            "sv": "kontrollsumman stämmer: {sha}",
            "pl": "suma kontrolna się zgadza: {sha}",
            "ru": "контрольная сумма совпала: {sha}",
        },
    ),
    (
        "order_number",
        {
            "tr": "sipariş numaram {order}, iade talebi açtım",
            "ja": "注文番号{order}で返品申請しました",
            "ko": "주문번호 {order} 반품 신청함",
            "zh": "订单号{order}申请退货了",
        },
    ),
    (
        "phone",
        {
            "ar": "رقم المكتب {phone} من الساعة {time}",
            "en": "office line {phone}, open from {time}",
            "de": "Büro erreichbar {phone} ab {time}",
            "fr": "bureau joignable au {phone} dès {time}",
        },
    ),
    (
        "label_other_sense",
        {
            "es": "la canción va en clave de sol y en Re mayor, ensayo a las {time}",
            "it": "il pezzo è in chiave di violino, tonalità Re maggiore, prove alle {time}",
            "pt": "a música está em clave de sol, tom de Ré maior, ensaio às {time}",
            "nl": "het stuk staat in de G-sleutel, D groot, repetitie om {time}",
        },
    ),
    (
        "version",
        {
            "sv": "Home Assistant {ver} → {ver2}, allt funkar",
            "pl": "Home Assistant {ver} → {ver2}, wszystko działa",
            "ru": "Home Assistant {ver} → {ver2}, всё работает",
            "tr": "Home Assistant {ver} → {ver2}, her şey çalışıyor",
        },
    ),
    (
        "luhn_invalid",
        {
            "ja": "ポイントカード番号{badnum}",
            "ko": "멤버십 번호 {badnum}",
            "zh": "积分卡号{badnum}",
            "ar": "رقم بطاقة الولاء {badnum}",
        },
    ),
    # cycle 3
    (
        "error_message",
        {
            "en": "getting `401 Unauthorized: token expired` from the results API since {time}",
            "de": "seit {time} kommt `401 Unauthorized: token expired` von der API",
            "fr": "depuis {time} l'API répond `401 Unauthorized: token expired`",
            "es": "desde las {time} la API devuelve `401 Unauthorized: token expired`",
        },
    ),
    (
        "placeholder",
        {
            "it": "nel file .env metti PASSWORD=<la_tua_password> e poi la cambi tu",
            "pt": "no .env deixa SENHA=<sua_senha> que eu ajusto",
            "nl": "zet in de .env gewoon WACHTWOORD=xxxxx, ik vul het later in",
            "sv": "skriv LÖSENORD=<fyll i> i .env så fixar jag",
        },
    ),
    (
        "flight",
        {
            "pl": "lot {flight} opóźniony do {time}, bramka {gate}",
            "ru": "рейс {flight} задержан до {time}, выход {gate}",
            "tr": "{flight} seferi {time}'e ertelendi, kapı {gate}",
            "ja": "{flight}便は{time}に遅延、搭乗口{gate}",
        },
    ),
    (
        "talk_about",
        {
            "ko": "카드 비밀번호 3번 틀려서 잠겼어 은행 가야 돼",
            "zh": "银行卡密码输错三次被锁了，得去柜台",
            "ar": "غلطت في الرقم السري ثلاث مرات وانقفلت البطاقة",
            "en": "typed my pin wrong three times and the card got blocked, ugh",
        },
    ),
    (
        "isbn",
        {
            "de": "Schulbuch Mathe 7: ISBN {isbn}, kostet {price}",
            "fr": "manuel de maths 5e : ISBN {isbn}, {price}",
            "es": "libro de mates de 1º ESO: ISBN {isbn}, {price}",
            "it": "libro di matematica: ISBN {isbn}, {price}",
        },
    ),
    (
        "room_seat",
        {
            "pt": "a reunião mudou pra sala {room}, 3º andar",
            "nl": "de vergadering is verplaatst naar lokaal {room}",
            "sv": "mötet är flyttat till sal {room}",
            "pl": "spotkanie przeniesione do sali {room}",
        },
    ),
    (
        "dev_hash",
        {
            "ru": "ключевой коммит — {hash}, после него всё поехало",
            "tr": "kilit commit {hash}, ondan sonra her şey bozuldu",
            "ja": "鍵になるコミットは{hash}、そこから壊れた",
            "ko": "핵심 커밋은 {hash}, 그 뒤로 다 깨짐",
        },
    ),
    (
        "date_time",
        {
            "zh": "截止日期{date}，别忘了交",
            "ar": "آخر موعد للتسليم {date}",
            "en": "deadline is {date}, don't forget",
            "de": "Abgabe bis {date}, nicht vergessen",
        },
    ),
    (
        "claim_number",
        {
            "fr": "numéro de sinistre {order}, l'expert passe le {date}",
            "es": "número de siniestro {order}, el perito viene el {date}",
            "it": "numero sinistro {order}, il perito passa il {date}",
            "pt": "número do sinistro {order}, o perito vem dia {date}",
        },
    ),
    (
        "label_other_sense",
        {
            "nl": "dresscode zaterdag: alles in het wit, aanvang {time}",
            "sv": "klädkod lördag: allt i vitt, start {time}",
            "pl": "dress code w sobotę: na biało, start {time}",
            "ru": "дресс-код в субботу: всё белое, начало в {time}",
        },
    ),
    (
        "phone",
        {
            "tr": "kargo şubesinin numarası {phone}",
            "ja": "宅配営業所の番号は{phone}",
            "ko": "택배 영업소 번호 {phone}",
            "zh": "快递网点电话{phone}",
        },
    ),
    (
        "command_no_value",
        {
            "ar": "شغل `mysql -u admin -p` وبيطلب منك الباسورد",
            "en": "run `mysql -u admin -p` and it'll prompt for the password",
            "de": "`mysql -u admin -p` ausführen, dann fragt er nach dem Passwort",
            "fr": "lance `mysql -u admin -p`, il demandera le mot de passe",
        },
    ),
    (
        "talk_about",
        {
            "es": "la contraseña tiene que tener 12 caracteres, una mayúscula y un símbolo, qué pesadez",
            "it": "la password deve avere 12 caratteri, una maiuscola e un simbolo, che palle",
            "pt": "a senha precisa de 12 caracteres, uma maiúscula e um símbolo, que chatice",
            "nl": "het wachtwoord moet 12 tekens, een hoofdletter en een symbool hebben, zo irritant",
        },
    ),
    (
        "bip39_words",
        {
            "sv": "engelska glosor till språkkursen: {words}",
            "pl": "lista słówek na angielski: {words}",
            "ru": "слова по английскому на завтра: {words}",
            "tr": "İngilizce kelime listesi: {words}",
        },
    ),
    (
        "price",
        {
            "ja": "部費は月{price}です",
            "ko": "회비 월 {price}",
            "zh": "会费每月{price}",
            "ar": "الاشتراك الشهري {price}",
        },
    ),
    # cycle 4
    (
        "tracking",
        {
            "en": "tracking code {track} — says 'out for delivery'",
            "de": "Sendungscode {track}, steht auf 'in Zustellung'",
            "fr": "code de suivi {track}, « en cours de livraison »",
            "es": "código de seguimiento {track}, 'en reparto'",
        },
    ),
    (
        "luhn_invalid",
        {
            "it": "numero pratica {badnum}, allegalo alla mail",
            "pt": "número do protocolo {badnum}",
            "nl": "dossiernummer {badnum}",
            "sv": "ärendenummer {badnum}",
        },
    ),
    (
        "talk_about",
        {
            "pl": "link do resetu hasła wygasł, wyślij nowy proszę",
            "ru": "ссылка для сброса пароля протухла, пришли новую",
            "tr": "şifre sıfırlama linkinin süresi dolmuş, yenisini atar mısın",
            "ja": "パスワード再設定のリンク期限切れてた、もう一回送って",
        },
    ),
    (
        "uuid",
        {
            "ko": "주문 UUID {uuid} 로그 확인 부탁",
            "zh": "这个UUID {uuid} 的订单查一下日志",
            "ar": "افحص السجل للطلب {uuid}",
            "en": "can you check the logs for {uuid}",
        },
    ),
    (
        "date_time",
        {
            "de": "Anpfiff am {date} um {time}, Platz {car}",
            "fr": "coup d'envoi le {date} à {time}, terrain {car}",
            "es": "el partido es el {date} a las {time}, campo {car}",
            "it": "partita il {date} alle {time}, campo {car}",
        },
    ),
    (
        "version",
        {
            "pt": "o Android do vô tá no {ver}, precisa atualizar pro {ver2}",
            "nl": "opa's Android staat op {ver}, moet naar {ver2}",
            "sv": "morfars Android är på {ver}, ska till {ver2}",
            "pl": "Android dziadka ma {ver}, trzeba {ver2}",
        },
    ),
    (
        "order_number",
        {
            "ru": "код заказа {order}, выдача в пункте до {date}",
            "tr": "sipariş kodu {order}, {date} tarihine kadar teslim noktasında",
            "ja": "注文コード{order}、{date}まで店頭受け取り可",
            "ko": "주문코드 {order}, {date}까지 매장 픽업",
        },
    ),
    (
        "placeholder",
        {
            "zh": "配置文件里写 password: 你的密码 就行，别写真的",
            "ar": "في ملف الإعدادات اكتب password: YOUR_PASSWORD ولا تكتب الحقيقي",
            "en": "in the config just put `password: YOUR_PASSWORD` and I'll swap it",
            "de": "in die Config einfach `password: DEIN_PASSWORT` reinschreiben",
        },
    ),
    (
        "room_seat",
        {
            "fr": "on est chambre {room}, petit-déj à {time}",
            "es": "estamos en la habitación {room}, desayuno a las {time}",
            "it": "siamo in camera {room}, colazione alle {time}",
            "pt": "estamos no quarto {room}, café às {time}",
        },
    ),
    (
        "dev_hash",
        {
            "nl": "container {short} draait weer",
            "sv": "containern {short} är uppe igen",
            "pl": "kontener {short} znowu działa",
            "ru": "контейнер {short} снова поднялся",
        },
    ),
    (
        "talk_about",
        {
            "tr": "iki adımlı doğrulamayı açtım, artık her girişte kod soruyor",
            "ja": "二段階認証をオンにしたら毎回コード聞かれる",
            "ko": "2단계 인증 켰더니 매번 코드 물어봄",
            "zh": "开了两步验证，每次登录都要验证码",
        },
    ),
    (
        "flight",
        {
            "ar": "رحلة العودة {flight} بوابة {gate} الساعة {time}",
            "en": "return flight {flight}, gate {gate}, {time}",
            "de": "Rückflug {flight}, Gate {gate}, {time}",
            "fr": "vol retour {flight}, porte {gate}, {time}",
        },
    ),
    (
        "phone",
        {
            "es": "el móvil del fontanero es {phone}",
            "it": "il cellulare dell'idraulico è {phone}",
            "pt": "o celular do encanador é {phone}",
            "nl": "het nummer van de loodgieter is {phone}",
        },
    ),
    (
        "isbn",
        {
            "sv": "kurslitteratur: ISBN {isbn}",
            "pl": "lektura: ISBN {isbn}",
            "ru": "учебник: ISBN {isbn}",
            "tr": "ders kitabı: ISBN {isbn}",
        },
    ),
    (
        "label_other_sense",
        {
            "ja": "パス回しの練習は{time}から、ゴール前のパスを意識して",
            "ko": "패스 연습 {time}부터, 골 앞 패스 집중",
            "zh": "{time}开始练传球，注意门前的传球",
            "ar": "تمرين التمرير الساعة {time}، ركزوا على التمريرة قدام المرمى",
        },
    ),
    # cycle 5
    (
        "luhn_invalid",
        {
            "en": "frequent flyer number {badnum}",
            "de": "Vielfliegernummer {badnum}",
            "fr": "numéro de grand voyageur {badnum}",
            "es": "número de viajero frecuente {badnum}",
        },
    ),
    (
        "talk_about",
        {
            "it": "per favore non mandate password per mail, usate il gestore",
            "pt": "por favor não mandem senha por e-mail, usem o cofre de senhas",
            "nl": "stuur alsjeblieft geen wachtwoorden per mail, gebruik de kluis",
            "sv": "skicka inga lösenord på mejl, använd lösenordshanteraren",
        },
    ),
    (
        "price",
        {
            "pl": "bilety po {price}, dzieci za pół ceny",
            "ru": "билеты по {price}, детям скидка",
            "tr": "biletler {price}, çocuklara indirim",
            "ja": "チケットは{price}、子どもは半額",
        },
    ),
    (
        "dev_hash",
        {
            "ko": "키 로테이션 PR 머지됨: {hash}",
            "zh": "密钥轮换的PR合了：{hash}",
            "ar": "تم دمج طلب تدوير المفاتيح: {hash}",
            "en": "key rotation PR merged as {hash}, no secrets in it",
        },
    ),
    (
        "tracking",
        {
            "de": "Retoure {track} ist angekommen",
            "fr": "retour {track} bien reçu",
            "es": "la devolución {track} ya llegó",
            "it": "il reso {track} è arrivato",
        },
    ),
    (
        "date_time",
        {
            "pt": "prova de natação dia {date} às {time}",
            "nl": "zwemdiploma-examen {date} om {time}",
            "sv": "simprov {date} kl {time}",
            "pl": "egzamin na kartę pływacką {date} o {time}",
        },
    ),
    (
        "placeholder",
        {
            "ru": "логин: ivanov, пароль: •••••••• (скрыт)",
            "tr": "kullanıcı: yilmaz, şifre: •••••••• (gizli)",
            "ja": "ID：tanaka／パスワード：••••••••（非表示）",
            "ko": "아이디 kim 비번 •••••••• (가림)",
        },
    ),
    (
        "phone",
        {
            "zh": "物业电话{phone}",
            "ar": "هاتف إدارة العمارة {phone}",
            "en": "building management: {phone}",
            "de": "Hausverwaltung: {phone}",
        },
    ),
    (
        "version",
        {
            "fr": "Python {ver} ou plus, testé jusqu'à {ver2}",
            "es": "Python {ver} o superior, probado hasta {ver2}",
            "it": "Python {ver} o superiore, testato fino a {ver2}",
            "pt": "Python {ver} ou maior, testado até {ver2}",
        },
    ),
    (
        "error_message",
        {
            "nl": 'foutmelding: "Ongeldige pincode" bij de parkeerautomaat',
            "sv": 'felmeddelande: "Felaktig PIN-kod" på parkeringsautomaten',
            "pl": 'komunikat: "Nieprawidłowy PIN" w parkomacie',
            "ru": "ошибка: «Неверный ПИН-код» на паркомате",
        },
    ),
    (
        "room_seat",
        {
            "tr": "tren: vagon {car}, koltuk {seat}",
            "ja": "新幹線 {car}号車 {seat}席",
            "ko": "KTX {car}호차 {seat}석",
            "zh": "高铁{car}车{seat}座",
        },
    ),
    (
        "order_number",
        {
            "ar": "طلب رقم {order} وصل ناقص",
            "en": "order {order} arrived with one item missing",
            "de": "Bestellung {order} kam unvollständig an",
            "fr": "commande {order} arrivée incomplète",
        },
    ),
    (
        "bip39_words",
        {
            "es": "palabras para el bingo en inglés de la clase: {words}",
            "it": "parole per il bingo in inglese: {words}",
            "pt": "palavras do bingo de inglês: {words}",
            "nl": "woorden voor Engelse bingo: {words}",
        },
    ),
    (
        "talk_about",
        {
            "sv": "skriv aldrig in din återställningsfras på någon hemsida, det är bluff",
            "pl": "nigdy nie wpisuj frazy odzyskiwania na żadnej stronie, to oszustwo",
            "ru": "никогда не вводите сид-фразу на сайтах, это развод",
            "tr": "kurtarma kelimelerinizi hiçbir siteye girmeyin, dolandırıcılık",
        },
    ),
    (
        "tracking",
        {
            "ja": "追跡番号{track}、明日着",
            "ko": "운송장 {track} 내일 도착",
            "zh": "运单号{track}，明天到",
            "ar": "رقم الشحنة {track} يوصل بكرة",
        },
    ),
    # cycle 6
    (
        "command_no_value",
        {
            "en": "`curl -u alice https://dav.example.org/` asks for the password interactively, much safer",
            "de": "`curl -u alice https://dav.example.org/` fragt das Passwort interaktiv ab",
            "fr": "`curl -u alice https://dav.example.org/` demande le mot de passe en interactif",
            "es": "`curl -u alice https://dav.example.org/` pide la contraseña de forma interactiva",
        },
    ),
    (
        "room_seat",
        {
            "it": "aula {room}, secondo piano, porta a destra",
            "pt": "sala {room}, segundo andar",
            "nl": "lokaal {room}, tweede verdieping",
            "sv": "sal {room}, andra våningen",
        },
    ),
    (
        "isbn",
        {
            "pl": "zamówiłam {isbn} w księgarni, odbiór {date}",
            "ru": "заказала книгу ISBN {isbn}, забрать {date}",
            "tr": "ISBN {isbn} kitabı sipariş ettim, {date} teslim",
            "ja": "ISBN {isbn}の本を取り寄せ、{date}受け取り",
        },
    ),
    (
        "luhn_invalid",
        {
            "ko": "교통카드 번호 {badnum}",
            "zh": "公交卡号{badnum}",
            "ar": "رقم بطاقة المواصلات {badnum}",
            "en": "transit card number {badnum} for the refund form",
        },
    ),
    (
        "talk_about",
        {
            "de": "der Bestätigungscode kam erst nach 20 Minuten, da war er schon ungültig",
            "fr": "le code de confirmation est arrivé 20 min après, déjà expiré",
            "es": "el código de confirmación llegó 20 min tarde, ya caducado",
            "it": "il codice di conferma è arrivato dopo 20 minuti, già scaduto",
        },
    ),
    (
        "dev_hash",
        {
            "pt": "o hash do arquivo é {sha}, confere?",
            "nl": "de hash van het bestand is {sha}, klopt dat?",
            "sv": "filens hash är {sha}, stämmer det?",
            "pl": "hash pliku to {sha}, zgadza się?",
        },
    ),
    (
        "flight",
        {
            "ru": "посадочный: рейс {flight}, место {seat}, выход {gate}",
            "tr": "biniş kartı: {flight}, koltuk {seat}, kapı {gate}",
            "ja": "搭乗券：{flight} 座席{seat} ゲート{gate}",
            "ko": "탑승권 {flight} 좌석 {seat} 게이트 {gate}",
        },
    ),
    (
        "label_other_sense",
        {
            "zh": "新家的钥匙周六交，{time}在楼下见",
            "ar": "مفاتيح البيت الجديد نستلمها السبت الساعة {time}",
            "en": "we get the keys to the new flat on saturday at {time} 🔑🎉",
            "de": "Schlüsselübergabe für die neue Wohnung am Samstag um {time} 🔑",
        },
    ),
    (
        "phone",
        {
            "fr": "le cabinet du kiné : {phone}",
            "es": "la consulta del fisio: {phone}",
            "it": "lo studio del fisioterapista: {phone}",
            "pt": "o consultório do fisio: {phone}",
        },
    ),
    (
        "price",
        {
            "nl": "huur busje: {price} per dag",
            "sv": "hyrbilen kostar {price} per dag",
            "pl": "wynajem busa {price} za dzień",
            "ru": "аренда микроавтобуса {price} в сутки",
        },
    ),
    (
        "placeholder",
        {
            "tr": "`DB_PASSWORD=${DB_PASSWORD}` olarak bırak, CI dolduruyor",
            "ja": "`DB_PASSWORD=${DB_PASSWORD}` のままでOK、CIが埋める",
            "ko": "`DB_PASSWORD=${DB_PASSWORD}` 그대로 두면 CI가 채워줌",
            "zh": "`DB_PASSWORD=${DB_PASSWORD}` 保持不动，CI会注入",
        },
    ),
    (
        "date_time",
        {
            "ar": "الاجتماع تأجل إلى {date}",
            "en": "meeting moved to {date} {time}",
            "de": "Termin verschoben auf {date}, {time}",
            "fr": "réunion décalée au {date} à {time}",
        },
    ),
    (
        "talk_about",
        {
            "es": "no me acuerdo del código del portal, ¿alguien me abre?",
            "it": "non ricordo il codice del cancello, qualcuno mi apre?",
            "pt": "não lembro o código do portão, alguém abre pra mim?",
            "nl": "ik weet de code van het hek niet meer, kan iemand opendoen?",
        },
    ),
    (
        "uuid",
        {
            "sv": "bokningsreferens {uuid}",
            "pl": "identyfikator rezerwacji {uuid}",
            "ru": "идентификатор брони {uuid}",
            "tr": "rezervasyon kimliği {uuid}",
        },
    ),
    (
        "version",
        {
            "ja": "iOS {ver}だとアプリが落ちる、{ver2}にしたら直った",
            "ko": "iOS {ver}에서 앱 튕김, {ver2}로 올리니 해결",
            "zh": "iOS {ver}闪退，升到{ver2}好了",
            "ar": "التطبيق يطفي على iOS {ver} وانحلت على {ver2}",
        },
    ),
    # cycle 7
    (
        "room_seat",
        {
            "en": "we're in row {car}, seats 14 and 15, stalls",
            "de": "Reihe {car}, Platz 14 und 15, Parkett",
            "fr": "rang {car}, places 14 et 15, orchestre",
            "es": "fila {car}, butacas 14 y 15, platea",
        },
    ),
    (
        "order_number",
        {
            "it": "ordine {order} annullato, rimborso in 5 giorni",
            "pt": "pedido {order} cancelado, estorno em 5 dias",
            "nl": "bestelling {order} geannuleerd, terugbetaling binnen 5 dagen",
            "sv": "order {order} avbruten, återbetalning inom 5 dagar",
        },
    ),
    (
        "label_other_sense",
        {
            "pl": "klucz odpowiedzi do sprawdzianu wrzucę po {time}",
            "ru": "ключи к контрольной скину после {time}",
            "tr": "sınavın cevap anahtarını {time}'den sonra atarım",
            "ja": "テストの解答キーは{time}以降に送ります",
        },
    ),
    (
        "talk_about",
        {
            "ko": "비번은 절대 단톡에 올리지 마세요, 개인톡으로도 안 돼요",
            "zh": "密码千万别发群里，私聊也不行",
            "ar": "لا ترسلوا كلمات المرور في القروب ولا في الخاص",
            "en": "reminder: never post passwords in the group, not even in DMs",
        },
    ),
    (
        "dev_hash",
        {
            "de": "Deployment {hash} ist live, Build-ID {uuid}",
            "fr": "déploiement {hash} en prod, build {uuid}",
            "es": "despliegue {hash} en producción, build {uuid}",
            "it": "deploy {hash} in produzione, build {uuid}",
        },
    ),
    (
        "phone",
        {
            "pt": "liga pro síndico no {phone}",
            "nl": "bel de VvE-beheerder op {phone}",
            "sv": "ring föreningens ordförande på {phone}",
            "pl": "zadzwoń do zarządcy: {phone}",
        },
    ),
    (
        "bip39_words",
        {
            "ru": "выучи слова: {words}",
            "tr": "ezberlenecek kelimeler: {words}",
            "ja": "今週の英単語：{words}",
            "ko": "이번 주 영단어: {words}",
        },
    ),
    (
        "luhn_invalid",
        {
            "zh": "保单号{badnum}",
            "ar": "رقم البوليصة {badnum}",
            "en": "policy number {badnum}",
            "de": "Versicherungsscheinnummer {badnum}",
        },
    ),
    (
        "tracking",
        {
            "fr": "Chronopost {track}, livré en point relais",
            "es": "SEUR {track}, en punto de recogida",
            "it": "GLS {track}, in punto di ritiro",
            "pt": "Jadlog {track}, no ponto de retirada",
        },
    ),
    (
        "command_no_value",
        {
            "nl": "`psql -h localhost -U beheer -W` vraagt zelf om het wachtwoord",
            "sv": "`psql -h localhost -U admin -W` frågar själv efter lösenordet",
            "pl": "`psql -h localhost -U admin -W` sam zapyta o hasło",
            "ru": "`psql -h localhost -U admin -W` сам спросит пароль",
        },
    ),
    (
        "date_time",
        {
            "tr": "vize sınavı {date}, saat {time}",
            "ja": "中間試験は{date} {time}から",
            "ko": "중간고사 {date} {time}",
            "zh": "期中考试{date} {time}",
        },
    ),
    (
        "price",
        {
            "ar": "الإيجار الشهري {price}",
            "en": "rent is {price} a week incl bills",
            "de": "Miete {price} warm",
            "fr": "loyer {price} charges comprises",
        },
    ),
    (
        "error_message",
        {
            "es": "me sale `Permission denied (publickey)` al entrar al servidor",
            "it": "mi dà `Permission denied (publickey)` sul server",
            "pt": "dá `Permission denied (publickey)` no servidor",
            "nl": "ik krijg `Permission denied (publickey)` op de server",
        },
    ),
    (
        "flight",
        {
            "sv": "ombokad till {flight} {date} kl {time}",
            "pl": "przebukowany na {flight} {date} o {time}",
            "ru": "перебронировали на {flight} {date} в {time}",
            "tr": "{flight} uçuşuna aktarıldım, {date} saat {time}",
        },
    ),
    (
        "talk_about",
        {
            "ja": "パスワード間違えすぎてアカウントロックされた…30分待ち",
            "ko": "비번 너무 많이 틀려서 계정 잠김… 30분 기다려야 함",
            "zh": "密码输错太多次账号被锁了，要等30分钟",
            "ar": "انقفل حسابي من كثر ما غلطت بالباسورد، لازم أنتظر ٣٠ دقيقة",
        },
    ),
    # cycle 8
    (
        "postal_code",
        {
            "en": "new address: 14 Harbour Rd, flat {room}, postcode TR18 4AB",
            "de": "neue Adresse: Hafenstraße 14, Wohnung {room}, 24937 Flensburg",
            "fr": "nouvelle adresse : 14 rue du Port, appt {room}, 29200 Brest",
            "es": "dirección nueva: calle del Puerto 14, piso {room}, 36202 Vigo",
        },
    ),
    (
        "isbn",
        {
            "it": "testo per l'esame: ISBN {isbn}",
            "pt": "livro da prova: ISBN {isbn}",
            "nl": "tentamenboek: ISBN {isbn}",
            "sv": "tentaboken: ISBN {isbn}",
        },
    ),
    (
        "price",
        {
            "pl": "składka na prezent dla pani: {price} od osoby",
            "ru": "скидываемся на подарок учительнице по {price}",
            "tr": "öğretmene hediye için kişi başı {price}",
            "ja": "先生へのプレゼント代、一人{price}",
        },
    ),
    (
        "room_seat",
        {
            "ko": "{car}번 승강장에서 {time} 출발",
            "zh": "{car}站台 {time}发车",
            "ar": "الرصيف {car} الساعة {time}",
            "en": "platform {car}, departs {time}",
        },
    ),
    (
        "placeholder",
        {
            "de": "PIN: xxxx steht im Formular, das ist nur ein Platzhalter",
            "fr": "PIN : xxxx dans le formulaire, c'est juste un exemple",
            "es": "PIN: xxxx en el formulario, es solo un ejemplo",
            "it": "PIN: xxxx nel modulo, è solo un esempio",
        },
    ),
    (
        "dev_hash",
        {
            "pt": "o bug veio no commit {hash}",
            "nl": "de regressie zit in {hash}",
            "sv": "regressionen kom i {hash}",
            "pl": "regresja weszła w {hash}",
        },
    ),
    (
        "order_number",
        {
            "ru": "номер заказа {order}, курьер будет с {time}",
            "tr": "sipariş {order}, kurye {time}'den itibaren",
            "ja": "注文{order}、配達は{time}以降",
            "ko": "주문 {order} 배달 {time} 이후",
        },
    ),
    (
        "talk_about",
        {
            "zh": "我把所有密码都放进密码管理器了，再也不用记了",
            "ar": "حطيت كل كلمات المرور في مدير كلمات المرور، خلاص ما أحتاج أحفظها",
            "en": "moved all my passwords into a password manager, finally",
            "de": "endlich alle Passwörter im Passwortmanager",
        },
    ),
    (
        "uuid",
        {
            "fr": "ID de transaction {uuid}",
            "es": "ID de transacción {uuid}",
            "it": "ID transazione {uuid}",
            "pt": "ID da transação {uuid}",
        },
    ),
    (
        "date_time",
        {
            "nl": "ALV van de vereniging: {date}, {time}",
            "sv": "årsmöte {date} kl {time}",
            "pl": "walne zebranie {date}, {time}",
            "ru": "общее собрание {date} в {time}",
        },
    ),
    (
        "luhn_invalid",
        {
            "tr": "abone numarası {badnum}",
            "ja": "お客様番号{badnum}",
            "ko": "고객번호 {badnum}",
            "zh": "客户编号{badnum}",
        },
    ),
    (
        "version",
        {
            "ar": "نسخة الراوتر {ver}، التحديث {ver2} متوفر",
            "en": "router firmware {ver}, update {ver2} available",
            "de": "Router-Firmware {ver}, Update {ver2} verfügbar",
            "fr": "firmware box {ver}, mise à jour {ver2} dispo",
        },
    ),
    (
        "phone",
        {
            "es": "teléfono de la academia {phone}",
            "it": "numero della scuola di lingue {phone}",
            "pt": "telefone da escola de idiomas {phone}",
            "nl": "telefoon taalschool {phone}",
        },
    ),
    (
        "label_other_sense",
        {
            "sv": "koden i PR:en ser bra ut, mergea efter {time}",
            "pl": "kod w PR wygląda dobrze, merguj po {time}",
            "ru": "код в пулл-реквесте норм, мержи после {time}",
            "tr": "PR'daki kod iyi görünüyor, {time}'den sonra merge et",
        },
    ),
    (
        "isbn",
        {
            "ja": "課題図書 ISBN {isbn}",
            "ko": "필독서 ISBN {isbn}",
            "zh": "必读书目 ISBN {isbn}",
            "ar": "الكتاب المطلوب ISBN {isbn}",
        },
    ),
    # cycle 9
    (
        "talk_about",
        {
            "en": "printed my 2FA backup codes and put them in the safe, not sharing them here obviously",
            "de": "hab meine 2FA-Backupcodes ausgedruckt und in den Safe gelegt",
            "fr": "j'ai imprimé mes codes de secours 2FA et je les ai mis au coffre",
            "es": "imprimí los códigos de respaldo del 2FA y los guardé en la caja fuerte",
        },
    ),
    (
        "flight",
        {
            "it": "volo {flight} cancellato, riprotetti su quello delle {time}",
            "pt": "voo {flight} cancelado, remarcaram pro das {time}",
            "nl": "vlucht {flight} geannuleerd, omgeboekt naar {time}",
            "sv": "flyg {flight} inställt, ombokade till {time}",
        },
    ),
    (
        "uuid",
        {
            "pl": "numer zgłoszenia {uuid}",
            "ru": "номер обращения {uuid}",
            "tr": "talep numarası {uuid}",
            "ja": "問い合わせ番号{uuid}",
        },
    ),
    (
        "price",
        {
            "ko": "중고 자전거 {price}에 팔아요",
            "zh": "二手自行车{price}出",
            "ar": "دراجة مستعملة للبيع {price}",
            "en": "selling my old bike for {price} ono",
        },
    ),
    (
        "phone",
        {
            "de": "Notdienst Schlüsseldienst: {phone}",
            "fr": "serrurier d'urgence : {phone}",
            "es": "cerrajero de urgencia: {phone}",
            "it": "fabbro pronto intervento: {phone}",
        },
    ),
    (
        "error_message",
        {
            "pt": 'aparece "usuário ou senha inválidos" mas eu tenho certeza que tá certo',
            "nl": 'ik krijg "gebruikersnaam of wachtwoord onjuist" maar het klopt echt',
            "sv": 'det står "fel användarnamn eller lösenord" fast det är rätt',
            "pl": 'wyskakuje "nieprawidłowy login lub hasło" a na pewno wpisuję dobrze',
        },
    ),
    (
        "tracking",
        {
            "ru": "трек-номер {track}, посылка на таможне",
            "tr": "takip no {track}, paket gümrükte",
            "ja": "追跡{track}、通関中",
            "ko": "송장 {track} 통관 중",
        },
    ),
    (
        "room_seat",
        {
            "zh": "会议室换到{room}了",
            "ar": "غرفة الاجتماع صارت {room}",
            "en": "meeting room changed to {room}",
            "de": "Besprechungsraum jetzt {room}",
        },
    ),
    (
        "postal_code",
        {
            "fr": "le code postal c'est 69003, pas 69300",
            "es": "el código postal es 46021, no 46012",
            "it": "il CAP è 40126, non 40162",
            "pt": "o CEP é 01310-100, não 01301-100",
        },
    ),
    (
        "isbn",
        {
            "nl": "leesclubboek: ISBN {isbn}",
            "sv": "bokcirkelns bok: ISBN {isbn}",
            "pl": "książka klubu: ISBN {isbn}",
            "ru": "книга клуба: ISBN {isbn}",
        },
    ),
    (
        "dev_hash",
        {
            "tr": "{hash} commit'i ana dala alındı",
            "ja": "{hash}をmainにマージしました",
            "ko": "{hash} main에 머지함",
            "zh": "{hash}已合入main",
        },
    ),
    (
        "placeholder",
        {
            "ar": "اكتب الرمز بهذا الشكل: 000000 (مثال فقط)",
            "en": "enter the code as 000000 (example only, the real one comes by SMS)",
            "de": "Code im Format 000000 eingeben (nur Beispiel, der echte kommt per SMS)",
            "fr": "saisissez le code au format 000000 (exemple, le vrai arrive par SMS)",
        },
    ),
    (
        "date_time",
        {
            "es": "la boda es el {date}, ceremonia a las {time}",
            "it": "il matrimonio è il {date}, cerimonia alle {time}",
            "pt": "o casamento é dia {date}, cerimônia às {time}",
            "nl": "de bruiloft is op {date}, ceremonie om {time}",
        },
    ),
    (
        "order_number",
        {
            "sv": "kvitto nr {order}, garanti 2 år",
            "pl": "paragon nr {order}, gwarancja 2 lata",
            "ru": "чек № {order}, гарантия 2 года",
            "tr": "fiş no {order}, 2 yıl garanti",
        },
    ),
    (
        "phone",
        {
            "ja": "学童の連絡先{phone}",
            "ko": "돌봄교실 연락처 {phone}",
            "zh": "托管班电话{phone}",
            "ar": "رقم الحضانة {phone}",
        },
    ),
    (
        "bip39_sentence",
        {
            "en": "she said the old clock in the hall would never work again, but it did",
            "de": 'English homework sentence: "the little boy found a green apple under the table"',
            "fr": "phrase de la dictée en anglais : « we walked along the river until the rain began »",
            "es": 'frase para traducir: "my sister bought a new bicycle and rode it to the beach"',
        },
    ),
    (
        "talk_about",
        {
            "it": "la banca mi ha chiamato chiedendo il codice dell'app, ho riattaccato subito",
            "pt": "ligaram dizendo ser do banco e pediram o código do app, desliguei na hora",
            "nl": "iemand belde namens de bank en vroeg om de code uit de app, meteen opgehangen",
            "sv": 'någon ringde från "banken" och ville ha koden från appen, la på direkt',
        },
    ),
    (
        "label_other_sense",
        {
            "pl": "pin do mapy wrzuciłam na grupę, parking przy bramie {gate}",
            "ru": "кинула пин на карте в чат, парковка у ворот {gate}",
            "tr": "konum pinini gruba attım, otopark {gate} kapısının yanında",
            "ja": "地図のピンをグループに送った、駐車場は{gate}ゲートの横",
        },
    ),
    (
        "order_number",
        {
            "ko": "예약번호 {order}, 체크인 {time}",
            "zh": "预订号{order}，入住{time}",
            "ar": "رقم الحجز {order}، تسجيل الدخول {time}",
            "en": "booking ref {order}, check-in from {time}",
        },
    ),
]
