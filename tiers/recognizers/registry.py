"""The recognizer registry: the shipped recognizers and the user's, in one presidio registry.

Defaults are added through the same ``RecognizerRegistry`` calls a user's YAML file goes
through, so there is one place that decides what runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from presidio_analyzer import RecognizerRegistry
from pydantic import BaseModel, ConfigDict

from formats.yaml_model import YamlModelError, read_yaml_file

from ..config import TiersConfig
from ..errors import RecognizerError
from .addresses import AddressRecognizer
from .birth_dates import DateOfBirthRecognizer
from .contact import EmailAddressRecognizer, PhoneNumberRecognizer
from .domain import configured_domain_recognizers, default_domain_recognizers
from .european import european_id_recognizers
from .financial import CardColumnRecognizer, CardRecognizer, IbanCodeRecognizer
from .firms import firm_recognizers
from .markers import default_marker_recognizers
from .names import known_names
from .national import national_id_recognizers
from .organizations import OrganizationRecognizer
from .people import person_recognizers
from .people_capitals import capitals_recognizers
from .people_korean import korean_recognizers
from .people_vietnamese import vietnamese_recognizers
from .people_fields import field_recognizers
from .people_prose import prose_recognizers
from .network import InternalHostRecognizer, IpAddressRecognizer, MacRecognizer
from .secrets import secret_recognizers

__all__ = ["build_registry"]


class _RecognizerFile(BaseModel):
    """A user's recognizer file: presidio's own format (its other top-level keys left to it)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    recognizers: list[dict[str, Any]]


def _load_yaml(registry: RecognizerRegistry, path: Path) -> None:
    try:
        doc = read_yaml_file(path)
        spec = doc.validate(_RecognizerFile)
    except YamlModelError as exc:
        raise RecognizerError(str(exc)) from None
    for i, item in enumerate(spec.recognizers):
        try:
            registry.add_pattern_recognizer_from_dict(item)
        except Exception as exc:  # noqa: BLE001 -- presidio raises assorted types; name the entry, not its text
            line = doc.line_of(("recognizers", i))
            raise RecognizerError(f"{path}:{line}: recognizers[{i}]: {type(exc).__name__}: {exc}") from None


def build_registry(cfg: TiersConfig) -> RecognizerRegistry:
    """Every recognizer the classifier runs, defaults first, then the user's files."""
    # every language a shipped recognizer is registered for (presidio's national ones keep theirs)
    registry = RecognizerRegistry(recognizers=[], supported_languages=["en", "de", "es", "fi", "fr", "it", "pl", "sv"])
    defaults = [
        EmailAddressRecognizer(cfg.internal_domains),
        PhoneNumberRecognizer(cfg.phone_regions),
        CardRecognizer(),
        CardColumnRecognizer(),
        IbanCodeRecognizer(),
        IpAddressRecognizer(),
        MacRecognizer(),
        *secret_recognizers(),
        *national_id_recognizers(),
        *european_id_recognizers(),
        *person_recognizers(),
        *capitals_recognizers(),
        *korean_recognizers(),
        *vietnamese_recognizers(),
        *field_recognizers(),
        *prose_recognizers(),
        OrganizationRecognizer(),
        *firm_recognizers(),
        AddressRecognizer(),
        DateOfBirthRecognizer(),
        *default_marker_recognizers(cfg.extra_markers),
        *default_domain_recognizers(),
        *configured_domain_recognizers(cfg.domain_patterns),
    ]
    if cfg.internal_domains:
        defaults.append(InternalHostRecognizer(cfg.internal_domains))
    names = known_names(cfg)
    if names is not None:
        defaults.append(names)
    for rec in defaults:
        registry.add_recognizer(rec)
    for path in cfg.recognizer_files:
        _load_yaml(registry, path)
    return registry
