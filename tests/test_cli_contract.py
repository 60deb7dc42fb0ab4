"""The CLI as a frontend's author reads it in the README: common options
before or after the subcommand, and JSON answers that end their line."""

from __future__ import annotations

import json

from firelane.cli.main import build_parser
from tests.cli_helpers import firelane


def test_common_options_may_come_before_the_subcommand() -> None:
    before = build_parser().parse_args(["--campaign", "x", "--no-color", "characters"])
    assert (before.command, before.campaign, before.no_color) == ("characters", "x", True)
    after = build_parser().parse_args(["characters", "--campaign", "y"])
    assert (after.campaign, after.no_color) == ("y", False)
    # Given in both places, the one after the subcommand wins; given in neither, the default.
    both = build_parser().parse_args(["--campaign", "x", "character", "adjust", "v", "--campaign", "z", "--reason", "r"])
    assert both.campaign == "z"
    assert build_parser().parse_args(["encounters"]).campaign == "default"


def test_a_campaign_named_before_the_subcommand_is_the_one_used(redis_url: str) -> None:
    created = firelane("--campaign", "early", "--redis", redis_url, "characters", "--create-demo", "toy")
    assert created.returncode == 0, created.stderr
    listed = json.loads(firelane("--campaign", "early", "characters", "--redis", redis_url, "--json").stdout)
    assert listed["campaign"] == "early" and listed["characters"]
    other = json.loads(firelane("characters", "--redis", redis_url, "--json").stdout)
    assert other["campaign"] == "default" and other["characters"] == []  # nothing went to the default campaign


def test_seats_and_create_json_end_with_a_newline(redis_url: str) -> None:
    created = firelane("create", "lined", "--demo-setup", "toy", "--redis", redis_url, "--json")
    assert created.returncode == 0, created.stderr
    assert created.stdout.endswith("}\n") and json.loads(created.stdout)["seats"]
    seats = firelane("seats", "lined", "--redis", redis_url, "--json")
    assert seats.stdout.endswith("}\n") and json.loads(seats.stdout)["seats"]
    gm = next(s for s in json.loads(seats.stdout)["seats"] if s["seat"] == "gm")
    assert gm["options"] == "firelane:{default}:enc:lined:options:gm"  # the seat's own view stream
