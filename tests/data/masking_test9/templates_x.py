"""More templates per language, each its own phrasing (not a shared skeleton): secrets in
SECRETS_X, look-alikes in LOOKALIKES_X, and the local-script stems of mixed-script
passwords in STEMS."""

from __future__ import annotations

STEMS: dict[str, tuple[str, ...]] = {
    "en": ("Ωmega", "Straße", "señor"),
    "de": ("Bär", "Größe", "Müsli"),
    "fr": ("Été", "forêt", "Noël"),
    "es": ("Ñandú", "búho", "piñata"),
    "it": ("Città", "perché", "caffè"),
    "pt": ("Coração", "pão", "maçã"),
    "nl": ("één", "Ĳsje", "café"),
    "sv": ("Älg", "Sjöbod", "blåbär"),
    "pl": ("Żubr", "źdźbło", "Łódź"),
    "ru": ("Лиса", "ёжик", "Самовар"),
    "tr": ("Çınar", "güneş", "İstif"),
    "ja": ("さくら", "ネコ", "富士"),
    "ko": ("하늘", "고양이", "바다"),
    "zh": ("熊猫", "长城", "小龙"),
    "ar": ("قمر", "نخلة", "صقر"),
}

Templates = list[tuple[str, str]]

SECRETS_X: dict[str, Templates] = {
    "en": [
        (
            "password",
            "srsly who set the hackathon demo account?? its pasword is {pwl} and it has admin",
        ),
        ("seed_phrase", "24 words from the ledger backup card, farm co-op treasury:\n{seed24}"),
        ("access_code", "Gear lockers at the dive shop: #{n} is yours, combo {door}"),
        ("otp", "[{time}] {name}: got the text? \n[{time2}] {name2}: yep it says {otps}"),
        ("card", "card for the vet supplies account: {card}, the finance lady knows"),
        ("pin", "{pin6} is the pin for the gaming clan's shared console, don't tell the new guys"),
        (
            "password",
            "{name} asked what the embassy appointment login was — it's the same as the library one: {pw}",
        ),
        (
            "multi",
            "moving house checklist ✅\n- old flat keysafe: {door}\n- router admin: {pw}\n- new alarm: {doorx}",
        ),
    ],
    "de": [
        ("password", "Ey, wer hat den Demo-Account beim Hackathon angelegt? Passwd: {pwl}"),
        ("seed_phrase", "Die 24 Wörter von der Hardware-Wallet der Kleingartenkasse:\n{seed24}"),
        ("access_code", "Spind im Taucherkeller: Nr. {n}, Zahlenschloss {door}"),
        ("otp", "[{time}] {name}: SMS da?\n[{time2}] {name2}: jo, {otps}"),
        ("card", "Die Karte für den Tierarztbedarf ist {card}, Ablauf {exp}"),
        (
            "pin",
            "{pin6} ist die PIN für die gemeinsame Konsole vom Clan, nicht an die Neuen weitergeben",
        ),
        (
            "password",
            "Für den Botschaftstermin: Login ist derselbe wie bei der Stadtbibliothek, Kennwort {pw}",
        ),
        (
            "multi",
            "Umzug ✅\n- Schlüsselbox alte Wohnung: {door}\n- Router: {pw}\n- Alarmanlage neu: {doorx}",
        ),
    ],
    "fr": [
        ("password", "qui a créé le compte démo du hackathon ?? le mot de pass c'est {pwl}"),
        (
            "seed_phrase",
            "les 24 mots de la carte de sauvegarde du portefeuille de l'asso :\n{seed24}",
        ),
        ("access_code", "casier {n} au club de plongée, cadenas {door}"),
        ("otp", "[{time}] {name} : t'as reçu le SMS ?\n[{time2}] {name2} : ouais, {otps}"),
        ("card", "la carte pour les commandes de la clinique : {card}, expire {exp}"),
        (
            "pin",
            "{pin6} c'est le code PIN de la console partagée du clan, le dites pas aux nouveaux",
        ),
        (
            "password",
            "pour le rdv à l'ambassade c'est le même identifiant que la médiathèque, mdp {pw}",
        ),
        (
            "multi",
            "déménagement ✅\n- boîte à clés ancien appart : {door}\n- box internet : {pw}\n- alarme nouvelle maison : {doorx}",
        ),
    ],
    "es": [
        (
            "password",
            "quién creó la cuenta demo del hackathon?? la contraseña es {pwl} y tiene admin",
        ),
        (
            "seed_phrase",
            "las 24 palabras de la tarjeta de respaldo de la cartera de la peña:\n{seed24}",
        ),
        ("access_code", "taquilla {n} del centro de buceo, candado {door}"),
        ("otp", "[{time}] {name}: te llegó el SMS?\n[{time2}] {name2}: sí, {otps}"),
        ("card", "tarjeta para los pedidos de la clínica: {card}, caduca {exp}"),
        ("pin", "{pin6} es el PIN de la consola del clan, no se lo digáis a los nuevos"),
        (
            "password",
            "para la cita del consulado es el mismo usuario que la biblioteca, clave {pw}",
        ),
        (
            "multi",
            "mudanza ✅\n- caja de llaves piso viejo: {door}\n- router: {pw}\n- alarma casa nueva: {doorx}",
        ),
    ],
    "it": [
        ("password", "chi ha creato l'account demo dell'hackathon?? la pw è {pwl}"),
        (
            "seed_phrase",
            "le 24 parole della scheda di backup del wallet dell'associazione:\n{seed24}",
        ),
        ("access_code", "armadietto {n} al diving, lucchetto {door}"),
        ("otp", "[{time}] {name}: ti è arrivato l'SMS?\n[{time2}] {name2}: sì, {otps}"),
        ("card", "carta per gli ordini della clinica veterinaria: {card}, scade {exp}"),
        ("pin", "{pin6} è il PIN della console condivisa del clan, non ditelo ai nuovi"),
        (
            "password",
            "per l'appuntamento al consolato è lo stesso login della biblioteca, password {pw}",
        ),
        (
            "multi",
            "trasloco ✅\n- cassetta chiavi vecchia casa: {door}\n- router: {pw}\n- allarme casa nuova: {doorx}",
        ),
    ],
    "pt": [
        ("password", "quem criou a conta demo do hackathon?? a senha é {pwl}"),
        ("seed_phrase", "as 24 palavras do cartão de backup da carteira da associação:\n{seed24}"),
        ("access_code", "cacifo {n} no centro de mergulho, cadeado {door}"),
        ("otp", "[{time}] {name}: recebeste o SMS?\n[{time2}] {name2}: sim, {otps}"),
        ("card", "cartão para as encomendas da clínica: {card}, validade {exp}"),
        ("pin", "{pin6} é o PIN da consola partilhada do clã, não digam aos novos"),
        ("password", "para a marcação no consulado é o mesmo login da biblioteca, senha {pw}"),
        (
            "multi",
            "mudança ✅\n- caixa de chaves casa antiga: {door}\n- router: {pw}\n- alarme casa nova: {doorx}",
        ),
    ],
    "nl": [
        ("password", "wie heeft het demo-account op de hackathon gemaakt?? wachtw: {pwl}"),
        ("seed_phrase", "de 24 woorden van de back-upkaart van de clubwallet:\n{seed24}"),
        ("access_code", "kluisje {n} bij de duikschool, hangslot {door}"),
        ("otp", "[{time}] {name}: sms binnen?\n[{time2}] {name2}: ja, {otps}"),
        ("card", "de kaart voor de bestellingen van de dierenkliniek: {card}, verloopt {exp}"),
        (
            "pin",
            "{pin6} is de pincode van de gedeelde console van de clan, niet aan de nieuwe gasten geven",
        ),
        ("password", "voor de afspraak op de ambassade is het dezelfde login als de bieb, ww {pw}"),
        (
            "multi",
            "verhuizing ✅\n- sleutelkluis oude huis: {door}\n- router: {pw}\n- alarm nieuwe huis: {doorx}",
        ),
    ],
    "sv": [
        ("password", "vem skapade demokontot på hackathonet?? lösenorde e {pwl}"),
        ("seed_phrase", "de 24 orden från föreningens backup-kort till plånboken:\n{seed24}"),
        ("access_code", "skåp {n} på dykcentret, hänglås {door}"),
        ("otp", "[{time}] {name}: fick du sms:et?\n[{time2}] {name2}: japp, {otps}"),
        ("card", "kortet till djurklinikens beställningar: {card}, går ut {exp}"),
        ("pin", "{pin6} är PIN till klanens delade konsol, säg inget till de nya"),
        ("password", "till ambassadbokningen är det samma inlogg som biblioteket, lösen {pw}"),
        (
            "multi",
            "flytt ✅\n- nyckelbox gamla lägenheten: {door}\n- router: {pw}\n- larm nya huset: {doorx}",
        ),
    ],
    "pl": [
        ("password", "kto założył konto demo na hackathonie?? haslo {pwl} i ma admina"),
        ("seed_phrase", "24 słowa z karty zapasowej portfela stowarzyszenia:\n{seed24}"),
        ("access_code", "szafka {n} w bazie nurkowej, kłódka {door}"),
        ("otp", "[{time}] {name}: doszedł SMS?\n[{time2}] {name2}: tak, {otps}"),
        ("card", "karta do zamówień dla przychodni weterynaryjnej: {card}, ważna do {exp}"),
        ("pin", "{pin6} to PIN do wspólnej konsoli klanu, nie mówcie nowym"),
        ("password", "do wizyty w ambasadzie ten sam login co w bibliotece, hasło {pw}"),
        (
            "multi",
            "przeprowadzka ✅\n- skrytka na klucze stare mieszkanie: {door}\n- router: {pw}\n- alarm nowy dom: {doorx}",
        ),
    ],
    "ru": [
        ("password", "кто завёл демо-аккаунт на хакатоне?? парол {pwl}, там админка"),
        ("seed_phrase", "24 слова с резервной карточки кошелька клуба:\n{seed24}"),
        ("access_code", "шкафчик {n} в дайв-центре, кодовый замок {door}"),
        ("otp", "[{time}] {name}: смс пришла?\n[{time2}] {name2}: ага, {otps}"),
        ("card", "карта для заказов ветклиники: {card}, срок {exp}"),
        ("pin", "{pin6} — пин от общей приставки клана, новичкам не говорите"),
        ("password", "для записи в посольство тот же логин, что в библиотеке, пароль {pw}"),
        (
            "multi",
            "переезд ✅\n- ключница старой квартиры: {door}\n- роутер: {pw}\n- сигнализация в новом доме: {doorx}",
        ),
    ],
    "tr": [
        ("password", "hackathondaki demo hesabı kim açtı?? sifre {pwl}, admin yetkili"),
        ("seed_phrase", "derneğin cüzdan yedek kartındaki 24 kelime:\n{seed24}"),
        ("access_code", "dalış merkezinde {n} numaralı dolap, asma kilit {door}"),
        ("otp", "[{time}] {name}: SMS geldi mi?\n[{time2}] {name2}: evet, {otps}"),
        ("card", "veteriner siparişleri için kart: {card}, SKT {exp}"),
        ("pin", "{pin6} klanın ortak konsolunun PIN'i, yenilere söylemeyin"),
        ("password", "konsolosluk randevusu için kütüphanedekiyle aynı giriş, parola {pw}"),
        (
            "multi",
            "taşınma ✅\n- eski evin anahtar kutusu: {door}\n- modem: {pw}\n- yeni evin alarmı: {doorx}",
        ),
    ],
    "ja": [
        ("password", "ハッカソンのデモ用アカウント作ったの誰？ぱすわーどは{pwl}、管理者権限あり"),
        ("seed_phrase", "サークルのウォレットのバックアップカードの24単語：\n{seed24}"),
        ("access_code", "ダイビングショップのロッカー{n}番、ダイヤル錠は{door}"),
        ("otp", "[{time}] {name}: SMS来た？\n[{time2}] {name2}: うん、{otps}"),
        ("card", "動物病院の備品注文用カード：{card}、期限{exp}"),
        ("pin", "{pin6} がクランの共有ゲーム機のPINね、新人には内緒で"),
        ("password", "大使館の予約サイトは図書館と同じログインで、パスは{pw}"),
        (
            "multi",
            "引っ越し ✅\n・旧居のキーボックス {door}\n・ルーター {pw}\n・新居の警報 {doorx}",
        ),
    ],
    "ko": [
        ("password", "해커톤 데모 계정 누가 만들었어?? 비빌번호 {pwl} 이고 관리자 권한 있음"),
        ("seed_phrase", "동아리 지갑 백업 카드에 적힌 24단어:\n{seed24}"),
        ("access_code", "다이빙샵 사물함 {n}번, 자물쇠 번호 {door}"),
        ("otp", "[{time}] {name}: 문자 왔어?\n[{time2}] {name2}: 응 {otps}"),
        ("card", "동물병원 비품 주문용 카드: {card}, 유효기간 {exp}"),
        ("pin", "{pin6} 이게 클랜 공용 콘솔 PIN이야, 신입들한테는 비밀"),
        ("password", "대사관 예약 사이트는 도서관이랑 같은 로그인, 비번 {pw}"),
        ("multi", "이사 체크리스트 ✅\n- 옛집 키박스 {door}\n- 공유기 {pw}\n- 새집 경보기 {doorx}"),
    ],
    "zh": [
        ("password", "黑客松的演示账号谁建的？？秘码{pwl}，有管理员权限"),
        ("seed_phrase", "社团钱包备份卡上的24个单词：\n{seed24}"),
        ("access_code", "潜水店{n}号储物柜，密码锁{door}"),
        ("otp", "[{time}] {name}：短信收到没？\n[{time2}] {name2}：收到了，{otps}"),
        ("card", "宠物医院采购用的卡：{card}，有效期{exp}"),
        ("pin", "{pin6}是战队共用游戏机的PIN，别告诉新人"),
        ("password", "大使馆预约网站和图书馆是同一个账号，密码{pw}"),
        ("multi", "搬家清单 ✅\n- 旧房钥匙盒 {door}\n- 路由器 {pw}\n- 新家报警器 {doorx}"),
    ],
    "ar": [
        ("password", "مين سوّى حساب الديمو في الهاكاثون؟؟ الباسوورد {pwl} وعنده صلاحية أدمن"),
        ("seed_phrase", "الكلمات الـ24 من بطاقة النسخ الاحتياطي لمحفظة الجمعية:\n{seed24}"),
        ("access_code", "خزانة رقم {n} في مركز الغوص، القفل {door}"),
        ("otp", "[{time}] {name}: وصلتك الرسالة؟\n[{time2}] {name2}: إيه، {otps}"),
        ("card", "بطاقة طلبات العيادة البيطرية: {card}، تنتهي {exp}"),
        ("pin", "{pin6} هذا رمز PIN لجهاز الألعاب المشترك حق الكلان، لا تقولوه للجدد"),
        ("password", "لموعد السفارة نفس حساب المكتبة، كلمة السر {pw}"),
        (
            "multi",
            "النقل للبيت الجديد ✅\n- صندوق مفاتيح الشقة القديمة: {door}\n- الراوتر: {pw}\n- إنذار البيت الجديد: {doorx}",
        ),
    ],
}

LOOKALIKES_X: dict[str, Templates] = {
    "en": [
        (
            "talk_about",
            "embassy says the visa portal password must be 12+ characters, mine was too short lol ({name})",
        ),
        ("label_other_sense", "bowling night: {name} knocked down {n} pins in the first frame 🎳"),
        (
            "label_other_sense",
            "answer key for the quiz is on page {nn}, the postal code is on the envelope",
        ),
        (
            "talk_about",
            "hospital night shift: the med room code is in the handover folder, not in this chat. ask {name}",
        ),
        ("date_time", "tax season: appointment {date} at {time}, bring last year's return"),
        ("price", "car-share trip split: {price} each, paid via the app at {time}"),
        (
            "word_list",
            "the farm has a giant orange tractor, please wash it before you park near the barn",
        ),
        (
            "placeholder",
            "new crew members: the wifi key is on the laminated card (xxxx-xxxx), ask {name}",
        ),
    ],
    "de": [
        (
            "talk_about",
            "Botschaft sagt, das Passwort fürs Visaportal muss mind. 12 Zeichen haben, meins war zu kurz ({name})",
        ),
        ("label_other_sense", "Kegelabend: {name} hat {n} Kegel im ersten Wurf umgehauen 🎳"),
        (
            "label_other_sense",
            "Lösungsschlüssel fürs Quiz steht auf Seite {nn}, Postleitzahl steht auf dem Umschlag",
        ),
        (
            "talk_about",
            "Nachtdienst: der Code vom Medikamentenraum steht im Übergabeordner, nicht hier im Chat. Frag {name}",
        ),
        ("date_time", "Steuererklärung: Termin beim Lohnsteuerhilfeverein am {date} um {time}"),
        ("price", "Carsharing-Fahrt geteilt: {price} pro Person, um {time} in der App bezahlt"),
        ("word_list", "Englisch-Hausaufgabe: „the farm has a giant orange tractor near the barn“"),
        (
            "placeholder",
            "Neue im Team: das WLAN-Passwort steht auf der laminierten Karte (xxxx-xxxx), fragt {name}",
        ),
    ],
    "fr": [
        (
            "talk_about",
            "l'ambassade dit que le mot de passe du portail visa doit faire 12 caractères min ({name})",
        ),
        (
            "label_other_sense",
            "soirée bowling : {name} a fait tomber {n} quilles au premier lancer 🎳",
        ),
        (
            "label_other_sense",
            "le corrigé du quiz est page {nn}, le code postal est sur l'enveloppe",
        ),
        (
            "talk_about",
            "garde de nuit : le code de la salle des médicaments est dans le classeur de relève, pas ici. demande à {name}",
        ),
        ("date_time", "impôts : rendez-vous le {date} à {time}, apporte l'avis de l'an dernier"),
        ("price", "autopartage : {price} chacun, payé dans l'appli à {time}"),
        ("word_list", "devoir d'anglais : « the farm has a giant orange tractor near the barn »"),
        (
            "placeholder",
            "nouveaux bénévoles : la clé wifi est sur la carte plastifiée (xxxx-xxxx), demandez à {name}",
        ),
    ],
    "es": [
        (
            "talk_about",
            "el consulado dice que la contraseña del portal de visados necesita 12 caracteres mínimo ({name})",
        ),
        ("label_other_sense", "noche de bolos: {name} tiró {n} bolos en la primera tirada 🎳"),
        ("label_other_sense", "la clave de respuestas del test está en la página {nn}"),
        (
            "talk_about",
            "guardia de noche: el código de la sala de medicación está en la carpeta de relevo, no aquí. pregunta a {name}",
        ),
        ("date_time", "renta: cita en la gestoría el {date} a las {time}"),
        ("price", "coche compartido: {price} cada uno, pagado en la app a las {time}"),
        ("word_list", "deberes de inglés: «the farm has a giant orange tractor near the barn»"),
        (
            "placeholder",
            "voluntarios nuevos: la clave del wifi está en la tarjeta plastificada (xxxx-xxxx), pedídsela a {name}",
        ),
    ],
    "it": [
        (
            "talk_about",
            "il consolato dice che la password del portale visti deve avere almeno 12 caratteri ({name})",
        ),
        ("label_other_sense", "serata bowling: {name} ha buttato giù {n} birilli al primo tiro 🎳"),
        (
            "label_other_sense",
            "la chiave delle risposte del quiz è a pagina {nn}, il CAP è sulla busta",
        ),
        (
            "talk_about",
            "turno di notte: il codice della stanza farmaci è nel raccoglitore delle consegne, non qui. chiedi a {name}",
        ),
        ("date_time", "730: appuntamento al CAF il {date} alle {time}"),
        ("price", "car sharing: {price} a testa, pagato nell'app alle {time}"),
        ("word_list", 'compiti di inglese: "the farm has a giant orange tractor near the barn"'),
        (
            "placeholder",
            "nuovi volontari: la password del wifi è sul cartellino plastificato (xxxx-xxxx), chiedete a {name}",
        ),
    ],
    "pt": [
        (
            "talk_about",
            "o consulado diz que a senha do portal de vistos tem de ter pelo menos 12 caracteres ({name})",
        ),
        ("label_other_sense", "noite de bowling: a {name} deitou {n} pinos na primeira jogada 🎳"),
        (
            "label_other_sense",
            "a chave de respostas do teste está na página {nn}, o código postal está no envelope",
        ),
        (
            "talk_about",
            "turno da noite: o código da sala de medicação está na pasta da passagem de turno, não aqui. pergunta à {name}",
        ),
        ("date_time", "IRS: marcação nas Finanças a {date} às {time}"),
        ("price", "carro partilhado: {price} cada, pago na app às {time}"),
        ("word_list", 'trabalho de inglês: "the farm has a giant orange tractor near the barn"'),
        (
            "placeholder",
            "voluntários novos: a password do wifi está no cartão plastificado (xxxx-xxxx), peçam à {name}",
        ),
    ],
    "nl": [
        (
            "talk_about",
            "de ambassade zegt dat het wachtwoord voor het visumportaal minstens 12 tekens moet zijn ({name})",
        ),
        ("label_other_sense", "bowlingavond: {name} gooide {n} pins om in de eerste worp 🎳"),
        (
            "label_other_sense",
            "de antwoordsleutel van de quiz staat op pagina {nn}, de postcode staat op de envelop",
        ),
        (
            "talk_about",
            "nachtdienst: de code van de medicijnkamer staat in de overdrachtsmap, niet hier. vraag {name}",
        ),
        ("date_time", "belastingaangifte: afspraak op {date} om {time}"),
        ("price", "deelauto: {price} per persoon, om {time} betaald in de app"),
        ("word_list", "Engels huiswerk: 'the farm has a giant orange tractor near the barn'"),
        (
            "placeholder",
            "nieuwe vrijwilligers: de wifi-sleutel staat op het gelamineerde kaartje (xxxx-xxxx), vraag {name}",
        ),
    ],
    "sv": [
        (
            "talk_about",
            "ambassaden säger att lösenordet till visumportalen måste ha minst 12 tecken ({name})",
        ),
        ("label_other_sense", "bowlingkväll: {name} fällde {n} käglor på första slaget 🎳"),
        ("label_other_sense", "facit till quizet finns på sidan {nn}, postnumret står på kuvertet"),
        (
            "talk_about",
            "nattpass: koden till läkemedelsrummet står i överlämningspärmen, inte här. fråga {name}",
        ),
        ("date_time", "deklarationen: tid hos Skatteverket {date} kl {time}"),
        ("price", "bilpool: {price} per person, betalt i appen {time}"),
        ("word_list", 'engelskaläxa: "the farm has a giant orange tractor near the barn"'),
        (
            "placeholder",
            "nya volontärer: wifi-nyckeln står på det laminerade kortet (xxxx-xxxx), fråga {name}",
        ),
    ],
    "pl": [
        (
            "talk_about",
            "ambasada pisze, że hasło do portalu wizowego musi mieć min. 12 znaków ({name})",
        ),
        ("label_other_sense", "kręgle: {name} — 7 kręgli w pierwszym rzucie 🎳"),
        (
            "label_other_sense",
            "klucz odpowiedzi do quizu jest na stronie {nn}, kod pocztowy na kopercie",
        ),
        (
            "talk_about",
            "dyżur nocny: kod do pokoju z lekami jest w segregatorze zmiany, nie tutaj. wie {name}",
        ),
        ("date_time", "PIT: wizyta w urzędzie skarbowym {date} o {time}"),
        ("price", "carsharing: po {price} na osobę, zapłacone w apce o {time}"),
        (
            "word_list",
            "zadanie z angielskiego: „the farm has a giant orange tractor near the barn”",
        ),
        (
            "placeholder",
            "nowi wolontariusze: hasło do wifi jest na zalaminowanej karteczce (xxxx-xxxx), wie {name}",
        ),
    ],
    "ru": [
        (
            "talk_about",
            "в посольстве говорят, пароль на визовом портале должен быть от 12 символов ({name})",
        ),
        ("label_other_sense", "боулинг: {name} — 7 кеглей с первого броска 🎳"),
        ("label_other_sense", "ключ к ответам викторины на странице {nn}, индекс на конверте"),
        (
            "talk_about",
            "ночная смена: код от процедурной в папке передачи смены, не здесь. {name} подскажет",
        ),
        ("date_time", "налоговый вычет: запись в МФЦ {date} в {time}"),
        ("price", "каршеринг: по {price} с человека, оплатили в приложении в {time}"),
        (
            "word_list",
            "домашка по английскому: «the farm has a giant orange tractor near the barn»",
        ),
        (
            "placeholder",
            "новым волонтёрам: пароль от вайфая на заламинированной карточке (xxxx-xxxx), {name} подскажет",
        ),
    ],
    "tr": [
        (
            "talk_about",
            "konsolosluk vize portalındaki şifrenin en az 12 karakter olması gerektiğini söylüyor ({name})",
        ),
        ("label_other_sense", "bowling gecesi: {name} — ilk atışta {n} lobut 🎳"),
        ("label_other_sense", "sınavın cevap anahtarı {nn}. sayfada, posta kodu zarfın üstünde"),
        (
            "talk_about",
            "gece nöbeti: ilaç odasının kodu devir dosyasında, burada değil. {name} biliyor",
        ),
        ("date_time", "vergi beyannamesi: mali müşavir randevusu {date} saat {time}"),
        ("price", "araç paylaşımı: kişi başı {price}, saat {time} itibarıyla uygulamadan ödendi"),
        ("word_list", 'İngilizce ödevi: "the farm has a giant orange tractor near the barn"'),
        (
            "placeholder",
            "yeni gönüllüler: wifi şifresi lamine kartta yazıyor (xxxx-xxxx), {name} yardımcı olur",
        ),
    ],
    "ja": [
        ("talk_about", "大使館のビザポータル、パスワードは12文字以上必要だって（{name}）"),
        ("label_other_sense", "ボウリング大会：{name}が1投目で{n}本ピンを倒した🎳"),
        ("label_other_sense", "クイズの解答キーは{nn}ページ、郵便番号は封筒に書いてある"),
        (
            "talk_about",
            "夜勤：薬品室の暗証番号は申し送りファイルに書いてあるので、ここには書きません。{name}に聞いて",
        ),
        ("date_time", "確定申告：税務署の予約は{date}の{time}"),
        ("price", "カーシェア代は一人{price}、{time}にアプリで支払い済み"),
        ("word_list", "英語の宿題：「the farm has a giant orange tractor near the barn」"),
        (
            "placeholder",
            "新人さんへ：Wi-Fiのパスワードはラミネートカード（xxxx-xxxx）に書いてあるので{name}に聞いてね",
        ),
    ],
    "ko": [
        ("talk_about", "대사관 비자 포털 비밀번호는 12자 이상이어야 한대요 ({name})"),
        ("label_other_sense", "볼링 모임: {name} 첫 투구에 핀 {n}개 🎳"),
        ("label_other_sense", "퀴즈 정답 키는 {nn}쪽, 우편번호는 봉투에 있어요"),
        (
            "talk_about",
            "야간 근무: 약품실 비번은 인수인계 파일에 있어요, 여기엔 안 씀. {name}한테 물어봐",
        ),
        ("date_time", "종합소득세: 세무서 예약 {date} {time}"),
        ("price", "카셰어링 비용 1인당 {price}, {time}에 앱으로 결제함"),
        ("word_list", '영어 숙제: "the farm has a giant orange tractor near the barn"'),
        (
            "placeholder",
            "신입분들: 와이파이 비번은 코팅된 카드(xxxx-xxxx)에 있으니 {name}한테 물어보세요",
        ),
    ],
    "zh": [
        ("talk_about", "大使馆说签证网站的密码至少要12位（{name}）"),
        ("label_other_sense", "保龄球之夜：{name}第一球打倒了{n}个瓶 🎳"),
        ("label_other_sense", "测验的答案在第{nn}页，邮编写在信封上"),
        ("talk_about", "夜班：药品室的门禁密码在交接本里，这里不写。问{name}"),
        ("date_time", "个税汇算：税务局预约{date} {time}"),
        ("price", "共享汽车费用每人{price}，{time}已在App里付了"),
        ("word_list", "英语作业：“the farm has a giant orange tractor near the barn”"),
        ("placeholder", "新志愿者：wifi密码在塑封卡片上（xxxx-xxxx），问{name}"),
    ],
    "ar": [
        (
            "talk_about",
            "السفارة تقول إن كلمة المرور في بوابة التأشيرات لازم تكون ١٢ حرف على الأقل ({name})",
        ),
        ("label_other_sense", "ليلة البولينغ: {name} — ٧ قوارير من أول رمية 🎳"),
        ("label_other_sense", "مفتاح الإجابات للاختبار في صفحة {nn}، والرمز البريدي على الظرف"),
        ("talk_about", "المناوبة الليلية: رمز غرفة الأدوية في ملف التسليم، مو هنا. اسأل {name}"),
        ("date_time", "الإقرار الضريبي: موعد المحاسب {date} الساعة {time}"),
        ("price", "مشاركة السيارة: {price} على كل واحد، دفعناها بالتطبيق الساعة {time}"),
        ("word_list", 'واجب الإنجليزي: "the farm has a giant orange tractor near the barn"'),
        (
            "placeholder",
            "للمتطوعين الجدد: باسورد الواي فاي مكتوب على البطاقة المغلفة (xxxx-xxxx)، اسألوا {name}",
        ),
    ],
}
