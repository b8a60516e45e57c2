"""`tiergate serve --demo`: the README's first example works without a vendor account, and shows
what a shared vendor receives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import openai

from tests.support.servers import GatewayProcess

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "tiergate.example.yaml"


def test_demo_run_of_the_readme_example(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    made = subprocess.run([sys.executable, "-m", "gateway.cli", "keys", "create", "--config", str(EXAMPLE),
                           "--tenant", "acme", "--name", "laptop"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, check=True)  # fmt: skip
    key = json.loads(made.stdout.splitlines()[0])["key"]
    log = tmp_path / "serve.log"
    with GatewayProcess(EXAMPLE, env=env, cwd=tmp_path, log=log, args=("--demo",)) as gw:
        client = openai.OpenAI(base_url=gw.url + "/v1", api_key=key, max_retries=0)
        reply = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "Summarise the ticket from jane.doe@example.com"}],
        )
        text = reply.choices[0].message.content or ""
        # The vendor saw a placeholder; the client gets the address back.
        assert text.startswith("[demo echo vendor] I received: Summarise the ticket from \u2039EMAIL_1\u203a")
        assert text.endswith("Echoed back: Summarise the ticket from jane.doe@example.com")
        streamed = "".join(
            c.choices[0].delta.content or ""
            for c in client.chat.completions.create(
                model="gpt-4o-mini", stream=True, messages=[{"role": "user", "content": "Call +49 30 1234 5678 please"}]
            )
            if c.choices
        )
        assert "\u2039PHONE_1\u203a" in streamed and streamed.endswith("Call +49 30 1234 5678 please")
        try:
            client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "Refund card 4556 0172 8390 6414"}]
            )
            raise AssertionError("a Tier-3 prompt reached the demo vendor")
        except openai.PermissionDeniedError as exc:
            assert exc.status_code == 403
        models = {m.id for m in client.models.list()}
        assert "gpt-4o-mini" in models
        health = httpx.get(gw.url + "/readyz")
        assert health.status_code == 200
    assert "demo mode" in log.read_text()
    rows = subprocess.run([sys.executable, "-m", "gateway.cli", "exposure", "query", "--config", str(EXAMPLE),
                           "--format", "json"], cwd=tmp_path, env=env, capture_output=True, text=True)  # fmt: skip
    assert rows.returncode == 0, rows.stderr
    sent = json.loads(rows.stdout)
    assert any(r.get("upstream") == "demo-echo" and r.get("provider") == "tiergate-demo" for r in sent), sent
