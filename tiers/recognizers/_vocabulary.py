"""Capitalised words that are not names, in English, German and French business text.

The people, organisation and address recognizers find names by shape (capitalised words next to
a given name, a title, a role word or a legal form); these lists keep the shapes that are
ordinary text out: months and weekdays, words that open sentences and headings, the nouns of
quality and business documents (German capitalises every noun), places and products that look
like "Given Surname" ("Victoria Station", "Georgia Tech"). Written for this project; all words
lower-case and accent-folded, as the scanner sees text.
"""

from __future__ import annotations

__all__ = [
    "AMBIGUOUS_GIVEN_NAMES",
    "COMMON_WORDS",
    "NOT_GIVEN_NAMES",
    "NOT_SURNAMES",
    "SURNAME_WORDS",
    "WEAK_GIVEN_NAMES",
    "is_common",
]

_MONTHS_DAYS = """
january february march april may june july august september october november december
januar februar marz mai juni juli oktober dezember janvier fevrier mars avril juin juillet aout
septembre octobre novembre decembre monday tuesday wednesday thursday friday saturday sunday
montag dienstag mittwoch donnerstag freitag samstag sonntag lundi mardi mercredi jeudi vendredi
samedi dimanche easter christmas weihnachten ostern noel paques
"""

# given names in the gazetteer that are more often ordinary words, places or brands (and German
# "Sie", the formal "you", capitalised in mid-sentence: "Bitte rufen Sie Anne-Marie de la Tour an";
# interjections that open a sentence or a cell: "Oh Yeah", "Hey Boss")
_NOT_GIVEN = """
sie
will mark bill may june april august hope joy rose faith art guy frank sunny chase page
paris florence georgia victoria austin jordan lincoln ford carol holly ivy iris lily daisy
summer autumn winter dawn eve crystal amber ruby pearl jade olive sky river ocean storm rain
star angel king prince duke earl major sterling cash penny price hunter carter baker cooper
porter mason miller fisher taylor parker tanner archer gene hall wood stone glen dale lane
park ray sol mary christian norman german roman france china india israel lorraine normandie
jersey kent devon chelsea brooklyn madison phoenix dallas houston denver aurora berlin vienna
sydney dakota carolina virginia indiana alabama nevada montana santa san saint sainte mont
golden rich noble young long short bright green brown white black gray grey red
max per dean don jack job abe ben bo al el la le de van von dan ed rob sue pat val vera
via nova alpha delta echo lima oscar sierra tango victor zulu apple amazon tesla oracle
summit express premier royal general central global united standard
elle une sans toute tout avant petit grand belle fleur claire claude
meta newton shi mac core travis one non line apollo lance gil else alle ende wolf hart kurt ernst frei gunther
tell take skip
nick wade drew bob mack miles neil lee mo jean said job
key run ge gt lt thai philippine genel so save revert spring fira york sri merge tera agda vue tea
doc octave napoleon darwin trace
five nine
oh ah hey okay yo rio
"""

# common given names that are also words, places or brands: a given name only before a surname
# that is no word itself (people.py), so "Mark Phillips" and "Jean Dupuis" count, "Mark Done" not
_AMBIGUOUS = """
mark mary christian victor jean claire frank dean neil nick lee miles ray carol vera glen dale gene
norman taylor mason hunter carter parker cooper jack max ben dan bob don sue pat val drew wade rob ed
guy ernst kurt gunther
"""

# ordinary words that are frequent surnames too: right after a given name they are its surname
_SURNAME_WORDS = """
hill lane wood stone park hall king young brown white black green gray grey long short bishop
church field banks page rose bell cross marsh moss street rich noble bright strong sharp dean
west north south east day french price
"""

# census surnames (._surnames) that are more often ordinary words, places or terms of code and
# documentation: not a part of joined surnames ("Client-Server", "Black and White") nor the
# surname after a weak given name ("Chelsea Flower Show")
_NOT_SURNAMES = """
black white green brown gray grey red blue gold silver golden old little small rich noble bright
sharp sweet fair good best well hand post bank art form stelle
client server service model filter string list hash key block case test agent value host keys
range super line weight start check height forward body core bias mask call read root parent
frame given real current sum files max min top bottom front back side end speed size width
depth count score level limit load time temp rank mode state stack heap queue cluster node
lake bay island rock shore beach forest mountain valley tower gate port bridge castle land home
house palace league garden gardens
queen prince duke lord pope knight major general marshal sergeant
summer winter spring autumn
london paris berlin rome madrid vienna prague dublin york boston chicago denver phoenix
georgia virginia carolina florida england france germany holland ireland scotland wales spain
italy china japan india russia poland norway sweden denmark finland belgium austria hungary
greece turkey canada mexico brazil chile peru cuba israel egypt kenya african english french
german irish dutch swiss
power price cash money rate cost pay bill order sale trade market deal click mail media co
flower rose lily daisy ivy holly pearl ruby jade crystal amber coral honey sugar salt pepper
apple orange lemon berry cherry olive rice bean corn wheat
"""

# given names that are ordinary words, places or months too (and so kept out of the gazetteer
# by _NOT_GIVEN): a person's given name right before a census surname that is no word itself
# ("Amber Howard", "Max Müller", "Dawn O'Neill"), never alone ("Amber alert", "Max Price")
_WEAK_GIVEN = """
amber chelsea dawn virginia daisy holly ivy iris lily ruby pearl jade crystal rose faith hope joy
olive autumn summer georgia victoria florence austin jordan madison dakota carolina max bill
august roman
"""

_COMMON = """
the a an this that these those our your their his her its my we you they i it he she
and or but if when while for from with without into onto about after before during under over
to of in on at by as is are was were be been has have had do does did not no yes all any each
every some many most more less new old next last first second third final other same such
sir madam madame team all everyone colleagues kollegen collegues tous
please dear hello hi thanks thank regards best kind sincerely cheers
der die das den dem des ein eine einer eines einem und oder aber wenn weil fur mit ohne nach
vor bei von zu zum zur im am an auf aus ist sind war waren wird werden hat haben bitte danke
sehr geehrte geehrter liebe lieber hallo gruss grusse gruß gruße grußen freundlichen
le la les un une des du et ou mais si pour avec sans dans sur sous chez par est sont etait
merci bonjour madame monsieur cher chere cordialement salutations bien
report review plan quality process data team site group project program programme product
service services support customer supplier vendor client partner contract agreement order
orders invoice payment delivery shipment batch lot release approval audit inspection test
testing result results summary overview introduction conclusion appendix section chapter
table figure note notes action actions item items issue issues risk risks root cause
deviation deviations capa change control document documents record records procedure sop
specification requirement requirements standard manual guide policy training meeting minutes
agenda status update period deadline draft final version revision page date time number name title subject
management manager director head lead owner department division unit office board committee
engineering production manufacturing operations logistics purchasing procurement finance
sales marketing research development regulatory affairs compliance safety health
environment system systems software hardware platform cloud server network security access
user users account admin administrator developer developers api sdk app application
north south east west northern southern eastern western upper lower inner outer
street road avenue lane drive way place square park station airport port harbour harbor
river lake mountain hill valley bay beach island city town village county state region area
university college school institute academy hospital clinic center centre museum library
company corporation incorporated limited holding holdings group industries international
bank capital ventures partners associates solutions technologies technology consulting
laboratories laboratory labs pharma pharmaceuticals medical devices chemicals materials
steel metal metals plastics foods energy power motors motor airlines logistics
bericht prufung plan qualitat prozess daten gruppe projekt produkt dienst kunde kunden
lieferant lieferanten auftrag bestellung rechnung zahlung lieferung charge freigabe
abweichung abweichungen massnahme massnahmen maßnahme maßnahmen ursache korrektur vorbeugung dokument
verfahren anweisung spezifikation anforderung anforderungen norm handbuch schulung
besprechung protokoll stand entwurf fassung seite datum zeit nummer betreff leitung
abteilung bereich werk standort produktion fertigung einkauf vertrieb entwicklung
sicherheit qualitatssicherung qualitatsmanagement geschaftsfuhrung herstellung prufplan
strasse platz weg bahnhof flughafen stadt land kreis bewertung bewertungen reklamation
reklamationen zufriedenheit anfrage beschwerde beschwerden betreuung portal nummer stammdaten
rapport revue qualite processus donnees equipe groupe projet produit fournisseur commande
facture paiement livraison lot liberation ecart ecarts action actions cause racine
document procedure specification exigence exigences norme formation reunion compte rendu
version projet date heure numero nom objet direction service usine production achats
ventes developpement securite societe entreprise
europe european america american asia asian africa african german english french british
spanish italian dutch swiss austrian polish chinese japanese indian global national
monday microsoft google linux windows android python java javascript docker kubernetes
github gitlab postgres postgresql redis excel word powerpoint teams slack zoom outlook
filter filters cartridge sensor sensors pump pumps valve valves module modules platform unit units
kit series line lines pro plus max mini ultra edition model models type class device devices
tool tools machine machines engine controller board panel switch cable adapter housing housings
seal seals assembly component part parts room cleanroom lab line reactor tank vessel
none null nil true false world algorithm algorithms protocol protocols gradient method
methods function functions platforms transfer file files copyright license licence
must shall should would could might event events
osx ios xml json yaml toml html css csv pdf ci cd aws gcp gpu cpu usb lan wan rest rpc
ip id ids sdk url uri ui ux cli os db sql http https tcp udp dns ssl tls vpn
dashboard portal console studio suite cloud hub gateway engine api
chief officer executive president vice senior junior principal assistant associate
organization organisation organizations person persons people location locations entity entities
cased code codes water runtime error errors exception exceptions warning warnings context kernel
lexer host target term style language modeling comment templates template sphinx day days single
mon tue wed thu fri sat sun jan feb mar apr jun jul aug sep sept oct nov dec garden gardens tech
optional union literal final callable sequence iterable iterator generic typevar self type types
dict list tuple set str int float bool bytes object
claude anthropic openai chatgpt gpt gemini copilot codex llama mistral hypothesis
beim ins ans aufs ubers laut gemass wahrend trotz wegen seit gegen durch unter zwischen neben hinter
heute gestern vorgestern ubermorgen danach dann leider bisher inzwischen zudem ausserdem auch jetzt nun hier dort
letzte letzten nachste nachsten diese dieser diesem diesen jede jeden jeder morgens abends woche monat jahr
hier aujourd demain ensuite puis enfin alors depuis selon lors apres pendant cette ce ces notre votre leur chaque
semaine mois annee jour matin soir comme convenu suite
acrobat photoshop jira confluence salesforce sharepoint onedrive dropbox trello asana figma
tableau webex skype whatsapp chrome firefox safari matlab labview solidworks catia autocad minitab abap
servicenow workday hubspot zendesk bitbucket ansible terraform grafana kibana splunk datadog
typescript mysql mongodb powershell oauth linkedin youtube devops macos openapi graphql nodejs wordpress
"""

COMMON_WORDS: frozenset[str] = frozenset((_MONTHS_DAYS + _COMMON).split())
AMBIGUOUS_GIVEN_NAMES: frozenset[str] = frozenset(_AMBIGUOUS.split()) - COMMON_WORDS
SURNAME_WORDS: frozenset[str] = frozenset(_SURNAME_WORDS.split())
NOT_SURNAMES: frozenset[str] = frozenset((_NOT_SURNAMES + _MONTHS_DAYS).split())
"""Census surnames that are not a surname where a name's shape alone has to decide."""
WEAK_GIVEN_NAMES: frozenset[str] = frozenset(_WEAK_GIVEN.split())
"""Given names that are words too; they start a name only before a census surname."""
"""Ordinary words that complete a name right after a given name ("Anthony Hill")."""
"""Given names that are words too; they start a name only before an unambiguous surname."""
"""Capitalised words that are never a name's part here."""

NOT_GIVEN_NAMES: frozenset[str] = frozenset((_NOT_GIVEN + _MONTHS_DAYS).split()) | COMMON_WORDS
"""Words of the given-name gazetteer that do not start a name by themselves."""


def is_common(word: str) -> bool:
    """Whether ``word`` (any case) is an ordinary word rather than part of a name."""
    return word.lower().strip(".'’") in COMMON_WORDS
