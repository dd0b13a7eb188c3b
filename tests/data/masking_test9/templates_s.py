"""Secret templates, written per language (each is filled three times with fresh values).

Fields in braces are drawn by ``generate.py``; the secret ones are listed there in SECRET.
"""

from __future__ import annotations

NAMES: dict[str, tuple[str, ...]] = {
    "en": ("Dana", "Marcus", "Priya", "Owen", "Kayla", "Theo"),
    "de": ("Jannik", "Heike", "Sönke", "Frieda", "Mehmet", "Uwe"),
    "fr": ("Maëlle", "Thibault", "Nadia", "Yannick", "Solène", "Karim"),
    "es": ("Nacho", "Lucía", "Rocío", "Iker", "Maribel", "Dani"),
    "it": ("Chiara", "Gianni", "Ilaria", "Tommaso", "Rosaria", "Luca"),
    "pt": ("Inês", "Beatriz", "Joana", "Marta", "Leonor", "Rita"),
    "nl": ("Sanne", "Joris", "Femke", "Ruud", "Noor", "Bram"),
    "sv": ("Linnea", "Oskar", "Maja", "Nils", "Elsa", "Hampus"),
    "pl": ("Kasia", "Bartek", "Zosia", "Wojtek", "Magda", "Kuba"),
    "ru": ("Лёша", "Ира", "Саша", "Денис", "Оля", "Вадим"),
    "tr": ("Emre", "Zeynep", "Burak", "Elif", "Kerem", "Selin"),
    "ja": ("佐藤さん", "ゆうき", "田中先輩", "みさき", "健太", "山口さん"),
    "ko": ("지훈", "수아", "민재 선배", "하린", "도윤", "서연"),
    "zh": ("小王", "阿强", "李姐", "晓雯", "老陈", "婷婷"),
    "ar": ("خالد", "ريم", "يوسف", "هند", "سامي", "نورة"),
}

ANSWERS: dict[str, tuple[str, ...]] = {
    "en": ("Biscuit the hamster", "Mrs Okonkwo", "Swindon", "Pepperpot", "Lake Tahoe"),
    "de": ("Schnuffelhase", "Tante Gisela", "Bad Segeberg", "Frau Krämer", "Blauer Golf"),
    "fr": ("Caramel", "Madame Lefèvre", "Trégastel", "Poupinette", "Saint-Malo"),
    "es": ("Chispita", "don Anselmo", "Villaviciosa", "Pelusa", "Calle Mayor"),
    "it": ("Briciola", "maestra Pina", "Cesenatico", "Ciccio Pasticcio", "Vespa rossa"),
    "pt": ("Farrusco", "dona Amélia", "Vila Real", "Pipoca", "Tia Lurdes"),
    "nl": ("Snuffie", "juf Ans", "Harderwijk", "Pluisje", "Opa Kees"),
    "sv": ("Sotis", "fröken Birgitta", "Sundsvall", "Kanelbulle", "Morfar Ragnar"),
    "pl": ("Burek", "pani Halinka", "Ciechocinek", "Kropeczka", "Maluch"),
    "ru": ("Барсик", "Зинаида Петровна", "Кострома", "Пушок", "Жигули"),
    "tr": ("Pamuk", "Ayten öğretmen", "Bandırma", "Karabaş", "Murat 131"),
    "ja": ("ポチ丸", "すずき先生", "ひたちなか", "チョコ太郎", "かき氷"),
    "ko": ("초코칩", "김순자 선생님", "여수시", "뭉치뭉치", "떡볶이집"),
    "zh": ("旺财", "张老师", "绍兴", "小豆芽", "红旗渠"),
    "ar": ("بسبوسة", "الأستاذة سعاد", "الإسماعيلية", "فلفل", "شارع النخيل"),
}

#: Label words that ``generate.py`` may obfuscate (zero-width, full-width, homoglyph).
LABELS: dict[str, tuple[str, ...]] = {
    "en": ("password", "passcode", "PIN", "code", "pass", "wifi", "pw"),
    "de": ("Passwort", "Kennwort", "PIN", "Code", "Zugangscode", "WLAN", "Pw"),
    "fr": ("mot de passe", "mdp", "code", "PIN", "wifi"),
    "es": ("contraseña", "clave", "código", "PIN", "contra"),
    "it": ("password", "codice", "PIN", "pass"),
    "pt": ("senha", "código", "PIN", "palavra-passe"),
    "nl": ("wachtwoord", "ww", "code", "pincode"),
    "sv": ("lösenord", "kod", "PIN", "lösen"),
    "pl": ("hasło", "kod", "PIN", "hasełko"),
    "ru": ("пароль", "код", "пин", "пасс"),
    "tr": ("şifre", "parola", "kod", "PIN"),
    "ja": ("パスワード", "暗証番号", "コード", "パス"),
    "ko": ("비밀번호", "비번", "코드", "PIN"),
    "zh": ("密码", "验证码", "PIN"),
    "ar": ("كلمة السر", "كلمة المرور", "الرمز", "الباسورد"),
}

Templates = list[tuple[str, str]]

SECRETS: dict[str, Templates] = {
    "en": [
        (
            "password",
            "vet clinic rota: the new login for the x-ray PC is {pw} — dont write it on the monitor again pls",
        ),
        (
            "password",
            "Fire station tablet\nusername: crew\npassword:\n{pw}\n(changed after the drill)",
        ),
        (
            "password",
            "{pw} is my password for the rowing club booking site, if the boat list needs fixing just log in as me 🚣",
        ),
        ("password", "passwrod for the food truck POS is {pw} lol sorry typo city today"),
        (
            "wifi",
            "allotment shed wifi → network PlotsNorth, key {wifi} (the router is behind the compost bins)",
        ),
        (
            "pin",
            "Can u grab cash for the ski school float? my card PIN is {pin}, card's in the blue jacket",
        ),
        (
            "access_code",
            "Stable block keysafe: {door}. Please spin the dial back after you take the key",
        ),
        (
            "access_code",
            "[{time}] {name}: whats the alarm code for the boathouse\n[{time2}] {name2}: {doorx} then wait for the long beep",
        ),
        (
            "otp",
            '{name} forwarded: "Your Vetlink verification code is {otp}. Do not share it." — can you type it in for me?',
        ),
        (
            "recovery_code",
            "Backup codes for the clinic Google account (keep in the safe):\n1. {rc1}\n2. {rc2}\n3. {rc3}",
        ),
        (
            "security_answer",
            "security question for the feed supplier account is 'first pet' → answer {ans}",
        ),
        (
            "card_cvv",
            "paying the hay delivery online: {card} exp {exp} cvv {cvv} (farm card, not mine)",
        ),
        (
            "ssn",
            "For the volunteer firefighter background check they need your SSN, I put {ssn} from your form — right?",
        ),
        ("seed_phrase", "dad's old wallet recovery phrase from the tin box: {seed12}"),
        (
            "user_pass",
            "login for the school trip booking portal — user {user} pass {pw} (the coach company gave us that)",
        ),
        (
            "multi",
            "Night shift handover, ward 6:\n- med cabinet code {door}\n- charting login pw: {pw}\n- on-call phone PIN {pin}\nall yours, I'm off ☕",
        ),
        ("password", "ok so the film set laptop — pass is\n{pw}\nand the backup drive has no pw"),
    ],
    "de": [
        (
            "password",
            "Weinlese-Helferliste: Das Passwort fürs Traktor-Tablet ist {pw}, bitte nicht weitergeben 🍇",
        ),
        ("password", "Bäckerei Nachtschicht, Kassensystem\nBenutzer: backstube\nKennwort:\n{pw}"),
        (
            "password",
            "{pw} ← das ist das Passwort vom Vereinsrechner im Reitstall, falls die Hufschmied-Termine fehlen",
        ),
        (
            "password",
            "pw fürs kleingarten-forum is {pw} , hab mich vertippt beim anlegen also genau so eingeben",
        ),
        ("wifi", "WLAN im Gerätehaus der Feuerwehr: FF-Lindau, Schlüssel {wifi}"),
        (
            "pin",
            "Kannst du für die Modellbahnbörse Geld abheben? EC-Karte liegt im Handschuhfach, PIN {pin}",
        ),
        ("access_code", "Schlüsselsafe am Weingut-Tor: {door}, danach bitte wieder verdrehen"),
        (
            "access_code",
            "[{time}] {name}: wie war nochmal der Alarmcode vom Vereinsheim?\n[{time2}] {name2}: {doorx}",
        ),
        (
            "otp",
            'Weitergeleitet von {name}: "Ihr Bestätigungscode lautet {otp}. Gültig 10 Minuten."',
        ),
        (
            "recovery_code",
            "Wiederherstellungscodes vom Reitstall-Mailkonto:\n{rc1}\n{rc2}\n{rc3}\nbitte ausdrucken und ins Büro legen",
        ),
        (
            "security_answer",
            "Sicherheitsfrage beim Futtermittelhändler: Name des ersten Haustiers → {ans}",
        ),
        (
            "card_cvv",
            "Für die Fährtickets zur Regatta: Karte {card}, gültig bis {exp}, Prüfziffer {cvv}",
        ),
        (
            "seed_phrase",
            "Opas Bitcoin-Wiederherstellungssatz (stand auf nem Zettel im Weinkeller): {seed12}",
        ),
        ("user_pass", "Zugang Feuerwehr-Dienstplan: Nutzer {user} Passwort {pw}"),
        (
            "multi",
            "Übergabe Nachtdienst Station 3:\nBTM-Schrank Code {door}\nPC-Login {pw}\nDiensthandy-PIN {pin}\nGute Nacht!",
        ),
        ("pin", "SIM fürs GPS-Halsband vom Hofhund: PIN {pin}, PUK {puk}"),
        (
            "password",
            "hey, zugangscode fürs schulfahrt-portal ist {pw} (klasse 7b, nur für eltern)",
        ),
    ],
    "fr": [
        (
            "password",
            "Centre de plongée : le mot de passe du PC de gonflage c'est {pw}, ne le notez pas sur le tableau svp 🤿",
        ),
        ("password", "boulangerie, caisse du matin\nidentifiant : fournil\nmdp :\n{pw}"),
        (
            "password",
            "{pw} c'est mon mot de passe du site des vendanges, connecte-toi avec pour voir les équipes",
        ),
        (
            "password",
            "le mdp du camping pour la résa des emplacements = {pwcap} (attention majuscule)",
        ),
        ("wifi", "wifi de la colo : réseau Colo-Ardeche, clé {wifi}"),
        (
            "pin",
            "tu peux retirer du liquide pour la pharmacie de garde ? ma carte est dans le tiroir, code {pin}",
        ),
        (
            "access_code",
            "La boîte à clés du gîte des vendangeurs : {door}. Brouillez les chiffres après svp",
        ),
        (
            "access_code",
            "[{time}] {name} : c'est quoi le code de l'alarme du local plongée ?\n[{time2}] {name2} : {doorx}",
        ),
        (
            "otp",
            "Transféré de {name} : « Votre code de confirmation est {otp}. Ne le communiquez à personne. »",
        ),
        ("recovery_code", "codes de secours du compte de la colo :\n{rc1}\n{rc2}\n{rc3}"),
        (
            "security_answer",
            "question secrète du compte fournisseur (nom du premier animal) : {ans}",
        ),
        ("card_cvv", "Pour les billets du bateau : carte {card} exp {exp} cryptogramme {cvv}"),
        (
            "seed_phrase",
            "phrase de récupération du portefeuille de tonton (trouvée dans la cave) : {seed12}",
        ),
        ("user_pass", "accès au logiciel de la pharmacie — utilisateur {user} mot de passe {pw}"),
        (
            "multi",
            "Relève de nuit, service B :\n- armoire à pharmacie : {door}\n- session PC : {pw}\n- téléphone de garde : PIN {pin}",
        ),
        ("pin", "carte SIM du collier GPS du chien de la ferme : PIN {pin} / PUK {puk}"),
    ],
    "es": [
        (
            "password",
            "clínica veterinaria: la contraseña nueva del ordenador de rayos es {pw}, no la pongáis en un pósit 🐶",
        ),
        ("password", "Club de remo, web de reservas\nusuario: remo\ncontraseña:\n{pw}"),
        (
            "password",
            "{pw} es mi contraseña de la autoescuela, entra tú y mira si ya salió la fecha del práctico",
        ),
        ("password", "la contra del tpv del food truck es {pw} jaja perdon q no te la pasé antes"),
        ("wifi", "wifi del albergue de la excursión: red Albergue-Picos, clave {wifi}"),
        ("pin", "me sacas 50 pa la bodega? la tarjeta está en la mochila, el pin es {pin}"),
        ("access_code", "caja de llaves de la bodega: {door}, gira los números al cerrar porfa"),
        (
            "access_code",
            "[{time}] {name}: cuál es el código de la alarma del cobertizo de remo?\n[{time2}] {name2}: {doorx}",
        ),
        ("otp", "Reenviado de {name}: «Tu código de verificación es {otp}. No lo compartas.»"),
        (
            "recovery_code",
            "códigos de recuperación de la cuenta de la clínica:\n{rc1}\n{rc2}\n{rc3}",
        ),
        (
            "security_answer",
            "pregunta de seguridad del proveedor de pienso (nombre de tu primera mascota): {ans}",
        ),
        ("card_cvv", "para pagar el autobús de la excursión: {card} cad {exp} CVV {cvv}"),
        (
            "ssn",
            "mi número de seguro social (el de EE.UU., para el formulario de la visa de trabajo) es {ssn}",
        ),
        (
            "seed_phrase",
            "frase semilla del monedero del abuelo, estaba en una caja de puros: {seed12}",
        ),
        ("user_pass", "acceso al programa de la bodega: usuario {user} y contraseña {pw}"),
        (
            "multi",
            "Relevo turno de noche urgencias:\ncódigo del armario de fármacos {door}\nclave del PC {pw}\nPIN del móvil de guardia {pin}",
        ),
    ],
    "it": [
        (
            "password",
            "agriturismo: la password del gestionale prenotazioni è {pw}, non scrivetela sulla lavagna 🍝",
        ),
        ("password", "Scuola di sci, PC della segreteria\nutente: maestri\npassword:\n{pw}"),
        (
            "password",
            "{pw} è la mia password del portale della gita scolastica, entra tu e scarica il programma",
        ),
        ("password", "la pass della cassa in pasticceria è {pwcap} (occhio alle maiuscole)"),
        ("wifi", "wifi della vendemmia, rete Cantina-Ospiti, chiave {wifi}"),
        ("pin", "mi prendi i contanti per il canile? bancomat nella borsa, pin {pin}"),
        ("access_code", "cassetta chiavi del circolo canottieri: {door}, poi rigira la rotella"),
        (
            "access_code",
            "[{time}] {name}: qual è il codice dell'allarme del magazzino della cantina?\n[{time2}] {name2}: {doorx}",
        ),
        ("otp", 'Inoltrato da {name}: "Il tuo codice di verifica è {otp}. Non condividerlo."'),
        (
            "recovery_code",
            "codici di recupero dell'account della scuola di sci:\n{rc1}\n{rc2}\n{rc3}",
        ),
        ("security_answer", "domanda di sicurezza del fornitore (nome del primo animale): {ans}"),
        ("card_cvv", "per pagare il pullman della gita: {card} scad. {exp} CVV {cvv}"),
        (
            "seed_phrase",
            "frase di recupero del wallet dello zio, era nel cassetto della cantina: {seed12}",
        ),
        ("user_pass", "accesso al gestionale della farmacia notturna: utente {user} password {pw}"),
        (
            "multi",
            "Consegne turno di notte reparto:\n- armadietto farmaci {door}\n- login PC {pw}\n- PIN cordless reperibile {pin}",
        ),
        ("pin", "SIM del collare GPS del cane della cascina: PIN {pin}, PUK {puk}"),
    ],
    "pt": [
        (
            "password",
            "surf camp: a senha do computador da receção é {pw}, não a escrevam no quadro 🏄",
        ),
        (
            "password",
            "Clínica veterinária, sistema de marcações\nutilizador: recepcao\nsenha:\n{pw}",
        ),
        (
            "password",
            "{pw} é a minha senha do site dos escuteiros, entra e vê a lista do acampamento",
        ),
        ("password", "a palavra-passe da caixa da padaria é {pw} , escreve tal e qual"),
        ("wifi", "wifi da feira: rede Feira-Ladra-Banca, password {wifi}"),
        ("pin", "levantas dinheiro para o canil? o cartão está na gaveta, código {pin}"),
        (
            "access_code",
            "caixa de chaves do armazém dos escuteiros: {door}, depois baralha os números",
        ),
        (
            "access_code",
            "[{time}] {name}: qual é o código do alarme da escola de surf?\n[{time2}] {name2}: {doorx}",
        ),
        ("otp", 'Reencaminhado de {name}: "O seu código de verificação é {otp}. Não o partilhe."'),
        ("recovery_code", "códigos de recuperação da conta da clínica:\n{rc1}\n{rc2}\n{rc3}"),
        (
            "security_answer",
            "pergunta de segurança do fornecedor de ração (nome do primeiro animal): {ans}",
        ),
        ("card_cvv", "para pagar o autocarro da visita de estudo: {card} validade {exp} CVV {cvv}"),
        (
            "ssn",
            "o meu social security (americano, do tempo em Boston) é {ssn}, precisas para o IRS?",
        ),
        (
            "seed_phrase",
            "frase de recuperação da carteira do avô, estava numa lata de bolachas: {seed12}",
        ),
        ("user_pass", "acesso ao programa da farmácia de serviço: utilizador {user} senha {pw}"),
        (
            "multi",
            "Passagem de turno da noite, piso 2:\ncódigo do armário de medicação {door}\nlogin do PC {pw}\nPIN do telemóvel de serviço {pin}",
        ),
    ],
    "nl": [
        (
            "password",
            "roeivereniging: het wachtwoord van de afschrijf-pc is {pw}, niet op het whiteboard zetten aub 🚣",
        ),
        ("password", "Huisartsenpost nachtdienst\ngebruiker: triage\nwachtwoord:\n{pw}"),
        (
            "password",
            "{pw} is mijn wachtwoord van de volkstuin-site, log maar in om het rooster te zien",
        ),
        ("password", "ww van de fietsenwerkplaats kassa is {pwcap} , hoofdletter aan het begin"),
        ("wifi", "wifi op de kinderboerderij: netwerk Boerderij-Gast, sleutel {wifi}"),
        ("pin", "kun je pinnen voor de schoolreis? pas ligt in de la, pincode {pin}"),
        (
            "access_code",
            "sleutelkluis bij de botenloods: {door}, daarna de cijfers weer verdraaien",
        ),
        (
            "access_code",
            "[{time}] {name}: wat is de alarmcode van het clubhuis?\n[{time2}] {name2}: {doorx}",
        ),
        (
            "otp",
            "Doorgestuurd van {name}: 'Je verificatiecode is {otp}. Deel deze code met niemand.'",
        ),
        (
            "recovery_code",
            "herstelcodes van het account van de huisartsenpost:\n{rc1}\n{rc2}\n{rc3}",
        ),
        (
            "security_answer",
            "beveiligingsvraag bij de voerleverancier (naam eerste huisdier): {ans}",
        ),
        ("card_cvv", "voor de bustickets van het schoolkamp: {card} geldig tot {exp} cvc {cvv}"),
        ("seed_phrase", "herstelzin van opa's wallet, lag in een sigarendoos: {seed12}"),
        ("user_pass", "inloggen op het roosterprogramma: gebruiker {user} wachtwoord {pw}"),
        (
            "multi",
            "Overdracht nachtdienst afdeling 4:\n- medicijnkast {door}\n- pc-login {pw}\n- pincode dienst-telefoon {pin}",
        ),
        ("pin", "simkaart van de gps-halsband van de boerderijhond: pincode {pin}, PUK {puk}"),
    ],
    "sv": [
        (
            "password",
            "skidskolan: lösenordet till kassadatorn är {pw}, skriv inte upp det på tavlan 🎿",
        ),
        ("password", "Stallet, foderschemat\nanvändare: stall\nlösenord:\n{pw}"),
        (
            "password",
            "{pw} är mitt lösenord till kolonilottsföreningens sida, logga in och kolla vattenschemat",
        ),
        ("password", "lösen till bageriets kassa e {pwcap} typ, stora bokstäver där de står"),
        ("wifi", "wifi på lägret: nätverk Scoutlager-Gäst, nyckel {wifi}"),
        ("pin", "kan du ta ut pengar till brandkårens fest? kortet ligger i lådan, PIN {pin}"),
        ("access_code", "nyckelboxen vid stallet: {door}, snurra på hjulen efteråt"),
        (
            "access_code",
            "[{time}] {name}: vad är larmkoden till brandstationen?\n[{time2}] {name2}: {doorx}",
        ),
        (
            "otp",
            'Vidarebefordrat från {name}: "Din verifieringskod är {otp}. Dela den inte med någon."',
        ),
        ("recovery_code", "återställningskoder för skidskolans konto:\n{rc1}\n{rc2}\n{rc3}"),
        ("security_answer", "säkerhetsfråga hos foderleverantören (första husdjurets namn): {ans}"),
        ("card_cvv", "till bussbiljetterna för skolresan: {card} giltigt till {exp} CVC {cvv}"),
        ("seed_phrase", "återställningsfrasen till morfars plånbok, låg i en kakburk: {seed12}"),
        ("user_pass", "inloggning till jourschemat: användare {user} lösen {pw}"),
        (
            "multi",
            "Överlämning nattpass avd 7:\nläkemedelsskåp {door}\ndatorlogin {pw}\njourtelefonens PIN {pin}",
        ),
        ("pin", "SIM-kortet i gårdshundens GPS-halsband: PIN {pin}, PUK {puk}"),
    ],
    "pl": [
        (
            "password",
            "schronisko: hasło do komputera w biurze adopcji to {pw}, nie piszcie go na tablicy 🐕",
        ),
        ("password", "Apteka dyżurna, system\nlogin: apteka\nhasło:\n{pw}"),
        ("password", "{pw} to moje hasło do strony ROD, zaloguj się i sprawdź grafik podlewania"),
        ("password", "hasełko do kasy w szkole jazdy to {pwcap} , wielka litera na początku"),
        ("wifi", "wifi na obozie harcerskim: sieć Oboz-Harcerze, klucz {wifi}"),
        ("pin", "wypłacisz kasę na zbiórkę OSP? karta w szufladzie, PIN {pin}"),
        ("access_code", "sejf na klucze przy remizie: {door}, potem przekręć cyferki"),
        (
            "access_code",
            "[{time}] {name}: jaki jest kod alarmu do świetlicy?\n[{time2}] {name2}: {doorx}",
        ),
        (
            "otp",
            'Przekazana wiadomość ({name}): "Twój kod weryfikacyjny to {otp}. Nie udostępniaj go nikomu."',
        ),
        ("recovery_code", "kody zapasowe do konta schroniska:\n{rc1}\n{rc2}\n{rc3}"),
        (
            "security_answer",
            "pytanie pomocnicze u dostawcy karmy (imię pierwszego zwierzaka): {ans}",
        ),
        ("card_cvv", "na autokar na wycieczkę szkolną: {card} ważna do {exp} CVV {cvv}"),
        (
            "seed_phrase",
            "fraza odzyskiwania portfela dziadka, leżała w puszce po herbacie: {seed12}",
        ),
        ("user_pass", "logowanie do grafiku dyżurów: użytkownik {user} hasło {pw}"),
        (
            "multi",
            "Przekazanie dyżuru nocnego, oddział 5:\n- szafka z lekami {door}\n- login do kompa {pw}\n- PIN telefonu dyżurnego {pin}",
        ),
        ("pin", "karta SIM w obroży GPS psa z gospodarstwa: PIN {pin}, PUK {puk}"),
    ],
    "ru": [
        ("password", "ветклиника: пароль от компа в рентгене — {pw}, не пишите его на стикере 🐈"),
        ("password", "СНТ «Рассвет», сайт правления\nлогин: pravlenie\nпароль:\n{pw}"),
        ("password", "{pw} — это мой пароль от сайта турклуба, зайди и глянь список на поход"),
        ("password", "пасс от кассы в пекарне {pwcap} , с большой буквы"),
        ("wifi", "вайфай на лыжной базе: сеть Baza-Gosti, пароль {wifi}"),
        ("pin", "сними наличку на взносы шахматного клуба? карта в ящике, пин-код {pin}"),
        ("access_code", "ключница у прачечной: {door}, потом прокрути цифры"),
        (
            "access_code",
            "[{time}] {name}: какой код сигнализации на складе базы?\n[{time2}] {name2}: {doorx}",
        ),
        ("otp", "Переслано ({name}): «Код подтверждения: {otp}. Никому его не сообщайте.»"),
        ("recovery_code", "резервные коды от аккаунта клиники:\n{rc1}\n{rc2}\n{rc3}"),
        (
            "security_answer",
            "контрольный вопрос у поставщика кормов (кличка первого питомца): {ans}",
        ),
        ("card_cvv", "за автобус на экскурсию: {card} до {exp} CVC {cvv}"),
        ("seed_phrase", "сид-фраза от кошелька деда, лежала в жестяной коробке: {seed12}"),
        ("user_pass", "вход в график смен: пользователь {user} пароль {pw}"),
        (
            "multi",
            "Передача ночной смены, 3 отделение:\nшкаф с препаратами {door}\nлогин на ПК {pw}\nпин дежурного телефона {pin}",
        ),
        ("pin", "симка в GPS-ошейнике дворового пса: PIN {pin}, PUK {puk}"),
        ("password", "пароль от роутера на даче:\n{pw}\nтолько соседям не говори"),
    ],
    "tr": [
        (
            "password",
            "veteriner kliniği: röntgen bilgisayarının şifresi {pw}, post-it'e yazmayın lütfen 🐾",
        ),
        ("password", "Nöbetçi eczane, sistem\nkullanıcı: eczane\nşifre:\n{pw}"),
        (
            "password",
            "{pw} benim halı saha rezervasyon sitesinin şifresi, girip maç saatine bakar mısın",
        ),
        ("password", "fırının kasa sifresi {pwcap} , baştaki harf büyük"),
        ("wifi", "kamp alanı wifi: ağ Kamp-Misafir, şifre {wifi}"),
        ("pin", "bağ bozumu için para çeker misin? kart çekmecede, şifresi {pin}"),
        ("access_code", "bağ evinin anahtar kutusu: {door}, sonra rakamları karıştır"),
        (
            "access_code",
            "[{time}] {name}: kamp deposunun alarm kodu neydi?\n[{time2}] {name2}: {doorx}",
        ),
        ("otp", '{name} iletti: "Doğrulama kodunuz {otp}. Kimseyle paylaşmayın."'),
        ("recovery_code", "klinik hesabının kurtarma kodları:\n{rc1}\n{rc2}\n{rc3}"),
        ("security_answer", "yem tedarikçisindeki güvenlik sorusu (ilk evcil hayvanın adı): {ans}"),
        ("card_cvv", "okul gezisinin otobüsü için: {card} SKT {exp} CVV {cvv}"),
        ("seed_phrase", "dedemin cüzdanının kurtarma kelimeleri, çay kutusundaydı: {seed12}"),
        ("user_pass", "nöbet çizelgesi girişi: kullanıcı {user} parola {pw}"),
        (
            "multi",
            "Gece nöbeti devri, 4. servis:\nilaç dolabı {door}\nbilgisayar girişi {pw}\nnöbet telefonu PIN {pin}",
        ),
        ("pin", "çiftlik köpeğinin GPS tasmasındaki SIM: PIN {pin}, PUK {puk}"),
    ],
    "ja": [
        ("password", "動物病院のレントゲンPCのパスワードは {pw} です。付箋に書かないでね🐶"),
        ("password", "町内会のホームページ管理\nID: chonaikai\nパスワード:\n{pw}"),
        ("password", "{pw} ← 部活の連絡サイトのパス。ログインして合宿の名簿見て"),
        ("password", "農園の直売所レジのパスは{pwcap}だよ、最初は大文字"),
        ("wifi", "スキー場ロッジのWi-Fi: SSID Lodge-Guest / パスワード {wifi}"),
        ("pin", "部費おろしてきてくれる？カードは引き出しの中、暗証番号は{pin}"),
        ("access_code", "倉庫のキーボックスは{door}です。使ったら番号を崩してください"),
        (
            "access_code",
            "[{time}] {name}: 病棟の休憩室の暗証番号なんだっけ？\n[{time2}] {name2}: {doorx}",
        ),
        ("otp", "{name}から転送: 「認証コードは{otp}です。他人に教えないでください。」"),
        ("recovery_code", "病院アカウントのリカバリーコード:\n{rc1}\n{rc2}\n{rc3}"),
        ("security_answer", "飼料業者サイトの秘密の質問（初めて飼ったペットの名前）の答え: {ans}"),
        ("card_cvv", "修学旅行のバス代: カード番号 {card} 有効期限 {exp} セキュリティコード {cvv}"),
        ("seed_phrase", "祖父のウォレットの復元フレーズ（お菓子の缶に入ってた）: {seed12}"),
        ("user_pass", "夜勤シフト表のログイン: ユーザー {user} パスワード {pw}"),
        (
            "multi",
            "夜勤申し送り（3階）\n・薬品庫 {door}\n・PCログイン {pw}\n・当直携帯の暗証番号 {pin}",
        ),
        ("pin", "牧場の犬のGPS首輪のSIM: PIN {pin} / PUK {puk}"),
    ],
    "ko": [
        ("password", "동물병원 엑스레이 PC 비밀번호는 {pw} 이에요. 포스트잇에 쓰지 마세요 🐱"),
        ("password", "편의점 야간 POS\n아이디: night01\n비번:\n{pw}"),
        ("password", "{pw} 이게 내 헬스장 앱 비번이야, 들어가서 PT 예약 좀 봐줘"),
        ("password", "세탁소 카운터 컴터 비번 {pwcap} 임 첫글자 대문자"),
        ("wifi", "캠핑장 와이파이: Camp-Guest / 비밀번호 {wifi}"),
        ("pin", "수학여행 회비 좀 뽑아줄래? 카드는 서랍에 있고 비밀번호 {pin}"),
        ("access_code", "창고 열쇠함 번호 {door} 이에요, 쓰고 나서 숫자 돌려놔 주세요"),
        (
            "access_code",
            "[{time}] {name}: 병동 휴게실 도어락 번호 뭐였죠?\n[{time2}] {name2}: {doorx}",
        ),
        (
            "otp",
            '{name}님이 전달: "[인증] 인증번호 {otp}를 입력해 주세요. 타인에게 알리지 마세요."',
        ),
        ("recovery_code", "병원 계정 복구 코드:\n{rc1}\n{rc2}\n{rc3}"),
        ("security_answer", "사료 업체 사이트 보안 질문(첫 반려동물 이름) 답: {ans}"),
        ("card_cvv", "수학여행 버스 결제: 카드 {card} 유효기간 {exp} CVC {cvv}"),
        ("ssn", "미국 쪽 서류에 넣을 SSN은 {ssn} 이에요 (유학 때 받은 거)"),
        ("seed_phrase", "할아버지 지갑 복구 문구, 과자 상자에 있었음: {seed12}"),
        ("user_pass", "야간 근무표 로그인: 아이디 {user} 비밀번호 {pw}"),
        ("multi", "야간 인수인계 (5병동)\n- 약품장 {door}\n- PC 로그인 {pw}\n- 당직폰 PIN {pin}"),
    ],
    "zh": [
        ("password", "宠物医院X光电脑的密码是{pw}，别再贴在显示器上了🐕"),
        ("password", "驾校报名系统\n账号：jiaxiao\n密码：\n{pw}"),
        ("password", "{pw} 是我羽毛球群场地预约网站的密码，你登进去看看周六的场"),
        ("password", "农场小卖部收银机密码{pwcap}，第一个字母大写哈"),
        ("wifi", "社区团购仓库的wifi：Tuangou-Cangku，密码 {wifi}"),
        ("pin", "帮我取点钱交夜班药房的份子钱？卡在抽屉里，密码{pin}"),
        ("access_code", "农场仓库钥匙盒密码{door}，用完把数字拨乱"),
        (
            "access_code",
            "[{time}] {name}：药房后门的门禁密码是多少来着？\n[{time2}] {name2}：{doorx}",
        ),
        ("otp", "{name}转发：【验证码】{otp}，5分钟内有效，请勿泄露。"),
        ("recovery_code", "医院账号的恢复码：\n{rc1}\n{rc2}\n{rc3}"),
        ("security_answer", "饲料供应商网站密保问题（第一只宠物的名字）答案：{ans}"),
        ("card_cvv", "研学旅行大巴费用：卡号 {card} 有效期 {exp} 安全码 {cvv}"),
        ("seed_phrase", "爷爷钱包的助记词，放在饼干盒里：{seed12}"),
        ("user_pass", "夜班排班系统登录：用户名 {user} 密码 {pw}"),
        ("multi", "夜班交接（5病区）\n药柜密码 {door}\n电脑登录 {pw}\n值班手机PIN {pin}"),
        ("pin", "农场狗的GPS项圈里的SIM卡：PIN {pin}，PUK {puk}"),
    ],
    "ar": [
        (
            "password",
            "العيادة البيطرية: كلمة السر لجهاز الأشعة هي {pw}، لا تكتبوها على ورقة لاصقة 🐾",
        ),
        ("password", "الصيدلية المناوبة، النظام\nاسم المستخدم: pharmacy\nكلمة المرور:\n{pw}"),
        ("password", "{pw} هذه كلمة السر حقي لموقع نادي الفروسية، ادخل وشوف جدول الحصص"),
        ("password", "الباسورد تبع كاشير المخبز {pwcap} أول حرف كابيتال"),
        ("wifi", "واي فاي المزرعة: الشبكة Farm-Guest والرمز {wifi}"),
        ("pin", "ممكن تسحب فلوس للرحلة المدرسية؟ البطاقة في الدرج والرقم السري {pin}"),
        ("access_code", "صندوق المفاتيح عند الإسطبل: {door}، بعدها لخبط الأرقام"),
        ("access_code", "[{time}] {name}: كم رمز إنذار مخزن المزرعة؟\n[{time2}] {name2}: {doorx}"),
        ("otp", 'محوّلة من {name}: "رمز التحقق الخاص بك هو {otp}. لا تشاركه مع أحد."'),
        ("recovery_code", "رموز الاسترداد لحساب العيادة:\n{rc1}\n{rc2}\n{rc3}"),
        ("security_answer", "سؤال الأمان عند مورّد العلف (اسم أول حيوان أليف): {ans}"),
        ("card_cvv", "لدفع باص الرحلة المدرسية: {card} تنتهي {exp} CVV {cvv}"),
        ("seed_phrase", "عبارة الاسترداد لمحفظة جدي، كانت في علبة بسكويت: {seed12}"),
        ("user_pass", "الدخول لجدول المناوبات: المستخدم {user} كلمة المرور {pw}"),
        (
            "multi",
            "تسليم المناوبة الليلية، القسم ٤:\nخزانة الأدوية {door}\nدخول الكمبيوتر {pw}\nرمز هاتف المناوبة {pin}",
        ),
        ("pin", "شريحة طوق GPS لكلب المزرعة: PIN {pin} و PUK {puk}"),
    ],
}
