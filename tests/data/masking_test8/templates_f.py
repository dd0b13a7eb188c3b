"""Hand-written templates, fourth batch: SSNs, one-time codes, provider keys written as
people write them, and matching look-alikes, in all 15 languages (format: see
``templates_a.py``)."""

T: dict[str, str] = {
    "en": r"""
S fishing trip to the US, the charter wants my social for the license form: {ssn}
S the key is {ant} — the museum chatbot one, rotate it after the exhibition
S user admin pass {upw} on the escape room game-master tablet, don't tell the kids
S card for the 3D printer filament {card} {cvv} thx
L your one-time code will arrive by SMS within 5 minutes, don't share it with anyone
L SSN field on the form is optional for non-US members, just leave it blank
L the API key is in the team vault under "museum-bot", ping me if you can't see it
L admin panel: user admin, password: (ask Sam), URL https://{host}/admin
""",
    "de": r"""
S US-Steuerformular für den Segelclub-Austausch, meine SSN {ssn}
S der Schlüssel ist {oai} – der vom Museums-Chatbot, nach der Ausstellung tauschen
S Benutzer admin Passwort {upw} am Spielleiter-Tablet im Escape Room
S Karte für das Filament {card} {cvv} danke dir
L der Einmalcode kommt per SMS in 5 Minuten, gebt ihn niemandem weiter
L SSN-Feld ist für Mitglieder ohne US-Wohnsitz optional, einfach leer lassen
L der API-Key liegt im Team-Tresor unter „museum-bot", meld dich wenn du ihn nicht siehst
L Admin-Panel: Benutzer admin, Passwort: (Sam fragen), URL https://{host}/admin
""",
    "fr": r"""
S formulaire fiscal US pour l'échange du club de voile, mon SSN {ssn}
S la clé c'est {ghp}, celle du bot du musée, à changer après l'expo
S utilisateur admin mdp {upw} sur la tablette maître du jeu de l'escape game
S carte pour le filament {card} {cvv} merci
L le code à usage unique arrive par SMS d'ici 5 minutes, ne le donnez à personne
L le champ SSN est facultatif pour les membres hors USA, laissez vide
L la clé API est dans le coffre de l'équipe sous « musee-bot », dis-moi si tu la vois pas
L panneau admin : utilisateur admin, mot de passe : (demander à Sam), URL https://{host}/admin
""",
    "es": r"""
S formulario de impuestos de EE. UU. para el intercambio del club de vela, mi SSN {ssn}
S la clave es {gkey}, la del chatbot del museo, rotadla después de la expo
S usuario admin contraseña {upw} en la tablet del game master del escape room
S tarjeta para el filamento {card} {cvv} gracias
L el código de un solo uso llega por SMS en 5 minutos, no se lo deis a nadie
L el campo SSN es opcional para socios fuera de EE. UU., dejadlo vacío
L la API key está en el baúl del equipo como "museo-bot", avísame si no la ves
L panel de admin: usuario admin, contraseña: (pregunta a Sam), URL https://{host}/admin
""",
    "it": r"""
S modulo fiscale USA per lo scambio del circolo velico, il mio SSN {ssn}
S la chiave è {glpat}, quella del bot del museo, da ruotare dopo la mostra
S utente admin password {upw} sul tablet del game master dell'escape room
S carta per il filamento {card} {cvv} grazie
L il codice monouso arriva via SMS entro 5 minuti, non datelo a nessuno
L il campo SSN è facoltativo per i soci non residenti negli USA, lasciatelo vuoto
L la API key è nel vault del team sotto "museo-bot", dimmi se non la vedi
L pannello admin: utente admin, password: (chiedi a Sam), URL https://{host}/admin
""",
    "pt": r"""
S formulário de impostos dos EUA pro intercâmbio do clube de vela, meu SSN {ssn}
S a chave é {oai}, a do chatbot do museu, troquem depois da exposição
S usuário admin senha {upw} no tablet do mestre do escape room
S cartão pro filamento {card} {cvv} valeu
S código de verificação que chegou agora do portal da embaixada: {otp}
L o código de uso único chega por SMS em 5 minutos, não passem pra ninguém
L o campo SSN é opcional pra sócios fora dos EUA, deixem em branco
L a chave da API está no cofre da equipe como "museu-bot"
L painel admin: usuário admin, senha: (pergunta ao Sam), URL https://{host}/admin
""",
    "nl": r"""
S Amerikaans belastingformulier voor de zeilclub-uitwisseling, mijn SSN {ssn}
S de sleutel is {stripe}, die van de museumwinkel, na de expositie vervangen
S gebruiker admin wachtwoord {upw} op de spelleiderstablet van de escape room
S kaart voor het filament {card} {cvv} dank je
S verificatiecode van het visumportaal die net binnenkwam: {otp}
L de eenmalige code komt binnen 5 minuten per sms, aan niemand geven
L SSN-veld is optioneel voor leden buiten de VS, leeg laten
L de API-sleutel staat in de teamkluis onder "museum-bot"
L adminpaneel: gebruiker admin, wachtwoord: (vraag Sam), URL https://{host}/admin
""",
    "sv": r"""
S amerikansk skatteblankett för seglarklubbens utbyte, mitt SSN {ssn}
S nyckeln är {sg}, den för museets nyhetsbrev, byt efter utställningen
S användare admin lösen {upw} på spelledarens platta i escape roomet
S kort för filamentet {card} {cvv} tack
S verifieringskoden från visumportalen som kom nyss: {otp}
L engångskoden kommer med sms inom 5 minuter, ge den inte till någon
L SSN-fältet är frivilligt för medlemmar utanför USA, lämna tomt
L API-nyckeln ligger i teamets valv under "museum-bot"
L adminpanel: användare admin, lösenord: (fråga Sam), URL https://{host}/admin
""",
    "pl": r"""
S amerykański formularz podatkowy na wymianę klubu żeglarskiego, mój SSN {ssn}
S klucz to {hf}, ten od chatbota muzeum, zmienić po wystawie
S użytkownik admin hasło {upw} na tablecie mistrza gry w escape roomie
S karta na filament {card} {cvv} dzięki
S kod weryfikacyjny z portalu wizowego, właśnie przyszedł: {otp}
L kod jednorazowy przyjdzie SMS-em w ciągu 5 minut, nikomu go nie dawajcie
L pole SSN jest opcjonalne dla członków spoza USA, zostawcie puste
L klucz API jest w sejfie zespołu pod „muzeum-bot"
L panel admina: użytkownik admin, hasło: (zapytaj Sama), URL https://{host}/admin
""",
    "ru": r"""
S американская налоговая форма для обмена яхт-клуба, мой SSN {ssn}
S ключ — {ant}, это от чат-бота музея, после выставки поменять
S юзер admin пасс {upw} на планшете ведущего в квесте
S карта для филамента {card} {cvv} спс
S код подтверждения с визового портала, только что пришёл: {otp}
L одноразовый код придёт по смс в течение 5 минут, никому не сообщайте
L поле SSN необязательно для членов не из США, оставьте пустым
L API-ключ лежит в командном хранилище под «museum-bot»
L админка: пользователь admin, пароль: (спроси у Сэма), URL https://{host}/admin
""",
    "tr": r"""
S ABD vergi formu yelken kulübü değişimi için, SSN'im {ssn}
S anahtar şu: {npm}, müzenin bot paketi için, sergiden sonra değiştirin
S kullanıcı admin şifre {upw} kaçış odasının oyun yöneticisi tabletinde
S filament için kart {card} {cvv} eyv
S vize portalından az önce gelen doğrulama kodu: {otp}
L tek kullanımlık kod 5 dakika içinde SMS ile gelir, kimseyle paylaşmayın
L SSN alanı ABD dışındaki üyeler için isteğe bağlı, boş bırakın
L API anahtarı ekip kasasında "muze-bot" adıyla duruyor
L yönetim paneli: kullanıcı admin, şifre: (Sam'e sor), URL https://{host}/admin
""",
    "ja": r"""
S ヨット部の交流でアメリカの税務フォーム、私のSSNは{ssn}
S キーは{oai}です、博物館チャットボットの。展示終わったらローテして
S ユーザー admin パス {upw} 脱出ゲームのGM用タブレット
S フィラメント用のカード {card} {cvv} よろしく
S ビザポータルから今届いた認証コード：{otp}
L ワンタイムコードは5分以内にSMSで届きます、誰にも教えないでください
L SSN欄は米国外の会員は任意です、空欄でOK
L APIキーはチームの金庫に「museum-bot」で入ってます
L 管理画面：ユーザー admin、パスワード：（サムに聞いて）、URL https://{host}/admin
""",
    "ko": r"""
S 요트동호회 교류 때문에 미국 세금 양식, 제 SSN {ssn}
S 키는 {ghp} 박물관 챗봇 거예요 전시 끝나면 교체
S 유저 admin 비번 {upw} 방탈출 GM 태블릿
S 필라멘트 카드 {card} {cvv} 부탁해
S 비자 포털에서 방금 온 인증번호 {otp}
L 일회용 코드는 5분 안에 문자로 와요 아무한테도 알려주지 마세요
L SSN 칸은 미국 외 회원은 선택사항 비워두세요
L API 키는 팀 금고에 "museum-bot"으로 있어요
L 관리자 페이지: 유저 admin, 비번: (샘한테 물어봐), URL https://{host}/admin
""",
    "zh": r"""
S 帆船俱乐部交流要填美国税表，我的SSN是{ssn}
S key是{gkey}，博物馆聊天机器人那个，展览结束后换掉
S 用户admin 密码{upw} 密室逃脱主持人平板
S 买耗材的卡 {card} {cvv} 谢了
S 签证网站刚发来的验证码：{otp}
L 一次性验证码5分钟内短信发送，不要告诉任何人
L 非美国会员SSN一栏可以不填
L API key在团队保险库里，名字叫museum-bot
L 管理后台：用户admin，密码：（问Sam），网址 https://{host}/admin
""",
    "ar": r"""
S نموذج الضرائب الأمريكي لتبادل نادي الإبحار، رقم الضمان الاجتماعي تبعي {ssn}
S المفتاح هو {slack}، تبع بوت المتحف، غيروه بعد المعرض
S يوزر admin باس {upw} على تابلت مدير اللعبة بغرفة الهروب
S بطاقة الفلامنت {card} {cvv} شكراً
S رمز التحقق اللي وصل هلأ من بوابة التأشيرات: {otp}
L الرمز لمرة واحدة بيوصل برسالة خلال 5 دقائق، لا تعطوه لأحد
L خانة SSN اختيارية للأعضاء من خارج أمريكا، اتركوها فاضية
L مفتاح الـAPI موجود بخزنة الفريق باسم museum-bot
L لوحة الإدارة: المستخدم admin، كلمة المرور: (اسأل سام)، الرابط https://{host}/admin
""",
}
