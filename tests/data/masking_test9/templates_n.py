"""Language-neutral bodies (command lines, pastes, tokens, dev talk) with a lead-in written
in each language. Each body is given to at most three or four languages, once each."""

from __future__ import annotations

LEADS: dict[str, tuple[str, ...]] = {
    "en": (
        "hackathon team chat, pasting what I ran:",
        "vet clinic server is acting up again, this is what I typed",
        "for the farm shop backend, copy this exactly:",
        "fwd from the film set's IT guy 👇",
        "ok don't laugh but here's my terminal",
        "School trip app deploy notes:",
    ),
    "de": (
        "Für den Server vom Reitverein, genau so eingeben:",
        "hab das im Terminal ausgeführt, geht aber nicht 🤔",
        "Weitergeleitet vom Admin der Feuerwehr:",
        "Notiz für die Bäckerei-Kasse (Backend):",
        "aus meinem Hackathon-Log kopiert:",
        "Kannst du kurz drüberschauen?",
    ),
    "fr": (
        "Pour le serveur du club de plongée, tape exactement ça :",
        "j'ai lancé ça et ça plante 😩",
        "Transféré de l'informaticien de la pharmacie :",
        "note pour le backend du camping :",
        "copié de mon terminal pendant le hackathon :",
        "tu peux jeter un œil ?",
    ),
    "es": (
        "Para el servidor de la clínica, copia esto tal cual:",
        "lo he ejecutado y falla, mirad 👀",
        "Reenviado del informático de la bodega:",
        "notas del despliegue de la app de la excursión:",
        "copiado de mi terminal en el hackathon:",
        "me echas un ojo a esto?",
    ),
    "it": (
        "Per il server dell'agriturismo, copia esattamente così:",
        "ho lanciato questo ma dà errore 😤",
        "Inoltrato dal tecnico della scuola di sci:",
        "appunti per il deploy del gestionale della cantina:",
        "copiato dal mio terminale all'hackathon:",
        "ci dai un'occhiata?",
    ),
    "pt": (
        "Para o servidor do surf camp, copia isto tal e qual:",
        "corri isto e deu erro 😅",
        "Reencaminhado do informático da clínica:",
        "notas do deploy da app dos escuteiros:",
        "copiado do meu terminal no hackathon:",
        "podes ver isto?",
    ),
    "nl": (
        "Voor de server van de roeivereniging, precies zo intypen:",
        "dit heb ik gedraaid maar het faalt 🙈",
        "Doorgestuurd van de IT-vrijwilliger van de volkstuin:",
        "notities voor de deploy van de huisartsenpost-app:",
        "gekopieerd uit mijn terminal op de hackathon:",
        "kun je even meekijken?",
    ),
    "sv": (
        "Till stallets server, skriv exakt så här:",
        "körde det här men det kraschar 😬",
        "Vidarebefordrat från skidskolans IT-kille:",
        "anteckningar för deployen av bageriets kassa:",
        "kopierat från min terminal på hackathonet:",
        "kan du kika på det här?",
    ),
    "pl": (
        "Do serwera schroniska, wpisz dokładnie tak:",
        "odpaliłem to i się wywala 🤦",
        "Przekazane od informatyka z apteki:",
        "notatki do wdrożenia apki harcerskiej:",
        "skopiowane z mojego terminala na hackathonie:",
        "zerkniesz na to?",
    ),
    "ru": (
        "Для сервера турклуба, вводи ровно так:",
        "запустил вот это, а оно падает 😑",
        "Переслано от айтишника ветклиники:",
        "заметки по деплою приложения для СНТ:",
        "скопировал из терминала на хакатоне:",
        "глянешь?",
    ),
    "tr": (
        "Kamp alanının sunucusu için aynen bunu yaz:",
        "bunu çalıştırdım ama hata veriyor 😩",
        "Eczanenin bilgisayarcısından iletildi:",
        "halı saha uygulamasının deploy notları:",
        "hackathonda terminalimden kopyaladım:",
        "bir bakar mısın?",
    ),
    "ja": (
        "町内会サーバー用、これをそのまま打って：",
        "これ実行したらエラー出た😭",
        "動物病院のシステム担当から転送：",
        "部活アプリのデプロイメモ：",
        "ハッカソンでターミナルからコピペ：",
        "ちょっと見てもらえる？",
    ),
    "ko": (
        "캠핑장 서버용, 이대로 입력하세요:",
        "이거 돌렸는데 에러 나요 ㅠㅠ",
        "동물병원 전산 담당이 전달한 내용:",
        "헬스장 앱 배포 메모:",
        "해커톤 때 터미널에서 복붙:",
        "이거 좀 봐줄래?",
    ),
    "zh": (
        "驾校服务器，照着这个敲：",
        "我跑了这个但是报错了😩",
        "宠物医院的网管转发过来的：",
        "社区团购小程序部署笔记：",
        "黑客松时从终端复制的：",
        "帮我看一下？",
    ),
    "ar": (
        "لسيرفر نادي الفروسية، اكتب هذا بالضبط:",
        "شغلت هذا بس يطلع خطأ 😩",
        "محوّل من مسؤول الكمبيوتر في الصيدلية:",
        "ملاحظات نشر تطبيق المزرعة:",
        "منسوخ من الترمنال في الهاكاثون:",
        "ممكن تشوف هذا؟",
    ),
}

SECRET_BODIES: list[tuple[str, str]] = [
    ("credential_cmd", "{lead}\ncurl -u {user}:{pwc} https://feeds.{host}/v1/orders"),
    ("credential_cmd", '{lead}\ncurl --user "{user}:{pwc}" -X POST https://api.{host}/sync'),
    ("credential_cmd", "{lead}\nmysql -h {host} -u {user} -p{pwc} stable_bookings"),
    ("credential_cmd", "{lead}\nmysql --user={user} --password={pwc} harvest"),
    ("credential_cmd", "{lead}\nsshpass -p '{pwc}' ssh {user}@{host}"),
    ("credential_cmd", "{lead}\nsshpass -p {pwc} scp dump.sql {user}@{host}:/tmp/"),
    ("credential_cmd", "{lead}\nredis-cli -h {host} -a {pwc} ping"),
    ("credential_cmd", "{lead}\ndocker login -u {user} -p {pwc} registry.{host}"),
    ("credential_cmd", "{lead}\nlftp -u {user},{pwc} ftp.{host}"),
    ("credential_cmd", "{lead}\nsmbclient //{host}/scans -U {user}%{pwc}"),
    (
        "credential_cmd",
        "{lead}\nwget --http-user={user} --http-password={pwc} https://{host}/export.csv",
    ),
    ("credential_cmd", "{lead}\nPGPASSWORD={pwc} psql -h {host} -U {user} clinic"),
    ("credential_cmd", "{lead}\nxfreerdp /u:{user} /p:{pwc} /v:{host}"),
    ("credential_cmd", '{lead}\nsqlcmd -S {host} -U sa -P {pwc} -Q "select 1"'),
    ("credential_cmd", "{lead}\nhtpasswd -b -c .htpasswd {user} {pwc}"),
    ("credential_cmd", "{lead}\necho '{pwc}' | sudo -S systemctl restart kiosk"),
    (
        "credential_cmd",
        "{lead}\nRSYNC_PASSWORD={pwc} rsync -av photos/ rsync://{user}@{host}/backup",
    ),
    ("credential_url", "{lead}\nhttps://{user}:{pwu}@dav.{host}/remote.php/files"),
    ("credential_url", "{lead}\npostgres://{user}:{pwu}@{host}:5432/rota"),
    ("credential_url", "{lead}\nmongodb+srv://{user}:{pwu}@cluster0.{host}/feeds"),
    ("credential_url", "{lead}\nftp://{user}:{pwu}@{host}/upload/"),
    ("credential_url", "{lead}\ngit clone https://{user}:{ghp}@github.com/club-tools/booking.git"),
    (
        "config_paste",
        "{lead}\n```\nDB_HOST={host}\nDB_USER={user}\nDB_PASSWORD={pwc}\nSTRIPE_SECRET={stripe}\n```",
    ),
    (
        "config_paste",
        '{lead}\n```yaml\nsmtp:\n  host: mail.{host}\n  user: {user}\n  password: "{pwc}"\n```',
    ),
    ("config_paste", '{lead}\n{{"db": {{"user": "{user}", "pass": "{pwc}"}}, "port": 5432}}'),
    ("config_paste", "{lead}\n[mail]\nusername = {user}\npassword = {pwc}"),
    ("bot_token", "{lead}\nDISCORD_TOKEN={tok_dc}"),
    ("bot_token", '{lead}\nbot = Bot(token="{tok_dc}")'),
    ("bot_token", "{lead}\nTELEGRAM_BOT_TOKEN={tok_tg_id}:{tok_tg}"),
    ("bot_token", "{lead}\nhttps://api.telegram.org/bot{tok_tg_id}:{tok_tg}/getUpdates"),
    ("jwt", "{lead}\nAuthorization: Bearer {jwt}"),
    ("jwt", "{lead}\naccess_token={jwt}"),
    ("api_key", "{lead}\naws_access_key_id = {aws_id}\naws_secret_access_key = {aws_sk}"),
    ("api_key", "{lead}\nexport GITHUB_TOKEN={ghp}"),
    ("api_key", "{lead}\nOPENAI_API_KEY={skp}"),
    ("api_key", '{lead}\nANTHROPIC_API_KEY="{ant}"'),
    ("api_key", "{lead}\nslack token: {slack}"),
    (
        "api_key",
        "{lead}\nhttps://maps.googleapis.com/maps/api/geocode/json?address=farm&key={gkey}",
    ),
    ("api_key", "{lead}\nhuggingface-cli login --token {hf}"),
    ("api_key", "{lead}\ndoctl auth init -t {dop}"),
    ("api_key", "{lead}\nGITLAB_TOKEN={glpat}"),
    (
        "api_key",
        "{lead}\nDefaultEndpointsProtocol=https;AccountName=clinicfiles;AccountKey={azure};EndpointSuffix=core.windows.net",
    ),
    ("api_key", "{lead}\nTWILIO_ACCOUNT_SID=AC{short}{short}\nTWILIO_AUTH_TOKEN={twilio}"),
    (
        "private_key",
        "{lead}\n-----BEGIN OPENSSH PRIVATE KEY-----\n{pkey}\n-----END OPENSSH PRIVATE KEY-----",
    ),
    (
        "private_key",
        "{lead}\n-----BEGIN EC PRIVATE KEY-----\n{eckey}\n-----END EC PRIVATE KEY-----",
    ),
    ("ssn", "{lead}\nW-9 / payee: {name}, SSN {ssn}"),
    ("ssn", "{lead}\nssn={ssn} dob=1988-04-02"),
]

LOOKALIKE_BODIES: list[tuple[str, str]] = [
    ("dev_hash", "{lead}\ngit revert {sha}"),
    ("dev_hash", "{lead}\ndocker pull ghcr.io/club-tools/booking@sha256:{sha256}"),
    ("dev_hash", "{lead}\nrequest_id={uuid} status=502 upstream=booking"),
    ("dev_hash", "{lead}\ngit checkout {short} -- src/rota.py"),
    ("cmd_no_value", "{lead}\nmysql -u {user} -p stable_bookings"),
    ("cmd_no_value", "{lead}\npsql -h {host} -U {user} -W clinic"),
    ("cmd_no_value", "{lead}\ncurl -u {user} https://feeds.{host}/v1/orders"),
    ("cmd_no_value", "{lead}\nssh {user}@{host} -p 2222"),
    ("placeholder", "{lead}\nDB_PASSWORD=${{DB_PASSWORD}}\nAPI_KEY=<paste-your-key>"),
    (
        "placeholder",
        '{lead}\n```yaml\npassword: "<your password>"\ntoken: ${{{{ secrets.DEPLOY_TOKEN }}}}\n```',
    ),
    ("placeholder", "{lead}\nAuthorization: Bearer <token>"),
    ("placeholder", '{lead}\nsshpass -p "$SSHPASS" ssh {user}@{host}'),
    ("version", "{lead}\npip install booking-kit=={ver}"),
    ("dev_hash", "{lead}\nping {ip} → 64 bytes, time=3.1 ms"),
    ("dev_hash", "{lead}\nsha256sum firmware.bin\n{sha256}  firmware.bin"),
    ("placeholder", "{lead}\n[mail]\nusername = {user}\npassword = ********"),
    ("talk_about", "{lead}\nERROR 401: invalid password for user '{user}' (attempt {n} of 5)"),
    (
        "talk_about",
        "{lead}\nmysql: [Warning] Using a password on the command line interface can be insecure.",
    ),
    ("talk_about", "{lead}\n{user}@{host}: Permission denied (publickey,password). retry in {nn}s"),
]


def bodies_for(lang: str, kind: str) -> list[tuple[str, str]]:
    """The bodies this language gets: a rotating slice, so no body is used by many."""
    langs = list(LEADS)
    j = langs.index(lang)
    if kind == "secret":
        pool, per = SECRET_BODIES, 10
    else:
        pool, per = LOOKALIKE_BODIES, 4
    return [pool[(j * per + k) % len(pool)] for k in range(per)]
