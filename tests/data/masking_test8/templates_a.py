"""Hand-written templates (EN, DE, FR, ES, IT) of the eighth held-out masking split.

One template a line: ``S`` carries a secret, ``L`` is a look-alike. ``{slot}`` is filled by
``generate.py`` (a trailing digit makes a second value of the same kind); ``\\n`` is a line
break and ``\\uXXXX`` a character written by its code point (zero-width and look-alike letters).
"""

T: dict[str, str] = {
    "en": r"""
S fishing club group: boathouse padlock is {code} now, lock it after the night session pls
S [19:02] Dave G4: whats the repeater admin pw?\n[19:03] Sue: {pw}\n[19:03] Dave G4: ta
S astro society: the observatory dome controller login is user {user} pass {upw} — dont change it, the scheduler uses it
S stage mgmt handover: fly floor keypad {code}, lighting desk unlock PIN {pin}. Get-in is {time} tomorrow
S taxi dispatch app got logged out again 🙄 driver pass is\n{pw}\nsame as last month
S site office: gate code for the crane compound is {code}, and the alarm is set at {time} so be out before
S warehouse wifi for the scanners: SSID WH-Forklift, key {wifi}
S crew rostering portal, my login if you need to swap my LHR turn: p\u200bassword: {pw}
S marina pontoon gate {code} — shower block same code + # ⚓
S mountain hut booking backend: `mysql -u hut -p{upw} bookings` runs the nightly export
S library makerspace 3D printer: octoprint API key is {hf} (yes it's a HF one, long story)
S escape room staff: the override for room 2's maglock is {pinl}, never tell players obviously
S beekeepers assoc treasurer here — card for the jar order {card} exp {exp} cvv {cvv}
S {seed} ← that's the recovery phrase for the club's hardware wallet, put it in the safe and delete this
S tattoo studio booking site .env\n```\nDB_URL=postgres://ink:{upw}@{host}:5432/ink\nSTRIPE_SECRET={stripe}\n```
S minecraft server: rcon password {pw} and the discord bot token {discord}
S dentist reception: the x-ray PC is locked, Windows PIN {pin}. Also SSN on the new patient form is {ssn}, pls fix the typo in the system
S drone club: DJI account 2FA recovery codes {rec}
L fishing club: the boathouse padlock code changed, ask Pete for the new one, not posting it here
L repeater on {freq} MHz is back up, CTCSS 88.5, callsign {callsign}
L astro society meeting {date} at {time}, talk on variable stars, room {room}
L stage mgmt: we need {n} more radio packs, the PIN on the channel plan is pin 3 on the XLR, not a code lol
L taxi: fare was £{usd}, receipt number {order}, drop-off at terminal 5
L site office: please reset your password on the induction portal before Monday, link sent by email
L warehouse: forklift {n} failed the check, ticket {order}, key is on the hook in the office
L crew roster: my pairing is {flight} on {date}, report time {time}, hotel room {room}
L marina: berth {n} invoice {order} due {date}, €{price}
L mountain hut: booking ref {order}, {n} beds in the dorm, half board {price} EUR p.p.
L library: the book you reserved, ISBN {isbn}, is at the desk until {date}
L escape room: the final lock is a 4-digit code hidden in the painting, players have 60 min
L beekeepers: new hive tool order tracking {track}, card ending {ends}
L these 12 words are from the quiz not a wallet: {badseed}
L tattoo studio: deposit £{usd}, appointment {date} {time}, aftercare sheet v{ver}
L minecraft: server updated to {ver}, ip {ip}, whitelist via DM, set your own password on the panel
L dentist: your appointment is {date} at {time}, call ext {ext} to reschedule
L drone club: firmware {ver} checksum {sha}, dont flash the beta
""",
    "de": r"""
S Angelverein: Schloss vom Bootshaus ist jetzt {code}, bitte nach dem Nachtangeln wieder zu
S Funkamateure OV: Passwort fürs Relais-Webinterface\n{pw}\nbitte nicht weitergeben 73
S Sternwarte: Kuppelsteuerung Login {user} / {upw} – nicht ändern, der Scheduler braucht das
S Bühnentechnik Übergabe: Tastenfeld Schnürboden {code}, Lichtpult-PIN {pin}. Einlass {time}
S Taxi-Zentrale: die App hat mich rausgeworfen 🙄 mein pw is {pw}, kannst du mal schauen
S Baustelle: Tor zum Kranplatz {code}, Alarm scharf ab {time}
S Lager WLAN für die Scanner: SSID Lager-Stapler, Schlüssel {wifi}
S Dienstplan-Portal, falls du meinen Umlauf tauschen willst: Kennw\u200bort: {pw}
S Hafen: Steg-Tor {code}, Duschen gleicher Code mit # ⚓
S Hütte Buchungssystem: `mysqldump -u huette -p{upw} buchungen > backup.sql` läuft nachts
S Imker-Verein Kassenwart: Karte für die Gläserbestellung {card}, gültig bis {exp}, Prüfnummer {cvv}
S {seed}\n^^ das is die Wiederherstellungsphrase vom Vereins-Wallet, ab in den Tresor und hier löschen
S Tattoostudio .env:\n```\nDATABASE_URL=mysql://ink:{upw}@{host}/ink\nSENDGRID_API_KEY={sg}\n```
S Minecraft-Server: rcon passwort {pw}, Telegram-Bot für die Whitelist {tgid}:{tg}
S Zahnarztpraxis: Röntgen-PC gesperrt, Windows-PIN {pin} – bitte nicht ins Wiki schreiben
S Steuerberater-Kanzlei: ELSTER Zertifikat-Passwort ist {pw}, die Datei liegt im Mandantenordner
L Angelverein: Code vom Bootshaus hat sich geändert, fragt den Gewässerwart, schreib ich hier nicht rein
L Relais {freq} MHz wieder QRV, Rufzeichen {callsign}, Ablage -600
L Sternwarte: Vortrag am {date} um {time}, Raum {room}, Thema veränderliche Sterne
L Bühne: wir brauchen noch {n} Funkstrecken, Pin 3 am XLR ist kalt, kein Code 😅
L Taxi: Fahrpreis {price} €, Quittung Nr. {order}
L Baustelle: bitte bis Montag euer Passwort im Unterweisungsportal zurücksetzen, Link kommt per Mail
L Lager: Stapler {n} durch die UVV gefallen, Ticket {order}, Schlüssel hängt im Büro am Haken
L Dienstplan: mein Umlauf {flight} am {date}, Meldezeit {time}, Hotelzimmer {room}
L Hafen: Liegeplatz {n}, Rechnung {order} fällig {date}, {price} €
L Hütte: Buchungsnummer {order}, {n} Lager-Plätze, HP {price} € p.P.
L Bibliothek: vorgemerktes Buch ISBN {isbn} liegt bis {date} an der Theke
L Imker: Sendungsnummer Rähmchen {track}, bezahlt mit Karte endend auf {ends}
L die 12 Wörter sind aus dem Englisch-Quiz, kein Wallet: {badseed}
L Minecraft: Server auf {ver} aktualisiert, IP {ip}, Passwort setzt jeder selbst im Panel
L Zahnarzt: Termin am {date} um {time}, Rückfragen unter Durchwahl {ext}
L Steuerberater: Steuernummer kommt per Post, die Frist ist der {date}, PIN für ELSTER bekommst du per Brief
""",
    "fr": r"""
S club de pêche : le cadenas du local à barques c'est {code} maintenant, refermez bien svp
S radioamateurs : le mdp de l'interface du relais\n{pw}\nne le diffusez pas 73
S club d'astro : login coupole {user} / mdp {upw}, on touche pas c'est le planificateur qui l'utilise
S régie plateau : digicode cintres {code}, code PIN du pupitre lumière {pin}. Montage à {time}
S VTC : l'appli m'a déconnecté encore 😤 mon mot de passe c'est {pw} tu peux regarder ?
S chantier : portail de la zone grue {code}, alarme activée à {time}
S entrepôt wifi scanners : SSID Entrepot-Cariste, clé {wifi}
S planning PNC, si tu veux échanger ma rotation : mot de\u200b passe : {pw}
S port de plaisance : portillon du ponton {code}, sanitaires même code + #
S refuge : `mysql -u refuge --password={upw} resa` pour l'export de nuit
S apiculteurs trésorière : carte pour la commande de pots {card} exp {exp} cryptogramme {cvv}
S {seed}\n↑ phrase de récupération du wallet de l'asso, au coffre et supprimez ce message
S studio de tatouage, le .env :\n```\nDB_URL=postgres://tatoo:{upw}@{host}:5432/resa\nOPENAI_API_KEY={oai}\n```
S serveur minecraft : mot de passe rcon {pw}, token du bot discord {discord}
S cabinet dentaire : PC radio verrouillé, code PIN Windows {pin}
S pompes funèbres : accès au portail des concessions identifiant {user} mot de passe {pw}
L club de pêche : le code du local a changé, demandez à Gérard, je le mets pas ici
L relais {freq} MHz de nouveau actif, indicatif {callsign}, shift -600
L club d'astro : conférence le {date} à {time}, salle {room}
L régie : il manque {n} émetteurs HF, la broche 3 du XLR c'est le froid, pas un code
L VTC : course à {price} €, reçu n° {order}
L chantier : réinitialisez votre mot de passe sur le portail formation avant lundi, lien envoyé par mail
L entrepôt : chariot {n} recalé au contrôle, ticket {order}, la clé est au bureau
L planning : ma rotation {flight} le {date}, présentation {time}, chambre {room}
L port : anneau {n}, facture {order} à régler avant le {date}, {price} €
L refuge : réservation n° {order}, {n} places en dortoir, demi-pension {price} €
L médiathèque : le livre réservé ISBN {isbn} vous attend jusqu'au {date}
L apiculteurs : suivi colis cadres {track}, payé avec la carte qui finit par {ends}
L les 12 mots du quiz d'anglais, pas un portefeuille : {badseed}
L minecraft : serveur en {ver}, IP {ip}, chacun choisit son mot de passe sur le panel
L dentiste : rdv le {date} à {time}, pour décaler appelez le poste {ext}
L pompes funèbres : le dossier {order} est complet, les codes d'accès arrivent par courrier
""",
    "es": r"""
S club de pesca: el candado del cobertizo ahora es {code}, cerradlo bien porfa
S radioaficionados: la contra del panel del repetidor\n{pw}\nno la paséis 73
S agrupación astronómica: login cúpula {user} / clave {upw} no la cambiéis que la usa el planificador
S regidoría: teclado del peine {code}, PIN de la mesa de luces {pin}. Montaje a las {time}
S taxi: la app me echó otra vez 🙄 mi contraseña es {pw} me la miras?
S obra: portón de la zona de grúa {code}, la alarma se arma a las {time}
S almacén wifi de los lectores: SSID Almacen-Carretillas, clave {wifi}
S portal de turnos TCP, por si cambias mi rotación: contraseña: {pw}
S puerto deportivo: puerta del pantalán {code}, duchas mismo código con #
S albergue: `curl -u {user}:{upw} https://{host}/export` lo corre el cron de noche
S apicultores tesorería: tarjeta para el pedido de tarros {card} cad {exp} CVV {cvv}
S {seed}\n👆 frase semilla de la cartera del club, a la caja fuerte y borrad esto
S estudio de tatuajes .env\n```\nDB=mysql://tattoo:{upw}@{host}/citas\nANTHROPIC_API_KEY={ant}\n```
S servidor de minecraft: contraseña rcon {pw} y el token del bot de discord {discord}
S clínica dental: el PC de rayos bloqueado, PIN de Windows {pin}
S gestoría: la clave del certificado digital del cliente es {pw}, el .pfx está en la carpeta
L club de pesca: el código del cobertizo cambió, preguntad a Paco, aquí no lo pongo
L repetidor {freq} MHz operativo otra vez, indicativo {callsign}
L agrupación astronómica: charla el {date} a las {time}, sala {room}
L regidoría: faltan {n} petacas, el pin 3 del XLR es el frío, no es ningún código jaja
L taxi: la carrera {price} €, recibo nº {order}
L obra: restableced la contraseña del portal de PRL antes del lunes, os llega el enlace por correo
L almacén: carretilla {n} no pasó la revisión, ticket {order}, la llave está en la oficina
L turnos: mi rotación {flight} el {date}, presentación {time}, habitación {room}
L puerto: amarre {n}, factura {order} vence el {date}, {price} €
L albergue: reserva nº {order}, {n} camas en litera, media pensión {price} €
L biblioteca: el libro reservado ISBN {isbn} está en el mostrador hasta el {date}
L apicultores: seguimiento del pedido {track}, pagado con la tarjeta acabada en {ends}
L 12 palabras del examen de inglés, no es ninguna cartera: {badseed}
L minecraft: servidor en {ver}, IP {ip}, cada uno pone su contraseña en el panel
L dentista: cita el {date} a las {time}, para cambiarla llama a la extensión {ext}
L gestoría: el número de referencia del borrador es {order}, el PIN de la Agencia te llega por SMS
""",
    "it": r"""
S circolo pesca: il lucchetto del capanno ora è {code}, richiudete mi raccomando
S radioamatori: pw del pannello del ponte\n{pw}\nnon giratela 73
S gruppo astrofili: login cupola {user} / password {upw} non cambiatela, la usa lo scheduler
S macchinisti teatro: tastierino graticcio {code}, PIN consolle luci {pin}. Montaggio ore {time}
S ncc: l'app mi ha buttato fuori di nuovo 🙄 la mia password è {pw} ci guardi?
S cantiere: cancello area gru {code}, allarme inserito alle {time}
S magazzino wifi palmari: SSID Magazzino-Muletti, chiave {wifi}
S portale turni di volo, se vuoi scambiare la mia rotazione: pаssword: {pw}
S marina: cancelletto del pontile {code}, docce stesso codice + #
S rifugio: `sshpass -p {upw} ssh {user}@{host}` per il backup delle prenotazioni
S apicoltori tesoriere: carta per l'ordine dei vasetti {card} scad {exp} cvv {cvv}
S {seed}\n⬆️ frase di recupero del wallet dell'associazione, in cassaforte e cancellate
S studio tattoo .env\n```\nDB_URL=postgres://tattoo:{upw}@{host}/app\nGITHUB_TOKEN={ghp}\n```
S server minecraft: password rcon {pw} e token del bot telegram {tgid}:{tg}
S studio dentistico: pc radiografie bloccato, PIN di Windows {pin}
S commercialista: il PIN dispositivo SPID del cliente è {pinl}, serve per il 730
L circolo pesca: il codice del capanno è cambiato, chiedete a Gino, qui non lo scrivo
L ponte {freq} MHz di nuovo attivo, nominativo {callsign}
L astrofili: conferenza il {date} alle {time}, aula {room}
L teatro: mancano {n} radiomicrofoni, il pin 3 dell'XLR è il freddo, non è un codice
L ncc: corsa {price} €, ricevuta n. {order}
L cantiere: reimpostate la password del portale sicurezza entro lunedì, il link arriva per mail
L magazzino: muletto {n} bocciato alla verifica, ticket {order}, la chiave è in ufficio
L turni: la mia rotazione {flight} il {date}, presentazione {time}, camera {room}
L marina: posto barca {n}, fattura {order} scade il {date}, {price} €
L rifugio: prenotazione n. {order}, {n} posti in camerata, mezza pensione {price} €
L biblioteca: il libro prenotato ISBN {isbn} è al banco fino al {date}
L apicoltori: tracking del pacco telaini {track}, pagato con la carta che finisce con {ends}
L le 12 parole del test di inglese, non è un wallet: {badseed}
L minecraft: server aggiornato a {ver}, IP {ip}, la password ognuno se la sceglie sul pannello
L dentista: appuntamento il {date} alle {time}, per spostarlo interno {ext}
L commercialista: il protocollo della dichiarazione è {order}, il PIN dell'INPS arriva per posta
""",
}
