"""``python -m engine.pd --prefill URL --decode URL [--record-dir DIR] [--port N]``: the split router."""

from __future__ import annotations

import argparse
from pathlib import Path

import uvicorn

from engine.pd.router import SplitRouterConfig, create_router


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m engine.pd", description="Tiergate prefill/decode split router")
    parser.add_argument("--prefill", required=True, help="the prefill instance's engine front")
    parser.add_argument("--decode", required=True, help="the decode instance's engine front")
    parser.add_argument("--record-dir", type=Path, default=None, help="the KV guard's shared record directory")
    parser.add_argument("--decode-ranks", type=int, default=1, help="tensor-parallel ranks of the decode instance")
    parser.add_argument("--request-timeout-s", type=float, default=600.0, help="limit per request, both halves")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    config = SplitRouterConfig(args.prefill, args.decode, args.record_dir, args.decode_ranks, args.request_timeout_s)
    uvicorn.run(create_router(config), host=args.host, port=args.port, access_log=False)


if __name__ == "__main__":
    main()
