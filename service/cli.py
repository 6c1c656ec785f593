"""The ``dgt-service`` command.  Each sub-command lives in its own module under
``service.commands`` with ``add_parser(subparsers)`` and ``run(args) -> int``."""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from dgt.errors import DgtError
from service.errors import UsageError

COMMANDS = (
    "run",
    "central",
    "demo",
    "play",
    "monitor",
    "emulate",
    "scan",
    "recognize",
    "store",
    "central_web",
)
"""Sub-command modules, in the order ``--help`` lists them."""


class _Version(argparse.Action):
    """``--version``: the version and which build runs (plain Python or compiled)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from service.build_info import describe

        print(describe())
        parser.exit(0)


class _Parser(argparse.ArgumentParser):
    """argparse with its errors on one line (``dgt-service run: argument --port: ...``),
    pointing at ``--help`` instead of printing the whole usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dgt-service",
        description="Driver, emulator and arbiter service for DGT electronic chessboards.",
    )
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="more logging (-vv: debug)"
    )
    parser.add_argument(
        "--version",
        action=_Version,
        nargs=0,
        help="print the version and the build (plain Python or compiled with mypyc) and exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"service.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"service.commands.{name}":
                raise
            continue  # not written yet
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING - 10 * args.verbose
    logging.basicConfig(
        level=max(level, logging.DEBUG), format="%(levelname)s %(name)s: %(message)s"
    )
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader of our output went away (``| head``): not an error worth a message.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (DgtError, UsageError, OSError) as exc:
        print(f"dgt-service {args.command}: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, UsageError) else 1


if __name__ == "__main__":
    sys.exit(main())
