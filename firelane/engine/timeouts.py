"""What a deadline's expiry does, chosen per seat; the settings' long durations.

Settings (every system's, see `BaseRuleSystem.base_settings`):

- ``turn_timer`` / ``turn_timer_ms``: a human's turn timer (0: none), in
  human units ("24h", "90m", "3d", "1h30m") or milliseconds;
- ``reaction_deadline`` / ``reaction_deadline_ms``: how long a reaction window
  waits for its answers, in the same units;
- ``on_turn_timeout``: what a turn timer's end does for every seat:
  ``"end_turn"``, ``"ai"`` (the AI plays the rest of it) or ``"gm"`` (the GM
  is asked);
- ``on_timeout``: per seat, what the end of its turns' and its windows'
  deadlines does: ``{"alice": "pass", "bob": "ai", "carol": "gm"}`` (or one
  word for every seat). ``"pass"`` ends a turn and passes a window; ``"ai"``
  lets the AI play the turn or answer the window; ``"gm"`` asks the GM (a GM
  call, ``time-up``), while the late player may still answer.

Pure: the sequencer keeps the clock; this says what happens when it runs out.
"""

from __future__ import annotations

from typing import Any

from firelane.engine.durations import DurationError, describe_duration, parse_duration
from firelane.engine.seats import seat_controlling

# Long deadlines: a play-by-post table waits days, not a day at most.
MAX_DEADLINE_MS = 30 * 86_400_000
# Human-unit names of the millisecond settings.
DURATION_SETTINGS = {"turn_timer": "turn_timer_ms", "reaction_deadline": "reaction_deadline_ms"}
TURN_TIMEOUTS = ("end_turn", "ai", "gm")
SEAT_TIMEOUTS = ("pass", "ai", "gm")
# The GM call a deadline's end raises for a seat whose choice is "gm".
TIME_UP_CALL = "time-up"
END_THE_TURN = "end the turn"
AI_PLAYS_THE_TURN = "let the AI play the turn"
CLOSE_THE_WINDOW = "close the window (those who have not answered pass)"


class SettingsError(ValueError):
    """A setting that cannot be played with: one line for a person."""


def normalise_timing(settings: dict[str, Any], seat_ids: list[str]) -> dict[str, Any]:
    """The setup's settings with durations in milliseconds: ``turn_timer`` and
    ``reaction_deadline`` (human units) become ``turn_timer_ms`` and
    ``reaction_deadline_ms``, which take human units too; ``on_turn_timeout``
    and ``on_timeout`` are checked against the choices and the seats. Raises
    SettingsError with one line naming the setting."""
    settings = dict(settings)
    for human, key in DURATION_SETTINGS.items():
        if human in settings and key in settings:
            raise SettingsError(f"settings: give {human} or {key}, not both")
        name = human if human in settings else key
        if name not in settings:
            continue
        given = settings.pop(name)
        if name == key and (not isinstance(given, str) or not any(c.isalpha() for c in given)):
            settings[key] = given  # milliseconds as ever (or no units at all): the ranges check them
            continue
        try:
            ms = parse_duration(given, name=f"settings.{name}")
        except DurationError as exc:
            raise SettingsError(str(exc)) from None
        low = 0 if key == "turn_timer_ms" else 1
        if not low <= ms <= MAX_DEADLINE_MS:
            raise SettingsError(f"settings.{name}: must be from {'0 (none)' if low == 0 else '1 ms'} to "
                                f"{describe_duration(MAX_DEADLINE_MS)}, not {describe_duration(ms) if ms > 0 else ms}")
        settings[key] = ms
    then = settings.get("on_turn_timeout", "end_turn")
    if then not in TURN_TIMEOUTS:
        raise SettingsError(f"settings.on_turn_timeout: must be one of {', '.join(TURN_TIMEOUTS)}, not {str(then)[:40]!r}")
    if "on_timeout" in settings:
        settings["on_timeout"] = _seat_choices(settings["on_timeout"], seat_ids)
    return settings


def _seat_choices(value: Any, seat_ids: list[str]) -> dict[str, str]:
    if isinstance(value, str):
        value = {seat: value for seat in seat_ids}
    if not isinstance(value, dict):
        raise SettingsError(f"settings.on_timeout: must name a choice ({', '.join(SEAT_TIMEOUTS)}) per seat, "
                            f"e.g. {{\"alice\": \"gm\"}}")
    for seat, choice in value.items():
        if seat not in seat_ids:
            raise SettingsError(f"settings.on_timeout: there is no seat {str(seat)[:40]!r} "
                                f"(seats: {', '.join(seat_ids) or 'none'})")
        if choice not in SEAT_TIMEOUTS:
            raise SettingsError(f"settings.on_timeout.{seat}: must be one of {', '.join(SEAT_TIMEOUTS)}, "
                                f"not {str(choice)[:40]!r}")
    return dict(value)


def seat_choice(state: Any, combatant: str) -> str | None:
    """The ``on_timeout`` choice of the seat that controls ``combatant``, if its seat made one."""
    seat = seat_controlling(state.seats, combatant)
    choices = state.settings.get("on_timeout") or {}
    return choices.get(seat.id) if seat is not None else None


def turn_timeout(state: Any, combatant: str) -> str:
    """What the end of ``combatant``'s turn timer does: "end_turn", "ai" or "gm"."""
    choice = seat_choice(state, combatant)
    if choice is not None:
        return "end_turn" if choice == "pass" else choice
    return str(state.settings.get("on_turn_timeout", "end_turn"))


def window_timeout(state: Any, combatant: str) -> str:
    """What the end of a window's deadline does for ``combatant``, unanswered: "pass", "ai" or "gm"."""
    return seat_choice(state, combatant) or "pass"
