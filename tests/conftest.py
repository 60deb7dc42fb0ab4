"""Shared fixtures: a real redis-server per test session (see tests/redis_harness.py)."""

from tests.redis_harness import *  # noqa: F401,F403 - fixtures
