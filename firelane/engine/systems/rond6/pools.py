"""RonD6 dice pools (R6-01): die codes, the Wild Die and the difficulty ladder.

A die code such as ``3D+2`` means "roll three six-sided dice and add two".
Three pips make a die, so codes are kept normalised with 0..2 pips
(``3D+2`` plus one pip is ``4D``; ``4D`` minus one pip is ``3D+2``).

Rolling a pool (`roll_pool`):

* **House default: the Wild Die is the first die rolled.** The pool's dice are
  rolled in order (index 0 is the Wild Die), then, if the Wild Die showed a 6,
  the explosion rerolls follow, one after another, for as long as they show 6.
  Every reroll is added to the total.
* Stymied (R6-22) loses the reroll: a 6 on the Wild Die is just a 6.
* A 1 on the Wild Die (its first face only; a 1 on an explosion reroll is just
  a 1) is a *complication*. What happens is the ``complication_rule``:

  - ``"remove"`` (**house default**): the 1 and the highest other die are
    removed from the total;
  - ``"remove_wild"``: only the 1 is removed;
  - ``"keep"``: every die counts; the complication is only flagged for the GM.

  It is configurable per encounter through the system's settings (the main
  system passes its ``complication_rule`` setting here).
* Pips are written into the roll as a `Modifier` (source ``"pips"``, rule
  R6-01) so that ``total == sum(kept faces) + sum(modifier values)``. When a
  complication removes every die (a 1D pool, or 2D with the Wild Die's 1),
  ``kept`` is empty and ``none_kept`` says that no die counts.
* Extra Wild Dice (a Character Point spent on a roll, R6-20) are rolled after
  everything else, each separately, "applying the normal Wild Die rules": each
  explodes on 6 (unless Stymied), and a 1 on its first face is a complication.
  Rolled separately, each is a pool of its own, so under ``"remove"`` and
  ``"remove_wild"`` the complication removes that 1 alone (there is no other
  die in its pool to take); under ``"keep"`` it is only flagged.

``Roll.details`` records ``code``, ``wild_index``, ``wild_die`` (the faces of
the Wild Die and its explosion chain), ``exploded`` (number of rerolls),
``complication`` (bool: the Wild Die's or an extra Wild Die's), ``complication_rule``,
``removed`` (indices into ``Roll.dice`` not counted), ``stymied``, with extra
Wild Dice ``extra_wild_dice`` (each one's chain of faces) and
``extra_wild_complications`` (indices of those that showed 1), and, when a
target is given, ``result_points`` (how far the total beat the target; 0 on a failure).

The difficulty ladder (**house default**, configurable): Very Easy 5, Easy 10,
Standard 15, Moderate 20, Difficult 25, Very Difficult 30, Heroic 35; each
"Difficulty Level" is one step up the ladder; beyond Heroic every further step
adds 5 (**house default**); below Very Easy a step down stays at Very Easy.

Pure: no I/O, only the injected dice.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from firelane.engine.dice import Dice
from firelane.events.schemas import Die, Modifier, Roll

RULE_DICE = "R6-01"
PIPS_PER_DIE = 3
COMPLICATION_RULES = ("remove", "remove_wild", "keep")

_PARSED: dict[str, DieCode] = {}
_CODE_PATTERN = re.compile(r"^\s*(\d+)\s*[dD]\s*(?:([+-])\s*(\d+))?\s*$")


class DieCode(msgspec.Struct, frozen=True):
    """A die code: ``dice`` six-sided dice plus ``pips`` (0..2) added to the total."""

    dice: int
    pips: int = 0

    def __post_init__(self) -> None:
        if self.dice < 0:
            raise ValueError(f"a die code cannot have a negative number of dice ({self.dice})")
        if not 0 <= self.pips < PIPS_PER_DIE:
            raise ValueError(
                f"a normalised die code has 0..2 pips, not {self.pips} "
                f"(use DieCode.from_pips({self.dice * PIPS_PER_DIE + self.pips}))"
            )

    # ---------------------------------------------------------------- building

    @classmethod
    def from_pips(cls, total_pips: int) -> DieCode:
        """The normalised code worth ``total_pips`` pips (three pips make a die)."""
        if total_pips < 0:
            raise ValueError(f"a die code cannot be worth less than nothing ({total_pips} pips)")
        dice, pips = divmod(total_pips, PIPS_PER_DIE)
        return cls(dice, pips)

    @classmethod
    def parse(cls, text: str) -> DieCode:
        """Parse ``"3D"``, ``"3D+2"``, ``"4d-1"`` (= ``3D+2``), ``"2D+4"`` (= ``3D+1``).

        Pips outside 0..2 are normalised (three pips make a die); a code worth
        less than 0D is refused. Raises ValueError with the offending text.
        """
        if isinstance(text, DieCode):
            return text
        if not isinstance(text, str):
            raise ValueError(f"a die code is text like '3D+2', not {text!r}")
        known = _PARSED.get(text)
        if known is not None:  # codes are frozen: the same text is the same code
            return known
        match = _CODE_PATTERN.match(text)
        if match is None:
            raise ValueError(f"not a die code: {text!r} (expected e.g. '3D', '3D+2', '4D-1')")
        dice = int(match.group(1))
        pips = int(match.group(3) or 0)
        if match.group(2) == "-":
            pips = -pips
        total = dice * PIPS_PER_DIE + pips
        if total < 0:
            raise ValueError(f"die code {text!r} is worth less than 0D")
        code = cls.from_pips(total)
        if len(_PARSED) < 4096:
            _PARSED[text] = code
        return code

    # ---------------------------------------------------------------- arithmetic

    def total_pips(self) -> int:
        return self.dice * PIPS_PER_DIE + self.pips

    def add_dice(self, n: int) -> DieCode:
        """``n`` more dice (negative takes dice away, never below 0D; see `minus_dice`)."""
        return DieCode.from_pips(max(0, self.total_pips() + n * PIPS_PER_DIE))

    def add_pips(self, n: int) -> DieCode:
        """``n`` more pips, normalised: ``3D+2`` plus one pip is ``4D``."""
        return DieCode.from_pips(max(0, self.total_pips() + n))

    def minus_dice(self, n: int, floor: int = 1) -> DieCode:
        """Take ``n`` dice away, but never below ``floor`` dice (R6-05: never below 1D).

        ``2D+2`` minus 1D is ``1D+2``; minus 2D it is ``1D`` (the floor). A code
        already below the floor is never raised by a penalty.
        """
        if n < 0:
            raise ValueError(f"minus_dice takes a non-negative number of dice, not {n}")
        reduced = self.total_pips() - n * PIPS_PER_DIE
        floor_pips = min(self.total_pips(), floor * PIPS_PER_DIE)
        return DieCode.from_pips(max(reduced, floor_pips))

    def __str__(self) -> str:
        return f"{self.dice}D+{self.pips}" if self.pips else f"{self.dice}D"


def as_code(value: DieCode | str | int) -> DieCode:
    """A `DieCode` from a code, its text, or a whole number of dice."""
    if isinstance(value, DieCode):
        return value
    if isinstance(value, bool):
        raise ValueError(f"not a die code: {value!r}")
    if isinstance(value, int):
        return DieCode(value)
    return DieCode.parse(value)


# ----------------------------------------------------------------------- rolling


def _explode(dice: Dice, first: Die, stymied: bool, out: list[Die]) -> list[Die]:
    """Reroll a Wild Die on each 6 (not when Stymied); returns the rerolls in order."""
    rerolls: list[Die] = []
    current = first
    while current.face == 6 and not stymied:
        current = dice.roll(6)
        out.append(current)
        rerolls.append(current)
    return rerolls


def roll_pool(
    dice: Dice,
    code: DieCode | str,
    *,
    purpose: str,
    rule: str,
    wild: bool = True,
    stymied: bool = False,
    modifiers: Sequence[Modifier] = (),
    complication_rule: str = "remove",
    target: int | None = None,
    extra_wild_dice: int = 0,
    notes: Sequence[str] = (),
    details: Mapping[str, Any] | None = None,
) -> Roll:
    """Roll a RonD6 pool; see the module doc for the order of dice and the Wild Die.

    With ``target`` the roll is a test: ``success = total >= target`` and
    ``details["result_points"]`` is ``total - target`` on a success, else 0.
    """
    code = as_code(code)
    if complication_rule not in COMPLICATION_RULES:
        raise ValueError(
            f"unknown complication rule {complication_rule!r}; known: {', '.join(COMPLICATION_RULES)}"
        )
    if extra_wild_dice < 0:
        raise ValueError(f"extra_wild_dice cannot be negative ({extra_wild_dice})")

    rolled: list[Die] = [dice.roll(6) for _ in range(code.dice)]
    has_wild = wild and code.dice > 0
    wild_chain: list[Die] = []
    complication = False
    removed: list[int] = []
    roll_notes = list(notes)

    if has_wild:
        wild_die = rolled[0]
        rerolls = _explode(dice, wild_die, stymied, rolled)
        wild_chain = [wild_die, *rerolls]
        if wild_die.face == 6 and stymied:
            roll_notes.append("Stymied (R6-22): the Wild Die's 6 is not rerolled")
        if rerolls:
            roll_notes.append(f"Wild Die exploded {len(rerolls)}x: {'+'.join(str(d.face) for d in wild_chain)}")
        if wild_die.face == 1:
            complication = True
            if complication_rule == "keep":
                roll_notes.append("complication: the Wild Die shows 1 (all dice counted)")
            else:
                removed.append(0)
                others = list(range(1, code.dice))
                if complication_rule == "remove" and others:
                    highest = max(others, key=lambda index: (rolled[index].face, -index))
                    removed.append(highest)
                    roll_notes.append(
                        f"complication: the Wild Die's 1 and the highest other die ({rolled[highest].face}) are removed"
                    )
                else:
                    roll_notes.append("complication: the Wild Die's 1 is removed")

    extra_chains: list[list[int]] = []
    extra_complications: list[int] = []
    for number in range(1, extra_wild_dice + 1):
        start = len(rolled)
        extra = dice.roll(6)
        rolled.append(extra)
        _explode(dice, extra, stymied, rolled)
        extra_chains.append([d.face for d in rolled[start:]])
        if extra.face == 1:
            # R6-20: each is rolled separately "applying the normal Wild Die rules", so its 1 is a
            # complication; alone in its own pool, it is the only die the complication removes.
            complication = True
            extra_complications.append(start)
            if complication_rule == "keep":
                roll_notes.append(f"complication: extra Wild Die {number} shows 1 (counted)")
            else:
                removed.append(start)
                roll_notes.append(f"complication: extra Wild Die {number} shows 1 and is removed")
    if extra_chains:
        roll_notes.append(f"{extra_wild_dice} extra Wild Die(s): " + ", ".join("+".join(map(str, c)) for c in extra_chains))

    all_modifiers = list(modifiers)
    if code.pips:
        all_modifiers.insert(0, Modifier(source=f"pips ({code})", rule=RULE_DICE, value=code.pips))
    kept = [index for index in range(len(rolled)) if index not in removed]
    total = sum(rolled[index].face for index in kept) + sum(m.value for m in all_modifiers)

    roll_details: dict[str, Any] = {
        "code": str(code),
        "wild_index": 0 if has_wild else None,
        "wild_die": [d.face for d in wild_chain],
        "exploded": max(0, len(wild_chain) - 1),
        "complication": complication,
        "complication_rule": complication_rule,
        "removed": removed,
        "stymied": stymied,
    }
    if extra_chains:
        roll_details["extra_wild_dice"] = extra_chains
        roll_details["extra_wild_complications"] = extra_complications
    success: bool | None = None
    if target is not None:
        success = total >= target
        roll_details["result_points"] = total - target if success else 0
    if details:
        roll_details.update(details)

    return Roll(
        purpose=purpose,
        rule=rule,
        dice=rolled,
        modifiers=all_modifiers,
        total=total,
        kept=kept,
        none_kept=bool(rolled) and not kept,
        target=target,
        compare=">=",
        success=success,
        notes=roll_notes,
        details=roll_details,
    )


def result_points(roll: Roll) -> int:
    """How far a successful test beat its target (0 for a failure or a non-test)."""
    if roll.target is None or not roll.success:
        return 0
    return roll.total - roll.target


# ----------------------------------------------------------------------- difficulty

DIFFICULTY_LADDER: dict[str, int] = {
    "very easy": 5,
    "easy": 10,
    "standard": 15,
    "moderate": 20,
    "difficult": 25,
    "very difficult": 30,
    "heroic": 35,
}
BEYOND_LADDER_STEP = 5


def _level_name(name: str) -> str:
    return " ".join(name.strip().lower().replace("_", " ").replace("-", " ").split())


def difficulty(
    name_or_number: str | int,
    steps: int = 0,
    ladder: Mapping[str, int] = DIFFICULTY_LADDER,
    *,
    settings: Mapping[str, Any] | None = None,
) -> int:
    """The difficulty number for a ladder level (or a number) raised by ``steps`` levels.

    ``difficulty("standard", 2) == 25``; ``difficulty("heroic", 1) == 40``
    (beyond the top, +5 per step: house default); a number on the ladder moves
    along it (``difficulty(15, 1) == 20``), a number off it moves 5 per step.
    Steps down stop at the lowest level. ``settings`` (an encounter's
    settings) may carry a ``difficulty_ladder`` that replaces ``ladder``.
    """
    if settings is not None and settings.get("difficulty_ladder"):
        ladder = settings["difficulty_ladder"]
    values = sorted(ladder.values())
    if not values:
        raise ValueError("the difficulty ladder is empty")
    if isinstance(name_or_number, bool):
        raise ValueError(f"not a difficulty: {name_or_number!r}")
    if isinstance(name_or_number, int):
        base = name_or_number
        if base not in values:
            moved = base + steps * BEYOND_LADDER_STEP
            return max(values[0], moved) if steps < 0 else moved
        index = values.index(base)
    else:
        normalised = {_level_name(key): value for key, value in ladder.items()}
        level = _level_name(name_or_number)
        if level not in normalised:
            raise ValueError(
                f"unknown difficulty {name_or_number!r}; known: {', '.join(ladder)}"
            )
        index = values.index(normalised[level])
    target_index = index + steps
    if target_index < 0:
        return values[0]
    if target_index < len(values):
        return values[target_index]
    return values[-1] + (target_index - len(values) + 1) * BEYOND_LADDER_STEP


def ladder_from(settings: Mapping[str, Any] | None) -> Mapping[str, int]:
    """The encounter's difficulty ladder (``settings["difficulty_ladder"]``) or the house default."""
    if settings is not None and settings.get("difficulty_ladder"):
        return settings["difficulty_ladder"]
    return DIFFICULTY_LADDER


def difficulty_name(value: int, ladder: Mapping[str, int] = DIFFICULTY_LADDER) -> str:
    """The ladder name of a difficulty number (``"20 (beyond heroic)"`` style off the ladder)."""
    for name, number in ladder.items():
        if number == value:
            return name
    return str(value)


# ----------------------------------------------------------------------- aux bookkeeping
# The aux rules (movement streaks, treated Wounds, structural damage of
# objects) keep their own little state in an ``aux`` dict on the combatant and
# on the encounter state; see rond6/aux.py. The accessors live here, in the
# one module every RonD6 module already imports, to avoid import cycles.


def combatant_store(combatant: Any) -> dict[str, Any]:
    """The combatant's ``aux`` dict (raises a clear error if the state class lacks it)."""
    store = getattr(combatant, "aux", None)
    if store is None:
        raise RuntimeError(
            f"{type(combatant).__name__} has no `aux: dict[str, Any] = {{}}` field; the RonD6 aux rules need it (see rond6/aux.py)"
        )
    return store


def state_store(state: Any) -> dict[str, Any]:
    """The encounter state's ``aux`` dict (raises a clear error if the state class lacks it)."""
    store = getattr(state, "aux", None)
    if store is None:
        raise RuntimeError(
            f"{type(state).__name__} has no `aux: dict[str, Any] = {{}}` field; the RonD6 aux rules need it (see rond6/aux.py)"
        )
    return store
