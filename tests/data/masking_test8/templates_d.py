"""Hand-written templates, second batch, all 15 languages: longer messages, chat logs, pastes,
tokens and keys, obfuscated labels, and more look-alikes (format: see ``templates_a.py``)."""

T: dict[str, str] = {
    "en": r"""
S [08:14] Priya (MP office): can someone log into the constituency casework system? I'm locked out\n[08:16] Tom: user {user}\n[08:16] Tom: pass {pw}\n[08:17] Priya: legend
S funeral home — the memorial streaming account, in case I'm off: email is in the binder, P𝖺ssword is {pw}
S care home handover: 1) Mrs K's meds changed 2) the keysafe by the garden door is {code} 3) new agency nurse starts {date}. Also the wifi for the tablets is {wifi} if they ask
S vpn hobby box, wireguard is fine but for the web UI: `curl -u {user}:{upw} https://{host}/api/peers`
S ride-share insurance claim portal wants my security answer, it's {ans} (first pet + street lol)
S embassy visa portal recovery codes, keep somewhere safe: {rec}
S esports org: here's the jwt the scrim bot uses, expires never apparently 🙃 {jwt}
S car club treasurer: amex for the track day deposit {amex}, 4 digit code on the front {cid}
S {ssn} is my SSN for the tax adviser form, pls don't forward
S drone pilots: ops laptop ssh key, yes I know\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S choir ticketing config.yaml\n```yaml\nstripe:\n  secret_key: {stripe}\nsmtp:\n  password: "{pw}"\n```
S new SIM for the taxi dispatch phone: PIN {pin} PUK {puk}
L please DON'T paste passwords in this group, use the vault, the theatre manager will share access
L choir tickets: promo code SPRING{n} gives {n}% off, valid until {date}
L config template for the makerspace bot:\n```\nDISCORD_TOKEN=<your-token-here>\nDB_PASSWORD=changeme\n```
L run `mysql -u root -p makerspace` and it'll prompt you, don't type it on the command line
L the key of the anthem is D major, capo on 2, key change after verse {n}
L beekeepers: queen excluder {n} pcs, order {order}, delivery {date}, £{usd} incl. VAT
L MP office: the security pass for the estate takes 5 working days, ask HR at ext {ext}
L museum loan form: object no. {order}, insurance value £{usd}, courier ref {track}
""",
    "de": r"""
S [08:14] Lena (Abgeordnetenbüro): kann wer ins Wahlkreis-Postfach? bin ausgesperrt\n[08:16] Jonas: user {user}\n[08:16] Jonas: pw {pw}\n[08:17] Lena: danke!!
S Bestattungshaus – Zugang Trauerfeier-Stream, falls ich nicht da bin: Pаsswort {pw}
S Pflegeheim Übergabe: 1) Fr. K. neue Medikation 2) Schlüsseltresor an der Gartentür {code} 3) neue Leasingkraft ab {date}. WLAN für die Tablets: {wifi}
S VPN-Bastelkiste: `curl -u {user}:{upw} https://{host}/api/peers` für die Peers-Liste
S Versicherungsportal fragt die Sicherheitsantwort, die ist {ans}
S Visaportal Wiederherstellungscodes, gut aufheben: {rec}
S Esport-Orga: das JWT vom Scrim-Bot, läuft angeblich nie ab {jwt}
S Oldtimerclub Kasse: Amex für die Anzahlung Rennstrecke {amex}, 4-stelliger Code vorne {cid}
S Drohnen-Team Laptop SSH-Key, ja ich weiß\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S Chor Ticketing config.yaml\n```yaml\nsmtp:\n  user: chor\n  password: "{pw}"\nhf_token: {hf}\n```
S neue SIM fürs Taxi-Diensthandy: PIN {pin} PUK {puk}
L bitte KEINE Passwörter in die Gruppe, nehmt den Tresor, die Theaterleitung gibt Zugriff
L Chor: Gutscheincode FRUEHLING{n} gibt {n} % Rabatt, gültig bis {date}
L Vorlage für den Makerspace-Bot:\n```\nDISCORD_TOKEN=<dein-token>\nDB_PASSWORT=IHR_PASSWORT_HIER\n```
L `mysql -u root -p makerspace` eingeben, dann fragt er nach dem Passwort, nicht in die Zeile tippen
L das Lied steht in D-Dur, Kapo 2, Tonartwechsel nach Strophe {n}
L Abgeordnetenbüro: Hausausweis dauert 5 Werktage, Verwaltung Durchwahl {ext}
L Museum Leihvertrag: Inv.-Nr. {order}, Versicherungswert {price} €, Kurier {track}
""",
    "fr": r"""
S [08:14] Claire (permanence du député) : quelqu'un peut se connecter à la boîte de la circo ? je suis bloquée\n[08:16] Hugo : identifiant {user}\n[08:16] Hugo : mdp {pw}\n[08:17] Claire : merci !!
S pompes funèbres, le compte de diffusion des obsèques si je suis absente : mοt de passe {pw}
S EHPAD transmission : 1) Mme K nouveau traitement 2) boîte à clés porte jardin {code} 3) nouvelle intérimaire le {date}. Wifi des tablettes : {wifi}
S VPN perso : `curl -u {user}:{upw} https://{host}/api/peers`
S le portail de l'assurance demande la réponse secrète, c'est {ans}
S codes de secours du portail visa, à garder : {rec}
S orga esport : le JWT du bot de scrims {jwt}
S club auto trésorier : amex pour l'acompte circuit {amex}, code à 4 chiffres au recto {cid}
S drone, clé SSH du portable\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S billetterie de la chorale config.json\n```json\n{"smtp_password": "{pw}", "sendgrid": "{sg}"}\n```
S nouvelle SIM pour le tel du taxi : code PIN {pin} code PUK {puk}
L SVP pas de mots de passe dans ce groupe, utilisez le coffre, la régie donnera l'accès
L chorale : code promo PRINTEMPS{n} = {n} % de réduc jusqu'au {date}
L modèle pour le bot du fablab :\n```\nDISCORD_TOKEN=<votre-token>\nDB_PASSWORD=VOTRE_MOT_DE_PASSE\n```
L tapez `mysql -u root -p fablab` et il vous demandera le mot de passe
L la chanson est en clé de sol, tonalité ré majeur, capo 2
L permanence : le badge de l'Assemblée prend 5 jours ouvrés, poste {ext}
L musée prêt : n° d'inventaire {order}, valeur d'assurance {price} €, transporteur {track}
""",
    "es": r"""
S [08:14] Lucía (oficina del diputado): alguien puede entrar al correo del distrito? me bloqueé\n[08:16] Álex: usuario {user}\n[08:16] Álex: pass {pw}\n[08:17] Lucía: gracias!!
S funeraria, la cuenta del streaming de las despedidas por si no estoy: cοntraseña {pw}
S residencia relevo: 1) Sra. K medicación nueva 2) cajetín de llaves puerta jardín {code} 3) auxiliar nueva desde el {date}. Wifi de las tablets {wifi}
S VPN casero: `curl -u {user}:{upw} https://{host}/api/peers`
S el portal del seguro pide la respuesta secreta, es {ans}
S códigos de recuperación del portal de visados, guardadlos: {rec}
S club esports: el JWT del bot de scrims {jwt}
S club de coches tesorero: amex para la señal del circuito {amex}, código de 4 cifras delante {cid}
S drones, clave SSH del portátil\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S venta de entradas del coro config.yaml\n```yaml\nbd:\n  url: postgres://coro:{upw}@{host}/entradas\nnpm_token: {npm}\n```
S SIM nueva del móvil del taxi: PIN {pin} PUK {puk}
L porfa NO pongáis contraseñas en el grupo, usad el gestor, la regidora os da acceso
L coro: código de descuento PRIMAVERA{n} = {n} % hasta el {date}
L plantilla para el bot del makerspace:\n```\nDISCORD_TOKEN=<tu-token>\nDB_PASSWORD=TU_CONTRASEÑA_AQUÍ\n```
L poned `mysql -u root -p makerspace` y os pide la contraseña
L la canción está en clave de sol, tono re mayor, cejilla en el 2
L oficina del diputado: la acreditación del Congreso tarda 5 días hábiles, ext {ext}
L museo préstamo: nº inventario {order}, valor asegurado {price} €, transportista {track}
""",
    "it": r"""
S [08:14] Giulia (segreteria del deputato): qualcuno entra nella casella del collegio? sono bloccata\n[08:16] Marco: utente {user}\n[08:16] Marco: pw {pw}\n[08:17] Giulia: grazie!!
S onoranze funebri, account dello streaming delle cerimonie se non ci sono: pasѕword {pw}
S RSA consegne: 1) sig.ra K terapia nuova 2) cassetta chiavi porta giardino {code} 3) OSS nuova dal {date}. Wifi dei tablet {wifi}
S VPN di casa: `curl -u {user}:{upw} https://{host}/api/peers`
S il portale dell'assicurazione chiede la risposta segreta: {ans}
S codici di recupero del portale visti, conservateli: {rec}
S team esport: il JWT del bot degli scrim {jwt}
S club auto storiche tesoriere: amex per l'acconto in pista {amex}, codice a 4 cifre davanti {cid}
S droni, chiave SSH del portatile\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S biglietteria del coro settings.json\n```json\n{"db": "mysql://coro:{upw}@{host}/biglietti", "slack": "{slack}"}\n```
S SIM nuova del telefono del taxi: PIN {pin} PUK {puk}
L per favore NIENTE password nel gruppo, usate il gestore, il direttore di scena vi dà accesso
L coro: codice sconto PRIMAVERA{n} = {n}% fino al {date}
L modello per il bot del fablab:\n```\nDISCORD_TOKEN=<il-tuo-token>\nDB_PASSWORD=LA_TUA_PASSWORD\n```
L scrivete `mysql -u root -p fablab` e vi chiede la password
L il brano è in chiave di violino, tonalità re maggiore, capotasto al 2
L segreteria: il tesserino della Camera richiede 5 giorni lavorativi, interno {ext}
L museo prestito: n. inventario {order}, valore assicurato {price} €, corriere {track}
""",
    "pt": r"""
S [08:14] Ana (gabinete do deputado): alguém consegue entrar no email do círculo? fiquei bloqueada\n[08:16] Rui: utilizador {user}\n[08:16] Rui: pass {pw}\n[08:17] Ana: obg!!
S funerária, conta do streaming das cerimónias se eu faltar: pаlavra-passe {pw}
S lar passagem de turno: 1) D. K medicação nova 2) cofre das chaves porta do jardim {code} 3) auxiliar nova a partir de {date}. Wi-Fi dos tablets {wifi}
S códigos de recuperação do portal de vistos, guardem: {rec}
S esports: o JWT do bot dos scrims {jwt}
S clube de carros tesoureiro: amex pro sinal do autódromo {amex}, código de 4 dígitos na frente {cid}
S drones, chave SSH do portátil\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S seguradora pede a resposta secreta, é {ans}
L por favor NADA de senhas no grupo, usem o cofre, a direção de cena dá acesso
L coro: cupão PRIMAVERA{n} dá {n}% até {date}
L modelo pro bot do makerspace:\n```\nDISCORD_TOKEN=<seu-token>\nDB_PASSWORD=SUA_SENHA_AQUI\n```
L escrevam `mysql -u root -p makerspace` que ele pede a senha
L a música está em clave de sol, tom ré maior
L gabinete: o cartão de acesso da Assembleia demora 5 dias úteis, extensão {ext}
""",
    "nl": r"""
S [08:14] Sanne (Kamerfractie): kan iemand in de fractiemailbox? ik ben buitengesloten\n[08:16] Bram: gebruiker {user}\n[08:16] Bram: ww {pw}\n[08:17] Sanne: top
S uitvaartcentrum, account van de livestream als ik er niet ben: wаchtwoord {pw}
S zorg overdracht: 1) mw K nieuwe medicatie 2) sleutelkluis tuindeur {code} 3) nieuwe uitzendkracht vanaf {date}. Wifi tablets {wifi}
S herstelcodes van het visumportaal, bewaren: {rec}
S esports: de JWT van de scrimbot {jwt}
S autoclub penningmeester: amex voor de aanbetaling circuit {amex}, 4-cijferige code voorop {cid}
S drones, SSH-sleutel van de laptop\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S verzekeraar vraagt het geheime antwoord: {ans}
L AUB geen wachtwoorden in de groep, gebruik de kluis, de toneelmeester geeft toegang
L koor: kortingscode LENTE{n} geeft {n}% tot {date}
L sjabloon voor de makerspace-bot:\n```\nDISCORD_TOKEN=<jouw-token>\nDB_PASSWORD=JOUW_WACHTWOORD_HIER\n```
L typ `mysql -u root -p makerspace` dan vraagt hij het wachtwoord
L het lied staat in D groot, capo 2, sleutel wisselt na couplet {n}
L fractie: Kamerpas duurt 5 werkdagen, toestel {ext}
""",
    "sv": r"""
S [08:14] Elin (riksdagskansliet): kan nån logga in i valkretsens brevlåda? jag är utelåst\n[08:16] Oskar: användare {user}\n[08:16] Oskar: lösen {pw}\n[08:17] Elin: tack!!
S begravningsbyrån, streamingkontot för ceremonier om jag är borta: lösenоrd {pw}
S äldreboende överlämning: 1) fru K ny medicin 2) nyckelskåpet vid trädgårdsdörren {code} 3) ny bemanningssköterska från {date}. Wifi till plattorna {wifi}
S återställningskoder till visumportalen, spara: {rec}
S esport: JWT:n som scrim-boten använder {jwt}
S bilklubben kassör: amex för depositionen till banan {amex}, 4-siffrig kod på framsidan {cid}
S drönare, SSH-nyckel på laptopen\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S försäkringsbolaget vill ha säkerhetssvaret: {ans}
L SNÄLLA inga lösenord i gruppen, använd valvet, scenmästaren delar åtkomst
L kören: rabattkod VAR{n} ger {n} % till {date}
L mall för makerspace-boten:\n```\nDISCORD_TOKEN=<din-token>\nDB_PASSWORD=DITT_LÖSENORD_HÄR\n```
L skriv `mysql -u root -p makerspace` så frågar den efter lösenordet
L låten går i D-dur, capo 2, tonartsbyte efter vers {n}
L kansliet: passerkortet tar 5 arbetsdagar, anknytning {ext}
""",
    "pl": r"""
S [08:14] Ola (biuro poselskie): ktoś wejdzie na skrzynkę okręgu? zablokowałam się\n[08:16] Kuba: login {user}\n[08:16] Kuba: hasło {pw}\n[08:17] Ola: dzięki!!
S zakład pogrzebowy, konto transmisji ceremonii jak mnie nie ma: hasłо {pw}
S DPS przekazanie zmiany: 1) pani K nowe leki 2) sejfik na klucze przy drzwiach do ogrodu {code} 3) nowa opiekunka od {date}. Wifi tabletów {wifi}
S kody odzyskiwania portalu wizowego, zachowajcie: {rec}
S esport: JWT bota do sparingów {jwt}
S klub aut skarbnik: amex na zaliczkę za tor {amex}, 4-cyfrowy kod z przodu {cid}
S drony, klucz SSH laptopa\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S ubezpieczyciel pyta o odpowiedź na pytanie bezpieczeństwa: {ans}
L PROSZĘ żadnych haseł na grupie, używajcie sejfu, kierownik sceny da dostęp
L chór: kod rabatowy WIOSNA{n} daje {n}% do {date}
L szablon dla bota makerspace:\n```\nDISCORD_TOKEN=<twój-token>\nDB_PASSWORD=TWOJE_HASLO_TUTAJ\n```
L wpisz `mysql -u root -p makerspace` to zapyta o hasło
L piosenka jest w D-dur, klucz wiolinowy, kapodaster na 2
L biuro: przepustka do Sejmu 5 dni roboczych, wewnętrzny {ext}
""",
    "ru": r"""
S [08:14] Оля (приёмная депутата): кто-нибудь может зайти в почту округа? меня заблокировало\n[08:16] Дима: логин {user}\n[08:16] Дима: пароль {pw}\n[08:17] Оля: спасибо!!
S ритуальное агентство, аккаунт трансляции церемоний если меня нет: пapоль {pw}
S пансионат, передача смены: 1) у К. новые лекарства 2) ключница у двери в сад {code} 3) новая сиделка с {date}. Вайфай для планшетов {wifi}
S коды восстановления визового портала, сохраните: {rec}
S киберспорт: JWT бота для скримов {jwt}
S автоклуб казначей: amex на предоплату трека {amex}, 4-значный код спереди {cid}
S дроны, SSH-ключ ноутбука\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S страховая спрашивает ответ на секретный вопрос: {ans}
L ПОЖАЛУЙСТА никаких паролей в чате, пользуйтесь сейфом, завпост даст доступ
L хор: промокод VESNA{n} даёт {n}% до {date}
L шаблон для бота мейкерспейса:\n```\nDISCORD_TOKEN=<ваш-токен>\nDB_PASSWORD=ВАШ_ПАРОЛЬ_ЗДЕСЬ\n```
L набери `mysql -u root -p makerspace`, он сам спросит пароль
L песня в ре мажоре, скрипичный ключ, каподастр на 2
L приёмная: пропуск в Думу делается 5 рабочих дней, добавочный {ext}
""",
    "tr": r"""
S [08:14] Elif (milletvekili ofisi): seçim bölgesi mailine giren var mı? kilitlendim\n[08:16] Can: kullanıcı {user}\n[08:16] Can: şifre {pw}\n[08:17] Elif: sağol!!
S cenaze hizmetleri, tören yayını hesabı ben yokken: şіfre {pw}
S huzurevi devir: 1) K hanımın ilacı değişti 2) bahçe kapısındaki anahtar kutusu {code} 3) yeni bakıcı {date} itibarıyla. Tabletlerin wifi'si {wifi}
S vize portalı kurtarma kodları, saklayın: {rec}
S espor: scrim botunun JWT'si {jwt}
S klasik araba kulübü sayman: pist kaporası için amex {amex}, önde 4 haneli kod {cid}
S drone, laptopun SSH anahtarı\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S sigorta gizli sorunun cevabını istiyor: {ans}
L LÜTFEN gruba şifre atmayın, kasayı kullanın, sahne amiri erişim verecek
L koro: indirim kodu BAHAR{n} {date} tarihine kadar %{n}
L makerspace botu için şablon:\n```\nDISCORD_TOKEN=<tokenin>\nDB_PASSWORD=SIFRENI_BURAYA_YAZ\n```
L `mysql -u root -p makerspace` yaz, şifreyi kendisi soracak
L şarkı re majör, sol anahtarı, kapo 2
L ofis: Meclis giriş kartı 5 iş günü sürüyor, dahili {ext}
""",
    "ja": r"""
S [08:14] 佐藤（議員事務所）：選挙区のメール誰か入れる？ロックされた\n[08:16] 田中：ID {user}\n[08:16] 田中：パス {pw}\n[08:17] 佐藤：助かる！
S 葬儀社、式の配信アカウント、私が休みのとき用：パスワ\u200bード {pw}
S 介護施設申し送り：①Kさん薬変更 ②庭側ドアのキーボックス{code} ③新しい派遣さん{date}から。タブレットのWi-Fiは{wifi}
S ビザポータルのリカバリーコード、保管して：{rec}
S eスポーツ：スクリムbotのJWT {jwt}
S 旧車クラブ会計：サーキット手付金のアメックス {amex} 表の4桁コード{cid}
S ドローン班ノートPCのSSH鍵\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S 保険会社が秘密の質問の答え聞いてくる、答えは{ans}
L グループにパスワード貼らないで！金庫を使って、舞台監督がアクセス権くれます
L 合唱団：割引コードHARU{n}で{n}%オフ、{date}まで
L メイカースペースbotのテンプレ：\n```\nDISCORD_TOKEN=<あなたのトークン>\nDB_PASSWORD=ここにパスワード\n```
L `mysql -u root -p makerspace` って打つとパスワード聞かれるから
L この曲はニ長調、ト音記号、カポ2
L 事務所：議員会館の通行証は5営業日かかります、内線{ext}
""",
    "ko": r"""
S [08:14] 지은(의원실): 지역구 메일 들어갈 수 있는 사람? 잠겼어요\n[08:16] 민호: 아이디 {user}\n[08:16] 민호: 비번 {pw}\n[08:17] 지은: 감사!!
S 장례식장 추모 스트리밍 계정 제가 없을 때: 비밀번호 {pw}
S 요양원 인수인계: 1) K님 약 변경 2) 정원 쪽 문 키박스 {code} 3) 새 요양보호사 {date}부터. 태블릿 와이파이 {wifi}
S 비자 포털 복구 코드 보관하세요: {rec}
S 이스포츠: 스크림 봇 JWT {jwt}
S 클래식카 동호회 총무: 서킷 예약금 아멕스 {amex} 앞면 4자리 코드 {cid}
S 드론팀 노트북 SSH 키\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S 보험사에서 보안질문 답 물어봄: {ans}
L 단톡방에 비번 올리지 마세요! 금고 쓰세요 무대감독님이 권한 드려요
L 합창단: 할인코드 BOM{n} {n}% 할인 {date}까지
L 메이커스페이스 봇 템플릿:\n```\nDISCORD_TOKEN=<토큰>\nDB_PASSWORD=여기에_비번_입력\n```
L `mysql -u root -p makerspace` 치면 비번 물어봐요
L 이 곡은 라장조, 높은음자리표, 카포 2
L 의원실: 국회 출입증 5영업일 걸려요 내선 {ext}
""",
    "zh": r"""
S [08:14] 小林（议员办公室）：谁能登一下选区邮箱？我被锁了\n[08:16] 老王：账号{user}\n[08:16] 老王：密码{pw}\n[08:17] 小林：谢啦！
S 殡仪馆，告别仪式直播账号，我不在时用：密\u200b码 {pw}
S 养老院交班：1）K奶奶换药了 2）花园门钥匙盒{code} 3）新护工{date}到岗。平板wifi {wifi}
S 签证网站的恢复码，收好：{rec}
S 电竞：训练赛机器人的JWT {jwt}
S 老爷车俱乐部财务：赛道定金用运通卡 {amex} 正面4位码{cid}
S 无人机队笔记本SSH私钥\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S 保险公司问密保问题答案：{ans}
L 群里别发密码！用密码库，舞台监督会给权限
L 合唱团：优惠码CHUN{n} 打{n}折，到{date}
L 创客空间机器人模板：\n```\nDISCORD_TOKEN=<你的token>\nDB_PASSWORD=在这里填密码\n```
L 输入 `mysql -u root -p makerspace` 它会提示你输密码
L 这首歌D大调，高音谱号，变调夹2品
L 办公室：人大出入证要5个工作日，分机{ext}
""",
    "ar": r"""
S [08:14] سارة (مكتب النائب): حد يقدر يدخل إيميل الدائرة؟ انقفل علي\n[08:16] عمر: المستخدم {user}\n[08:16] عمر: الباسورد {pw}\n[08:17] سارة: تسلم!!
S دار الجنازات، حساب بث مراسم العزاء لما أغيب: كلمة الـسر {pw}
S دار المسنين تسليم: 1) الحجة ك دواء جديد 2) صندوق المفاتيح عند باب الحديقة {code} 3) ممرضة جديدة من {date}. واي فاي التابلت {wifi}
S رموز استرداد بوابة التأشيرات احفظوها: {rec}
S الرياضات الإلكترونية: JWT بوت التدريب {jwt}
S أمين صندوق نادي السيارات: أمكس لعربون الحلبة {amex} الرمز الرباعي على الوجه {cid}
S مفتاح SSH لابتوب فريق الدرون\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pem}\n-----END OPENSSH PRIVATE KEY-----
S شركة التأمين تسأل جواب سؤال الأمان: {ans}
L رجاءً لا ترسلوا كلمات سر بالقروب، استعملوا الخزنة، مدير المسرح بيعطيكم صلاحية
L الكورال: كود الخصم RABIE{n} خصم {n}% لحد {date}
L قالب بوت الميكرسبيس:\n```\nDISCORD_TOKEN=<التوكن_هنا>\nDB_PASSWORD=كلمة_المرور_هنا\n```
L اكتب `mysql -u root -p makerspace` وهو بيسألك عن كلمة السر
L الأغنية على مقام ري ماجور، مفتاح صول
L المكتب: بطاقة دخول البرلمان تاخذ 5 أيام عمل، تحويلة {ext}
""",
}
