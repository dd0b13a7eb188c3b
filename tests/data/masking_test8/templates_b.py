"""Hand-written templates (PT, NL, SV, PL, RU) of the eighth held-out masking split (format:
see ``templates_a.py``)."""

T: dict[str, str] = {
    "pt": r"""
S creche: o código do portão das traseiras é {code}, só pra quem vai buscar depois das {time}
S lar de idosos, turno da noite: senha do sistema de medicação\n{pw}\nnão deixem no post-it!!
S portal de vistos da embaixada, usuário {user} senha: {pw} — o agendamento é dia {date}
S seguro do carro, sinistro {claim}: pra entrar na área do cliente a palavra-passe é {pw}
S time de esports: conta do coach no faceit, login {user} senha {pw} não troquem antes do camp
S self-hosting: `docker login -u {user} -p {upw} {host}` e depois o compose sobe sozinho
S coral, bilheteria online: cartão do coral {card} validade {exp} cvv {cvv} pra pagar o site
S escola de culinária: wifi da cozinha-escola é CozinhaLab, senha {wifi}
S museu: o alarme da sala de reservas desarma com {code}, a vigilância chega às {time}
S {pw} ← essa é a senha do painel da rádio do clube, troquei hoje
S clube de carros antigos .env\n```\nMONGO_URL=mongodb://clube:{upw}@{host}:27017/socios\nSLACK_BOT_TOKEN={slack}\n```
S servidor minecraft dos primos: token do bot do discord {discord} (não vaza isso pfv)
S impressão 3D: a chave da API do octoprint é {hf}
S drone: código de verificação da ANAC que chegou agora {otp}, digita aí rápido
S consultório dentário: o SSN do paciente americano é {ssn}, preciso pro reembolso do seguro dele
S {seed}\nfrase de recuperação da carteira da associação, guardem no cofre
S contabilista: a senha do portal das finanças do cliente é {pw}, e o PIN do cartão de cidadão {pin}
L creche: o código do portão mudou, peçam na secretaria, não vou pôr aqui
L lar de idosos: a visita é {date} às {time}, quarto {room}
L portal de vistos: o número de processo é {order}, a taxa é {price} €
L seguro: o sinistro {claim} foi aberto, a peritagem é dia {date}
L esports: treino às {time}, patch {ver}, scrim contra o time {n}
L self-hosting: faz `docker login ghcr.io` e põe a tua própria senha quando pedir
L coral: bilhetes a {price} €, encomenda {order}, pago com o cartão terminado em {ends}
L escola de culinária: a turma de sábado tem {n} vagas, aula {date}
L museu: a peça {order} volta da restauração em {date}, sala {room}
L senha da recepção do centro de saúde: a próxima é a {n} 😂 (a senha de papel, né)
L clube de carros: encontro em {date}, saída às {time}, inscrição {price} €
L minecraft: o servidor foi pra versão {ver}, IP {ip}
L impressão 3D: o arquivo tem hash {sha}, usa o perfil v{ver}
L drone: o código do SMS nunca chegou, pedi outro
L dentista: consulta {date} às {time}, extensão {ext}
L 12 palavras do teste de inglês, não é carteira nenhuma: {badseed}
L contabilista: nunca mandem a senha das finanças por whatsapp, liguem pra {phone}
""",
    "nl": r"""
S kinderopvang: code van de achterpoort is {code}, alleen voor ophalen na {time}
S verzorgingshuis nachtdienst: ww van het medicatiesysteem\n{pw}\nniet op een geeltje plakken aub
S visumportaal ambassade, gebruiker {user} wachtwoord {pw}, afspraak {date}
S verzekering schadeclaim {claim}: inloggen bij mijn omgeving met wachtwoord {pw}
S esports team: faceit account van de coach {user} / {pw}, niet veranderen voor het toernooi
S selfhosting: `redis-cli -h {host} -a {upw} ping` geeft PONG dus redis draait
S koor kaartverkoop: clubkaart {card} geldig tot {exp} CVC {cvv}
S kookschool wifi: netwerk KookLab, wachtwoord {wifi}
S museum: alarm van het depot zet je uit met {code}, bewaking komt om {time}
S {pw} is het wachtwoord van de clubsite, net veranderd
S oldtimerclub .env\n```\nREDIS_URL=redis://:{upw}@{host}:6379/0\nHF_TOKEN={hf}\n```
S minecraft server van de neven: discord bot token {discord}
S 3D printers: octoprint api key {npm} (ja het is een npm token, slordig ik weet het)
S drone: verificatiecode van de ILT {otp}, snel invullen
S tandartspraktijk: pincode van de röntgen-pc is {pin}, niet in de wiki zetten
S {seed}\nherstelzin van de vereniging wallet, in de kluis graag
S belastingadviseur: DigiD wachtw\u200boord van meneer is {pw}, sms-code komt op zijn telefoon
L kinderopvang: de poortcode is veranderd, vraag het bij de leiding, zet ik hier niet neer
L verzorgingshuis: bezoek {date} om {time}, kamer {room}
L visumportaal: dossiernummer {order}, leges € {price}
L verzekering: claim {claim} is in behandeling, expert komt {date}
L esports: training om {time}, patch {ver}, scrim tegen team {n}
L selfhosting: gewoon `redis-cli` en dan AUTH met je eigen wachtwoord, staat in de docs
L koor: kaartjes € {price}, bestelling {order}, betaald met kaart eindigend op {ends}
L kookschool: zaterdagles heeft nog {n} plekken, {date}
L museum: object {order} komt terug uit restauratie op {date}, zaal {room}
L oldtimerclub: rit op {date}, vertrek {time}, inschrijving € {price}
L minecraft: server draait nu {ver}, ip {ip}
L 3D: bestand sha256 {sha}, printprofiel v{ver}
L drone: de sms-code kwam nooit aan, nieuwe aangevraagd
L tandarts: afspraak {date} om {time}, toestel {ext}
L 12 woorden van de overhoring Engels, geen wallet: {badseed}
L belastingadviseur: stuur NOOIT je DigiD wachtwoord via de app, bel {phone}
L sleutel van het clubhuis ligt bij de buren op nr {n}
""",
    "sv": r"""
S förskolan: koden till bakgrinden är {code}, bara för hämtning efter {time}
S äldreboendet natt: lösen till medicinsystemet\n{pw}\nskriv inte på lappar tack
S ambassadens visumportal, användare {user} lösenord {pw}, tid {date}
S försäkring skadeanmälan {claim}: inloggning mina sidor lösenord {pw}
S esportlaget: coachens faceit {user} / {pw}, ändra inte före turneringen
S självhostat: `mysql -u {user} -p{upw} -h {host} nextcloud` funkar igen
S kören biljetter: föreningens kort {card} giltigt {exp} cvc {cvv}
S matlagningsskolan wifi: KockLab, lösenord {wifi}
S museet: larmet i magasinet slås av med {code}, vakten kommer {time}
S {pw} är lösenordet till klubbens sajt, bytte idag
S veteranbilsklubben .env\n```\nDATABASE_URL=postgresql://klubb:{upw}@{host}/medlem\nAWS_ACCESS_KEY_ID={akid}\nAWS_SECRET_ACCESS_KEY={aws}\n```
S minecraftservern: telegram-botens token {tgid}:{tg}
S 3D-skrivaren: octoprint nyckel {glpat} (gitlab-token, jag vet)
S drönare: verifieringskoden från Transportstyrelsen {otp}
S tandläkarmottagningen: pinkoden till röntgendatorn {pin}
S {seed}\nåterställningsfrasen till föreningens plånbok, i kassaskåpet
S skatterådgivare: BankID säkerhetskod till kundens testkonto {pinl}
L förskolan: grindkoden är ny, fråga personalen, skriver den inte här
L äldreboendet: besök {date} kl {time}, rum {room}
L visumportalen: ärendenummer {order}, avgift {price} kr
L försäkring: ärende {claim} handläggs, besiktning {date}
L esport: träning {time}, patch {ver}, scrim mot lag {n}
L självhostat: kör `mysql -u root -p nextcloud` så frågar den efter lösenordet
L kören: biljetter {price} kr, order {order}, betalt med kort som slutar på {ends}
L matlagningsskolan: lördagskursen har {n} platser kvar, {date}
L museet: föremål {order} kommer tillbaka från konservering {date}, sal {room}
L veteranbilar: rally {date}, start {time}, anmälan {price} kr
L minecraft: servern kör {ver}, ip {ip}
L 3D: filens sha256 {sha}, profil v{ver}
L drönare: sms-koden kom aldrig, har beställt en ny
L tandläkaren: tid {date} kl {time}, anknytning {ext}
L 12 ord från engelskaprovet, ingen plånbok: {badseed}
L skatterådgivaren: skicka aldrig lösenord i chatten, ring {phone}
L nyckeln till klubbstugan hänger hos grannen i nr {n}
""",
    "pl": r"""
S przedszkole: kod do furtki od podwórka {code}, tylko dla odbierających po {time}
S dom opieki nocka: hasło do systemu leków\n{pw}\nnie przyklejajcie na karteczce!!
S portal wizowy ambasady login {user} hasło {pw}, termin {date}
S ubezpieczenie szkoda {claim}: hasło do panelu klienta {pw}
S drużyna esportowa: konto trenera na faceit {user} / {pw}, nie zmieniać przed turniejem
S selfhosting: `curl --user {user}:{upw} https://{host}/remote.php/dav/` działa
S chór bilety: karta stowarzyszenia {card} ważna do {exp} cvv {cvv}
S szkoła gotowania wifi: KuchniaLab, hasło {wifi}
S muzeum: alarm magazynu rozbrajasz kodem {code}, ochrona przyjeżdża o {time}
S {pw} to hasełko do strony klubu, zmieniłem dziś
S klub zabytkowych aut .env\n```\nAMQP_URL=amqp://klub:{upw}@{host}:5672/\nSTRIPE_SECRET_KEY={stripe}\n```
S serwer minecraft: token bota discord {discord}
S drukarka 3D: klucz API octoprinta {gkey}
S dron: kod weryfikacyjny z ULC {otp}, wpisz szybko
S gabinet stomatologiczny: PIN do kompa z RTG {pin}
S {seed}\nfraza odzyskiwania portfela stowarzyszenia, do sejfu
S doradca podatkowy: hasło do e-Urzędu klienta {pw}, a PIN do profilu zaufanego {pin2}
L przedszkole: kod do furtki się zmienił, pytajcie w sekretariacie, nie wrzucam tutaj
L dom opieki: odwiedziny {date} o {time}, pokój {room}
L portal wizowy: numer sprawy {order}, opłata {price} zł
L ubezpieczenie: szkoda {claim} w toku, rzeczoznawca {date}
L esport: trening {time}, patch {ver}, sparing z drużyną {n}
L selfhosting: wpisz `psql -W` i poda się hasło samo, nie wklejaj go tu
L chór: bilety {price} zł, zamówienie {order}, zapłacone kartą kończącą się na {ends}
L szkoła gotowania: sobotni kurs ma {n} miejsc, {date}
L muzeum: obiekt {order} wraca z konserwacji {date}, sala {room}
L klub aut: zlot {date}, wyjazd {time}, wpisowe {price} zł
L minecraft: serwer na {ver}, ip {ip}
L druk 3D: sha256 pliku {sha}, profil v{ver}
L dron: SMS z kodem nie doszedł, zamówiłem nowy
L dentysta: wizyta {date} o {time}, wewnętrzny {ext}
L 12 słówek z kartkówki z angielskiego, to nie portfel: {badseed}
L doradca: nigdy nie wysyłajcie haseł na czacie, dzwońcie {phone}
L klucz do świetlicy jest u sąsiadów pod {n}
""",
    "ru": r"""
S детский сад: код от калитки во двор {code}, только для тех кто забирает после {time}
S дом престарелых, ночная смена: пароль от системы лекарств\n{pw}\nне клеите на стикер!!
S визовый портал посольства логин {user} пароль {pw}, запись на {date}
S страховая, убыток {claim}: пароль от личного кабинета {pw}
S киберспорт: акк тренера на faceit {user} / пасс {pw}, не менять до турнира
S селфхостинг: `sshpass -p {upw} ssh {user}@{host}` и бэкап пошёл
S хор, билеты: карта общества {card} до {exp} cvv {cvv}
S кулинарная школа вайфай КухняЛаб пароль {wifi}
S музей: сигнализацию хранилища снимаешь кодом {code}, охрана приезжает в {time}
S {pw} — это пароль от сайта клуба, сменил сегодня
S клуб ретро-авто .env\n```\nDATABASE_URL=postgres://club:{upw}@{host}/members\nOPENAI_API_KEY={oai}\n```
S майнкрафт сервер: токен телеграм-бота {tgid}:{tg}
S 3D-принтер: ключ API октопринта {hf}
S дрон: код подтверждения из госуслуг {otp}, вводи быстрее
S стоматология: пин-код от компа с рентгеном {pin}
S {seed}\nфраза восстановления кошелька общества, в сейф
S налоговый консультант: пaроль от ЛК налогоплательщика клиента {pw}
L детский сад: код калитки поменяли, спросите у воспитателя, сюда не пишу
L дом престарелых: посещение {date} в {time}, палата {room}
L визовый портал: номер заявления {order}, сбор {price} €
L страховая: убыток {claim} в работе, осмотр {date}
L киберспорт: трен в {time}, патч {ver}, скрим против команды {n}
L селфхостинг: просто `ssh {user}@{host}`, пароль спросит сам, сюда не кидай
L хор: билеты по {price} ₽, заказ {order}, оплачено картой на {ends}
L кулинарная школа: в субботней группе {n} мест, {date}
L музей: экспонат {order} вернётся с реставрации {date}, зал {room}
L клуб ретро-авто: пробег {date}, старт в {time}, взнос {price} ₽
L майнкрафт: сервер на {ver}, ip {ip}
L 3D: sha256 файла {sha}, профиль v{ver}
L дрон: смс с кодом так и не пришла, запросил новую
L стоматология: приём {date} в {time}, добавочный {ext}
L 12 слов из теста по английскому, это не кошелёк: {badseed}
L консультант: пароли в чат не присылайте никогда, звоните {phone}
L ключ от клубного домика у соседей в квартире {n}
""",
}
