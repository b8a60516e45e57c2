"""Detection measured on material nobody on this project wrote (issue 12), shipped defaults, no
name list configured.

    .venv/bin/python bench/outside.py                  # all three parts
    .venv/bin/python bench/outside.py --part repos     # or faker, secrets
    .venv/bin/python bench/outside.py --show 40        # list the values behind Tier 2 files
    .venv/bin/python bench/outside.py --part repos --group "fifth"   # one group of packages

* ``repos``: the source trees of packages installed in the virtualenv (real code from PyPI, as a
  coding agent sends it), file by file: the share of files raised to Tier 2 by values that
  identify nobody, and every Tier 3 file. Whether a value identifies somebody was judged by
  reading it (``IDENTIFYING``: author credits, maintainers' addresses, companies in licence
  headers; ``IDENTIFYING_HELD_OUT``, ``_FIFTH`` … ``_FIFTEENTH`` for the later groups);
  everything else found counts against us (``NOBODY`` lists what was read and judged so;
  ``--show`` marks the rest "unread"). Fifteen
  groups: the six packages the issue names (the fixes of this stop were made by looking at them),
  a second group looked at once after the first fixes, a third measured before looking at it and
  then tuned on too, a fourth held out until its first figure and then fixed in general from its
  values, a fifth fixed before looking at any of its findings (its classes then fixed in general,
  a round later), a sixth fixed before looking (its classes fixed a round later), a seventh
  fixed before looking (its classes fixed two rounds later), an eighth fixed before looking and
  not tuned on, a ninth fixed before looking (its classes fixed in general in the same round,
  after its first figure was written down), a tenth measured before and after a round of
  fixes made on the others, before any of its files was read, and an eleventh, a twelfth, a
  thirteenth and a fourteenth measured before any of their files was read, and a fifteenth that
  is no installed package: the interpreter's standard library, its test suite and the npm
  client's tree, measured and its values judged before any fix made from them.
* ``faker``: EN/DE/FR documents whose names, companies, addresses and dates of birth come from
  the Faker package (MIT; its locale providers), carriers written here
  (``tests/tiers/faker_documents.py``); recall per family and language, stray findings, and
  Faker-built clean prose forwarded byte-identical.
* ``countries``: people of Faker's other locales in business carriers, found or not: the locales
  whose given names the gazetteer reads (coverage) and held-out ones (how far the lists carry).
* ``capitals``: the outside corpus's EN/DE/FR names in capitals throughout, both orders.
* ``secrets``: no registry package ships an outside sample set of secrets (checked: the
  detect-secrets wheel and sdist, trufflehog3, secretlint rule packages on npm carry rules or
  README prose, no sample lines); this part says so and, when ``detect-secrets`` is importable
  (``pip install detect-secrets`` into a bench venv, Apache-2.0), compares its verdicts with ours
  file by file on the ``repos`` trees: an outside scanner's judgement of the same real code.
"""

from __future__ import annotations

import argparse
import json
import shutil
import site
import sys
import sysconfig
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.tiers.faker_documents import clean_documents, faker_documents  # noqa: E402 -- after the sys.path line: run as a script from the checkout
from tiers import Classifier, Content, Segment, Tier, TiersConfig  # noqa: E402 -- after the sys.path line: run as a script from the checkout

GROUPS = {
    "named in the issue (tuned on)": ["sqlalchemy", "litestar", "pydantic", "aiohttp", "presidio_analyzer", "click"],
    "second look (tuned once)": [
        "jinja2",
        "rich",
        "alembic",
        "httpx",
        "redis",
        "requests",
        "mako",
        "markdown_it",
        "anyio",
        "uvicorn",
    ],
    "third look (measured first at d26dfb3, then tuned)": [
        "starlette",
        "openai",
        "anthropic",
        "pygments",
        "yaml",
        "schemathesis",
        "hypothesis",
        "msgspec",
        "opentelemetry",
    ],
    "held out (never looked at before this figure)": [
        "networkx",
        "huggingface_hub",
        "sentry_sdk",
        "pypdf",
        "fpdf",
        "dns",
        "jwt",
        "loguru",
        "lark",
        "fsspec",
        "cloudpathlib",
        "packaging",
    ],
    # Fixed on 2026-12-01 at 15:20 UTC, before any finding in these trees was looked at (only their
    # names and file counts were): installed packages no earlier group holds. Not tuned on.
    "fifth group (held out, fixed before looking)": [
        "werkzeug",
        "urllib3",
        "websockets",
        "fastapi",
        "jsonschema",
        "email_validator",
        "cryptography",
        "tqdm",
        "psutil",
        "mcp",
        "polyfactory",
        "tldextract",
    ],
    # Fixed on 2026-12-01 at 18:41 UTC at 931398c, before any finding in these trees was looked at
    # (only their names and file counts were): installed packages no earlier group holds, chosen
    # as code an agent sends (servers, clients, CLIs, parsers). Not tuned on.
    "sixth group (held out, fixed before looking)": [
        "supervisor",
        "asyncpg",
        "typer",
        "prometheus_client",
        "httpcore",
        "pathspec",
        "grpc",
        "filelock",
        "h11",
        "pydantic_settings",
        "smart_open",
        "graphql",
    ],
    # Fixed on 2026-12-01 at 19:23 UTC at 003a3e5, before any finding in these trees was looked at
    # (only their names and file counts were): installed packages no earlier group holds, chosen
    # as libraries an agent sends (data classes, config, parsers, caches, messaging, numerics).
    # Not tuned on.
    "seventh group (held out, fixed before looking)": [
        "attr",
        "dotenv",
        "jmespath",
        "yarl",
        "cachetools",
        "idna",
        "charset_normalizer",
        "pluggy",
        "aiosqlite",
        "dill",
        "zmq",
        "mpmath",
    ],
    # Fixed on 2026-12-02 at 01:01 UTC at 098c8d2, before any finding in these trees was looked at
    # (only their names and file counts were): installed packages no earlier group holds, chosen
    # as libraries an agent sends (ML layers, serialisation, wiki and C parsers, rate limiting, a
    # CLI, FFI, config, XML hardening, docstrings). Not tuned on.
    "eighth group (held out, fixed before looking)": [
        "thinc",
        "srsly",
        "mwparserfromhell",
        "pyrate_limiter",
        "rich_click",
        "cffi",
        "wasabi",
        "wrapt",
        "defusedxml",
        "docstring_parser",
        "confection",
        "pycparser",
    ],
    # Fixed on 2026-12-05 at 13:35 UTC at ff16594, before any finding in these trees was looked at
    # (only their names and file counts were): installed packages no earlier group holds, chosen
    # as code an agent sends (packaging, imaging, XML, project templates, a model client's
    # request types, JSON schema references, logging, server-sent events, a cloud CLI, terminal
    # prompts, country data, pydantic types, constrained decoding, file watching, password
    # hashing, streaming JSON). Its first figure was written down before its classes were fixed
    # in general (bench/RESULTS.md).
    "ninth group (held out, fixed before looking)": [
        "setuptools",
        "PIL",
        "lxml",
        "weasel",
        "mistral_common",
        "referencing",
        "pythonjsonlogger",
        "sse_starlette",
        "fastapi_cloud_cli",
        "rich_toolkit",
        "pycountry",
        "pydantic_extra_types",
        "lmformatenforcer",
        "watchfiles",
        "argon2",
        "ijson",
    ],
    # Chosen at 16:05 UTC on 2026-12-05 from the installed packages no earlier group holds, by
    # their names and file counts only (no data sets: faker's locales, phonenumbers' metadata,
    # stdnum's and sympy's tables left out): model compression, a bytecode decompiler, tensor
    # notation, fonts, coroutines, JSON schema metaschemas, an LLVM binding, a model-serving
    # container's standards, a compiler, a browser driver, setuptools' resources, spaCy's legacy
    # layers, a tokenizer binding, PyTorch's code generator, a grammar engine, a Python AST
    # writer. Its first figure was taken on this session's start (1746fb7) and on the fixes of
    # this session, before any of its files was read (bench/RESULTS.md).
    "tenth group (held out, measured before and after this round's fixes)": [
        "compressed_tensors",
        "depyf",
        "einops",
        "fontTools",
        "greenlet",
        "jsonschema_specifications",
        "llvmlite",
        "model_hosting_container_standards",
        "mypyc",
        "playwright",
        "pkg_resources",
        "spacy_legacy",
        "tokenizers",
        "torchgen",
        "xgrammar",
        "astor",
    ],
    # Chosen at 00:38 UTC on 2026-12-06 at de7b088 from the installed packages no earlier group
    # holds, by their names and file counts only (data sets, vendored model code and the type
    # checker's stubs left out): an installer and its vendored libraries, pickling, sorted
    # collections, shell detection, the OS trust store, regex intersection, partial JSON, multipart
    # forms, URL parsing, a tokenizer, tensor files, CBOR, GraphQL strategies, a CLI, metrics
    # middleware, registries, constrained decoding, an event loop. Its first figure is written
    # down before any of its files is read (bench/RESULTS.md).
    "eleventh group (held out, measured before looking)": [
        "pip",
        "cloudpickle",
        "sortedcontainers",
        "shellingham",
        "truststore",
        "interegular",
        "partial_json_parser",
        "python_multipart",
        "mdurl",
        "tiktoken",
        "safetensors",
        "cbor2",
        "hypothesis_graphql",
        "fastapi_cli",
        "prometheus_fastapi_instrumentator",
        "catalogue",
        "llguidance",
        "uvloop",
    ],
    # Chosen at 01:04 UTC on 2026-12-06 at 8a898b8 (after the eleventh group's fixes) from the
    # installed packages no earlier group holds, by their names and file counts only: numerics and
    # their tests, an NLP library, protocol buffers, functional transforms, an HTTP parser,
    # multi-dicts, cached properties, frozen lists, happy eyeballs, signals, annotated types, markup
    # escaping, INI parsing, async detection, and spaCy's numeric and memory helpers. Its first
    # figure is written down before any of its files is read (bench/RESULTS.md).
    "twelfth group (held out, measured before looking)": [
        "numpy",
        "spacy",
        "google",
        "functorch",
        "httptools",
        "multidict",
        "propcache",
        "frozenlist",
        "aiohappyeyeballs",
        "aiosignal",
        "annotated_types",
        "markupsafe",
        "iniconfig",
        "sniffio",
        "blis",
        "murmurhash",
        "preshed",
        "cymem",
    ],
    # Chosen at 01:21 UTC on 2026-12-06 at 79a31a4 (after the twelfth group's fixes) from the
    # installed packages no earlier group holds, by their names and file counts only: a type
    # checker with its bundled stubs, a JIT compiler, and an inference engine (the code this
    # project's own engine runs). Its first figure is written down before any of its files is read.
    "thirteenth group (held out, measured before looking)": [
        "mypy",
        "numba",
        "vllm",
    ],
    # Chosen at 14:13 UTC on 2026-12-06 at 01a8bc8 from the installed packages no earlier group
    # holds, by their names and file counts only: the three largest left (a model library full of
    # docstrings and examples, a tensor library, a computer algebra system). Its first figure is
    # written down before any of its files is read.
    "fourteenth group (held out, measured before looking)": [
        "transformers",
        "torch",
        "sympy",
    ],
    # Chosen at 12:25 UTC on 2026-12-07 at 1b58d9c: code that is not a PyPI package at all, so that
    # no earlier choice of packages shaped it: the interpreter's own standard library, its test
    # suite (full of made-up mailboxes, names and numbers), and the npm client's tree (JavaScript
    # and Markdown). Their first figures are written down before any of their files is read.
    "fifteenth group (held out, measured before looking)": [
        "python-stdlib",
        "python-stdlib-tests",
        "npm",
    ],
}
SUFFIXES = {
    ".py",
    ".pyi",
    ".txt",
    ".md",
    ".rst",
    ".html",
    ".js",
    ".css",
    ".yaml",
    ".yml",
    ".json",
    ".toml",
    ".cfg",
    ".ini",
    ".sql",
    ".j2",
    ".jinja",
    "",
}

# Values read and judged to identify a real person, mailbox or company (credits, copyright
# lines, maintainers); a file whose findings are all of these is Tier 2 by design.
IDENTIFYING = frozenset(
    """Gaetan de Menten|gdementen@gmail.com|Jason Kirtland|Vinay Sajip|vinay_sajip@yahoo.co.uk|Encode OSS Ltd|
    Adam Bartoš|Gregory P. Ward|Pieter Wuille|Deutsche Post AG|sqlite-users@sqlite.org|Sindre Sorhus|
    sindresorhus@gmail.com|Kenneth Reitz|me@kennethreitz.org|Armin Ronacher|Armin Ronacher's|Mathias Bynens|
    Taneli Hukkinen|Karen Petrosyan|Apple Inc.|Georg Brandl|Brandl, Matthäus|Wolfgang Frisch|Christopher Creutzig|
    christopher@creutzig.de|Thomas Beale|Object Management Group|blinks@acm.org|Adam Blinkinsop|djrmuv@gmail.com|
    Daniel J. Ramirez|kschutte@csail.mit.edu|Ken Schutte|james.kidd@covance.com|James Kidd|aamann@mac.com|
    Andreas Amann|Laurent Bercot's|Nils Winter|Stefan Matthias Aust|Matt Good|Douglas R. Hofstadter|Chris Bracco|
    Miikka Salminen|Sarah Drasner|Tobias Zoghaib|Chris Kempson|Jan T. Sott|Camil Staps|Clark Evans's|
    Konstantinos Sagonas|Celeste Hollenbeck|christian.bizouard@obspm.fr|Christian Bizouard|Robert Kern""".replace(
        "\n", ""
    )
    .replace("    ", "")
    .split("|")
)


def _judged(block: str) -> frozenset[str]:
    return frozenset(v for line in block.strip().splitlines() for v in line.strip().split("|"))


# The held-out group's names, companies and mailboxes, read one by one on 2026-12-01 (issue 12):
# authors in networkx's citations, contributors and maintainers in credits and licence headers,
# publishers and copyright holders (Nominum, Red Hat), and dnspython's doctest address
# 2001:4b98::1 (a real provider's allocation). A span cut across two real authors' names ("Gao,
# Richard" of "Yu Gao, Richard Peng") identifies: all it covers are real people's names. One with
# a word that is no name in it ("Vijay Approximation") does not, and is judged with NOBODY. The
# last line but one was read on 2026-12-02: found since the fourth round (capitalised particles, and
# "Briggs" cut from "Keith M. Briggs Mar 31, 2006"), real people all. The last line, on 2026-12-05:
# names a title's noun now ends ("Addison Wesley" of "… Professional", "Alan Turing" of "Alan
# Turing Centenary"): the publishers and the person judged before. "Luciano da Fontoura Costa" (and
# the twelfth group's "José de San Martín"), 2026-12-07: a surname after a particle read whole.
IDENTIFYING_HELD_OUT = _judged(
    """
    Abraham Berman|Abu-Aisheh, Romain|Academic Press Inc.|Addison Wesley Professional|Addison-Wesley
    Addison-Wesley Publishing|Adobe Systems Incorporated|Adrian Kosowski|Akiko Takeda|Akira Tanaka|Alan Frieze
    Alderson, John|Alex Levenson|Ali Faraji|Alois P. Heinz|Amin Saberi|Andrea Lancichinetti|Andrea Marino
    Andrej Mrvar|Andrew Murray|Anne & Blair|Anne-Marie Kermarrec|Anthony Perez|Antony Bonato|Anuska Ferligoj
    Aric Hagberg|Ashish Kulkarni|Backstrom, Jon|Ballesteros, Jordi|Bartolo Luque|Bayati, Jeong|Berry, Anne
    Berry, Anne & Blair|Bing-Hong|Blair, Jean|Boris Pittel|Bradonjić, Aric|Brandes, Marco|Brandes, Thomas
    Brin, Sergey|Bruno Sericola|Burkhardt, Vance|Burt, Ronald|CORESEC SYSTEMS AB|Carl D. Meyer|Carlo Sansone
    Carmi, Shlomo|Carsten Wiuf|Chandra Chekuri|Charalampos Tsourakakis|Charikar, Moses|Chen, Yang|Christian Pich
    Christopher Ellison|Christos Giatsidis|Chung-Graham|Clauset, Aaron|Clémence Magnien|Cooper, Keith
    Cordella, Pasquale|Coresec Systems AB|Cristopher Moore|D. Eppstein|Danial Sandler|Daniel Fleischer
    David Alderson|David Aldous|David Alexander|David Eppstein|David Eppstein's|David G. Harris|David Gleich
    David Krackhardt|David Rappaport|David W. Matula|Deo, Janusz|Derek Schwalenberg|Derényi, Illés
    Desmond J. Higham|Di Wang|Diederik van Liere|Dimitrios M. Thilikos|Dominguez-Garcia|Dominguez-Garcia, Luca
    Donald E. Knuth|Donald Stufft|Donetti, Miguel|Doreian, Vladimir|Dorothea Wagner|Dugué, Anthony
    Duncan J. Watts|Ed Rothberg|Edmund Landau|Edward M. Reingold|Ekkehard Köhler|Elidan, Stephen
    Elizabeth Scott's|Ellis-Monaghan|Endre Tarjan|Eran Shir|Erdős, Péter|Erez Shinan|Erik van Blokland
    Ernesto Estrada|Erwig, Martin|Estrada, Desmond|Estrada, Juan|Etsuji Tomita|Fan Chung|Fan Chung-Graham
    Fernando Ballesteros|Filippo Radicchi|Finn V. Jensen|Foggia, Carlo|Franco Saliola|Frank Harary|Frank Jensen
    Frederik Berlaen|Frieze, Paul|Fruchterman, Thomas|Funk, Russell|Gabow, Harold|Gaertler, Dorothea|Gal Elidan
    Gao, Min-Yen|Gao, Richard|Gergely Palla|Giatsidis, Dimitrios|Gilles Trédan|Grossi, Leonardo|Gutman, Juan
    Hadi Katebi|Hanjo Taubig|Hans J. Herrmann|Hans L. Bodlaender|Harary, Frank, and Norman|Harvey, Timothy
    Havlin, Scott|Heggernes, Pinar|Hicks, Illya|Hébert-Dufresne|Igor L. Markov|Imre Derényi|Ivan Gutman
    Jack Edmonds|James Andrew Storer|James P. Crutchfield|Janusz S. Kowalik|Jason Owen-Smith|Jens M. Schmidt
    Jeong Han Kim|Jian-Guo Liu|Jim Fill's|Jin Y. Yen|Joel C. Miller|Joel Friedman|Joel Miller|John C. Doyle
    John E. Hopcroft|John Hopcroft|John Whitington|Jon Kleinberg|Jon Olav Vik|Jonathan D. Zwi|Joop Leo
    Jordi Luque|Jordi Torrents|Jorge Carlos Valverde-Rebaza|Josiah Carlson's|José Antonio de la Peñaa
    José Padilla|Juan Carlos Nuno|Juan Rada|Julian J. McAuley|Julius Petersen|Karen Stephenson
    Karsten M. Borgwardt|Katebi, Karem|Keith M. Briggs|Kennedy, Ken|Kermarrec, Erwan|Khuller, Samir|Kim Sneppen
    Kirkpatrick, Yuval|Knuth, Donald|Konstantin Batygin|Konstantinos Christopoulos|Konstantinos Tsichlas
    Krackhardt, David|Krzysztof Manuszewski|Kurt Mehlhorn|Kwang-Il Goh|Lancichinetti, Santo|Langville, Amy
    Lars Backstrom|Lei Wang|Leland L. Beck|Lengauer, Thomas|Leo Katz|Leonardo Lanzi|Li, David|Lilla Vicsek
    Lin, Shen|Lind, Marta|Linotype-Hell AG|Linton C. Freeman|Liu, Bing-Hong|Lovro Šubelj|Luc Devroye
    Luca Donetti|Lucas Cimon|Luciano da Fontoura|Luciano da Fontoura Costa|Luigi P. Cordella|Lun Li|Luque, Fernando|Maciej Liśkiewicz
    Maciej M. Syslo|Maciej M. Sysło|Madarasi, Péter|Mahendra Piraveenan|Manuel R. Torres|Marco Gaertler
    Marcus Kaiser|Mariano Reingart|Mario Vento|Mark E. J. Newman|Mark Newman|Mark Newman's|Marta C. González
    Marvin Zelen|Massimo Marchiori|Mathieu Fenniak|Matjaz Zaversnik|Matthew Suderman|Matthieu Latapy
    Maurice G. Kendall|Maxime Petazzoni|McAuley, Luciano|Mehlhorn, Kurt|Merrer, Bruno|Michalis Vazirgiannis
    Michel Habib|Mikhail Prokopenko|Milan Bradonjić|Min-Yen Kan|Ming Gao|Morgan Kaufmann Publishers Inc
    Morgan Kaufmann Publishers Inc.|Nandini, Réka|Naoki Marumo|Nathalie Del Vecchio|Nicolas Dugué|Nominum, Inc.
    Norman, Robert|Núñez-Rodríguez|Olivier PLATHEY|Owen-Smith|Palla, Imre|Pascal Schweitzer|Pasquale Foggia
    Patrick Doreian|Paul Burkhardt|Paul Erdös|Paul Horn|Paul Marks|Paweł Prałat|Pedro G. Lind|Penrose, Mathew
    Percy John Heawood|Peter Jipsen|Peterson, Nicholas|Petr Spacek|Peyton, Barry|Peñaa, Ivan
    Philippa E. Pattison|Phillip Bonacich|Piraveenan, Mikhail|Puzis, Yuval|Raghavan, Usha|Ramel, Patrick
    Rami Puzis|Red Hat, Inc.|Richard M. Karp|Richard Manning Karp|Richard Peng|Robert Endre|Robert J. Plemmons
    Robert Kern|Roberto Grossi|Robin J. Wilson|Rodriguez-Velazquez|Rodríguez-Velázquez|Romain Raveaux
    Ronald C. Read|Ronald L. Breiger|Rubey, Martin|Russel Merris|Réka Albert|Sage Publications|Salil Vadhan
    Samuel Johnson|Sander, Torsten|Sansone, Mario|Santo Fortunato|Sarah Jessica Parker|Sawlani, Charalampos
    Schwalenberg1013@gmail.com|Schweitzer, Erik|Scott Kirkpatrick|Sebastiano Vigna|Sericola, Gilles
    Shachter, Ross|Shai Carmi|Shlomi Dolev|Shlomo Havlin|Singer-Cohen|Springer-Verlag New York, Inc.
    Stephen Gould|Stephen Levine|Steve Butler|Steve Witham|Steven Chaplick|Steven H. Strogatz|Steven S. Skiena
    Sucheta Soundarajan|Szwarcfiter, Jayme|Takao Nishizeki|Tamás Vicsek|Tantau, Till|Tao Zhou|Tarjan, Robert
    Thilikos, Michalis|Thomas Erlebach|Thomson Licensing, SAS|Tibério S. Caetano|Tom Christie's|Tomita, Akira
    Tomita, Tanaka and Takahashi|Tore Opsahl's|Tsourakakis, Di|Typeface Corporation|Ulrik Brandes|Unicode, Inc.
    Usha Nandini|Vadhan, Salil|Vance Faber|Vazirani, Vijay|Vito Latora|Vladimir Batagelj|Vladimir Kolmogorov
    Walter Willinger|Warren, Jeffrey|Weisstein, Eric|White, Douglas|Wilf, Herbert|Yang Liu|Yu Gao|Yun Zhang
    Yuval Elovici|Yuval Shavitt|Zachary, Wayne|Zander, Benito, and Maciej|Zeina Abu-Aisheh|Zhou, Jian-Guo
    Zvi Galil|alex@isnotinvain.com|biziqe@mathieu.fenniak.net|daveankin@gmail.com
    diederik.vanliere@rotman.utoronto.ca|donald@stufft.io|erezshin@gmail.com|erwan.lemerrer@technicolor.com
    hello@jpadilla.com|kulkarni.ashish@gmail.com|maxime.petazzoni@bulix.org|maxpat78@yahoo.it|oss@ofek.dev
    pspacek@redhat.com|reingart@gmail.com|switham_github@mac-guyver.com|2001:4b98::1
    Jean-Loup Guillaume|Jean-Yves Ramel|Raveaux, Jean-Yves
    Guido Von Rossum|Erwan Le Merrer|Briggs
    Addison Wesley|Alan Turing|Morgan Kaufmann
    Arie M. C. A. Koster|Juan A. Rodriguez-Velazquez|Vincent A. Traag|Karem A. Sakallah
    """
)
# The fifth group's names, companies and mailboxes, read one by one on 2026-12-01 (issue 12):
# licence holders and authors (psutil's, urllib3's, the werkzeug debugger icons', polyfactory's
# regex generator's, with its copyright holder, also cut as "RESPONSE, LLC") and swagger's team
# mailbox in a copied API document. The public-suffix snapshot's registry contacts
# (tldextract) are real organisations' but were not read each: not listed, they count against us.
IDENTIFYING_FIFTH = _judged(
    """
    Mark James|mjames@gmail.com|Andrey Petrov|andrey.petrov@shazow.net|apiteam@swagger.io|Giampaolo Rodola
    Arnon Yaari|Leapfrog Direct Response, LLC|RESPONSE, LLC|Colm O'Connor
    Daniel A. Maierhofer
    Larry W Arnold
    """
)
# The sixth group's, read one by one on 2026-12-01 after its first figure was written down
# (18:52 UTC): authors and maintainers in licence headers and credits (medusa's, supervisor's,
# smart_open's, prometheus_client's decorator, pathspec's contributor list), an attribution in a
# comment (Ryan Tomayko), and a real musician's name used as test data (Jeff Buckley).
IDENTIFYING_SIXTH = _judged(
    """
    Eric Parker|eparker@zyvex.com|Daniel Krech's|Sam Rushing|rushing@nightmare.com|Mike Meyer
    mwm@contessa.phone.net|Craig Silverstein|csilvers@google.com|Fredrik Lundh|fredrik@pythonware.com
    Michele Simionato|Radim Rehurek|me@radimrehurek.com|radim@rare-technologies.com|Nicolas Mitchell
    ncls.mitchell@gmail.com|Ryan Tomayko|Jeff Buckley
    Adam Dangoor|Adrien Vergé|Anders Blomdell|Anıl Karagenç|Bartłomiej Żak|Ben Felder|Brandon High
    Caleb P. Burns|Charles Samborski|Dan Cecile|David Fraser|Dmytro Kostochko|George Hickman|Greg Roodt
    Henry Schreiner|Hong Minhee|Hugo van Kemenade|Jakub Kuczys|Johan Vergeer|John Vandenberg|Jon Dufresne
    Jon Hays|Kadir Can Ozden|Kurt McKee|Marcel Telka|Michael Huynh|Michał Górny|Nicholas Hollander
    Nick Humrich|Oleh Prypin|Ravi Selker|Roel Adriaans|Sebastiaan Zeeff|Sebastien Eskenazi|Tomasz Kłoczko
    Tomoki Nakamaru|Vincent Driessen|Wim Jeantine-Glenn|Wim-Peter Dirks|Xavier Thomas|Yannic Schröder
    Jan-Hein Bührman
    """
)
# The seventh group's, read one by one on 2026-12-01 after its first figure was written down
# (19:27 UTC): dill's, charset_normalizer's and mpmath's authors, contributors, a bug reporter
# and their mailboxes, the authors in mpmath's citations (also cut as "Abate & Valko",
# "Ainsworth, Howell", "Borwein, Bailey", the book "Whittaker & Watson") and a historical
# mathematician named as the first to solve a problem (Zhu Shijie).
IDENTIFYING_SEVENTH = _judged(
    """
    arias@us.es|avegesan@cs.stanford.edu|marius@pov.lt|mmckerns@caltech.edu|ping@lfw.org|robeypointer@gmail.com
    stefano@rivera.za.net|Abate & Valko|Crandall & Pomerance|Ruiz-Mata|Whittaker & Watson|Ahmed TAHRI
    Ainsworth, Howell|Anirudh Vegesana|Armin Ronacher|Borwein, Bailey|Carl-Erik Froberg|David Bailey
    Guillermo Navas-Palencia|Jonathan Dobson|Juan Arias de Reyna|Ka-Ping Yee|Kirill Makhonin|Kristopher L. Kuhlman
    Leonardo Gama|Marius Gedminas|Michael Aivazis|Michael Hartmann|Michael McKerns|Mike McKerns|Oren Tirosh
    Pascal Sebah|Paul Kienzle|Peter Borwein|Richard Crandall|Richard P. Brent|Stefano Rivera|Timo Hartmann
    Tom Stepleton|Vaughan R. Pratt's|Wolfgang Buhring|Xavier Gourdon|Zhu Shijie
    """
)
# The eighth group's, read one by one on 2026-12-02 after its first figure was written down
# (01:54 UTC): authors and maintainers in licence headers and module docstrings
# (mwparserfromhell's, defusedxml's, pycparser's, msgpack-numpy's, rich-click's, cffi-buildtool's),
# credits and bug reporters in ruamel.yaml's sources and tests (vendored by srsly; a user's
# handle too: Quuxplusone), and real baseball players as the YAML specification's sample data
# (Mark McGwire, Sammy Sosa, Ken Griffey).
IDENTIFYING_EIGHTH = _judged(
    """
    Ben Kurtovic|ben.kurtovic@gmail.com|Christian Heimes|christian@python.org|Eli Bendersky|Yuri Astrakhan
    YuriAstrakhan@gmail.com|Anthon van der Neut|Lev E. Givon|Benjamin Peterson|Tommy Wang|Bjorn Stabell
    Devid Fee|Shalon Wood|Andrzej Ostrowski|Frazer McLean|Alex Harvey|Colm O'Connor|Peter Amstutz
    Quuxplusone|jan.brezina@tul.cz|Stuart Berg|Gianluca Gippetto|Rose Davidson|Cyril Jouve|Ken Griffey
    Mark McGwire|Mark McGwire's|Sammy Sosa
    """
)
# The ninth group's, read one by one on 2026-12-05 after its first figure was written down
# (13:36 UTC): authors, maintainers and contributors in licence headers, module docstrings and
# package metadata (PIL's, setuptools' vendored packages', distutils', lxml's, ijson's, argon2's),
# their mailboxes, fragments of their names where a list was cut ("Cazabon, Dmitry", "Lars
# Gust"), the companies holding the copyrights (Secret Labs AB, CNRI's and BeOpen's addresses in
# Python's licence, Zope Corporation, the FSF, Apple, Textualize, Coriolis Systems), people named
# in docstrings (Donald Knuth, Larry Wall, Richard Stallman, Eric S. Raymond, Snorri Sturluson as
# test data), Google's switchboard number as a phone example (a company's real number), and
# pycountry's contributors (its COPYRIGHT file). Read again on 2026-12-07: fastapi_cloud_cli's
# Sentry DSN, typed a mailbox before (and judged with NOBODY so), is a SECRET now: a project's
# live client key, which secret scanners report and the issue lists Sentry's among the formats.
IDENTIFYING_NINTH = _judged(
    """
    Alan Stewart|Alastair Houghton|Alex Grönholm|Bastian Kleineidam|Bernhard Herzog|Bernát Gábor|Bob Ippolito
    Brett Cannon|Brian Crowell|Bryan Davis|Cazabon, Dmitry|Conrado Porto Lopes Gouvua|Craig Swank|Daniel Holth
    David Ascher|Dmitry Vasiliev|Donald Knuth's|Douglas Voorhies|Dov Grobgeld|Eric Etheridge|Eric S. Raymond
    Eric Soroos|Erik Rose|Federico Di Gregorio|Federico Mena Quintero|Florian Hoech|Fred L. Drake|George Sakkis
    Graham Dumpleton|Greg Coats|Greg Couch|Greg Stein|Guido van Rossum|Gustavo Niemeyer|Hans Häggström
    Hynek Schlawack|Ian Bicking|Jack Jansen|Jason R. Coombs|Jean-Claude Rimbault|Jeff Rouse|Jerome Leclanche
    Jukka Lehtosalo|Julian Berman|Justin Huff|Karsten Hiddemann|Kevin Cazabon|Kevin Cazabon's|Kim-Hung Li
    Langa, Michael|Larry Wall|Lars Gust|Lars Gustaebel|Lehtosalo, Łukasz|Lowell Alleman|Marti Maria|Michael Lee
    Michal Horejsek|Mickael Bonfill|Nathan West|Niels Gust|Niemeyer, Niels|Niki Spahiev|Pan Jing|Paul Dyson
    Paul Haeberli|Perry Stoll|Raymond Hettinger|Richard Jones|Richard Stallman|Richard Townsend|Rick Jelliffe
    Robin Becker|Rodrigo Tobar|Ronny Pfannschmidt|Rossum, Jukka|Russell Nelson|Snorri Sturluson|Steve Dower
    Thomas Boutell|Thomas Heller|Trent Mick|William Baxter|Łukasz Langa|Kim-Hung
    Julian@GrayVines.com|alex.gronholm@nextday.fi|aurelien.ballier@cyclonit.com|brett@python.org
    calvin@cs.uni-sb.de|casadebender@gmail.com|da@ski.org|dholth@fastmail.fm|dov.grobgeld@gmail.com
    erikrose@grinchcentral.com|fdrake@acm.org|gaborjbernat@gmail.com|gcash@magicnet.net
    gcoats@labiris.er.usgs.gov|gregc@cgl.ucsf.edu|hi@pradyunsg.me|hukkin@users.noreply.github.com
    jaraco@jaraco.com|jerome@leclan.ch|kcazabon@home.com|kevin@cazabon.com|lars@gustaebel.de
    levkivskyi@gmail.com|opensource@ronnypfannschmidt.de|pwdyson@yahoo.com|rtobar@icrar.org
    Apple Computer, Inc.|Coriolis Systems Limited|Free Software Foundation, Inc.|SECRET LABS AB|Secret Labs AB
    Textualize Inc.|Zope Corporation|160 Saratoga Avenue, Santa Clara, CA 95051|1895 Preston White Drive
    +1 650-253-0000|+1-650-253-0000|+16502530000|1 650-253-0000|1-650-253-0000|16502530000|650-253-0000
    Alan Orth|Ashok Argent-Katwala|Bastien Vallet|Christian Theune|Christian Zagrodnick|Christoph Zwerschke
    Jakub Wilk|Janis Kirsteins|Justin Ryan Wagner|Kevin Deldycke|Louis Sautier|Lucas Wiman|Mario Vilas
    Michael Howitz|Michał Bielawski|Mike Taves|Nate Schimmoller|Pedro Ferreira|Stuart Prescott|Victor Mireyev
    Zachary Ware
    https://230250605ea4b58a0b69c768e9ec1168@o4506985151856640.ingest.us.sentry.io/4508449198899200
    Gust\\u00e4bel, Richard|Lars Gust\\u00e4bel|Niels Gust\\u00e4bel
    Chris R Bunney
    """
)
# The tenth group's, read one by one on 2026-12-05 after its first figure was written down (16:10
# UTC, the same at this session's start and after its fixes): authors and maintainers in module
# headers and credits (einops', astor's, fontTools', greenlet's, tokenizers', compressed-tensors'),
# the people, companies and addresses of the third-party notices in playwright's driver LICENSE
# (Node.js's, curl's, zlib's, the FSF's old street address; company names also cut as
# "Foundation, Inc.", "Microsystems Inc.", "Trademark Joyent, Inc."), the authors named in
# playwright's bundled JavaScript and xdg-open, and playwright's team mailbox.
IDENTIFYING_TENTH = _judged(
    """
    59 Temple Place|c-tsai4@uiuc.edu|fabo@freedesktop.org|info@bnoordhuis.nl|jeanphilippe.aumasson@gmail.com
    jloup@gzip.org|just@letterror.com|jwhite@codeweavers.com|kevin.krammer@gmx.at|madler@alumni.caltech.edu
    playwright@microsoft.com|rdieter@fedoraproject.org|roberto.lopez.castro@udc.es|tj@vision-media.ca
    Business Machines Corporation|Cambridge and Google, Inc.|Foundation, Inc.|Intel Corporation
    Internet Systems Consortium, Inc.|Joyent, Inc.|Meta Platforms, Inc.|Microsystems Inc.|Postman, Inc|Supply LLC
    Trademark Joyent, Inc.|Alex Rogozhnikov|Ben Noordhuis|Benjamin Sharon|Brian Eugene Wilson|Brian Hammond
    Colin Ihrig|Dan Nicholson|Daniel Lemire|Daniel Stenberg|Douglas Christopher Wilson|Fathi Boudra|Fedor Indutny
    Gil Tene|Isaac Z. Schlueter|Jason Madden|Jean-Philippe Aumasson|Jed Watson|Jeremy White|Just van Rossum
    Kevin Krammer|Lennart Regebro|Marco Ippolito|Mark Adler|Mathias Pettersson|Matt Fontaine|Matt Warren
    Matteo Collina|Michael Barker|Niels Lohmann|Niels Provos|Patrick Maupin|Paul Miller|Rex Dieter|Rico Sennrich
    Robert Martin Campbell|Roberto Lopez Castro|Ross Cottrell|Scott James Remnant|Stuart Langridge|Tal Leming
    Tatsuhiro Tsujikawa|Tene, Michael|Wilson, Robert|Yagiz Nizipli
    """
)
# The eleventh group's, read one by one on 2026-12-06 after its first figure was written down
# (00:45 UTC): the authors and maintainers named in pip's vendored libraries' headers, credits and
# metadata (chardet's, cachecontrol's, colorama's, tenacity's, pyparsing's, webencodings',
# distlib's, distro's, six's, urllib3's, requests', packaging's, tomli's, pygments') and in
# sortedcontainers' and python-multipart's; the copyright holders of chardet's LGPL headers
# (Netscape, the FSF and its street address, Proofpoint) and of a licence notice (Joyent). "Brandl,
# Matthäus" is cut across two real authors ("Georg Brandl, Matthäus G. Chajdas").
IDENTIFYING_ELEVENTH = _judged(
    """
    51 Franklin St, Fifth Floor|51 Franklin St,  Fifth Floor|Foundation, Inc.|Foundation,  Inc.|Joyent, Inc.
    Netscape Communications Corporation|Proofpoint, Inc.|andrey.petrov@shazow.net|benjamin@python.org
    dan.blanchard@gmail.com|donald@stufft.io|eric@ionrock.org|me@kennethreitz.org|ptmcg.gm+pyparsing@gmail.com
    rob@lumino.so|sindresorhus@gmail.com|will@wbond.net|Andrew Dunham|Andrey Petrov|Benjamin Peterson
    Brandl, Matthäus|Christian Heimes|Dan Blanchard|Donald Stufft|Eric Larson|Georg Brandl|Grant Jenks
    Harald Nordgren|Ian Cordasco|Jason R. Coombs|Jason Zavaglia|Jonathan Hartley|Joshua Harlow|Julien Danjou
    Kenneth Reitz|Mark Pilgrim|Nir Cohen|Paul McGuire|Paul T. McGuire|Ray Holder|Rob Speer|Shy Shalom
    Simon Sapin|Sindre Sorhus|Taneli Hukkinen|Vinay Sajip|Wolfgang Frisch|Étienne Bersac
    """
)
# The twelfth group's, read on 2026-12-06 after its first figure was written down (01:06 UTC):
# numpy's and protobuf's authors and contributors in headers and comments, the publishers and
# vendors numpy cites (Prentice-Hall, Wiley, Academic Press, Cray, Absoft, the Portland Group),
# spaCy's maintainers, the authors of the corpora spaCy credits, and the public figures of spaCy's
# per-language example sentences and knowledge-base tests (politicians, writers, footballers:
# real people, so identifying). Cuts of a real name or a publisher's count with it ("José de San"
# of José de San Martín, "Alberta Press", "Reinhold Co.", "Lawrence Livermore", "Trung Tran" of
# pyvi's author Viet-Trung Tran, found in western order since 2026-12-06).
IDENTIFYING_TWELFTH = _judged(
    """
    Absoft Corp|Absoft Corporation|Academic Press, Inc.|Ahmet Necdet Sezer|Ahmet Sezer|Ahmet Vefik Paşa
    Akhtar Chaudhry|Akin Alabi|Alan Turing|Albert Strasheim|Alberta Press|Alex Rogozhnikov|Andrej Kiska
    Anna Birulés|Anne Archibald|Antonio Gaudí|Antti Korhonen|Aníbal Machado|Ardevop, s.r.o.
    Arsene Wenger|Asuncion Moreno|Barack Obama|Barry Siddall|Barry Warsaw|Bente Maegaard|Bernie Sanders
    Cemal Sureya|Chris Pearce|Cooley, James|Coombs, Barry|Cray Research, Inc.|Dalia Grybauskaitė
    David Bowie|David M. Cooke|Dennis Shao|Diego Perini|Digicon Inc|Donald Stufft|Emilio Sánchez Pérez
    Enthought, Inc.|Ernest Shackleton'ın|Facebook, Inc.|Filip Klubička|Finn Eilertsen|Firat Ceweri
    Flannery, S.A.|Galilei, Galileo|Gazi Mustafa Kemal|Gerard-Marchant|Heikki Holmås|Helene Mazo
    Hertz, Gustav|Hertz, Heinrich|Holger Krekel|Ieva Augutytė-Kvedaravičienė|Ismail-Abdul Rahman
    Ivan Vasilievich|Ivo-Pavao Jazbec|Jacob Jensen|Jarrod Millman|Jason R. Coombs|Jens Dahl Møllerhøj
    Jie Luo|Jim Hugunin|Jim Kaiser|Joe Biden|Joe Pasquale|Johan Tibell|John Hunter|John W. Tukey
    John Wiley|John Wiley and Sons|Joseph Mariani|José Mujica|José de San|José de San Martín|Julius von Hann
    Kathleen Battle|Keith Goodman|Kenton Varda|Kevin Rabsatt|Kevin S. Dias|Kevin Sheppard|Khalid Choukri
    Kim Walisch|Kofi Annan|Konrad Hinsen|Lawrence Livermore|Marcus Antonius|Margaret Thatcher
    Mariano Rajoy|Mark Neumann|Marko Grobelnik|Matt Toia|Matthew Honnibal|Miguel de Cervantes
    Milan Kučan|Nelson Mandela|Nicoletta Calzolari|Nikola Ljubešić|Paul Dubois|Paul F. Dubois
    Pearu Peterson|Perry Greenfield|Petar Petrov|Pfannschmidt, Holger|Pierre Gerard-Marchant
    Portland Group|Prentice-Hall|Reggie Dugard|Reinhold Co|Robert Kern|Ronny Pfannschmidt|Roque Ferriols
    Rotan Mosle Inc|Rotan Mosle Technology Partners Ltd|Russ Cochran|Ryan Juckett's|Sara Goggi
    Sauli Niinistö|Serhiy Zhadan|Stelios Piperidis|Stephen Hawking|Steve Jobs|Stewart Lee
    Theophile Vandermonde|Thierry Declerck|Todd Miller|Tove Jansson|Trung Tran|Viet-Trung Tran|Weisstein, Eric
    William Kahan|contact@explosion.ai|cookedm@physics.mcmaster.ca|hinsen@cnrs-orleans.fr
    hinsenk@ere.umontreal.ca|jieluo@google.com|kenton@google.com|kernr@mail.ncifcrf.gov
    kevin.k.sheppard@gmail.com|kevin.sheppard@economics.ox.ac.uk|kim.walisch@gmail.com
    libdivide@ridiculousfish.com|matt@explosion.ai|matthewtoia@google.com|pearu@cens.ioc.ee
    petar@google.com|rabsatt@google.com|robinson@google.com|shaod@google.com|tibell@google.com
    Željko Agić
    Niall Ó Domhnaill|Antti L Korhonen
    """
)
# The thirteenth group's, read on 2026-12-06 after its first figure was written down (01:23 UTC):
# the authors of the papers and algorithms vLLM's and numba's kernels cite (Tri Dao, Albert Gu,
# Sebastiano Vigna, Cooper, Harvey and Kennedy), contributors named in comments and headers, the
# companies of licence headers (AMD, Intel, NVIDIA, Meta, Red Hat, ByteDance, Xiaomi), a dataset's
# owner on the Hugging Face hub ("Lin-Chen"), and Google's public DNS address. "Yang, Yu" is cut
# across two real authors. "Anmol Gulati" (the Conformer paper's first author, cited in
# cohere_asr.py) is found since the given names of more countries were added (2026-12-06).
IDENTIFYING_THIRTEENTH = _judged(
    """
    2001:4860:4860::8888|Advanced Micro Devices, Inc.|Albert Gu|Anmol Gulati|Bill Arms|Burkhard Ringlein
    Bytedance Ltd.|Cambridge Greys Ltd|Christian Heimes|Cooper, Timothy|Dao, Albert|David Blackman
    Denis Pushkarev|Eddy Petrișor|Fredrik Lundh|Intel Corporation|Jacob Platin|Janne Sinkkonen
    Jean-Philippe Aumasson|Jukka Lehtosalo|Keith D. Cooper|Ken Kennedy|Kennedy & Gentle|Lin-Chen
    Magnus Kessler|Marc-Andre Lemburg|Marek Majkowski|Martijn Pieters|Meta Inc.|Meta Platforms, Inc.
    NVIDIA Corporation|Red Hat Inc|Roberto L. Castro|Roberto.LopezCastro@ist.ac.at|Samuel Neves
    Sebastiano Vigna|Thomas Parnell|Timothy J. Harvey|Tomas Ruiz|Tri Dao|Xiaomi Corporation|Yang, Yu
    Yu Zhang|chih.chieh.yang@ibm.com|fredrik@pythonware.com|jacobplatin@microsoft.com|jvl@zurich.ibm.com
    mal@lemburg.com|marek@popcount.org|ngl@zurich.ibm.com|tpa@zurich.ibm.com
    """
)
# The fourteenth group's, read on 2026-12-06 after its first figure was written down (14:15 UTC):
# the authors of the papers transformers' models and sympy's algorithms cite ("Guo, Ted", "Kim,
# Amir", "Gruntz, Wolfram" are cut across two real authors), mathematicians of the past, public
# figures in generation examples (Bob Marley, Brad Pitt, George Clooney), contributors in headers
# and their mailboxes, the companies of licence headers and the publishers of cited books, and a
# Hugging Face token written into a docstring (a credential's shape: stripping it is right).
# "Hoang Le" (an author of the paper sympy's ECM cites) is found since Vietnamese family names
# count (2026-12-06).
IDENTIFYING_FOURTEENTH = _judged(
    """
    Hoang Le
    Aidan N. Gomez|Ashish Vaswani|Gomez, Lukasz|Jakob Uszkoreit|Alexander Kirillov|Guo, Ted|Ted Zadouri
    Adam Polyak|Ashual, Shelly|Devi Parikh|Gafni, Adam|Hartwig, Masahito|Liu Ziyin|Masahito Ueda|Tilman Hartwig
    Orr Zohar|Alves, Hippolyte|Boizard, Duarte|Duarte M. Alves|Hippolyte Gisserot-Boukhlef|Jim Henson|Deng-Ping Fan
    Ding Liang|Li, Deng-Ping|Liang, Tong|Kelly B. Roach|Carl Pomerance|Amir Gholami|Arman Cohan|Beltagy, Matthew
    Matthew E. Peters|Paul-Edouard Sarlin|Alexandre-Theophile Vandermonde|Kahn, Arthur|Matthew Rocklin|George Havas
    Jane M. Watson|John J. Cannon|Peter Luschny|Thieu Vo|David Grangier|Kim, Amir|Kurt Keutzer|Mahoney, Kurt
    Peters, Arman|Lindenberger, Paul-Edouard|Marc Pollefeys|Philipp Lindenberger|Hao Tan|Tomasz Malisiewicz
    Glenn Maynard|Guo, Tri|Ben Graham|Frank Ruskey|J. M. Martin-Garcia|Michael Karr|Baillie, Samuel|Andrew Granville
    Thomas Koshy|Abramowitz, Milton|Stegun, Irene|Graham Jewett|Jeffrey Allen Tupper|George C. Nakos|Peter R. Turner
    Robert M. Williams|Adam W. Strzebonski|Akritas, Adam|Alkiviadis G. Akritas|John P. Robertson|John Starrett
    George E. Simmons|Bob Marley|Donald John Trump Sr|Aliaksei Severyn|Christopher Potts|Ainslie, Ilya
    Eckstein, Santiago|Ilya Eckstein|Alexei Baevski|Kyra Yee|Michael Auli|Aleksandra Piktus|Ethan Perez|Lewis, Ethan
    Patrick Lewis|Sarlin, Daniel|Andrew Rabinovich|Brad Pitt|George Clooney|Jing Xiao|Ning Cheng|Wang, Ning|Zhen Zheng
    Ross Wightman|Alexei Nikolaevich|Aman Rusia|Grigori Rasputin|Andreas Stathopoulos|Andrew V. Knyazev|Chao Yang
    Halko, Per-Gunnar|Joel Tropp|Nathan Halko|Per-Gunnar Martinsson|Thakkar, Tri|Vijay Thakkar|Frank Nielsen
    Richard Nock|Daniel Lewandowski|Dorota Kurowicka|Harry Joe|Kurowicka, Harry|Armand Joulin|Edouard Grave
    Grave, Armand|Ross Girshick|Mitchell Stern|Noam Shazeer|Andrew Gordon Wilson|Dmitry Vetrov|Garipov, Dmitry
    Izmailov, Dmitrii|Ross Girshick's|Melissa E. O'Neill|Mark Dickinson|Bengt Fornberg|Peter Dobcsanyi|Conway, Heiko
    Heiko Dietrich|John H. Conway|Otto Holder|Robert Tarjan|Celler, Charles|Frank Celler|John S. Rose|Reeves, Colin
    Wendy Myrvold|Heinz Prufer|Kasper Peeters|Doron Zeilberger|Herbert S. Wilf|Marko Petkovsek|Christian Krattenthaler
    Asmar, Loukas|Loukas Grafakos|Gruntz, Dominik|Blaise de Vigenere|Felix Delastelle|Giovan Batista Belaso
    Helen Gaines|Fateman, Richard|Robert Baillie|Samuel S. Wagstaff|Peter Paule|Theodore Motzkin|Gottlieb, Christian
    John W. Wrench Jr|Vicki Alley|Manuel Bronstein's|Chin, Eric|Jean B. Lasserre|Manuel Bronstein|Werner Rosenheinrich
    John Hooker|John Cleese|Jeroen Van Grondelle|Deanna Richelle Leggett's|Sheng-Hua Shiou|Gilbert Strang|Baier, Paul
    Kohlbrenner, Hoang|Tim Peters|Yann Laigle-Chapuy|Jakub Jancina|Pomerance, Richard|Joseph Kahane|Ambrosio, Hamid
    Flores, Jorge|Hamid M. Lankarani|Jorge Ambrosio|Andy Ruina|Papadopoulos, Andy|Atkins, Peter|Friedman, Ronald
    David Mermin|Brian Granger|Matt Curry|Gerardo Lazo Arjona|Jens Rasch|Liberato de Brito|Henrique de Figueiredo
    Jakob Bernoulli's|Joris van der Hoeven|Bradford, Russell|James H. Davenport|Ivan Niven|Becker, Volker
    Mario Pernici's|Thomas Becker|Volker Weispfenning|Murray R. Bremner|Cox, John|Mignotte, Maurice|Jason Gedge
    Jurjen Bos|Carl M. Bender|Comtet, Louis|Dominik Gruntz|Gruntz, Wolfram|Wolfram Koepf|Manuel Kauers|Kelly Roach's
    Matthew Rocklin's|Nigel P. Smart|Todd G. Will|Sean Vig|Joel Moses|Chris Smith|Franz Winkler|Georg Grasegger
    Vo, Franz|Viktor Grigoryan|Gianni, Teo|Patrizia Gianni|Teo Mora|David Galvin|Thomas S. Ferguson|Robert Brown
    Peter Norvig|Stuart Russel|Brent Yorgey|Canfield, Paul|Donald Knuth|Erdos, Carl|Barry O'Sullivan|Carla Savage
    Jerome Kelleher|Joan Z. Yu|Michael Wester's|Richard C. Allen|Christoph M. Hoffmann|Erik Hillgarter
    Cohere Inc.|THL A29 Limited|Facebook Inc.|Baidu, Inc.|NAVER Corp.|ASAPP Inc.|McGraw-Hill|Facebook, Inc
    NAVER CLOUD Corp.|Bytedance-Seed Ltd|Amazon.com, Inc.|ABEJA, Inc.|AI21 Labs Ltd.|NXAI GmbH|NAVER Corp
    Hugging Face Inc.|AI Language Team and Facebook, Inc.|Nguyen & Salazar|Zhang & Skolnick|Martin-Garcia
    Crandall & Carl|Staats & Rabe|Lee-Thorp|Horace, Natalia, and Elias|Cruise LLC|Edelman, Arias and Smith
    AK Peters, Ltd.|John Wiley and Sons, Ltd|Toca & Vega|Bender & Steven|Moreno-Diaz|Sanchez, Allen and Kyner
    hf_94wBhPGp6KrrTH3KDchhKpRxZwd6dmHWLL|cgpotts@stanford.edu|ewan@inf.ed.ac.uk|jh38+@andrew.cmu.edu|jyr2000@gmail.com
    Niki Parmar|Parmar, Jakob|Shazeer, Niki|Vaswani, Noam|Jones, Aidan|Lukasz Kaiser|Oran Gafni|Oron Ashual
    Polyak, Oron|Shelly Sheynin|Sheynin, Devi|Ziyin, Tilman|Nicolas Boizard|Ling Shao|Lu, Ping|Luo, Ling|Ping Luo
    Song, Ding|Tong Lu|Xiang Li|Xie, Xiang|Michael Mahoney|Wagstaff, Lucas|Panagiotis S. Vigklas|Rothe, Shashi
    Sascha Rothe|Shashi Narayan|Ewan Klein|John Gruber|Pierpaolo Pantone|Tom Winzig|James Lee-Thorp|Joshua Ainslie
    Lee-Thorp, Joshua|Santiago Ontanon|Nathan Ng|Sergey Edunov|Perez, Aleksandra|Leonardo Di Caprio|Shao, Chao
    Yang, Ming|Lewandowski, Dorota|Pavel Izmailov|Podoprikhin, Timur|Timur Garipov|Petkovsek, Herbert|Wilf, Doron
    James L. Massey|Julius Caesar|Solomon Golomb|Kris Gaj|Kwon, Patrick|Mohammed Khaleeluddin|Patrick Baier
    Paul Kohlbrenner|Jon Grantham|Michal Forisek|Thomas R. Nicely's|Paulo Flores|Phil Adam|Donal O'Shea
    John B. Little|Little, Donal|Paul Erdos|Ruskey, Carla|Terry Min Yih Wang|Tim Peter's|Vincent Vajnovszki
    Robert Israel|Sanchez, Richard
    Lucien A. Dimino|David A. Cox|Steven A. Orszag|David A. Sanchez|Jed A. Duersch
    Ciss\\u00e9, David|Herv\\u00e9 J\\u00e9gou
    Jim M Papadopoulos|Arun K Banerjee
    """
)
# The fifteenth group's values, read and judged by a helper in their files (2026-12-07, about
# 12:00 UTC), before any fix made from them: credits, licences, changelogs, real saved mails'
# senders and hosts (identifying); the test suite's made-up mailboxes, message ids, test vectors,
# words read as names (identifying nobody, below).
IDENTIFYING_FIFTEENTH = _judged(
    r"""
    160 Saratoga Avenue, Santa Clara, CA 95051|1895 Preston White Drive
    142480216486.20800.16526388040877946887@nightshade.la.mastaler.com
    20050713212311.GC4701@andy.gregorykjohnson.com|63638922+andrei-bitca-dc@users.noreply.github.com
    8790386+dimitarnestorov@users.noreply.github.com|Dimangud@rambler.ru|Internet-Drafts@ietf.org
    MAILER-DAEMON@zinfandel.lacita.com|Tino.Lange@isg.de|admin@hk1229.cn|aixtools@felt.demon.nl|amauryfa@gmail.com
    amcasey@users.noreply.github.com|anthony@interlink.com.au|antoine.motet@gmail.com|ashtuchkin@gmail.com
    astrand@lysator.liu.se|az@kreativkombinat.de|barry@digicool.com|barry@python.org|bdehamer@github.com
    beau@beaugunderson.com|ben@npmjs.com|beneb.info@gmail.com|benjamin@python.org|bob@redivi.com
    brandonros1@gmail.com|brian@sweetapp.com|bug-automake@gnu.org|c.evans@clear.net.nz|calvin@cs.uni-sb.de
    chalkerx@gmail.com|chris@eppsteins.net|claudia@npmjs.com|cody-somerville@ubuntu.com|cscott@cscott.net
    da@ski.org|daniel@linuxuser.co.uk|davem@magnet.com|david_ascher@brown.edu|dgoodger@bigfoot.com
    donald@stufft.io|donn@u.washington.edu|doug.hellmann-Re5JQEeQqe8AvxtiuMwx3w@public.gmane.org
    doug@somethingdoug.com|dragondm@integral.org|dscherer@cmu.edu|einaros@gmail.com|email-sig@python.org
    eric.brunel-2B8B56.18091515092010@news.wanadoo.fr|eric.brunel@pragmadev.nospam.com|esr@thyrsus.com
    fdrake@acm.org|federico.romero@outboxlabs.com|felix@debuggable.com|flipjs.io@gmail.com|fredrik@pythonware.com
    freebsd-isp@freebsd.org|gboutsioukis@gmail.com|gerhard@bigfoot.de|gerrit@nl.linux.org|ggpolo@gmail.com
    gh@ghaering.de|github@jumoog.io|gkj@gregorykjohnson.com|gkj@sundance.gregorykjohnson.com|glingl@aon.at
    greg@krypto.org|gtanner@gmail.com|guido@cnri.reston.va.us|guido@python.org|gward@python.net|henryi@oxy.edu
    holbert.13@osu.edu|i@izs.me|idle-dev@python.org|info@bnoordhuis.nl|info@egenix.com|info@pythonware.com
    isaacs@github.com|j-david@noos.fr|jangel1@cougar.noc.ucla.edu|jangel1@ucla.edu|josefrancisco.verdu@gmail.com
    joseph@wildlyinaccurate.com|josh@joshglazebrook.com|julian@juliangruber.com|justin@indospace.io|kbk@shore.net
    kippesp@gmail.com|kpdecker@gmail.com|kyle@kemitchell.com|kzm@zkat.tech|lars@gustaebel.de
    linuxuser-admin@www.linux.org.uk|linuxuser-request@www.linux.org.uk|linuxuser@www.linux.org.uk|liw@iki.fi
    lkcl@samba.org|lugrin@ms.com|luo1257857309@gmail.com|mail@substack.net|mailman-admin@babylon.socal-raves.org
    mailserv@ietf.org|mal@egenix.com|mal@lemburg.com|mark.russell@zen.co.uk|markrobertamery+jsdiff@gmail.com
    matheus.frndes@gmail.com|me@jmendeth.com|me@re-becca.org|me@silverwind.io|mhammond@skippinet.com.au
    michael@michaelbrooks.ca|mike.verdone@gmail.com|mikeywbrooks@gmail.com|nadeem.vawda@gmail.com
    nathan@tootallnate.net|npms2@geekhood.net|openssl-users@openssl.org|optik-users@lists.sourceforge.net
    owner-freebsd-isp@FreeBSD.ORG|perky@FreeBSD.org|peter@engcorp.com|piers@cs.su.oz.au|pimterry@gmail.com
    ping@lfw.org|ping@zesty.ca|postmaster@python.org|postmaster@ucla.edu|postmaster@zinfandel.lacita.com
    python-dev@python.org|python-list@python.org|raymond.hettinger@gmail.com|rhyneandrew@gmail.com
    richardkazuomiller@gmail.com|rushing@nightmare.com|ruyadorno@github.com|ryzokuken@disroot.org
    scoffman@wellpartner.com|scr-admin@socal-raves.org|scr-owner@socal-raves.org|scr-post@babylon.socal-raves.org
    scr-request@socal-raves.org|scr@socal-raves.org|sendmail-bugs@sendmail.org|shantanu34@outlook.com
    sindresorhus@gmail.com|sjoerd@acm.org|skitta@abo.fi|snnskwtnb@gmail.com|solipsis@pitrou.net
    spamassassin-talk-request@lists.sourceforge.net|sshenoy@gol.com|steven.bethard@gmail.com|support@cacert.org
    talmobi@users.noreply.github.com|taradino@softhome.net|tarek@ziade.org|test@mems-exchange.org
    thanhdd.it@gmail.com|thecodrr@protonmail.com|tim@creationix.com|tim@debuggable.com|tim@python.org
    timo@alum.mit.edu|tj@vision-media.ca|urtubia@mrbook.org|vadimbaryshev@gmail.com|vinay_sajip@red-dove.com
    w@tson.dk|webkit-dev@lists.webkit.org|webmaster@python.org|xml-sig@python.org|yosikawa@isi.edu
    yselivanov@sprymix.com|zooko@zooko.com|104.131.124.203|134.69.16.86|134.69.3.112|134.84.183.138|169.232.10.18
    195.41.46.149|195.92.249.252|199.164.235.226|204.245.199.98|209.85.222.117|212.1.130.11|212.1.149.22
    24.201.139.93|64.32.235.228|64.5.53.58|70.242.162.63|AS14061 Digital Ocean, Inc.|Apple Computer, Inc.
    Automatrix, Inc.|Autonomous Zones Industries, Inc.|Baxter, Wouters and Warsaw|Bioreason, Inc.
    Coveo Solutions Inc.|Disney Enterprises, Inc.|Elemental Security, Inc.|Hewlett-Packard|Hyndman & Fan
    John-David|Joyent, Inc.|Kennedy & Gentle|Mojam Media, Inc.|SECRET LABS AB|Schneider-Kamp|Secret Labs AB
    Trademark Joyent, Inc.|Vercel, Inc.|Zope Corporation|Abdullah Atta|Adnan Umer|Adrian Baddeley|Alba Mendez
    Albert Brandl|Alessandro Vergani|Alex Martelli|Alex Waygood|Alexander Shtuchkin|Alexis Campailla
    Amaury Forgeot|Andre Roberge|Andreas Degert's|Andreas Paepcke|Andreas Zeidler|Andrei Bitca|Andrew Casey
    Andrew Clover|Andrew Dalke|Andrew Kuchling|Andrew Kuchling's|Andrew McNamara|Andrew Pardoe|Andrew Rhyne
    Andruk, Just|Andy Dill|Angus Croll|Anna Henningsen|Annie Cuyt|Anthony Baxter|Antoine Motet|Antoine Pitrou
    Armin Rigo's|Armin Ronacher|Arnold, Gordon|Arnout Kazemier|Barry|Barry Warsaw|Bartosz Sosnowski
    Bastian Kleineidam|Bauer, Cliff|Baxter, Steve|Beau Gunderson|Ben Briggs|Ben Coe|Ben Darnell|Ben Escoto
    Ben Gertzfield|Ben Noordhuis|Benjamin Coe|Benjamin Peterson|Betancourt, Randall|Bill Arms|Bill Janssen
    Bill Tutt|Bob Ippolito|Bradley Nelson|Brandon Ros|Brian Hammond|Brian Kantor|Brian Quinlan|Brian Woodward
    Brigitte Verdonk|Bruce Frederiksen|Bruce Sherwood|Bruno Haible|Carey Evans|Carlo Verre's|Charles Wohlganger
    Cheryl Baker|Cheryl Sabella|Chia Wei Ong|Chris Eppstein|Christian Clauss|Christian Heimes|Christos Georgiou
    Chui Tey|Claudia Hernández|Cliff Crawford|Cody|Coe, Isaac|Colin Kong|Collin Winter|Collin Winter's
    Craig Rodrigues|Crawford, Ivan|Cuyt, Dennis|Dan Libby's|Dan Pike|Dang Duy Thanh|Daniel Bevenius|Daniel James
    Daniel Stutzbach|Daniele Belardi|Daniels, Tal|Dario Vladovic|Dario Vladović|Dave Florek|Dave Mitchell|David
    David Arnold|David Ascher|David Bremner|David Eppstein|David Eppstein's|David Foster|David Frank|David Goodger
    David Ibanez|David Sanders|David Scherer|David Scherer's Remote|Dennis Verschaeren|Dimitar Nestorov
    Dinu Gherman|Donald Stufft|Donn Cave|Doug Hellmann|Douglas Christopher Wilson|Edgar Muentes|Edmond Burnett
    Edward Loper|Edwin L. Bradley Jr|Einar Otto Stangvik|Einat, Hernan|Engelbert Gruber|Eric Price|Eric Raymond
    Eric S. Raymond|Erich Gamma's|Erich Neuwirth|Ethan Arrowood|Ezio Melotti|Facundo Batista|Farrell, Greg
    Federico Romero|Felipe Apostol|Felix Geisendörfer|Felix Rieseberg|Florian Dahlitz|Foffani, Christos
    Francois Pinard|Frank Herbert|Franz Glasner|François Pinard|Frechet, Collin|Fred Drake|Fred L. Drake
    Fredrik Lundh|Gabriel Schulhof|Gary Bishp's|Geert Jansen|Georg Brandl|George Boutsioukis|George Zhang
    Gerhard Haering|Gerhard Häring|Gerrit Holl|Gertzfield, Barry|Giampaolo Rodola|Gisle Aas|Gordon McMillan
    Gordon Williams|Greg Chapman|Greg Chapman's|Greg Ewing|Greg Stein|Greg Ward|Gregor Lingl|Gregory K. Johnson
    Gregory P. Smith|Gregory P. Ward|Guido|Guido van Rossum|Guilherme Polo|Gustavo Niemeyer|Guy Margalit
    Halit Ogunc|Hammond, Jeremy|Hammond, Tim|Hans Nowak|Harold Abelson|Hartmut Goebel|Hector Urtubia
    Helge von Koch|Heller, Mark|Henry F. Inman|Hernan Foffani|Hettinger, Tony|Hettinger, Trent|Hopper, Karl
    Hye-Shik Chang|Hylton, Tim|IETF|Ian Bicking|Ian T. Henry|Imran Iqbal|Internet-Drafts|Irit Katriel
    Isaac Z. Schlueter|Itamar Shtull-Trauring|Ivan Daniluk|Ivan Frohne's|Ivan Petrovic|Ivan Van Laningham
    Jack Diederich|Jack Jansen|Jacques Frechet|James Clark's Expat|James Clayson|James Halliday|James Henstridge
    James Henstridge's Catalog|James Home|James Roskind|James Rucker|Janne Sinkkonen|Jason Orendorff
    Jason R. Mastaler|Jason Williams|Jean-Marc Lugrin|Jeff Balogh|Jeff Bauer|Jeff Epler|Jeff Senn|Jeff Shute
    Jeffrey Yasskin|Jeremiah Senkpiel|Jeremy Hylton|Jewett, Martin|Jim Fulton|Jim Jewett|Jim Roskind|Jimmy Wärting
    Johan Bergström|Johannes Gijsbers|John Barboza|John Farrell|John Mulligan|John-David Dalton|Johnny Najera
    Jon Kunkee|Jon Moss|Jon Schlinkert|Jonas Hermsmeier|Jonathan Hult|Jose Quijada|Joseph Wynn|Josh Glazebrook
    Josh Junon|Josh Kelley|Josh Parnham|Josh Robb|Josip Dzolonga|João Reis|Julian Gruber|Julien Racle
    Just van Rossum|Jérémy Lal|Ka-Ping Yee|Karl Horky|Karl Putland|Kasper U. Weihe|Kasper Unn Weihe|Kat Marchán
    Kazuhiko Arase|Keith Dart|Keld Simonsen|Ken Hilton|Kevan Heydon|Kevin Decker|Kevin O'Connor|Kevin Walzer
    Kilian von Pflugk|Kim Barrett|Kong, Trent|Kornel Lesiński|Kurt B. Kaiser|Kyle E. Mitchell
    Lambert Meertens|Lance Ellinghouse|Laningham, Josef|Larry Hastings|Larry Wall|Lars Gust|Lars Gustaebel
    Lars Marius Garshol|Lars Wirzenius|Lars-Magnus Skog|Levinson, Mark|Lita Cho|Liu Chao|Loren Guthrie|Loren Luke
    Louie Lu|Lu, Cheryl|Luigi Pinca|Luke Kenneth Casson Leighton|Lyle Johnson|Löwis, Jason|Madeline Gurriarán
    Magnus Kessler|Marc André Lemburg|Marc-Andre Lemburg|Marcia Ascher|Marcin Cieślak|Mark Amery|Mark Crispin's
    Mark Favas|Mark Hammond|Mark Mentovai|Mark R. Levinson|Mark Roseman|Mark Russell|Mark Summerfield
    Markus Gritsch|Martijn Faassen|Martin|Martin Midtgaard|Martin Richard's|Martin von Loewis|Martin von Löwis
    Masashi Hirano|Masazumi Yoshikawa|Mateusz Jaworski|Mathias Bynens|Mathias Pettersson|Matias Lopez|Matt Loring
    Matteo Collina|Matthew Aitken|Matthias Barmeier|McMillan, Ben|Michael Brooks|Michael Dawson|Michael Felt
    Michael Foord|Michael Gilfix|Michael Hart|Michael Hudson|Michael McLay|Michael Otteneder|Michael Schneider
    Michaël Zasso|Micheal Brooks|Michiel de Hoon|Mick, Guido|Mike Bland|Mike Cowlishaw|Mike Craddick|Mike Miller
    Mike Romberg|Mike Verdone|Milad Farazmand|Montanaro, Raymond|Moshe Zadka|Myles Borins|Nadeem Vawda
    Natalie Wolfe|Nathan Rajlich|Nathan Zadoks|Neal Norwitz|Nhan Khong|Nicholas Riley|Nick Coghlan|Nick Edds
    Nick Mathewson|Nicolas Untz|Niels Gust|Niemeyer, Niels|Nigel Rowe|Nikita Skovoroda|Noam Raphael|Nowak, Uwe
    Orendorff, Guilherme|Pablo Galindo|Patrick K. O'Brien|Patrick Westerhoff|Paul Felix|Paul Kippes|Paul Maréchal
    Paul Miller|Paul Prescod|Paul Prescod's|Pavel Medvedev|Perry Stoll|Peter Dave|Peter Funk|Peter Hansen
    Peter Sabath|Peter Schneider-Kamp|Peters, Thomas|Phil Lapsley|Phil Schwartz|Phil Webster|Phillip Eby
    Piers Lauder|Polo, Josh|Przemysław Bitkowski|Putland, John|Quentin Vernot|Randall Hopper|Raymond Hettinger
    Rebecca Turner|Refael Ackerman|Refael Ackermann|Richard Chamberlain|Richard Jones|Richard Lau|Richard Stallman
    Richard Stevens|Richard Townsend|Rick Holbert|Rick Regan|Ricky Miller|Robert Chiras|Robert Geiger
    Robert Kowalski|Robert Nagy|Robert Olson|Robin Becker|Robin Friedrich's|Rod Vagg|Roeland Rengelink
    Roger E. Masse|Roger Serwy|Roger Serwys|Ronald Oussoren|Ronald Tschalar|Ronald Tschalar's|Rossum, Anthony
    Rossum, Thomas|Rowe, Bruce|Ruy Adorno|Sam Hughes|Sam Roberts|Sam Rushing|Sam Rushing's|Sam Schulenburg
    Sami Sayegh|Samuel Attard|Samuele Pedroni|Sara Itani|Scherer, Peter|Schlueter, Ben|Schlueter, Kat
    Scott Ananian|Scott David Daniels|Serhiy Storchaka|Serhiy Storchaka's|Serhiy Storchake|Seymour Papert
    Shelley Vohr|Sherwood, Jeff|Shinnosuke Watanabe|Simone Primarosa|Sindre Sorhus|Sjoerd Mullender|Skip Montanaro
    Sora Morimoto|Steen Lumholt|Stefan Behnel|Stefan Krah|Steffen Kremser|Stephen J. Turnbull|Stephen M. Gava
    Steve Dower|Steve Majewski|Steve Purcell|Steven J. Bethard|Steven J. Burr|Stewart Addison|Sudhir Shenoy
    Szymon Marczak|Taek Joo Kim|Tal Einat|Taneli Hukkinen|Thomas Heller|Thomas Watson Steen|Thomas Wouters
    Tim Caswell|Tim Koschützki|Tim Perry|Tim Peters|Timothy O'Malley|Timothy O'Malley DISCLAIMS|Tino Lange
    Todd Rovito|Tokio Kikuchi|Tomas Della Vedova|Tomas Lindroos|Tommy Burnette|Tony Lownds|Toyo Li|Trent Mick
    Trent Nelson|Tutt, Hans|Uwe Zessin|Vadim Baryshev|Verdonk, Annie|Victor Stinner|Vinay Sajip|Vincent Broman
    Vladimir Marangozov's|Vladyslav Burzakovskyy|Waldman, David|Wally Feurzig|Warsaw, Thomas|Westley Martínez
    Wilfried Goesgens|Winter, Nick|Wouters, Anthony|Wouters, Fred|Xavier Guimard|Yang Guo|Yury Selivanov
    Zackery Spytz|Zaki Rizvi|Zane Bitter|Zooko O'Whielacronx|Łukasz Langa
    Barry A. Warsaw
    Andr\xe8 Previn
    Forrest L Norvell|Tony J Ibbs|Charles G Waldman
    """
)
NOBODY_FIFTEENTH = _judged(
    r"""
    %d@dom.ain|*'foo@example.net|0.0014F8A2@mail.groupcare.dk|002001c144a6$8752e060$56104586@oxy.edu|0@dom.ain
    0GK500B01D0B8X@cougar.noc.ucla.edu|0GK500B01D0B8Y@cougar.noc.ucla.edu|0GK500B04D0B8X@cougar.noc.ucla.edu
    0GK500B4GD0888@cougar.noc.ucla.edu|0GK500B4HD0888@cougar.noc.ucla.edu|15090.61304.110929.45684@aaa.zzz.org
    15261.36209.358846.118674@anthem.python.org|15265.9468.713530.98441@python.org
    15265.9482.641338.555352@python.org|15613.28051.707126.569693@dom.ain
    15975.17901.207240.414604@sgigritzmann1.mathematik
    15975.17901.207240.414604@sgigritzmann1.mathematik.tu-muenchen.de|19981222151406.I-D@ietf.org|1@dom.ain
    1@harrydomain4.com|200104061723.JAB03225@zinfandel.lacita.com|20010803162810.0CA8AA7ACC@mail.example.com
    2@dom.ain|3@dom.ain|4@dom.ain|4B66B890.4070408@teconcept.de|4FD05F05-F98B-44DC-8111-C6009C925F0C@gmail.com
    4c90ec87$0$32425$ba4acef3@reader.news.orange.fr|5@dom.ain|674392CA.4347091@email.au|6@dom.ain
    6df65d354b.father.time@rpc.wooster.local|76a486bee62b0d200f33dc2ca08220ad@localhost.localdomain|7@dom.ain
    8@dom.ain|9@dom.ain|A.Johnson@python.org|A29863FA-F388-40C3-AA25-0FD06B09B5BF@gmail.com
    Fred.A.Johnson@python.org|Me@my.org|Mr.A@somewhere.com|Mrs.C@somewhereesle.com|Ms.B@xn--fo-fka.com
    None@bounce2.pobox.com|Ppp@zzz.org|T.Mueller@xxx.com|`a@malicious.org|a-very-long-address@example.com
    a4929a40-6328-491a-aaaf-cb79ed7309a2@q2g2000vbk.googlegroups.com|aa@bb.org|aaa@bbb.org|abc@xyz.com
    alice@atlanta.com|aperson@dom.ain|aperson@example.com|bar@simple.net|barney@npmjs.com|bbb@ddd.com|bbb@zzz.org
    bdude@example.com|bilbo@underhill.org|borris@python.org|bperson@dom.ain|cc@dd.org|ccc@zzz.org|cperson@dom.ain
    cravindogs@cravindogs.com|ddd@zzz.org|dinsdale@example.com|dinsdale@example.org|dinsdale@python.org
    dinsdale@test.example.com|doe@losthope.net|dperson@dom.ain|edab.7804f5cb8070@python.org|eee@zzz.org
    end@example.com|eric@example.coms|example@npmjs.com
    f30c0419-f549-4218-848f-d7d0131da931@y3g2000vbm.googlegroups.com|father.time@xcar.wooster.local
    flint@example.com|foo-bar@baz.py|foo-bär@baz.py|foo@bar.baz.spam|foo@dom.ain|four@four.org|frodo@mordor.net
    git@github.com|hasty@example.com|holy@grail.net|hvalf7$ort$1@dough.gmane.org
    i.am.an.article.you.will.want@example.com|jason@dom.ain|jfoobar@example.com|jxd@example.com
    ks_in@devanagari.utf|me@my.domain|me@my.org|merwok.wok.wok@example.com|merwok.wok.wok@xample.com
    my_mom@great.cooker.com|natasha@python.org|negg@foo.py|no@yes.com|nobody@nowhere.com|nobody@python.org
    nobody_you_want_to_know@example.com|non-existent@example.com|null@python.org|one@one.org
    password@www.python.org|person@dom.ain|ping@exampele.com|pirard@dom.ain|police@monty.org|ppp-admin@zzz.org
    ppp-request@zzz.org|ppp@zzz.org|python@vivarium.org|robot@examp.com|sd_IN@devanagari.UTF|sd_in@devanagari.utf
    sender@example.net|sharp@example.com|simeple.local@example.com|simeple.local@example.something.com
    some.body@dummy.domain|somebody@here.my.org|somemessageidlongerthan@maxlinelength.com|someone@eecs.umich.edu
    someone@umich.edu|star.a.star@example.com|star@a.star|test@dom.ain|the_rescuers@Rescue-Aid-Society.com
    three@three.org|timbo@jeeves.wooster.local|two@two.org|u00f6n@dom.in|user@host.tld|victim@monty.org
    warped@silly.walks.com|whom_it_may_concern@example.com|wok@xample.com|x00user@example.org|xx@xx.dk
    xxx@dot.ca.gov|xxx@example.com|xxxx@dot.ca.gov|xxxxx@dot.ca.gov|xxxxxx@dot.ca.gov|xxxxxxx@dot.ca.gov
    xxxxxxxx@dot.ca.gov|xxxxxxxxx@dot.ca.gov|xxxxxxxxxx@dot.ca.gov|xxxxxxxxxxx@dot.ca.gov|xxxxxxxxxxxx@dot.ca.gov
    xxxxxxxxxxxxx@dot.ca.gov|xxxxxxxxxxxxxxx@dot.ca.gov|xxxxxxxxxxxxxxxx@dot.ca.gov|xxxxxxxxxxxxxxxxxx@dot.ca.gov
    xyz@example.com|yes@man.com|yyy@example.com|zippy@pinhead.com|zzz@example.com|{'Mr.A@somewhere.com
    ईमेल@wők.com|ईमेलfromMessage@wők.com|000::c0a8:0001|0439:23af:2309::fae7|0:0:0:0:5:0:0:ffff|0:0:0:4:0:0:0:ffff
    0:0:3:0:0:0:0:ffff|0:0:3::ffff|0:6:5:4:3:2:1:0|0:6:5:4:3:2:1::|0:7:6:5:4:3:2:0|0:7:6:5:4:3:2:1|1.0.0.127
    1.1.1.255|1.2.2.64/26|1.2.3.128|1.2.3.128/25|1.2.3.128/26|1.2.3.192/26|1.2.3.253/32|1.2.3.254|1.2.3.254/32
    1.2.3.255|1.2.3.255/32|1.2.3.37|1.2.3.42|1.2.3.64/26|1.3.101.112|10.0.0.0/24|10.0.0.0/30|10.0.0.1|10.0.1.0/24
    10.0.1.5|10.1.1.0|10.1.1.0/24|10.1.1.0/26|10.1.1.0/30|10.1.1.128/25|10.1.1.16/28|10.1.1.32/27|10.1.1.4/32
    10.1.1.5/32|10.1.1.6/31|10.1.1.64/26|10.1.1.8/29|10.1.2.128/25|10.1.3.0/24|10.1.3.0/25|10.10.0.1|10.10.10.0
    10.10.10.0/31|10.10.10.10|10.10.10.11|10.10.10.12|10.10.10.2|10.10.10.2/31|10.11.0.1|10.11.12.13|10.2.1.0/24
    100.64.0.0/10|100.64.0.1|103:104::|107.6.106.82|10:9:8:7:6:5:4:3|12.1.1.3|12.1.1.4|12.34.56.78|123.45.67.89
    123:2:3:4:5:6:7:8|125.125.125.125|14.15.16.17|14.15.16.18|169.255.100.200|169.255.100.200/24|170.170.170.170
    170.85.170.85|172.17.0.1|172.19.10.0/24|172.19.10.5|172.25.1.3|172.29.45.100|172.31.255.128|172.31.255.143
    19.2.3.1|19.2.3.2|192.0.0.170/31|192.0.3.0/24|192.0.7.1|192.168.0.1|192.168.0.2|192.168.1.0/24|192.168.1.1
    192.168.1.1/17|192.168.1.1/24|192.168.1.5|192.168.1.5/24|192.168.1.5/32|192.168.122.0|192.168.122.45
    192.168.178.1|1:0:0:4:0:0:7:8|1:1:1:1:1:1:1:1|1:2:3:4:5:6:7:8|1:2:3:4:5:ffff:102:304|1::4:0:0:7:8
    1:ffff:ffff:ffff:ffff:ffff:ffff:ffff|2.5.29.14|2.5.29.15|2.5.29.17|2.5.29.19|2.5.29.35|2.7.0.40|2000:999::
    2000::4136:e378:8000:63bf:3fff:fdd2|2000:aaa::|2000:ac1d:2d64::1|2000:bbb::
    2001:0000:0000:0000:0000:0000:0000:0000|2001:0000:0000:0000:0000:0000:0000:0001
    2001:0000:4136:e378:8000:63bf:3fff:fdd2|2001:0000:5ef5:79fd:0000:059d:a0e5:0ba1|2001:0000::
    2001:0001:4136:e378:8000:63bf:3fff:fdd2|2001:0658:022a:cafe:0000:0000:0000:0000|2001:0:0:0:0:0:0:CAFE
    2001:0:0:4:0:0:0:8|2001:0:0:4:5:6:7:8|2001:0:0:4::8|2001:0:3:4:5:6:7:8|2001:0:5ef5:79fd:0:59d:a0e5:ba1
    2001:0:ce49:7601:e866:efff:62c3:fffe|2001:102A::|2001:10::|2001:2000::|2001:2001::|2001:2::
    2001:4860:4001:803::1011|2001:4860:4001::1825:bf11|2001:658:22a:caf8::|2001:658:22a:cafe:200:0:0:1
    2001:658:22a:cafe:200:0:0:2|2001:658:22a:cafe:200::1|2001:658:22a:cafe:4000::|2001:658:22a:cafe:8000::
    2001:658:22a:cafe::|2001:658:22a:cafe::1|2001:658:22a:cafe::2|2001:658:22a:cafe::5|2001:658:22a:cafe::fd
    2001:658:22a:cafe::fe|2001:658:22a:cafe::ff|2001:658:22a:cafe:c000::|2001:658:22a:cafe:ffff:ffff:ffff:ffff
    2001::1|2001::4:5:6:7:8|2001::cafe|2001:ffff:2000::|2002:ac1d:2d64::1|2003:0:0:0:0:0:0:BABA|2003::baba
    2003::bebe|200::1|202.101.228.108|224.0.0.1|224.1.1.1|224.1.1.1/31|239.255.255.1|239.255.255.255|24.37.191.17
    240.0.0.1|252.253.254.255|254.42.23.64|255.0.255.0|255.254.128.0|255.254.253.252|3ffe:0:0:0:0:0:0:0|3ffe::1
    4.2.6.10|4000::1|42.2.0.192|42.42.42.42|45ef:76cb:1a:56ef:afeb:bac:1924:aeae|500:500::|52:54:00:9d::67
    64:ff9b:1::|64:ff9b::|64:ff9b::7f00:1|64:ff9b::c000:221|65.54.227.120|6:5:4:3:2:1::|7.1.4.34|7:6:5:4:3:2:1:0
    7:6:5:4:3:2:1::|8.2.4.44|8.2.4.45|8:7:6:5:4:3:2:1|94.245.121.253|95.26.244.94|9:8:7:6:5:4:3:2|::102:304
    ::102:32a|::1:0:0:0:0|::4:0:0:0:ffff|::5:0:0:ffff|::7:6:5:4:3:2:0|::7:6:5:4:3:2:1|::8:7:6:5:4:3:2
    ::FFFF:c000:201|::c0a8:1|::c0a8:101|::e8:d4a5:1000|::ffff:0:0|::ffff:7f00:1|::ffff:c0a8:1|::ffff:c0a8:101
    ::ffff:ffff:ffff:ffff|FFFF::c000:201|a:b::c|ad42:abc::127:0:254:2|aef:b01:506:1001:ffff:9997:55:170|c0a8:1::
    cafe:cafe::|dead:beef::|dead:beef::1|dead:beef:cafe:5417:affe:8FA3:deaf:feed
    dead:beef:cafe:5417:affe:8fa3:deaf:feed|fbf:ffff::|fbff:ffff::|fc00:ffff:ffff:ffff::|fe7f:ffff::
    feff:ffff:ffff:ffff::|ff01::1|ff01::2|ff01::fb|ff02::1|ff02::16|ff02::1:2|ff02::1:3|ff02::1:ff00:1
    ff02::1de:c0:face:8D|ff02::1de:c0:face:8d|ff02::2|ff02::2:2eb7:74fa|ff02::2:ff2e:b774|ff02::5|ff02::6|ff02::9
    ff02::a|ff02::d|ff02::fb|ff05::1:2|ff05::1:3|ff05::2|ff05::fb|ffff:2:3:4:ffff::|ffff::ffff
    ffff:ffff:ffff:ffff::|ffff:ffff:ffff:ffff:ffff:ffff:ffff:fff0|ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff
    01:00:5e:00:00:01|12:34:56:78:90:ab|52-54-00-9d-0e-67|52:54:00:9d:0e:67|Brooks & Shields|Duck & Co|IPv4
    Key-Prior|This’s|33471-90901|Allison Dunlap|Andr|Anne P. Erson|Anne Person|Barney Dude|Barney P. Erson
    Bernard, Bianca|Bonne Journ|CHO CHAN|CHO CHOE|Cy Dx Dy|Dingus Lovers|Donald Duck|Dot Below|Emax, Emin
    Eric Haffa-Vee|Foo|Fred Blunt|Fred Flintstone|Fred Perfect|Gur Mra|Hand|Harry W. Hastings|Internet Mail
    James Street|Jane Foobar|Joe Blow|John|John X. Doe|Kimi Hayes|Ko Kai|Mail|Man Pages|Mein Kaktus|Mom|Moose
    Penelope Pussycat|Robbie|Sa Su|Sa Su      Mo|Sami Finland|Sami Norway|Sami Skolt|Sami Sweden|Sender|Steven Ma
    Tab Nanny|Than Block-Siz|Than Block-Size|Than One Block-Size|Theodore H. Perfect|Xcode|+31-641044153
    +31641044153|+35236450.6|01 01 00 00 00|01-01-1980 00|01-01-1980 25|016.016.016.016|02 03 000004|0201-1976
    0208-1978|0208-1983|0212-1990|0213-2000|0213-2004|04 000047 33|06.111111-04|07.123457-05|220 3000234
    220 3000237|221 3000234|221 3000237|222 3000234|222 3000237|223 3000234|223 3000237|384 768 1536|486 761 1265
    "pas|%s:%s|/^Unexpected|Incorrect|Proxy-Authorization|SuperSecretToken|\xa1\xa2
    a312b9c3cb4a1b693e8ebac5ee1ca9cc01f2661c14391917dcb111517f72370809...|aXNhYWNzOm5vdCBteSByZWFsIHBhc3N3b3Jk
    badpass|base64.decodebytes|blah|bm90IG15IHJlYWwgcGFzc3dvcmQ=|doesnotexist|exports.SOCKS5_CUSTOM_AUTH_END
    exports.Socks4Response|fr.comp.lang.*|geheim$parole|getting list|http://evil:thing@example.com|pa#ss|python
    test123|type string start end line|wile|yh^%#rest-of-my-password
    Bonne Journ\xe9e|"pas s"|Andr\xc3\xa9|Andr\xe9
    Fred A Johnson
    """
)
# Read and judged to identify nobody (they count against us): titles, products, eponyms,
# fragments with a word that is no name, placeholder mailboxes, and the Davis Southern Women
# data set's names (1941 field work; the study's persons are believed to be pseudonymous, which
# could not be checked here: counted against us). A value in neither set has not been read.
NOBODY = _judged(
    r"""
    687fb701029421ae5549d998@ssh.hf.jobs|Alan Turing Centenary|Anderson|Brain Connectivity|Brenda Rogers
    Charlotte McDowd|Conference, George|Diamond Graph|Diamond Multi Path|Dorothy Murchison|Edit Distance
    Eleanor Nye|Euler's|Evelyn Jefferson|Flora Price|Frances Anderson|Free Lattices|Gallai, Mat|Graphs, Ann
    Held-Karp|Helen Lloyd|Huey Chord|Huey Task|Katherina Rogers|Lang Alt|Laura Mandeville|Licensee|Myra Liddel
    Nora Fayette|Olivia Carleton|Pascal Programs|Pillow|Ray Actors|Ray Tasks|Sage|Sage Handbook|Sub Predictor
    Sylvia Avondale|Theresa Anderson|Tiny Agent|Tiny Agents|Turan Graph|Verne Sanderson|Vijay Approximation
    Wolfram Web|Wolfram Web Resource|file@1.txt|mypassword@myserver.com|pwd@example.com
    {info.subdomain}@ssh.hf.space|10.253.155.219|fd31:f903:5ab5:1::1|10.0.0.5
    abc123|192.168.0.1|1 Imaginary Lane|802 Caroline St|fred@neighborhood.com|Caroline St|Oh Yeah
    fe80::1ff:fe23:4567:890a|Hiro Hamada|Mr|10.255.255.255|Call|Request
    Constant Deprecation Reason|Ada|Luke Skywalker|Lone Anonymous Operation|Lone Schema
    Denman-Beavers|Kampe de Feriet|di Bruno's|Georgian Extended|Hanifi Rohingya|Kana Extended|Kana Extension
    Marks Extended|Mende Kikakui|Pau Cin Hau|Rod Numerals|Rumi Numeral Symbols|Sora Sompeng|Tai Tham|Tai Viet
    Tai Xuan Jing Symbols|Tai Yo|Tone Letters|Yi Radicals|Yi Syllables|4031078400000|49586681013729
    78498 78527|0.98.5.3|6.2.2.3|100, _OptType.bytes|46, _OptType.bytes|156384712
    Activations|Dask, Ray|Five Six|test_encodeUnicode4BytesUTF8Highest|19:dd:41:93:a1:a3:f5:91
    4a:8e:9b:d0:ae:ce:66:4c|19:dd:41:93:a1:a3|f5:91:4a:8e:9b:d0
    Deep South|Diamond Multi
    Joe Blow|John X. Ãørçeč|Liman Nakayaman Norman Oklahoman|Roman Selman|Preston White|author@name.com
    maintainer@name.com|name@email.com|test@test.com|joe@example.com|jane@example.net|illustrious@example.org
    snoopy@peanuts.com|git@github.com|git@github.enterprise.com|john@utf8.org|gama@utf8.org
    криївка@оун-упа.укр|230250605ea4b58a0b69c768e9ec1168@o4506985151856640.ingest.us.sentry.io
    Banda-Banda|Bottom, Left and Right|Monte-Carlo|Pak-Tong|Tan-Tan|1.0.0.0|2.7.2.2|3.1.1.6|7.9.2.2
    00:00:5e:00:53:01|05 00 01 02 03|pity%|snorri@sturluson.name
    02111-1307|do not Distribute|4111111111111111|IPv4|Porter-Duff|Italic, Serif|Upright, Serif|Sx, Sy
    Tai Xuan Jing|UNKNOWN|Welcome, John|Yu Gothic|Yu Mincho|0621 0650|0621 0652|16777216|jwt_abc123
    01-1514-4740|01-2273-2137|012569%201297|013093-6395|1634%20858%202490|1984-230%202704|472%20723%201438
    846-414%201554|include|omit|same-origin|boolean?|void 0|class {|empty::before{|libsecret-1-0
    adb:data|adb:recv|adb:runCommand|adb:send|mcp:backend|mcp:error|mcp:file|mcp:relay|mcp:request|mcp:server
    mcp:server:response|mcp:test|tools:error|process10.platform|context?.authInfo|extra?.authInfo
    options2?.authInfo|options2?.onresumptiontoken|exports2.SOCKS5_CUSTOM_AUTH_END|exports2.Socks4Response
    constants2.PNG_SIGNATURE|browser.launchOptions?.channel|config.browser.launchOptions?.channel
    accesstoken@example.com|git@example.com|Paul Atreides|Duncan Idaho|Vladimir Harkonnen|02110-1301|gpt2_pattern|options
    51314855|111-22-3333|192.168.1.0/24|192.168.1.1|192.168.1.4|192.168.100.0/24
    001Z@google.golang.org|06156156e|10.1.1.0|10.1.1.1|10.1.1.255|10351563E|142.42.1.1|1fc8b3b9a1e18e3b
    223.255.255.254|224.1.1.1|4220315081820346526|73496154e|82126812e|90384387e|Abel-François|André-Jean
    Anil|Antoine-Daniel|Beaumont-Hague|Beaumont-Hamel|Benoît-Joseph|Briana McNaira|Camp-Réal
    Champagne-Mouton|Charles-Aubin|Charles-Olivier|Charles-Étienne|Christian-Jacques|Corral-Rubio
    David-Vincent|Dupont-Lajoie|Ev|Fitz-James|Fortran|François-Charles|François-David|François-Joseph
    François-Julien|François-Jérôme|François-Louis|François-Nicolas|François-Pierre|Félix-Antoine
    Gregor Samsa|Guy-Noël|Güney Avrupa'daki|Hong-Kong|Jacques-Antoine|Jacques-Olivier|Jacques-Pierre
    Jacques-Étienne|Joan Carles|John Smith|John-Bull|Joseph-Antoine|José Arcadio Buendía|Julien-Pierre
    Jérôme-André|Kasım Salı|Kessel-Lo|Lamothe-Cassel|Louis François Joseph|Louise de Bratagne
    Ly-Fontaine|Léo-Paul|Maria Esperanza|Metz-Robert|Michel-Ange|Mt|Murat Bey|Nan Washington
    Orne Normandie|P. Delaware|Paul-Albert|Paul-André|Paul-Antoine|Paul-Arthur|Paul-Louis|Paul-Olivier
    Paul-Vincent|Paul-Étienne|Pedro-Rodríguez|Reino Unido|Rioux-Martin|Robert Cimrman|Roche-Bernard
    Roche-Maurice|Roche-Morey|Smith|Stati Uniti|Sveta Evrope|Việt Sau|Vélez-Blanco|Vélez-Rubio
    aaabbb@ccc.com|foo-bar@baz-co.com|hello123@example.com|hi+there@gmail.it|john.doe@example.co.uk
    user@ssh.yourdomain.com|userid@example.com|x01Z@google.golang.org
    %d.%d.%d|%d.%d.%d-10-g92584ed|%d.%d.%drc1|),$?Re.createElement(|),fe?Re.createElement(
    ),o?Re.createElement(|00:00:00:FF:FF:FF|0x574D544B|10.0.0.1|1595750129|1694076839|1750603025
    2227873595|2917565137|3.0-|3.6-|3238371032|4089235720|4144912697|4215389547|4271175723|4290775857
    5.15.167.4|725511199|812702999|914150663|<function|Ada Lovelace|Aria, Ernie|Deep GEMM|Free Memory
    GEMM|Grace-Blackwell|Kimi SITU|Knuth Vol|Marlin GEMM|Maxwell NVIDIA|Mixtral, Kimi|Moe Backend
    Non-Harmony Responses|SM100|Server-issued|Sylvester Hadamard|Sylvester Hadamards|Thin Mooncake Store
    Y.password?Y.username+|]<]image[>[|]<]video[>[|^\^done,variables=\[\{(.*)\}\]$|a.header;else
    a1q_scale|acc::f32|avg_pool_2d|candidate_0|int32_ptr|kFp8DynamicTokenSym|kNvfp4DynamicToken
    libdevice(\.\d+)*\.bc$|overEvery|overSome|rotary_dim < head_dim
    scheduler_output.total_num_scheduled_tokens > 0|tensorizer_config.s3_secret_access_key
    tests/dummy_module.py|text|token_fp8_ptr|torch.ops._C.dynamic_per_token_scaled_fp8_quant.default
    types-auth0-python|u=!1|~visual_token_mask
    Quilter|Wolfram Alpha|Slaney|Steve Smith|Steve Smith's|Donald Duck|Donald John Harper|Deep BERT|Janus VQ-VAE
    Marian Helsinki|Meine Freunde|Brown|Stanford Segmenter|Pil Image|Muon, Dion|Bert CUDA|Jit Autocast Pass|NVML
    CUPTI|Adam Optimizer|Python's GC|CUDA|Zoe Depth|Ray Tune|Lucas Theorem|Ket, Bra|Wolfram Mathematica
    Wolfram Mathematica's|Point, Ray|Plane, Ray|Lorentz, Lorentz|Sin Times|Constant Gain|Hilbert Spaces|Bell States
    Here Montgomery|Lucas Pseudoprimes|Dixon Resultant|Frank Ben's|Shi, Chi|Tait-Bryan|Bessel, Whittaker and Lambert
    Jean-Baptiste|Skipping NV|Newton-Schulz|Prune NV|Float8 AB|T SAS|Hillis-Steele|View & Shape|Specialized AB
    Blackman-Harris|Free Group|Trotter-Johnson|Knuth-Cohen|Lie Group|Poisson, Wiener and Gamma
    Qwen2_5OmniToken2WavConfig|self._training_state != TrainingState.FORWARD|test_*.py
    decided_mask==0|foo.na@example.com|n@triton.jit|foo@1.bar|file.zip@member.pkl|192.168.0.42|01 1402 0140
    0104 140 014|01303 021302|NDA|1254555648|307200|265390227570863|Kitty|Frederick Layton's
    Brian A. O'Neil
    """
) | {
    "[-!#$%&'*+.^_`|~0-9a-zA-Z]+",
    "torch.Tensor | None",
    "|NEWLINE|",
    "|SPEAKER|",
    " ...\n",
}  # a "|" or a line break inside: not in the block
NOBODY |= NOBODY_FIFTEENTH


_IDENTIFYING_ALL = (
    IDENTIFYING
    | IDENTIFYING_HELD_OUT
    | IDENTIFYING_FIFTH
    | IDENTIFYING_SIXTH
    | IDENTIFYING_SEVENTH
    | IDENTIFYING_EIGHTH
    | IDENTIFYING_NINTH
    | IDENTIFYING_TENTH
    | IDENTIFYING_ELEVENTH
    | IDENTIFYING_TWELFTH
    | IDENTIFYING_THIRTEENTH
    | IDENTIFYING_FOURTEENTH
    | IDENTIFYING_FIFTEENTH
)

# people, companies and mailboxes: in code mostly credits, so a file raised only by them needs
# reading before it counts either way (a new group's values are not judged until read)
_NAMES = frozenset({"PERSON", "ORGANIZATION", "EMAIL_ADDRESS"})


def _content(text: str) -> Content:
    return Content((Segment(("messages", 0, "content"), text),))


def _site_packages() -> Path:
    for p in site.getsitepackages():
        if (Path(p) / "sqlalchemy").is_dir():
            return Path(p)
    raise SystemExit("run with the project's virtualenv: .venv/bin/python bench/outside.py")


def _stdlib() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def _npm() -> Path:
    found = shutil.which("npm")
    return Path(found).resolve().parent.parent if found else Path("/nonexistent")


# Trees that are not installed packages: (their root, the top-level names left out of them).
_ELSEWHERE: dict[str, tuple[Callable[[], Path], Callable[[Path], bool]]] = {
    "python-stdlib": (_stdlib, lambda top: top.name not in {"site-packages", "test"}),
    "python-stdlib-tests": (lambda: _stdlib() / "test", lambda top: True),
    "npm": (_npm, lambda top: True),
}


def _tree(sp: Path, pkg: str) -> list[tuple[str, Path]]:
    """The files of one entry of GROUPS, each with the name it is shown by: a package in ``sp``
    or a tree of ``_ELSEWHERE`` (shown as ``entry:path``)."""
    if pkg not in _ELSEWHERE:
        return [(str(f.relative_to(sp)), f) for f in _files(sp / pkg)] if (sp / pkg).is_dir() else []
    root_of, keep = _ELSEWHERE[pkg]
    root = root_of()
    if not root.is_dir():
        return []
    found = [f for top in sorted(root.iterdir()) if keep(top) for f in ([top] if top.is_file() else _files(top))]
    return [(f"{pkg}:{f.relative_to(root)}", f) for f in found if f.suffix in SUFFIXES]


def _files(root: Path) -> list[Path]:
    return sorted(f for f in root.rglob("*") if f.is_file() and f.suffix in SUFFIXES and "__pycache__" not in f.parts)


def repos(clf: Classifier, show: int, only: str = "") -> list[dict[str, object]]:
    sp = _site_packages()
    rows: list[dict[str, object]] = []
    print("## Real repositories (installed packages' source trees, file by file)\n")
    print(
        "| group | package | files | MB | Tier 2 | identifying only | by names not in the list | by other values "
        "| Tier 2 by nobody | Tier 3 |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    totals: dict[str, Counter[str]] = {}
    shown: list[str] = []
    t0 = time.perf_counter()
    for group, packages in GROUPS.items():
        if only and not any(o in group for o in only.split(",")):
            continue
        tot = totals.setdefault(group, Counter())
        for pkg in packages:
            files = _tree(sp, pkg)
            if not files:
                continue
            c: Counter[str] = Counter()
            for rel, f in files:
                try:
                    text = f.read_text("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if "\x00" in text[:8192]:
                    continue
                d = clf.classify(_content(text))
                values = sorted({(x.entity_type, text[x.start : x.end]) for x in d.findings})
                nobody = [v for v in values if v[1] not in _IDENTIFYING_ALL]
                c["files"] += 1
                c["chars"] += len(text)
                c["tier2"] += d.tier == Tier.INTERNAL
                c["tier3"] += d.tier == Tier.RESTRICTED
                c["identifying"] += d.tier == Tier.INTERNAL and not nobody
                c["nobody"] += d.tier == Tier.INTERNAL and bool(nobody)
                other = [v for v in nobody if v[0] not in _NAMES]
                c["names"] += d.tier == Tier.INTERNAL and bool(nobody) and not other
                c["other"] += d.tier == Tier.INTERNAL and bool(other)
                c["failed"] += d.failed_closed
                rows.append({"file": rel, "tier": int(d.tier), "values": values})
                if d.tier > Tier.GENERAL and nobody:
                    shown.append(
                        f"- {int(d.tier)} `{rel}`: "
                        + ", ".join(f"{e} `{v[:60]}`" + ("" if v in NOBODY else " (unread)") for e, v in nobody[:4])
                    )
            tot.update(c)
            print(
                f"| {group} | {pkg} | {c['files']} | {c['chars'] / 1e6:.1f} | {c['tier2']} | {c['identifying']} | "
                f"{c['names']} | {c['other']} | {c['nobody']} ({c['nobody'] / max(c['files'], 1):.1%}) | {c['tier3']} |"
            )
    for group, c in totals.items():
        print(
            f"| **{group}** | all | {c['files']} | {c['chars'] / 1e6:.1f} | {c['tier2']} | {c['identifying']} | "
            f"{c['names']} | {c['other']} ({c['other'] / max(c['files'], 1):.1%}) | "
            f"**{c['nobody']} ({c['nobody'] / max(c['files'], 1):.1%})** | **{c['tier3']}** |"
        )
    print(f"\n({time.perf_counter() - t0:.1f} s; failed closed: {sum(c['failed'] for c in totals.values())})\n")
    if show:
        print("Files raised by values that identify nobody (first values of each):\n")
        print("\n".join(shown[:show]) + "\n")
    return rows


def faker(clf: Classifier, per_carrier: int) -> None:
    families = ("PERSON", "ORGANIZATION", "ADDRESS", "DATE_OF_BIRTH")
    hits: Counter[tuple[str, str]] = Counter()
    total: Counter[tuple[str, str]] = Counter()
    missed: dict[str, Counter[str]] = {f: Counter() for f in families}
    stray: Counter[tuple[str, str]] = Counter()
    docs = faker_documents(per_carrier, seed=2026)
    for doc in docs:
        d = clf.classify(_content(doc.text))
        covered = bytearray(len(doc.text))
        for f in d.findings:
            covered[f.start : f.end] = b"\x01" * (f.end - f.start)
        for p in doc.planted:
            k = (p.family, doc.lang)
            total[k] += 1
            ok = all(covered[p.start : p.end])
            hits[k] += ok
            if not ok:
                missed[p.family][p.value.replace("\n", " / ")] += 1
        for f in d.findings:
            if not any(f.start < p.end and p.start < f.end for p in doc.planted):
                stray[(f.entity_type, doc.text[f.start : f.end])] += 1
    print(f"## Faker documents ({len(docs)}: {per_carrier} per carrier, 7 carriers, locales en_US en_GB de_DE fr_FR)\n")
    print("| family | EN | DE | FR | all |\n|---|---:|---:|---:|---:|")
    for fam in families:
        cells = [f"{hits[(fam, lang)] / total[(fam, lang)]:.1%} ({total[(fam, lang)]})" for lang in ("en", "de", "fr")]
        n = sum(total[(fam, lang)] for lang in ("en", "de", "fr"))
        h = sum(hits[(fam, lang)] for lang in ("en", "de", "fr"))
        print(f"| {fam} | " + " | ".join(cells) + f" | {h / n:.1%} |")
    print(
        f"\nstray findings (outside every planted value): {sum(stray.values())}"
        + (": " + ", ".join(f"{e} `{v}`" for (e, v), _ in stray.most_common(8)) if stray else "")
    )
    for fam in families:
        if missed[fam]:
            print(f"\nmissed {fam} (first 10): " + "; ".join(v for v, _ in missed[fam].most_common(10)))
    clean = clean_documents(25, seed=2026)
    same = sum(not clf.classify(_content(t)).findings for _, t in clean)
    bad = [t for _, t in clean if clf.classify(_content(t)).findings]
    print(
        f"\nclean Faker prose forwarded byte-identical: {same} of {len(clean)} ({same / len(clean):.1%})"
        + (": not " + " | ".join(bad[:5]) if bad else "")
        + "\n"
    )


def secrets(clf: Classifier, rows: list[dict[str, object]], show: int) -> None:
    print("## Secrets: outside samples and an outside scanner\n")
    print(
        "No registry package ships outside secret samples: detect-secrets 1.5.0 (wheel and sdist: its tests "
        "are not in the sdist), trufflehog3 3.0.10 (a rules.yml of regexes, no examples), the secretlint "
        "rule packages on npm (module code and a README without sample lines)."
    )
    try:
        from detect_secrets.core.scan import scan_file
        from detect_secrets.settings import default_settings
    except ImportError:
        print(
            "\ndetect-secrets is not importable: `pip install --target build/detect-secrets --no-deps "
            "detect-secrets==1.5.0` and run with PYTHONPATH=build/detect-secrets to compare.\n"
        )
        return
    sp = _site_packages()
    kinds: Counter[str] = Counter()
    covered: Counter[str] = Counter()
    ours_only = 0
    theirs_files: set[str] = set()
    missed: list[str] = []
    with default_settings():
        for r in rows:
            rel = str(r["file"])
            found = list(scan_file(str(sp / rel)))
            if not found:
                ours_only += any(e == "SECRET" for e, _ in r["values"])  # type: ignore[attr-defined]  # a row holds objects; "values" is its list of (entity, value)
                continue
            theirs_files.add(rel)
            text = (sp / rel).read_text("utf-8")
            lines = text.splitlines(keepends=True)
            starts = [0]
            for line in lines:
                starts.append(starts[-1] + len(line))
            spans = [(f.start, f.end) for f in clf.classify(_content(text)).findings if f.entity_type == "SECRET"]
            for secret in found:
                value = secret.secret_value or ""
                lo = starts[secret.line_number - 1]
                at = text.find(value, lo, starts[min(secret.line_number, len(lines))]) if value else -1
                hit = at >= 0 and any(s <= at and at + len(value) <= e for s, e in spans)
                kinds[secret.type] += 1
                covered[secret.type] += hit
                if not hit:
                    missed.append(
                        f"- {secret.type}: `{rel}:{secret.line_number}` `{lines[secret.line_number - 1].strip()[:90]}`"
                    )
    n, h = sum(kinds.values()), sum(covered.values())
    print(
        f"\ndetect-secrets 1.5.0 (Apache-2.0, default plugins and filters) on the same {len(rows)} files: "
        f"{n} secrets in {len(theirs_files)} files; Tiergate's SECRET findings cover {h} of them "
        f"({h / max(n, 1):.1%}); files with a SECRET of ours that detect-secrets does not flag: {ours_only}.\n"
    )
    print("| detect-secrets type | found by it | also by Tiergate |\n|---|---:|---:|")
    for kind, k in kinds.most_common():
        print(f"| {kind} | {k} | {covered[kind]} |")
    if show and missed:
        print("\nFound by detect-secrets only (first ones, to be read):\n")
        print("\n".join(missed[:show]))
    print()


# Faker locales whose given names are not the gazetteer's (tiers/recognizers/_given_names.py):
# countries neither source lists on purpose, so their figure says how far the lists carry
_HELD_OUT_LOCALES = ("pt_BR", "es_MX", "es_CO", "it_IT", "nl_NL", "pl_PL", "ro_RO", "cs_CZ", "hu_HU", "sv_SE",
                     "fi_FI", "lt_LT", "lv_LV", "sk_SK", "hr_HR", "sl_SI", "da_DK", "en_IE", "en_NZ")  # fmt: skip
_COUNTRY_CARRIERS = (
    "Please send the signed contract to {n} before Friday.",
    "Meeting notes: {n} agreed to review the deviation report.",
    "Hi team, {n} will take over the supplier audit for line 3.",
    "Approved by {n} on 12 March.",
    "Contact person: {n}\nPhone extension 4411",
)


def countries(clf: Classifier, per_locale: int) -> None:
    """People of more countries: a given name and a surname of one Faker locale, in business
    carriers; found when a PERSON finding covers the whole name. The locales the gazetteer reads
    (its second source) measure coverage, not recall on unseen names; the held-out ones, whose
    lists neither source reads, measure how far the lists carry."""
    import importlib
    import random

    from tiers.recognizers._given_names import _MORE_LOCALES

    def names(locale: str, attrs: tuple[str, ...]) -> list[str]:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        out: set[str] = set()
        for attr in attrs:
            values = getattr(provider, attr, ())
            out |= set(values.keys() if isinstance(values, dict) else values)
        return sorted(n for n in out if n.isalpha() and n[:1].isupper())

    print("\n## People of more countries (Faker's locales; a given name and a surname of the same locale)\n")
    print("| locale | read by the gazetteer | names | found |\n|---|---|---:|---:|")
    totals = {True: [0, 0], False: [0, 0]}
    for locale in (*_MORE_LOCALES, *_HELD_OUT_LOCALES):
        rng = random.Random(locale)
        given_names = names(locale, ("first_names", "first_names_male", "first_names_female"))
        surnames = names(locale, ("last_names", "last_names_male", "last_names_female"))
        if not given_names or not surnames:
            continue
        found = 0
        for _ in range(per_locale):
            name = f"{rng.choice(given_names)} {rng.choice(surnames)}"
            text = rng.choice(_COUNTRY_CARRIERS).format(n=name)
            start = text.index(name)
            d = clf.classify(_content(text))
            found += any(
                f.entity_type == "PERSON" and f.start <= start and f.end >= start + len(name) for f in d.findings
            )
        read = locale in _MORE_LOCALES
        totals[read][0] += found
        totals[read][1] += per_locale
        print(f"| {locale} | {'yes' if read else 'no'} | {per_locale} | {found / per_locale:.1%} |")
    for read, (found, n) in totals.items():
        print(f"| **all {'read' if read else 'held out'}** | | {n} | **{found / max(n, 1):.1%}** |")
    print()


_CAPITAL_CARRIERS = ("Passenger: {n}\nSeat 14C", "NAME OF HOLDER: {n}", "Payee: {n}, net 30")


def capitals(clf: Classifier, per_locale: int) -> None:
    """Names in capitals throughout, as passports and exports write them: a given name and a
    surname of the outside corpus's locales ("MARIA GONZALEZ", "GONZALEZ, MARIA")."""
    import importlib
    import random

    print("\n## Names in capitals throughout (Faker's EN/DE/FR names, both orders)\n")
    print("| locale | names | found |\n|---|---:|---:|")
    for locale in ("en_US", "en_GB", "de_DE", "fr_FR"):
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        pools = []
        for attrs in (("first_names", "first_names_male", "first_names_female"), ("last_names",)):
            pool: set[str] = set()
            for attr in attrs:
                values = getattr(provider, attr, ())
                pool |= set(values.keys() if isinstance(values, dict) else values)
            pools.append(sorted(n for n in pool if n.replace("-", "").isalpha()))
        rng = random.Random(locale)
        found = 0
        for i in range(per_locale):
            given, surname = rng.choice(pools[0]).upper(), rng.choice(pools[1]).upper()
            name = f"{surname}, {given}" if i % 2 else f"{given} {surname}"
            text = rng.choice(_CAPITAL_CARRIERS).format(n=name)
            start = text.index(name)
            d = clf.classify(_content(text))
            found += any(
                f.entity_type == "PERSON" and f.start <= start and f.end >= start + len(name) for f in d.findings
            )
        print(f"| {locale} | {per_locale} | {found / per_locale:.1%} |")
    print()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=("all", "repos", "faker", "secrets", "countries", "capitals"), default="all")
    ap.add_argument("--per-carrier", type=int, default=25, help="Faker documents per carrier and locale")
    ap.add_argument("--show", type=int, default=0, help="list this many files raised by nobody-values")
    ap.add_argument("--json", type=Path, help="write the per-file verdicts of the repos part here")
    ap.add_argument(
        "--group", default="", help="only the groups whose names contain one of these (comma-separated; repos part)"
    )
    args = ap.parse_args()
    clf = Classifier(TiersConfig())
    rows: list[dict[str, object]] = []
    if args.part in ("all", "repos", "secrets"):
        rows = repos(clf, args.show, args.group)
        if args.json:
            args.json.write_text(json.dumps(rows))
    if args.part in ("all", "faker"):
        faker(clf, args.per_carrier)
    if args.part in ("all", "countries"):
        countries(clf, args.per_carrier * 4)
    if args.part in ("all", "capitals"):
        capitals(clf, args.per_carrier * 8)
    if args.part in ("all", "secrets"):
        secrets(clf, rows, args.show)


if __name__ == "__main__":
    main()
