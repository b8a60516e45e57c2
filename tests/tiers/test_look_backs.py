"""Recognizers' look-arounds, each cut short where its search cannot match or counted without one,
answer as the searches do (kept here as the definitions): the phone recognizer's phone word near
the number, a citation on its line and a MAC-shaped run around it; the e-mail recognizer's user
part before the address; the network recognizers' run of hex pairs around a candidate. Pure
comparisons, so no deadline: a loaded CI box once took 365 ms over one draw."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tiers.recognizers.contact import (
    _CITATION,
    _MAC_SHAPE,
    _PHONE_WORD,
    _URL_PASSWORD_BEFORE,
    _USER_BEFORE,
    EmailAddressRecognizer,
    citation_before,
    documentation_domain,
    in_mac_shape,
    near_phone_word,
)
from tiers.recognizers.national import _EXAMPLE_BEFORE, example_may_end
from tiers.recognizers.network import (
    _LONGEST_ADDRESS_PAIRS,
    _NUMBERING,
    _NUMBERS_LISTED,
    in_digest,
    listed_before,
    numbered_before,
)

_PIECES = st.sampled_from(
    ["phone", "PHONE", "Tel", "tel", "telefon", "Mobile", "MOBIL", "portable", "cell", "CALL", "fax", "WhatsApp",
     "sms", "Handy", "Rufnummer", "numero", "dial", "contact", "pho", "te", "mobı", "mobıle", "ſms", "ſ", "ı", "İ",
     "K", "doi", "DOI", "e-issn", "eissn", "ISBN", "arXiv", "pmid", "PMC", "pmcid", "Vol", "vol", "pp", "No", "no",
     "Rev", "Phys", "Lett", "Proc", "Math", "Appl", "Chem", "JIS", "ISO", "ITU-T", "IEEE", "EN", "GB", "ASTM",
     "ISO ", "JIS X ", "DIN 1", "ANSI ",
     ".", ". ", " ", "\n", "-", ":", ",", "X", "A", "x", "a", "é", "0208", "1990", "8601", "12", "_", "(", "/"]
)  # fmt: skip


@settings(max_examples=2500, deadline=None)
@given(pieces=st.lists(_PIECES, max_size=30), data=st.data())
def test_the_look_backs_answer_as_their_searches(pieces: list[str], data: st.DataObject) -> None:
    text = "".join(pieces)
    hi = data.draw(st.integers(0, len(text)))
    lo = data.draw(st.integers(0, hi))
    assert near_phone_word(text, lo, hi) == (_PHONE_WORD.search(text, lo, hi) is not None)
    assert citation_before(text, lo, hi) == (_CITATION.search(text, lo, hi) is not None)


_MAC_PIECES = st.sampled_from(
    ["0", "1a", "A", "f", "g", "Z", ":", "-", ".", " ", "(", "+", "00", "12", "ab", "FF", "x"]
)


@st.composite
def _hex_runs(draw: st.DrawFn) -> str:
    """Five to nine hex pairs with one separator (sometimes another in the middle)."""
    sep = draw(st.sampled_from([":", "-"]))
    pairs = draw(st.lists(st.sampled_from(["00", "1a", "FF", "9c", "42"]), min_size=5, max_size=9))
    joined = sep.join(pairs)
    if draw(st.booleans()):
        k = draw(st.integers(0, len(joined)))
        joined = joined[:k] + draw(st.sampled_from([":", "-", " ", "x"])) + joined[k + 1 :]
    return joined


@settings(max_examples=2500, deadline=None)
@given(pieces=st.lists(st.one_of(_MAC_PIECES, _hex_runs()), max_size=12), data=st.data())
def test_a_span_in_a_mac_shape_as_the_search_finds_it(pieces: list[str], data: st.DataObject) -> None:
    text = "".join(pieces) or "0"
    end = data.draw(st.integers(1, len(text)))
    start = data.draw(st.integers(0, end - 1))  # a candidate: never empty
    lo = max(0, start - 18)
    searched = any(m.start() + lo <= start and end <= m.end() + lo for m in _MAC_SHAPE.finditer(text[lo : end + 18]))
    assert in_mac_shape(text, start, end) == searched


def _user_part_rejected(text: str, start: int, end: int) -> bool:
    """The e-mail recognizer's look-back as two searches, before the colon's short cut."""
    if _URL_PASSWORD_BEFORE.search(text, max(0, start - 200), start):
        return True
    user = _USER_BEFORE.search(text, max(0, start - 64), start)
    if user is None or user.group(1).lower() == "mailto":
        return False
    return documentation_domain(text[start:end].rsplit("@", 1)[1])


_BEFORE = st.sampled_from(
    ["https://", "ftp://", "mailto", "usr", "pwd", ":", "/", "@", " ", "\n", "'", "(", "<", ",", "x"]
)
_ADDRESS = st.sampled_from(["jo@example.com", "ann@acme.io", "a@b.org", "x@test.example"])


@settings(max_examples=2000, deadline=None)
@given(before=st.lists(_BEFORE, max_size=12), address=_ADDRESS, after=st.sampled_from(["", " ", "/x", ":"]))
def test_the_user_part_before_an_address_as_the_searches_find_it(before: list[str], address: str, after: str) -> None:
    lead = "".join(before)
    text = lead + address + after
    start, end = len(lead), len(lead) + len(address)
    assert EmailAddressRecognizer().reject_at(text, start, end) == _user_part_rejected(text, start, end)


def test_every_alternative_of_the_citation_pattern_is_read_as_the_search_reads_it() -> None:
    """Each word, abbreviation and standards body of the pattern, in the places a window gives."""
    alternatives = _CITATION.pattern.replace("(?i:", "").replace("(?:", "|").replace(")", "|").replace("\\b", "|")
    words = {w for w in re.split(r"[|\\.?\s]+", alternatives) if w.isalpha() or "-" in w}
    assert {"doi", "Appl", "ASTM", "ITU-T"} <= words
    for word in words:
        for carrier in ("{} ", "{}. ", "see {}. ", "x{}. ", "{}", "{} X ", "{} X", "({}. ", "in {}: "):
            for variant in (word, word.lower(), word.upper()):
                text = "Ref " + carrier.format(variant)
                for lo in (0, 4):
                    assert citation_before(text, lo, len(text)) == (_CITATION.search(text, lo, len(text)) is not None)


# The digest look of the network recognizers, as the two regex searches it replaced: the pairs
# glued before the candidate (up to the reach) and after it (ending before a word's letter).
_REACH = 3 * (_LONGEST_ADDRESS_PAIRS + 1)
_PAIR_RUN = re.compile(r"[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})+")
_PAIRS_BEFORE = {sep: re.compile(f"(?:[0-9A-Fa-f]{{2}}{sep})+\\Z") for sep in ":-"}
_PAIRS_AFTER = {sep: re.compile(f"(?:{sep}[0-9A-Fa-f]{{2}})+(?![0-9A-Za-z])") for sep in ":-"}


def _in_digest_searched(text: str, start: int, end: int) -> bool:
    m = _PAIR_RUN.fullmatch(text, start, end)
    if m is None:
        return False
    sep = m.group(1)
    before = _PAIRS_BEFORE[sep].search(text, max(0, start - _REACH), start)
    after = _PAIRS_AFTER[sep].match(text, end, min(len(text), end + _REACH))
    pairs = (end - start + 1) // 3
    pairs += (len(before.group()) // 3 if before else 0) + (len(after.group()) // 3 if after else 0)
    return pairs > _LONGEST_ADDRESS_PAIRS


@settings(max_examples=2500, deadline=None)
@given(pieces=st.lists(st.one_of(_MAC_PIECES, _hex_runs()), max_size=8), data=st.data())
def test_a_digest_window_as_the_searches_find_it(pieces: list[str], data: st.DataObject) -> None:
    """Every span of runs of pairs, short and longer than the reach, with words and other
    separators glued on either side."""
    text = "".join(pieces) or "0"
    end = data.draw(st.integers(1, len(text)))
    start = data.draw(st.integers(0, end - 1))
    assert in_digest(text, start, end) == _in_digest_searched(text, start, end)


@settings(max_examples=2000, deadline=None)
@given(
    pairs=st.lists(st.sampled_from(["00", "1a", "FF", "9c"]), min_size=2, max_size=30),
    sep=st.sampled_from([":", "-"]),
    lead=st.sampled_from(["", " ", "x", "MD5:", "-", ":"]),
    tail=st.sampled_from(["", " ", "x", "Z", ":", "-", ".", "g"]),
    data=st.data(),
)
def test_a_window_of_one_run_of_pairs_as_the_searches_find_it(
    pairs: list[str], sep: str, lead: str, tail: str, data: st.DataObject
) -> None:
    """Pair-aligned windows of one run, at its ends and inside, near and past the reach."""
    text = lead + sep.join(pairs) + tail
    first = data.draw(st.integers(0, len(pairs) - 2))
    last = data.draw(st.integers(first + 1, len(pairs) - 1))
    start, end = len(lead) + 3 * first, len(lead) + 3 * last + 2
    assert in_digest(text, start, end) == _in_digest_searched(text, start, end)


_NUMBERING_PIECES = st.sampled_from(
    ["section", "Sect.", "sec.", "Version", "ver.", "release", "Chapter", "clause", "v", "V", "§", "§§",
     "reference", "Ref.", "annex", "appendix", "paragraph", "para.", "article", "Art.", "figure", "Fig.", "spec",
     "specs", "Specification", "ISO", "IEC", "RFC", "ITU-T", "NIST SP", "32000-2", ":2020", "9110", "1.",
     "==", "!=", "<=", ">=", "~=", "===", "=", ">", "<", "version_", "__version__", "oid", "OIDs", "object identifier",
     "ObjectIdentifier", "sections", "Clauses", "versions", "and", "or", "to", "through", "&", "–",
     "5.2.4", "6", "a", " ", "  ", "\t", "#", ":", "-", ",", "\"", "'", "(", "[", "x", "ſ", "K", "é", "\n"]
)  # fmt: skip


@st.composite
def _numbered(draw: st.DrawFn) -> str:
    """What may stand before a dotted quad: words and marks, or those shapes: a head (a section
    word, a standard and its number, an operator, a version's key, an object identifier), the
    numbers of a list with their separators, and blanks or marks after."""
    junk = "".join(draw(st.lists(_NUMBERING_PIECES, max_size=8)))
    if draw(st.booleans()):
        return junk
    head = draw(st.sampled_from(_HEADS))
    if head in _STANDARDS or draw(st.booleans()):
        head += " " + draw(st.sampled_from(["32000-2:2020", "9110", "1.", "8601-", "27001"]))
    items = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["5.2.4", "6", "3.1a", "10"]),
                st.sampled_from([",", ", and", " or", " to", " through", " &", "-", "–", ""]),
            ),
            max_size=3,
        )
    )
    listed = "".join(f" {n}{sep}" for n, sep in items)
    trail = draw(st.sampled_from(["", " ", ", ", ": ", " = '", "#", "-", '("', "==", " ~= ", "\t"]))
    return junk + head + listed + trail


_STANDARDS = ["ISO", "IEC", "RFC", "ITU-T", "NIST SP", "EN"]
_HEADS = [*_STANDARDS, "section", "Sect.", "v", "V", "§", "§§", "annex", "Fig.", "specs", "version", "__version__",
          "oid", "ObjectIdentifier", "sections", "Clauses", "versions", "pkg", "ſections", "see"]  # fmt: skip


@settings(max_examples=4000, deadline=None)
@given(before=_numbered())
@example(before="see sections 5.2.4, ")
@example(before="figures 1 and ")
@example(before="RFC 9110. ")
@example(before="ISO 8601- ")
@example(before='__version__ = "')
@example(before="version: ")
@example(before="an object identifier(")
@example(before="requests==")
@example(before="Sect. ")
def test_the_address_look_backs_answer_as_their_searches(before: str) -> None:
    """The dotted quad's look-backs (a section, a standard, a version's operator or key, an
    object identifier, a list after a plural section word) answer as the searches they gate."""
    assert numbered_before(before) == any(rx.search(before) for rx in _NUMBERING), before
    assert listed_before(before) == (_NUMBERS_LISTED.search(before) is not None), before


_EXAMPLE_PIECES = st.sampled_from(
    ["e.g.", "E.G.", "e. g.", "eg.", "for example", "For Instance", "such as", "like", "example:", "Example",
     ",", ":", " ", "  ", "\t", '"', "'", "`", "(", "x", "digits", "S", "é", "ſuch as", "\n", "."]
)  # fmt: skip


@settings(max_examples=3000, deadline=None)
@given(pieces=st.lists(_EXAMPLE_PIECES, max_size=12))
@example(pieces=["such as", ",", "    ", "  ", "    ", "  ", "    ", "'"])
def test_an_example_word_is_looked_for_only_where_it_can_end(pieces: list[str]) -> None:
    """``example_may_end`` turns the search away only where the search would find nothing."""
    text = "".join(pieces)
    if _EXAMPLE_BEFORE.search(text) is not None:
        assert example_may_end(text[-16:]), text
