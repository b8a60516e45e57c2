"""The printable assessment (HTML with a print stylesheet, and PDF) of real traffic, through the
CLI: the same verdict, timeline and vendor answers as the Markdown report, a drill marked on
every page, vendor text escaped, the stylesheet pinned by its hash in the CSP."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import textwrap
from pathlib import Path
from typing import Any

import pypdf
import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from audit.html_report import CSP
from audit.pdf_report import latin1
from gateway.cli import main
from tests.audit.test_playbook import PLAYBOOKS
from tests.gateway.conftest import base_config
from tests.gateway.test_drill import PROMPTS
from tests.support.harness import SECRETS, FakeUpstreams, GatewayHarness

VENDORS = {"providers": {"examplecloud": {"engine": "vLLM 0.11.2", "tenant_isolation": {
    "answer": "KV blocks never shared across accounts \u2014 \u201cper-account\u201d prefix cache; \u4e2d\u6587",
    "given": "2026-03-02", "engine": "vLLM 0.10.1"}}}}  # fmt: skip
DISCLOSURE = textwrap.dedent("""\
    title: "Cross-talk <script>alert(1)</script> on long prompts"
    reference: EC-2026-77
    providers: [examplecloud]
    window:
      start: 2020-01-01T00:00:00Z
      end: 2099-01-01T00:00:00Z
""")


def _pdf_text(data: bytes) -> list[str]:
    return [p.extract_text() for p in pypdf.PdfReader(io.BytesIO(data)).pages]


def test_printable_reports_of_real_traffic(fakes: FakeUpstreams, sqlite_db: str, tmp_path: Path,
                                           classifier: Any) -> None:  # fmt: skip
    config = base_config(fakes, playbooks=PLAYBOOKS, vendors=VENDORS)
    config["upstreams"][0]["provider"] = "examplecloud"  # the shared "vendor"
    with GatewayHarness(sqlite_db, tmp_path, config, classifier=classifier) as gw:
        client = gw.openai(gw.create_key("acme"))
        for text in PROMPTS:
            client.chat.completions.create(model="chat", messages=[{"role": "user", "content": text}])
        gw.settle()
    cfg = tmp_path / "ops.yaml"
    cfg.write_text(yaml.safe_dump({**config, "secrets": SECRETS, "state_dir": str(tmp_path / "ops"),
                                   "audit": {"url": sqlite_db, "checkpoint_dir": str(tmp_path / "cp")}}))  # fmt: skip
    (tmp_path / "d.yaml").write_text(DISCLOSURE)

    def cli(*args: str) -> Any:
        return CliRunner().invoke(main, ["exposure", *args, "--config", str(cfg)])

    html_file, pdf_file = tmp_path / "r.html", tmp_path / "r.pdf"
    real = cli("assess", str(tmp_path / "d.yaml"), "--record", "--actor", "ops on call", "--format", "html",
               "-o", str(html_file))  # fmt: skip
    assert real.exit_code == 20, real.output  # Tier 1 and (stripped) Tier 2 reached the shared vendor
    html = html_file.read_text()
    assert 'data-verdict="sensitive_data_may_be_exposed"' in html
    assert "<td>1</td><td>1</td>" in html and "<td>2</td><td>1</td>" in html  # by tier; Tier 3 stayed on-prem
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "DRILL" not in html and "Timeline" in html and "<td>loaded</td>" in html
    assert "\u201cper-account\u201d" in html and "\u4e2d\u6587" in html  # the HTML keeps every character
    assert "DUE FOR REVIEW: given for vLLM 0.10.1; the vendor now serves vLLM 0.11.2" in html
    style = re.search(r"<style>(.*?)</style>", html, re.S).group(1)  # type: ignore[union-attr]  # no match fails the test right here
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    assert f"style-src 'sha256-{digest}'" in CSP and "script-src" not in CSP and "default-src 'none'" in CSP
    assert "@media print" in style and "size: A4" in style and "display: table-header-group" in style

    did = re.search(r"<dt>Disclosure id</dt><dd>(\d+)</dd>", html).group(1)  # type: ignore[union-attr]  # no match fails the test right here
    made = cli("timeline", did, "--format", "pdf", "-o", str(pdf_file))
    assert made.exit_code == 0, made.output
    data = pdf_file.read_bytes()
    assert data.startswith(b"%PDF-")
    pages = _pdf_text(data)
    text = "\n".join(pages)
    assert "Verdict:" in text and "Playbook and clock" in text and "Timeline" in text
    assert "loaded" in text and "assessed" in text and "ops on call" in text
    assert '"per-account"' in text.replace("\n", " ") or "per-account" in text  # quotes folded to ASCII
    assert "\u4e2d" not in text and "DRILL" not in text
    assert "Cross-talk <script>alert(1)</script>" in text.replace("\n", " ")  # plain text in a PDF is inert

    drill = cli("drill", "--actor", "ops on call", "--simulate", "--format", "pdf", "-o", str(pdf_file))
    assert drill.exit_code == 0, drill.output
    pages = _pdf_text(pdf_file.read_bytes())
    assert all("DRILL: A REHEARSAL OF THE INCIDENT PLAYBOOK, NOT A REAL INCIDENT" in p for p in pages)
    assert "closed (drill)" in "\n".join(pages)
    drill_html = cli("drill", "--actor", "ops on call", "--format", "html").stdout
    assert 'id="drill-banner"' in drill_html and "<h1>DRILL: rehearsal" in drill_html


@given(st.text(max_size=60))
def test_pdf_text_is_always_printable_latin1(text: str) -> None:
    out = latin1(text)
    out.encode("latin-1")  # never raises: the core fonts can print all of it
    assert out.isprintable() or out == ""
