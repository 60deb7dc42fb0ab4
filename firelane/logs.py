"""structlog set-up: key-value lines on stderr, level from FIRELANE_LOG (default warning).

Kept out of engine/ (which never logs); actors, the log and frontends use it.
"""

from __future__ import annotations

import logging
import os
import sys

import structlog

_configured = False


def configure_logging(level: str | None = None) -> None:
    global _configured
    name = (level or os.environ.get("FIRELANE_LOG") or "warning").upper()
    numeric = getattr(logging, name, None)
    if not isinstance(numeric, int):
        raise ValueError(f"FIRELANE_LOG={name!r} is not a log level (debug, info, warning, error)")
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.format_exc_info,
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )
    _configured = True


def get_logger(name: str) -> structlog.typing.FilteringBoundLogger:
    if not _configured:
        configure_logging()
    return structlog.get_logger(name)
