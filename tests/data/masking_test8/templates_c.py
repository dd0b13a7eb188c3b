"""Hand-written templates (TR, JA, KO, ZH, AR) of the eighth held-out masking split (format:
see ``templates_a.py``)."""

T: dict[str, str] = {
    "tr": r"""
S av kulübü: silah dolabının kilidi artık {code}, av dönüşü kapatın lütfen
S amatör telsiz: röle panelinin şifresi\n{pw}\nkimseye vermeyin 73
S gökbilim derneği: kubbe girişi kullanıcı {user} şifre {upw}, değiştirmeyin
S tiyatro sahne ekibi: kulis kapısı şifresi {code}, ışık masası pin {pin}. Kurulum {time}
S taksi durağı: uygulama yine attı 🙄 şifrem {pw} bi bakar mısın
S şantiye: vinç sahası kapı kodu {code}, alarm {time} da kuruluyor
S depo wifi forkliftler için: DepoWifi, şifre {wifi}
S kabin ekibi rota portalı: ş\u200bifre: {pw} istersen uçuşumu değiştir
S marina iskele kapısı {code}, duşlar aynı kod + #
S dağ evi rezervasyon: `mysql -u dagevi -p{upw} rezervasyon` gece export alıyor
S arıcılar birliği sayman: kavanoz siparişi kartı {card} skt {exp} cvv {cvv}
S {seed}\n👆 derneğin cüzdanının kurtarma kelimeleri, kasaya koyun silin bunu
S dövme stüdyosu .env\n```\nDB_URL=postgres://dovme:{upw}@{host}/randevu\nSENDGRID_API_KEY={sg}\n```
S minecraft sunucusu: discord bot tokenı {discord}
S diş kliniği: röntgen bilgisayarı pin {pin}
S vize portalı: kullanıcı {user} parola {pw}, randevu {date}
S {pw} benim e-devlet şifrem değil ha, kulübün sitesinin şifresi
L av kulübü: dolap şifresi değişti, başkana sorun, buraya yazmıyorum
L röle {freq} MHz tekrar aktif, çağrı işareti {callsign}
L gökbilim: söyleşi {date} saat {time}, salon {room}
L tiyatro: {n} telsiz mikrofon eksik, XLR'ın 3. pini soğuk uç, şifre değil 😅
L taksi: ücret {price} TL, fiş no {order}
L şantiye: pazartesiye kadar eğitim portalındaki şifrenizi sıfırlayın, link mailde
L depo: forklift {n} muayeneden kaldı, kayıt {order}, anahtar ofiste
L kabin ekibi: rotam {flight} {date}, brifing {time}, oda {room}
L marina: bağlama yeri {n}, fatura {order} son ödeme {date}, {price} TL
L dağ evi: rezervasyon no {order}, {n} yatak, yarım pansiyon {price} TL
L kütüphane: ayırttığın kitap ISBN {isbn} {date} tarihine kadar bankoda
L arıcılar: çerçeve kargo takip {track}, sonu {ends} ile biten kartla ödendi
L ingilizce sınavındaki 12 kelime, cüzdan değil: {badseed}
L minecraft: sunucu {ver} oldu, ip {ip}, şifreyi herkes panelden kendi koysun
L diş kliniği: randevu {date} saat {time}, dahili {ext}
L vize: başvuru no {order}, harç {price} €, şifre sms ile gelecekmiş
""",
    "ja": r"""
S 釣りクラブ：艇庫の南京錠、番号{code}に変えました。夜釣りの後は閉めてね
S アマチュア無線：レピータ管理画面のパス\n{pw}\n外に出さないでください 73
S 天文同好会：ドームの制御PC ユーザー{user} パスワード{upw} 変えないで、スケジューラが使ってるので
S 舞台監督より引継ぎ：フライ階のテンキー{code}、調光卓の暗証番号{pin}。仕込みは{time}から
S タクシーのアプリまたログアウトされた😇 パスワード→ {pw}
S 現場事務所：クレーンヤードのゲート暗証番号は{code}、{time}に警備セットされます
S 倉庫のハンディ用Wi-Fi SSID: Souko-Fork パスワード: {wifi}
S 乗務スケジュールのポータル、交代するならこれで入って：ﾊﾟｽﾜｰﾄﾞ {pw}
S マリーナの桟橋ゲート{code}、シャワー棟も同じ番号＋＃
S 山小屋予約システム：`curl -u {user}:{upw} https://{host}/export` を夜間に回してます
S 養蜂クラブ会計：瓶の注文用カード {card} 有効期限{exp} セキュリティコード{cvv}
S {seed}\n↑これ会のウォレットの復元フレーズ。金庫に入れてこのメッセージ消して
S タトゥースタジオの .env\n```\nDATABASE_URL=mysql://tattoo:{upw}@{host}/yoyaku\nOPENAI_API_KEY={oai}\n```
S マイクラ鯖：テレグラムbotのトークン {tgid}:{tg}
S 歯科医院：レントゲンPCの暗証番号は{pin}です、wikiには書かないで
S ビザ申請ポータル ID {user} ＰＡＳＳ {pw}、予約は{date}
S 税理士事務所：e-Taxの利用者識別番号じゃなくて暗証番号の方ね、{pw}
L 釣りクラブ：艇庫の番号変わったので会長に聞いてください、ここには書きません
L レピータ{freq}MHz復旧、コールサイン{callsign}
L 天文同好会：{date} {time}から講演会、{room}号室
L 舞台：ワイヤレス{n}本足りない、XLRの3番ピンはコールド、暗証番号じゃないよw
L タクシー代{price}円、領収書番号{order}
L 現場：月曜までに安全教育ポータルのパスワードを再設定してください、リンクはメールで送りました
L 倉庫：フォークリフト{n}号機が点検不合格、チケット{order}、鍵は事務所
L 乗務：{date}は{flight}便、ショーアップ{time}、ホテル{room}号室
L マリーナ：バース{n}番、請求書{order}、支払期限{date}
L 山小屋：予約番号{order}、相部屋{n}名、1泊2食{price}円
L 図書館：予約の本 ISBN {isbn} は{date}までカウンターにあります
L 養蜂：巣枠の追跡番号{track}、末尾{ends}のカードで支払い済み
L 英単語テストの12語、ウォレットじゃない：{badseed}
L マイクラ：サーバー{ver}に更新、IP {ip}、パスワードは各自パネルで設定して
L 歯医者：予約{date} {time}、内線{ext}
L 税理士：暗証番号は郵送で届きます、チャットで送らないでください
""",
    "ko": r"""
S 낚시동호회: 보트창고 자물쇠 번호 {code}로 바꿨어요 밤낚시 끝나면 꼭 잠가주세요
S 아마추어무선: 중계기 관리페이지 비번\n{pw}\n외부유출 금지 73
S 천문동호회 돔 제어PC 아이디 {user} 비밀번호 {upw} 바꾸지 마세요 스케줄러가 씀
S 무대감독 인수인계: 플라이 층 도어락 {code}, 조명콘솔 PIN {pin}, 셋업 {time}
S 택시앱 또 로그아웃됨ㅠ 내 비번 {pw} 좀 봐줘
S 현장사무소: 크레인 야드 게이트 비번 {code}, {time}에 경비 세팅
S 창고 PDA 와이파이 Changgo-Fork 비번 {wifi}
S 승무원 스케줄 포털 바꾸려면 이걸로 들어가: 비밀\u200b번호 {pw}
S 마리나 폰툰 게이트 {code} 샤워장도 같은 번호 + #
S 산장 예약서버: `mysql -u sanjang --password={upw} booking` 새벽에 백업 돌아요
S 양봉회 총무: 유리병 주문 카드 {card} 유효기간 {exp} CVC {cvv}
S {seed}\n☝️ 모임 지갑 복구문구 금고에 넣고 이 메시지 지워주세요
S 타투샵 .env\n```\nDB_URL=postgres://tattoo:{upw}@{host}/booking\nGITHUB_TOKEN={ghp}\n```
S 마크 서버 디코 봇 토큰 {discord}
S 치과: 엑스레이 PC 핀번호 {pin}
S 비자 포털 아이디 {user} 비번 {pw} 예약일 {date}
S {pw} ← 이게 동호회 홈페이지 관리자 비번이에요 오늘 바꿈
L 낚시동호회: 창고 번호 바뀌었어요 회장님께 물어보세요 여기엔 안 올려요
L 중계기 {freq}MHz 복구됨 콜사인 {callsign}
L 천문동호회: {date} {time} 강연 {room}호
L 무대: 무선마이크 {n}개 부족, XLR 3번 핀은 콜드임 비번 아님ㅋㅋ
L 택시비 {price}원 영수증 번호 {order}
L 현장: 월요일까지 안전교육 포털 비밀번호 재설정하세요 링크는 메일로 보냄
L 창고: 지게차 {n}호기 점검 불합격 티켓 {order} 열쇠는 사무실
L 승무: {date} {flight}편 쇼업 {time} 호텔 {room}호
L 마리나: 선석 {n}번 청구서 {order} 납부기한 {date}
L 산장: 예약번호 {order} 도미토리 {n}명 1박 {price}원
L 도서관: 예약한 책 ISBN {isbn} {date}까지 데스크에 있어요
L 양봉: 소비 배송 송장번호 {track} 끝자리 {ends} 카드로 결제함
L 영어 단어시험 12개 지갑 아님: {badseed}
L 마크: 서버 {ver} 업데이트 IP {ip} 비번은 각자 패널에서 설정
L 치과 예약 {date} {time} 내선 {ext}
L 비자: 접수번호 {order} 수수료 {price}원, 인증번호는 문자로 온대요
""",
    "zh": r"""
S 钓鱼协会：船库挂锁密码改成{code}了，夜钓完记得锁上
S 业余无线电：中继台管理后台密码\n{pw}\n别外传 73
S 天文爱好者协会：圆顶控制电脑 账号{user} 密码{upw} 别改，调度程序在用
S 舞台监督交接：吊杆层门禁{code}，灯光台PIN码{pin}，装台{time}开始
S 网约车app又把我踢下线了🙄 我密码是{pw}帮我看看
S 工地办公室：塔吊场大门密码{code}，{time}布防
S 仓库手持终端wifi：Cangku-Cha 密码{wifi}
S 空乘排班系统，要换班就用这个登：密碼：{pw}
S 游艇码头浮桥门禁{code}，淋浴间同一个码加#
S 山屋预订系统：`mysqldump -u shanwu -p{upw} yuding` 每晚导出
S 养蜂协会财务：买玻璃瓶的卡 {card} 有效期{exp} 安全码{cvv}
S {seed}\n👆协会钱包的助记词，放保险柜然后把这条删了
S 纹身店 .env\n```\nREDIS_URL=redis://:{upw}@{host}:6379/1\nANTHROPIC_API_KEY={ant}\n```
S 我的世界服务器：TG机器人token {tgid}:{tg}
S 牙科诊所：X光电脑的开机PIN是{pin}，别写进wiki
S 签证预约网站 用户名{user} 密码 {pw} 预约在{date}
S 税务师：客户个税app的登录密码是{pw}，验证码发他手机上
L 钓鱼协会：船库密码换了，问会长，我不在群里发
L 中继台{freq}MHz恢复，呼号{callsign}
L 天文协会：{date} {time}讲座，{room}室
L 舞台：无线麦少{n}个，XLR第3针是冷端，不是密码哈哈
L 打车{price}元，发票号{order}
L 工地：周一前把安全培训平台的密码重置一下，链接发邮箱了
L 仓库：{n}号叉车年检没过，工单{order}，钥匙在办公室
L 排班：{date} {flight}航班，签到{time}，酒店{room}房
L 码头：泊位{n}号，账单{order}，{date}前付
L 山屋：订单号{order}，大通铺{n}人，含早晚餐{price}元
L 图书馆：你预约的书 ISBN {isbn} 在前台放到{date}
L 养蜂：巢框快递单号{track}，用尾号{ends}的卡付的
L 英语单词测验的12个词，不是钱包：{badseed}
L 我的世界：服务器升到{ver}，IP {ip}，密码各自在面板设置
L 牙科：预约{date} {time}，分机{ext}
L 关键是别在群里发密码，税务的事打{phone}
""",
    "ar": r"""
S نادي الصيد: قفل مخزن القوارب صار {code}، سكروه بعد الصيد الليلي
S هواة اللاسلكي: باسورد لوحة المُرحّل\n{pw}\nلا تنشروه 73
S جمعية الفلك: دخول حاسوب القبة المستخدم {user} كلمة السر {upw} لا تغيروها
S طاقم المسرح: رمز باب الكواليس {code}، الرقم السري لطاولة الإضاءة {pin}، التركيب الساعة {time}
S تطبيق التاكسي طلعني مرة ثانية 🙄 الباسورد تبعي {pw} شوفه لي
S مكتب الموقع: رمز بوابة ساحة الرافعة {code}، الإنذار يتفعل الساعة {time}
S واي فاي أجهزة المستودع: Mustawda-Fork كلمة المرور {wifi}
S بوابة جداول الطاقم، إذا بدك تبدل رحلتي: كلمة\u200c السر: {pw}
S المارينا: بوابة الرصيف {code} والحمامات نفس الرمز مع #
S نُزل الجبل: `curl --user {user}:{upw} https://{host}/api/export` يشتغل بالليل
S أمين صندوق جمعية النحالين: بطاقة طلب البرطمانات {card} تنتهي {exp} رمز الأمان {cvv}
S {seed}\n☝️ عبارة الاسترداد لمحفظة الجمعية، حطوها بالخزنة واحذفوا الرسالة
S استوديو الوشم .env\n```\nDATABASE_URL=postgres://washm:{upw}@{host}/mawaid\nSTRIPE_SECRET_KEY={stripe}\n```
S سيرفر ماينكرافت: توكن بوت الديسكورد {discord}
S عيادة الأسنان: الرقم السري لكمبيوتر الأشعة {pin}
S بوابة التأشيرات اسم المستخدم {user} كلمة المرور {pw} الموعد {date}
S {pw} هذا باسورد موقع النادي، غيرته اليوم
L نادي الصيد: رمز المخزن تغير، اسألوا الرئيس، ما راح أكتبه هنا
L المُرحّل {freq} ميغاهرتز رجع يشتغل، النداء {callsign}
L جمعية الفلك: محاضرة {date} الساعة {time} قاعة {room}
L المسرح: ناقصنا {n} مايكات لاسلكية، الطرف 3 في XLR هو البارد مش رمز 😅
L التاكسي {price} درهم، رقم الإيصال {order}
L الموقع: أعيدوا تعيين كلمة المرور في بوابة التدريب قبل الاثنين، الرابط على الإيميل
L المستودع: الرافعة الشوكية {n} رسبت بالفحص، تذكرة {order}، المفتاح بالمكتب
L جدول الطاقم: رحلتي {flight} يوم {date}، الحضور {time}، غرفة {room}
L المارينا: المرسى {n}، فاتورة {order} تستحق {date}
L النُزل: رقم الحجز {order}، {n} أسرّة، نصف إقامة {price} درهم
L المكتبة: الكتاب المحجوز ISBN {isbn} عند الاستقبال لحد {date}
L النحالين: رقم تتبع الإطارات {track}، مدفوعة بالبطاقة المنتهية بـ {ends}
L 12 كلمة من امتحان الإنجليزي، مش محفظة: {badseed}
L ماينكرافت: السيرفر صار {ver}، الآي بي {ip}، كل واحد يحط كلمة سره من اللوحة
L الأسنان: الموعد {date} الساعة {time}، التحويلة {ext}
L مفتاح الحل إنك ما ترسل كلمة السر بالقروب أبداً، اتصل على {phone}
""",
}
