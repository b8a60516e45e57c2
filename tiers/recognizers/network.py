"""IP and MAC addresses, and host names under the organisation's internal domain suffixes."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from functools import lru_cache

import re2
from presidio_analyzer import Pattern
from presidio_analyzer.predefined_recognizers import IpRecognizer, MacAddressRecognizer

from ._base import TiersPatternRecognizer

__all__ = ["InternalHostRecognizer", "IpAddressRecognizer", "MacRecognizer"]


class IpAddressRecognizer(IpRecognizer):
    """IPv4 and IPv6 addresses, validated with ``ipaddress`` as presidio does, minus addresses
    that identify nothing: loopback, unspecified and broadcast addresses are in every code base,
    and the documentation ranges (RFC 5737: 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24;
    RFC 3849: 2001:db8::/32) are in every manual and test suite.

    Presidio's IPv6 patterns need look-behinds; these RE2 patterns over-match a little (e.g.
    clock times) and the validator rejects what is not an address.
    """

    PATTERNS = [
        Pattern(
            "IPv4",
            r"\b(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"
            r"(?:/(?:3[0-2]|[12]?[0-9]))?\b",
            0.6,
        ),
        Pattern(
            "IPv6",
            r"(?i)(?:\b[0-9a-f]{1,4}|::?)(?::{1,2}[0-9a-f]{0,4}){2,7}(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3})?",
            0.6,
        ),
    ]

    def __init__(self) -> None:
        super().__init__(patterns=list(self.PATTERNS), name="IpAddressRecognizer")
        self.global_regex_flags = 0

    def validate_result(self, pattern_text: str) -> bool:
        return _address(pattern_text.split("/", 1)[0]) is not None

    def invalidate_result(self, pattern_text: str) -> bool:
        ip = _address(pattern_text.split("/", 1)[0])
        if ip is None:
            return super().invalidate_result(pattern_text) or False
        if ip.is_loopback or ip.is_unspecified or (ip.version == 4 and str(ip) in _EXAMPLE_ADDRESSES):
            return True
        if ip.version == 4 and _netmask(int(ip)):
            # 255.255.255.0, 255.255.252.0, 255.0.0.0: a network mask, the same in every network
            # (ones then zeros; none is a host's: 240/4 is reserved, the rest are network addresses)
            return True
        if ip.is_link_local:
            # 169.254.0.0/16 and fe80::/10: no host beyond its own link (169.254.169.254 is every
            # cloud's metadata service; an fe80:: address is derived from a MAC or random and
            # reaches nothing outside the segment, the MAC itself is found as one)
            return True
        embedded = _embedded_ipv4(ip)
        if embedded is not None and (embedded.is_unspecified or embedded.is_loopback):
            return True  # "::ffff:0:0" (the mapped block's first), "::ffff:127.0.0.1"
        if (ip.is_multicast or ip.is_reserved) and embedded is None:
            # 224.0.0.0/4 and ff00::/8 name a group of listeners, no host; 240.0.0.0/4 and IPv6's
            # unallocated blocks ("1:2:3:4:5:6:7:8", "500:500::" of a passwd line, "a:b::c") are
            # nobody's. An IPv4-mapped address is the IPv4 host's ("::ffff:192.168.1.1")
            return True
        if ip.version == 4 and ip.packed[2:] == b"\0\0" and "/" not in pattern_text:
            # "10.0.0.0", "1.0.0.0", "172.16.0.0": a block's network address, named as the block
            # is (a /16 or wider), no host's; a contract's version "1.0.0.0" spells the same
            return True
        if ip.version == 4 and ip.packed[0] == 0:
            # 0.0.0.0/8, "this network" (RFC 1122 3.2.1.3): a source address while a host boots,
            # never one to reach; a dotted quad that starts with 0 is a version ("0.98.5.3")
            return True
        if ip.version == 4 and _single_digits(pattern_text.split("/", 1)[0]):
            # "3.1.1.6", "7.9.2.2", "2.7.2.2": four single-digit numbers number a section or a
            # release; about one public address in 17,000 has this shape (a private one never
            # has: 10, 172 and 192 have more digits)
            return True
        if ip.version == 4 and ip.is_private and _all_ones_host(ip):
            return True  # 10.255.255.255, 192.168.255.255: a private block's broadcast, no host
        if "/" in pattern_text:
            try:
                net = ipaddress.ip_network(pattern_text, strict=False)
            except ValueError:
                return False
            if net.prefixlen <= 16 and (net.is_private or net.is_reserved or net.is_link_local):
                return True  # "10.0.0.0/8", "192.168.0.0/16": a reserved block by name, no host
        if ip.version == 6:
            # "1::", "be::" (a reST "would be::"), "1::4" (a slice data[1::4]): one or two short
            # groups spell an address nobody uses; "fe80::1" and longer ones stay
            groups = [g for g in pattern_text.split("/", 1)[0].split(":") if g]
            if len(groups) < 2 or (len(groups) == 2 and max(map(len, groups)) < 3):
                return True
        return any(ip in net for net in _DOCUMENTATION if net.version == ip.version)

    def reject_first(self, text: str, start: int, end: int) -> bool:
        """Eight pairs of a longer run of hex pairs are a window of a digest (a key's fingerprint),
        no IPv6 address: read before the address is parsed (≈ 10 µs an IPv6 candidate)."""
        return in_digest(text, start, end)

    def reject_at(self, text: str, start: int, end: int) -> bool:
        """A dotted quad that numbers a section, a clause or a version ("rfc7692#section-7.2.3.1",
        "ISO 32000-2:2020, 9.7.5.2", "PDF reference 7.3.4.2",
        "version 1.2.3.4", "foo==1.0.0.0") or is part of a longer dotted number ("11.4.0.15.0")
        addresses nothing. Only the words right before the number count, so an address later in
        the same sentence ("section 4 lists 10.1.2.3") is still one. So is an object identifier
        or a version assigned as a value (``ObjectIdentifier("2.5.4.3")``, ``__version__ =
        "3.5.0.1"``), each number of a list after a plural section word ("sections 5.2.4 and
        6.2.2.3") and a version before "or higher" / "or later". An IPv6 candidate glued to
        the letters after it ("<156::AID-NET2>" in a DOI) is part of a word."""
        if ":" in text[start:end] and end < len(text) and (text[end].isalnum() or text[end] == "_"):
            return True
        if _DOTTED_MORE.match(text, end) or _DOTTED_LESS.search(text[max(0, start - 2) : start]):
            return True
        if _single_digits(text[start:end], last=3) and _BUILD_AFTER.match(text, end):
            # "Guile 3.0.5.130-5a1e7", "1.2.3.45-beta2": a release and its build; a host with a
            # tag ("10.1.2.3-dev", "172.16.5.20-rc2") has a network's first numbers
            return True
        if _VERSION_AFTER.match(text, end):
            return True  # "requires matplotlib 1.2.3.4 or higher": a version, whatever precedes it
        if ":" in text[start:end]:
            return False  # an IPv6 address numbers no section ("see section (fd12:3456:789a::54)")
        return numbered_before(text[max(0, start - 40) : start]) or listed_before(text[max(0, start - 120) : start])


@lru_cache(maxsize=256)
def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``text`` spells, or None. Validation and the checks after it read the same
    candidate one after the other: parsed once (an IPv6 address costs ≈ 10 µs to parse, and a page
    of hex pairs is tens of thousands of candidates)."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _embedded_ipv4(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 host an IPv6 address carries: IPv4-mapped (``::ffff:a.b.c.d``), IPv4-compatible
    (``::a.b.c.d``) and NAT64's well-known prefix (``64:ff9b::a.b.c.d``); None for others."""
    if ip.version == 4:
        return None
    assert isinstance(ip, ipaddress.IPv6Address)
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if int(ip) >> 32 == 0 or ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _single_digits(quad: str, last: int = 1) -> bool:
    """Whether a dotted quad's first three numbers have one digit each and its last at most ``last``."""
    return len(quad) <= 6 + last and quad[1:2] == quad[3:4] == quad[5:6] == "."


def _netmask(value: int) -> bool:
    """Whether a 32-bit value is a contiguous network mask: some ones, then only zeros."""
    zeros = ~value & 0xFFFFFFFF
    return value != 0 and zeros & (zeros + 1) == 0


def _all_ones_host(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """The broadcast address of the RFC 1918 block holding ``ip`` (its host part all ones)."""
    return any(ip in net and ip == net.broadcast_address for net in _PRIVATE_BLOCKS)


_PRIVATE_BLOCKS = tuple(ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"))
# the placeholder addresses of examples and the public resolvers: no one's host
_EXAMPLE_ADDRESSES = frozenset(
    {"255.255.255.255", "1.2.3.4", "1.2.3.5", "4.3.2.1", "8.8.8.8", "8.8.4.4", "1.1.1.1", "1.0.0.1", "9.9.9.9"}
)
_DOTTED_MORE = re.compile(r"\.[0-9]")
_DOTTED_LESS = re.compile(r"[0-9]\.$")
# What numbers a part of a document or a release when it stands right before a dotted quad: the
# section words (also "reference", "annex", "figure" …, without a colon: "Note: 10.0.0.5 is the
# host" names an address; not "table" or "step": "routing table 10.0.0.0/24"), a standard's
# citation ("ISO 32000-2:2020, ", "RFC 9110 ") and the comparison operators of version specifiers ("==1.0.0.0", ">= 1.2.3.4"; not a bare ">": "a -> 10.0.0.2").
_NUMBERING = (
    # (a section's number quoted with its title after "section(s)" only: the HTML spec's sections
    # "8.2.4.44 Bogus comment state"; a quote after "release:" opens a value, an address as often)
    re.compile(
        r"(?i:\b(?:section|sect\.|sec\.|version|ver\.|release|chapter|clause|v)|§)[ #:-]*\Z|(?i:\bsections?)[ #:\"'(-]*\Z"
    ),
    re.compile(
        r"(?i:\b(?:reference|ref\.|annex|appendix|paragraph|para\.|article|art\.|figure|fig\.|specs?"
        r"|specification)|§§)[ #,\"'(-]*\Z"
    ),
    re.compile(
        r"\b(?:ISO|IEC|RFC|ECMA|IEEE|ANSI|ITU-T|ETSI|DIN|JIS|BS|EN|NIST SP)[ /]?[0-9][0-9.-]*(?::[0-9]{4})?,? \Z"
    ),
    re.compile(r"(?:[=!<>~]=|===)[ \t]*\Z"),
    # a version assigned as a value: ``__version__ = "3.5.0.1"``, ``"version": "1.0.0.2"``
    re.compile(r"(?i:version)_*[\"']?[ \t]*[:=][ \t]*[\"']?\Z"),
    # an ASN.1 object identifier of four arcs (``ObjectIdentifier("2.5.4.3")``, ``oid =
    # "1.3.101.110"``, ``OID 2.5.29.17``, ``EXTENSION_OID_SUBJECT_KEY_ID = '2.5.29.14'``): the
    # registry's numbers, read as a dotted quad; longer OIDs are already no address (``_DOTTED_MORE``)
    re.compile(r"(?i:(?:\b|_)(?:object[ _-]?identifier|oid)s?(?:_[a-z0-9_]*)?)[ \t]*[(\[=:,]?[ \t]*[\"'(]?\Z"),
)
# the later numbers of a list after a plural section word ("sections 5.2.4 and 6.2.2.3",
# "§§ 3.1.4.1, 3.1.4.2"): each number of the list numbers a section, not only the first
_NUMBERS_LISTED = re.compile(
    r"(?i:\b(?:sections|sects\.|secs\.|clauses|chapters|paragraphs|articles|annexes|appendices|figures|versions"
    r"|releases)|§§)[ #:]*(?:[0-9]+(?:\.[0-9]+)*[a-z]?[ \t]*(?:,|,?[ \t]*(?:and|or|to|through|&)|-|–)[ \t]*)+\Z"
)
# Each search above is tried at every place of its window with every alternative (≈ 20 µs for the
# lot, on every dotted quad); each ends at the window's end, so the characters it must end with are
# looked at first. What may trail each (stripped), and what the rest must then end with:
_SECTION_TRAIL = " #:-,\"'("  # after a section or reference word ([ #:-]* and [ #,"'(-]*)
_SECTION_LAST = frozenset("n.ervxhcsNERVXHCS")  # section, sect., release, chapter, v, annex, …
_STANDARD_LAST = frozenset("0123456789.-")  # "RFC 9110 ", "ISO 32000-2:2020, "
_LISTED_ENDS = (",", "and", "or", "to", "through", "&", "-")


def numbered_before(before: str) -> bool:
    """``any(rx.search(before) for rx in _NUMBERING)``, each search run only where the end of
    ``before`` lets it match."""
    # a window beyond ASCII ("§", "–", case folding: "ſ" is an "s" to the searches) is searched
    if not before.isascii():
        return any(rx.search(before) for rx in _NUMBERING)
    if not before:
        return False
    bare = before.rstrip(" \t")
    tail = before.rstrip(_SECTION_TRAIL)
    low = before.lower()
    if tail and tail[-1] in _SECTION_LAST and (_NUMBERING[0].search(before) or _NUMBERING[1].search(before)):
        return True
    if before[-1] == " " and before.rstrip(" ,")[-1:] in _STANDARD_LAST and _NUMBERING[2].search(before):
        return True
    if bare[-1:] == "=" and _NUMBERING[3].search(before):
        return True
    quoted = bare.rstrip("\"'").rstrip(" \t")
    if quoted[-1:] in (":", "=") and "version" in low and _NUMBERING[4].search(before):
        return True
    return ("oid" in low or "object" in low) and _NUMBERING[5].search(before) is not None


def listed_before(before: str) -> bool:
    """``_NUMBERS_LISTED.search(before)``, run only where the end of ``before`` lets it match: a
    list's separator or conjunction last and a plural section word in it."""
    if not before.isascii():
        return _NUMBERS_LISTED.search(before) is not None
    if not before.rstrip(" \t").endswith(_LISTED_ENDS):
        return False
    low = before.lower()
    if not any(w in low for w in _LISTED_WORDS):
        return False
    return _NUMBERS_LISTED.search(before) is not None


_LISTED_WORDS = ("sections", "sects.", "secs.", "clauses", "chapters", "paragraphs", "articles", "annexes",
                 "appendices", "figures", "versions", "releases")  # fmt: skip
# a release's pre-release or build tag glued to it: "-beta2", "-rc1", "-SNAPSHOT", or git's
# abbreviated commit ("-5a1e7", "-g5a1e7f0": hex with a letter in it, five digits at least)
_BUILD_AFTER = re.compile(
    r"-(?:(?i:alpha|beta|rc|pre|dev|post|snapshot|final)[0-9.]*|g?(?=[0-9a-f]*[a-f])[0-9a-f]{5,})(?:$|[^0-9A-Za-z])"
)
# what follows a version, not an address: "1.2.3.4 or higher", "or later", "and newer", "and above"
_VERSION_AFTER = re.compile(r"\+?[ \t]+(?:or|and)[ \t]+(?:higher|later|newer|above|greater|up)\b")
_DOCUMENTATION = tuple(
    ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)


class MacRecognizer(MacAddressRecognizer):
    """MAC addresses; presidio's back-reference (same separator throughout) is checked in
    ``validate_result`` instead, so the pattern runs on RE2."""

    PATTERNS = [
        Pattern("mac_colon_or_hyphen", r"\b[0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}\b", 0.6),
        # not inside a longer dotted run: "4111.1111.1111.1111" is a card, not a MAC plus ".1111"
        Pattern(
            "mac_cisco_dot",
            r"(?:^|[^0-9A-Za-z.])(?P<value>[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})"
            r"(?:$|[^0-9A-Za-z.]|\.(?:$|[^0-9A-Za-z]))",
            0.6,
        ),
    ]

    def __init__(self) -> None:
        super().__init__(patterns=list(self.PATTERNS), name="MacRecognizer")
        self.global_regex_flags = 0

    def validate_result(self, pattern_text: str) -> bool:
        seps = {c for c in pattern_text if c in ":-."}
        return len(seps) == 1 and not _placeholder_mac(pattern_text)

    def reject_first(self, text: str, start: int, end: int) -> bool:
        """Six pairs of a longer run of hex pairs (``MD5:19:dd:41:…:66:4c``) are a window of a
        digest, not a hardware address. Read before validation (the scanner's ``reject_first``):
        cheaper than the placeholder check, and a page of hex pairs is all such windows."""
        return in_digest(text, start, end)


# A key's or certificate's fingerprint as ssh-keygen and openssl print it: 16 or more hex pairs
# joined by ":" (or "-"). No hardware address is longer than an EUI-64's eight pairs, so in a
# longer run no window of six (a MAC) or eight (an IPv6 address of two-digit groups) is one.
_LONGEST_ADDRESS_PAIRS = 8
_PAIR_RUN = re.compile(r"[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})+")
_HEX = frozenset("0123456789abcdefABCDEF")
_ALNUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
# one pair and its separator: how far the look either side must reach to see a run longer than
# an EUI-64 (bounded, so a page of hex costs linear time)
_REACH = 3 * (_LONGEST_ADDRESS_PAIRS + 1)


def in_digest(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is hex pairs with one separator throughout that, with the pairs
    glued before and after it, make a run longer than any hardware address."""
    m = _PAIR_RUN.fullmatch(text, start, end)
    if m is None:
        return False
    sep = m.group(1)
    pairs = (end - start + 1) // 3
    # Counted a pair at a time, at most a reach's worth each side: a page of hex pairs is nothing
    # but candidates, and two regex searches each (one tried at every place of its window) were
    # most of its cost.
    reach = _REACH // 3
    before, i = 0, start
    while before < reach and i >= 3 and text[i - 1] == sep and text[i - 3] in _HEX and text[i - 2] in _HEX:
        before += 1
        i -= 3
    n = len(text)
    after, j = 0, end
    while after < reach and j + 3 <= n and text[j] == sep and text[j + 1] in _HEX and text[j + 2] in _HEX:
        after += 1
        j += 3
    if after and j < min(n, end + _REACH) and text[j] in _ALNUM:
        after -= 1  # "…:ab:cdX": the last pair runs on into a word, so the run ends before it
    return pairs + before + after > _LONGEST_ADDRESS_PAIRS


def _placeholder_mac(value: str) -> bool:
    """The addresses documentation writes when it means "some MAC": every byte the same
    (``00:00:…``, ``ff:ff:…``, ``aa:aa:…``), the hex digits counting up or down
    (``01-23-45-67-89-ab``, ``12:34:56:78:9a:bc``), the bytes counting by one
    (``01:02:03:04:05:06``) or by 0x11 (``00:11:22:33:44:55``, ``aa:bb:cc:dd:ee:ff``), also
    after a first byte that does not (``00:1A:2B:3C:4D:5E``, ``0012.3456.789A``: the digits after
    the first byte count up). No manufacturer assigns these; a real address is 24 random-looking
    bits after its vendor prefix, and the chance that its last five bytes step evenly is one in
    2**24 (its last ten digits, one in 2**36). And RFC 7042's block for documentation,
    ``00-00-5E-00-53-00`` to ``…-53-FF`` (as RFC 5737's addresses are for IPv4)."""
    digits = [int(c, 16) for c in value if c not in ":-."]
    octets = [digits[i] * 16 + digits[i + 1] for i in range(0, len(digits) - 1, 2)]
    if octets[:5] == [0x00, 0x00, 0x5E, 0x00, 0x53]:
        return True
    steps = {(b - a) % 256 for a, b in zip(octets, octets[1:], strict=False)}
    nibble_steps = {(b - a) % 16 for a, b in zip(digits, digits[1:], strict=False)}
    if steps <= {0} or steps <= {1} or steps <= {255} or steps <= {0x11} or nibble_steps in ({1}, {15}):
        return True
    tail_steps = {(b - a) % 256 for a, b in zip(octets[1:], octets[2:], strict=False)}
    tail_nibble_steps = {(b - a) % 16 for a, b in zip(digits[2:], digits[3:], strict=False)}
    return len(tail_steps) == 1 or len(tail_nibble_steps) == 1


class InternalHostRecognizer(TiersPatternRecognizer):
    """Host names ending in one of the configured internal suffixes (``db1.corp.example.com``)."""

    ENTITY = "INTERNAL_HOST"

    def __init__(self, suffixes: Iterable[str]) -> None:
        # longest first, then alphabetical: the same pattern in every process (see markers.py)
        alts = "|".join(re2.escape(s) for s in sorted(set(suffixes), key=lambda s: (-len(s), s)))
        regex = (
            r"(?i)(?:^|[^a-z0-9.-])(?P<value>(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?:"
            + alts
            + r"))(?:$|[^a-z0-9.-]|\.(?:$|[^a-z0-9]))"
        )
        super().__init__(patterns=[Pattern("internal_host", regex, 0.9)])
