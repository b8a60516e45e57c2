"""The vendor-state book: which upstream produced a signature, by digest, bounded."""

from __future__ import annotations

from gateway.vendor_state import VendorStateBook


def test_producers_by_digest_bounded_and_refreshed() -> None:
    book = VendorStateBook(capacity=2)
    book.remember("a", ["sig-1", ""])
    book.remember("b", ["sig-2"])
    assert book.producers(["sig-1", "unknown"]) == {"a"}
    book.remember("a", ["sig-1"])  # used again: kept over the older entry
    book.remember("c", ["sig-3"])
    assert book.producers(["sig-2"]) == set() and book.producers(["sig-1", "sig-3"]) == {"a", "c"}
    assert "sig-1" not in repr(book._by_digest)  # digests only, never the value
