"""`tiergate serve`: the gateway under uvicorn."""

from __future__ import annotations

import gc
import os

import click

from gateway.commands._common import config_option, load_or_exit

__all__ = ["serve_command"]


@click.command(name="serve")
@config_option
@click.option("--host", default=None, help="Override server.host.")
@click.option("--port", type=int, default=None, help="Override server.port.")
@click.option("--workers", type=int, default=None, help="Override server.workers.")
@click.option("--demo", is_flag=True, help="Built-in echo vendor for every vendor without an API key.")
def serve_command(config_path: str | None, host: str | None, port: int | None, workers: int | None,
                  demo: bool) -> None:  # fmt: skip
    """Run the gateway (an OpenAI-compatible base URL at http://HOST:PORT/v1)."""
    import uvicorn

    from gateway.logs import uvicorn_log_config
    from gateway.serving import uvicorn_options

    if demo:
        os.environ["TIERGATE_SERVER__DEMO"] = "true"
    if port is not None:  # the demo vendor's address is the server's own
        os.environ["TIERGATE_SERVER__PORT"] = str(port)
    settings = load_or_exit(config_path)  # fail before forking workers, naming the wrong key
    if config_path:
        os.environ["TIERGATE_CONFIG"] = os.path.abspath(config_path)
    server = settings.server
    if (workers or server.workers) > 1:
        gc.enable()  # this process only watches the workers: no app of its own turns it on
    uvicorn.run(
        "gateway.app:app_from_env",
        factory=True,
        host=host or server.host,
        port=port if port is not None else server.port,
        workers=workers or server.workers,
        log_level=server.log_level,
        log_config=uvicorn_log_config(server.log_level),
        access_log=False,  # request lines carry client-chosen text; metrics and the audit log suffice
        timeout_graceful_shutdown=10,
        # Read deadlines, keep-alive and the connection cap (gateway/serving.py says why).
        **uvicorn_options(server),
    )
