"""Hand-written templates, third batch: more look-alikes in all 15 languages (format: see
``templates_a.py``)."""

T: dict[str, str] = {
    "en": r"""
L forklift cert renewal: member no {nonluhn}, valid till {date}, fee £{usd}
L ham radio: new node id {uuid}, firmware {ver}, MAC {mac}
L astro society: scope mount serial {order}, the dome's code repo is at commit {git}
L theatre: gel colour for act 2 is {hex}, cue {n}, flies at {time}
L museum: visitor wifi is open, no password, just accept the terms on the splash page (v{ver})
L hostel: room {room}, bunk {n}, checkout {time}, your locker key deposit is £{usd}
L tax adviser: your UTR arrives by post, the deadline is {date}, our ref {order}
""",
    "de": r"""
L Staplerschein Verlängerung: Mitgliedsnr. {nonluhn}, gültig bis {date}, Gebühr {price} €
L Funk: neue Node-ID {uuid}, Firmware {ver}, MAC {mac}
L Sternwarte: Montierung Seriennr. {order}, Repo der Kuppel auf Commit {git}
L Theater: Farbfilter 2. Akt {hex}, Stichwort {n}, Züge um {time}
L Museum: Besucher-WLAN ist offen, kein Passwort, nur AGB auf der Startseite (v{ver}) bestätigen
L Jugendherberge: Zimmer {room}, Bett {n}, Abreise bis {time}, Schlüsselpfand {price} €
L Kita: die neue Telefonnummer der Gruppe ist {phone}, Elternabend {date} {time}
""",
    "fr": r"""
L renouvellement CACES : n° adhérent {nonluhn}, valable jusqu'au {date}, frais {price} €
L radio : nouvel identifiant de nœud {uuid}, firmware {ver}, MAC {mac}
L astro : n° de série de la monture {order}, dépôt du code de la coupole au commit {git}
L théâtre : gélatine acte 2 {hex}, top {n}, cintres à {time}
L musée : le wifi visiteurs est ouvert, pas de mot de passe, juste accepter les CGU (v{ver})
L auberge : chambre {room}, lit {n}, départ avant {time}, caution clé {price} €
L crèche : nouveau numéro de la section {phone}, réunion parents {date} {time}
""",
    "es": r"""
L renovación carné de carretillero: nº socio {nonluhn}, válido hasta {date}, tasa {price} €
L radio: id de nodo nuevo {uuid}, firmware {ver}, MAC {mac}
L astro: nº de serie de la montura {order}, repo de la cúpula en el commit {git}
L teatro: gelatina del 2º acto {hex}, pie {n}, varas a las {time}
L museo: el wifi de visitantes es abierto, sin contraseña, solo aceptar condiciones (v{ver})
L albergue: habitación {room}, litera {n}, salida antes de las {time}, fianza de la llave {price} €
L guardería: nuevo teléfono del aula {phone}, reunión de padres {date} {time}
""",
    "it": r"""
L rinnovo patentino muletto: n. socio {nonluhn}, valido fino al {date}, quota {price} €
L radio: nuovo id nodo {uuid}, firmware {ver}, MAC {mac}
L astrofili: matricola della montatura {order}, repo della cupola al commit {git}
L teatro: gelatina secondo atto {hex}, battuta {n}, tiri alle {time}
L museo: il wifi visitatori è libero, niente password, basta accettare i termini (v{ver})
L ostello: camera {room}, letto {n}, check-out entro le {time}, cauzione chiave {price} €
L asilo: nuovo numero della sezione {phone}, riunione genitori {date} {time}
""",
    "pt": r"""
L renovação da carta de empilhador: nº sócio {nonluhn}, válido até {date}, taxa {price} €
L rádio: novo id de nó {uuid}, firmware {ver}, MAC {mac}
L astronomia: nº de série da montagem {order}, repo da cúpula no commit {git}
L teatro: gelatina do 2º ato {hex}, deixa {n}, varas às {time}
L museu: o wifi de visitantes é aberto, sem senha, só aceitar os termos (v{ver})
L hostel: quarto {room}, beliche {n}, checkout até {time}, caução da chave {price} €
L creche: novo telefone da sala {phone}, reunião de pais {date} {time}
L senha de atendimento na loja do cidadão: {n}, guiché {room} 😅
""",
    "nl": r"""
L heftruckcertificaat verlengen: lidnr {nonluhn}, geldig tot {date}, kosten € {price}
L radio: nieuwe node-id {uuid}, firmware {ver}, MAC {mac}
L sterrenwacht: serienummer montering {order}, repo van de koepel op commit {git}
L theater: filterkleur 2e bedrijf {hex}, cue {n}, trekken om {time}
L museum: bezoekerswifi is open, geen wachtwoord, alleen voorwaarden accepteren (v{ver})
L hostel: kamer {room}, stapelbed {n}, uitchecken voor {time}, borg sleutel € {price}
L kinderdagverblijf: nieuw nummer van de groep {phone}, ouderavond {date} {time}
""",
    "sv": r"""
L truckkortet förnyas: medlemsnr {nonluhn}, giltigt till {date}, avgift {price} kr
L radio: nytt nod-id {uuid}, firmware {ver}, MAC {mac}
L observatoriet: monteringens serienr {order}, kupolens repo på commit {git}
L teatern: filterfärg akt 2 {hex}, kö {n}, dragen {time}
L museet: besöks-wifi är öppet, inget lösenord, bara godkänn villkoren (v{ver})
L vandrarhem: rum {room}, våningssäng {n}, utcheckning före {time}, nyckeldeposition {price} kr
L förskolan: avdelningens nya nummer {phone}, föräldramöte {date} {time}
""",
    "pl": r"""
L przedłużenie uprawnień na wózek: nr członka {nonluhn}, ważne do {date}, opłata {price} zł
L krótkofalowcy: nowy identyfikator węzła {uuid}, firmware {ver}, MAC {mac}
L obserwatorium: nr seryjny montażu {order}, repo kopuły na commicie {git}
L teatr: filtr w 2. akcie {hex}, wejście {n}, sztankiety o {time}
L muzeum: wifi dla zwiedzających otwarte, bez hasła, tylko zaakceptuj regulamin (v{ver})
L schronisko: pokój {room}, łóżko {n}, wymeldowanie do {time}, kaucja za klucz {price} zł
L przedszkole: nowy numer grupy {phone}, zebranie {date} {time}
""",
    "ru": r"""
L продление удостоверения водителя погрузчика: № члена {nonluhn}, действует до {date}, взнос {price} ₽
L радио: новый id узла {uuid}, прошивка {ver}, MAC {mac}
L обсерватория: серийник монтировки {order}, репо купола на коммите {git}
L театр: светофильтр второго акта {hex}, реплика {n}, штанкеты в {time}
L музей: вайфай для посетителей открытый, без пароля, просто примите условия (v{ver})
L хостел: комната {room}, койка {n}, выезд до {time}, залог за ключ {price} ₽
L детсад: новый номер группы {phone}, родительское собрание {date} {time}
""",
    "tr": r"""
L forklift ehliyeti yenileme: üye no {nonluhn}, {date} tarihine kadar geçerli, ücret {price} TL
L telsiz: yeni düğüm id {uuid}, yazılım {ver}, MAC {mac}
L gözlemevi: kundak seri no {order}, kubbe reposu {git} commitinde
L tiyatro: 2. perde jel rengi {hex}, replik {n}, askılar {time}
L müze: ziyaretçi wifi açık, şifre yok, sadece koşulları kabul edin (v{ver})
L hostel: oda {room}, ranza {n}, çıkış {time} öncesi, anahtar depozitosu {price} TL
L kreş: sınıfın yeni telefonu {phone}, veli toplantısı {date} {time}
""",
    "ja": r"""
L フォークリフト講習の更新：会員番号{nonluhn}、有効期限{date}、手数料{price}円
L 無線：新しいノードID {uuid}、ファーム{ver}、MAC {mac}
L 天文台：架台のシリアル{order}、ドームのリポジトリはコミット{git}
L 劇場：二幕のゲル色{hex}、キュー{n}、バトンは{time}
L 博物館：来館者Wi-Fiはパスワードなし、規約に同意するだけ（v{ver}）
L ゲストハウス：{room}号室、ベッド{n}、チェックアウト{time}、鍵のデポジット{price}円
L 保育園：クラスの新しい電話番号{phone}、保護者会{date} {time}
""",
    "ko": r"""
L 지게차 자격 갱신: 회원번호 {nonluhn}, {date}까지 유효, 수수료 {price}원
L 무선: 새 노드 ID {uuid}, 펌웨어 {ver}, MAC {mac}
L 천문대: 가대 시리얼 {order}, 돔 리포는 커밋 {git}
L 극장: 2막 젤 색상 {hex}, 큐 {n}, 배튼 {time}
L 박물관 관람객 와이파이는 비번 없음 약관 동의만 하면 됨 (v{ver})
L 게스트하우스: {room}호 침대 {n}번 체크아웃 {time} 열쇠 보증금 {price}원
L 어린이집: 반 새 전화번호 {phone} 학부모 모임 {date} {time}
""",
    "zh": r"""
L 叉车证续期：会员号{nonluhn}，有效期到{date}，费用{price}元
L 电台：新节点ID {uuid}，固件{ver}，MAC {mac}
L 天文台：赤道仪序列号{order}，圆顶代码仓库在提交{git}
L 剧场：第二幕色纸{hex}，第{n}个cue，吊杆{time}
L 博物馆：访客wifi不用密码，同意条款就行（v{ver}）
L 青旅：{room}房，{n}号床，{time}前退房，钥匙押金{price}元
L 幼儿园：班级新电话{phone}，家长会{date} {time}
""",
    "ar": r"""
L تجديد رخصة الرافعة الشوكية: رقم العضوية {nonluhn}، صالحة لحد {date}، الرسوم {price} درهم
L اللاسلكي: معرّف العقدة الجديد {uuid}، البرنامج {ver}، MAC {mac}
L المرصد: الرقم التسلسلي للحامل {order}، مستودع كود القبة على الكوميت {git}
L المسرح: لون الجل بالفصل الثاني {hex}، الإشارة {n}، القضبان الساعة {time}
L المتحف: واي فاي الزوار مفتوح بدون كلمة سر، بس وافق على الشروط (v{ver})
L النُزل: غرفة {room}، سرير {n}، الخروج قبل {time}، تأمين المفتاح {price} درهم
L الحضانة: رقم الصف الجديد {phone}، اجتماع الأهالي {date} {time}
""",
}
