"""Azure-style connection strings, reported whole.

``Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=…;SharedAccessKey=…`` (Service
Bus, Event Hubs, Relay), ``HostName=…;SharedAccessKeyName=…;SharedAccessKey=…`` (IoT Hub),
``DefaultEndpointsProtocol=https;AccountName=…;AccountKey=…;EndpointSuffix=…`` (Storage),
``AccountEndpoint=…;AccountKey=…`` (Cosmos DB), ``Endpoint=…;AccessKey=…;Version=1.0`` (SignalR,
Web PubSub). Such a string is one credential: its key is useless without the endpoint and the
endpoint names the customer's namespace, so the whole run of ``Name=value;`` pairs is reported,
not only the key (``assignments`` finds the key alone in other ``;``-separated strings, as
ADO.NET's ``Password=…;`` whose server and database may be worth keeping).
"""

from __future__ import annotations

import re

from presidio_analyzer import Pattern

from .._base import TiersPatternRecognizer
from ._values import is_placeholder

__all__ = ["ConnectionStringRecognizer"]

# an endpoint pair names where the credential is for; a pair's value runs to the next ``;`` (a
# quote, a space or a ``<`` ends the string: the XML or code around it). Blanks may stand around
# ``=`` and ``;`` (``Endpoint = sb://…; SharedAccessKey = …``, as people write them out of
# documentation): the SDKs trim them, so the string is still one credential
_S = "[ \t]*"
_FIRST = r"(?i:Endpoint|HostName|DefaultEndpointsProtocol|AccountEndpoint|BlobEndpoint|QueueEndpoint)"
_VALUE = r"[^;\s'\"<]"
_EQ = _S + "=" + _S
_SEMI = _S + ";" + _S
_PAIR = r"[A-Za-z][A-Za-z0-9]*" + _EQ + _VALUE + "*"
_KEY_NAME = r"(?i:SharedAccessKey|AccountKey|AccessKey|SharedAccessSignature)"
# without case, as the pattern reads the names (``accesskey=`` too): a case-sensitive check here
# dropped every string written in lower case
_KEY_VALUE = re.compile(
    r"(?:^|;)[ \t]*(?:SharedAccessKey|AccountKey|AccessKey|SharedAccessSignature)[ \t]*=[ \t]*([^;]*)",
    re.IGNORECASE,
)
_ENDPOINT = _FIRST + _EQ + _VALUE + "+"
_KEY = _KEY_NAME + _EQ + _VALUE + "{16,}"
_MORE = "(?:" + _SEMI + _PAIR + ")*"
# after the endpoint and the key, the names the SDKs define go on, and pairs written as theirs
# are (``UseDevelopmentEmulator=false``): a string closed by its last pair is followed by code or
# configuration (``…;SharedAccessKey=…; retries = 5``)
_TRAILING_NAME = (
    r"(?i:EntityPath|EndpointSuffix|Version|TransportType|AccountName|SharedAccessKeyName|DeviceId|ModuleId"
    r"|GatewayHostName|BlobEndpoint|QueueEndpoint|TableEndpoint|FileEndpoint|DefaultEndpointsProtocol"
    r"|Endpoint|HostName|AccountEndpoint|SharedAccessKey|AccountKey|AccessKey|SharedAccessSignature"
    r"|Authentication|ClientId|Port|Database|ApplicationName|Hub|OperationTimeout)"
)
# ... or any name written as the SDKs write theirs, capitalised and right before its ``=``
_TRAILING = "(?:" + _SEMI + "(?:" + _TRAILING_NAME + _EQ + "|[A-Z][A-Za-z0-9]*=)" + _VALUE + "*)*"
# the pairs in any order (the SDKs read them so: ``AccountName=…;AccountKey=…;
# DefaultEndpointsProtocol=…`` and a key before its ``Endpoint=`` are written too), the pairs
# before the endpoint or key included: they name the account
_STRING = f"(?:{_PAIR}{_SEMI})*(?:{_ENDPOINT}{_MORE}{_SEMI}{_KEY}|{_KEY}{_MORE}{_SEMI}{_ENDPOINT}){_TRAILING}(?:{_S};)?"


class ConnectionStringRecognizer(TiersPatternRecognizer):
    """A ``Name=value;`` run that holds an endpoint and a key, in any order; the whole run."""

    ENTITY = "SECRET"
    PATTERNS = [Pattern("azure_connection_string", r"(?:^|[^A-Za-z0-9_])(?P<value>" + _STRING + ")", 0.9)]

    def invalidate_result(self, pattern_text: str) -> bool:
        keys = _KEY_VALUE.findall(pattern_text)
        return not keys or all(is_placeholder(k.strip()) for k in keys)
