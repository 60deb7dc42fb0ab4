"""What each rule system says about a character between fights.

A system's campaign rules (`CampaignRules`) answer four questions, all pure:

- ``status(sheet)``: "ready", "hurt", "down", "dying" or "dead";
- ``unfit(sheet)``: why the character cannot fight now (None: it can);
- ``aftermath(sheet, combatant)``: the sheet a character comes back with from a
  fight, given the sheet it took in and its final combatant state;
- ``rest(patients, request, dice)``: what a rest of some days does (downtime),
  rolling only through the injected dice.

and three that a GM's adjustment between fights asks (engine/campaign.py):

- ``fit(sheet)``: the sheet with its harm undone (full Vitality, no Wounds...),
  the form in which a fight's start check can judge the fields the GM changed
  without tripping over the harm a fight left on the others;
- ``settle(before, after, touched)``: the fields that go with the ones the GM
  set (RonD6's injury conditions follow its Wounds, d100-zones' unconscious
  ends above 0 HP), made to agree;
- ``revive(sheet)``: a dead character brought back at the edge of life.

`CountdownPoolRules` answers them for a system whose harm is one number that a
fight counts down (Vitality, wounds, HP), given the fields' names and the
words; `set_or_clear` and `remove_entries` keep a sheet's ``conditions`` and
``aux`` free of empty mappings.

Each system keeps its rules in its own folder (``engine/systems/<s>/campaign.py``,
exposing ``RULES``), found through the registry of rule systems
(engine/registry.py) and imported on first use. A system without campaign
rules gets `CampaignRules`: every sheet field the combatant still has comes
back as the fight left it, Down means out of the fight, and it has no
downtime rules.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec

from firelane.engine.dice import Dice
from firelane.engine.registry import system_campaign_rules
from firelane.engine.state import Combatant
from firelane.events.campaign_schemas import Change
from firelane.events.schemas import Roll

READY, HURT, DOWN, DYING, DEAD = "ready", "hurt", "down", "dying", "dead"
RETIRED = "retired"  # the GM's: out of play until revived, whatever its sheet says
STATUSES = (READY, HURT, DOWN, DYING, DEAD, RETIRED)
UNFIT = frozenset({DOWN, DYING, DEAD, RETIRED})
# Fields of a combatant that are the setup's, never the sheet's.
IDENTITY_FIELDS = frozenset({"id", "name", "side", "position", "policy"})


class CampaignRuleError(ValueError):
    """A downtime request the rules refuse; the message is one line for the user."""


class Patient(msgspec.Struct, frozen=True, kw_only=True):
    """A character as the downtime rules see it."""

    character: str
    name: str
    sheet: dict[str, Any]
    base_sheet: dict[str, Any] = {}  # the sheet it was created with (what a resupply refills to)
    rested_days: int = 0  # days rested towards the next natural-healing test (RonD6)


class RestRequest(msgspec.Struct, frozen=True, kw_only=True):
    days: int
    strenuous: bool = False
    resupply: bool = False
    healer: Patient | None = None  # a character giving medical care, if any


class RestResult(msgspec.Struct, kw_only=True):
    character: str
    sheet: dict[str, Any]
    rolls: list[Roll] = []
    notes: list[str] = []
    rested_days: int = 0


def sheet_changes(before: dict[str, Any], after: dict[str, Any]) -> list[Change]:
    """The top-level sheet fields that differ, in a stable order."""
    return [Change(field=key, before=before.get(key), after=after.get(key))
            for key in sorted(set(before) | set(after)) if before.get(key) != after.get(key)]


def builtins(value: Any) -> Any:
    return msgspec.to_builtins(value)


def set_or_clear(sheet: dict[str, Any], field: str, mapping: dict[str, Any]) -> None:
    """``sheet[field] = mapping``, or no such field when the mapping is empty:
    a sheet keeps no empty ``conditions`` or ``aux``."""
    if mapping:
        sheet[field] = mapping
    else:
        sheet.pop(field, None)


def remove_entries(sheet: dict[str, Any], field: str, names: Iterable[str]) -> None:
    """The named entries taken out of one of the sheet's mappings (its
    ``conditions``, its ``aux``), the field itself gone once nothing is left."""
    names = frozenset(names)
    set_or_clear(sheet, field, {k: v for k, v in dict(sheet.get(field, {})).items() if k not in names})


class CampaignRules:
    """The generic rules (see the module doc); systems override what they know."""

    system: str = ""
    # Sheet fields an encounter's end writes back (None: every sheet field the combatant has).
    carried: tuple[str, ...] | None = None
    # Whether its downtime has medical care a healer gives (``firelane rest --healer``).
    heals: bool = False

    def __init__(self, system: str = "") -> None:
        if system:
            self.system = system

    def normalise(self, sheet: dict[str, Any]) -> dict[str, Any]:
        """The sheet as the campaign keeps it, once its system has resolved it
        (derived maxima made explicit, so later changes are measured against them)."""
        return dict(sheet)

    def status(self, sheet: dict[str, Any]) -> str:
        return DOWN if sheet.get("out_of_fight") else READY

    def unfit(self, sheet: dict[str, Any]) -> str | None:
        status = self.status(sheet)
        return f"is {status}; rest first (firelane rest)" if status in UNFIT else None

    def vitals(self, sheet: dict[str, Any]) -> list[str]:
        """The few numbers a listing shows first (Vitality, Wounds, HP, points)."""
        return []

    def summary(self, sheet: dict[str, Any]) -> str:
        """One line: the vitals, then the ammunition and lasting conditions."""
        parts = list(self.vitals(sheet))
        ammo = sheet.get("ammo")
        if isinstance(ammo, dict) and ammo:
            parts.append("ammo " + ", ".join(f"{name} {count}" for name, count in sorted(ammo.items())))
        conditions = sheet.get("conditions")
        if isinstance(conditions, dict) and conditions:
            parts.append(", ".join(sorted(conditions)))
        return "; ".join(parts)

    def aftermath(self, sheet: dict[str, Any], combatant: Combatant) -> tuple[dict[str, Any], list[str]]:
        """The sheet after the fight, and notes on what the rules did."""
        after = dict(sheet)
        fields = self.carried if self.carried is not None else tuple(
            key for key in sheet if key in combatant.__struct_fields__ and key not in IDENTITY_FIELDS)
        for field in fields:
            after[field] = builtins(getattr(combatant, field))
        if self.carried is None and combatant.out_of_fight:
            after["out_of_fight"] = True
        return after, []

    def rest(self, patients: list[Patient], request: RestRequest, dice: Dice) -> list[RestResult]:
        raise CampaignRuleError(f"rule system {self.system!r} has no downtime rules")

    def refuse_unfit_healer(self, healer: Patient | None) -> None:
        """A rest's healer must be fit to fight to give care (CampaignRuleError if not)."""
        if healer is not None and self.unfit(healer.sheet) is not None:
            raise CampaignRuleError(f"healer {healer.character!r} {self.unfit(healer.sheet)}")

    # ------------------------------------------------------------ the GM's adjustments

    def fit(self, sheet: dict[str, Any]) -> dict[str, Any]:
        """The sheet with the harm a fight leaves undone (see the module doc)."""
        fit = dict(sheet)
        fit.pop("out_of_fight", None)
        return fit

    def settle(self, before: dict[str, Any], after: dict[str, Any], touched: set[str]) -> list[str]:
        """Make the fields the GM did not touch agree with those it did (``after``
        changes in place); notes on what changed besides."""
        return []

    def revive(self, sheet: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """A dead character's sheet brought back to life (``status`` not dead)."""
        revived = dict(sheet)
        revived.pop("out_of_fight", None)
        return revived, []


class CountdownPoolRules(CampaignRules):
    """The rules of a system whose harm is one number on the sheet that a fight
    counts down and rest counts back up (Bolt & Blade's Vitality, d100-degrees'
    wounds, d100-zones' HP): down at 0 or less, hurt below its maximum, fit
    again at its maximum. The subclass names the fields and the words."""

    pool: str = ""  # the sheet field: "vitality"
    pool_max: str = ""  # its maximum's field: "max_vitality"
    pool_label: str = ""  # how listings and notes name it: "Vitality"
    pool_default: int = 10  # the maximum of a sheet that gives neither (``normalise``)
    down_unfit: str = ""  # why a character at 0 cannot fight (``unfit``)
    down_note: str = ""  # the aftermath's note on a character at 0
    rest_rule: str = ""  # the rule (or house default) rest notes name
    rest_per_day: int = 1  # what each full day of rest restores (``recover``)

    def normalise(self, sheet: dict[str, Any]) -> dict[str, Any]:
        normal = dict(sheet)
        if not normal.get(self.pool_max):
            normal[self.pool_max] = int(normal.get(self.pool, self.pool_default))
        return normal

    def status(self, sheet: dict[str, Any]) -> str:
        value = int(sheet.get(self.pool, 1))
        if value <= 0:
            return DOWN
        return HURT if value < int(sheet.get(self.pool_max, value)) else READY

    def vitals(self, sheet: dict[str, Any]) -> list[str]:
        return [f"{self.pool_label} {sheet.get(self.pool)}/{sheet.get(self.pool_max)}"]

    def unfit(self, sheet: dict[str, Any]) -> str | None:
        return self.down_unfit if self.status(sheet) == DOWN else None

    def fit(self, sheet: dict[str, Any]) -> dict[str, Any]:
        fit = super().fit(sheet)
        if self.pool_max in fit:
            fit[self.pool] = fit[self.pool_max]
        return fit

    def aftermath(self, sheet: dict[str, Any], combatant: Combatant) -> tuple[dict[str, Any], list[str]]:
        """The pool as the fight left it (never below 0), the gear by ``gear_after_fight``."""
        after = dict(sheet)
        after[self.pool] = max(0, int(getattr(combatant, self.pool)))
        notes = self.gear_after_fight(sheet, combatant, after)
        if after[self.pool] == 0:
            notes.append(self.down_note)
        return after, notes

    def gear_after_fight(self, sheet: dict[str, Any], combatant: Combatant, after: dict[str, Any]) -> list[str]:
        """What the fight leaves on the character's gear (``after`` changes in place); notes on it."""
        return []

    def rest(self, patients: list[Patient], request: RestRequest, dice: Dice) -> list[RestResult]:
        results = []
        for patient in patients:
            sheet = dict(patient.sheet)
            notes = self.rest_pool(sheet, request)
            if request.resupply:
                notes += self.resupply(sheet)
            results.append(RestResult(character=patient.character, sheet=sheet, notes=notes))
        return results

    def rest_pool(self, sheet: dict[str, Any], request: RestRequest) -> list[str]:
        """A rest's recovery of the pool (``sheet`` changes in place): none when it is strenuous."""
        if request.strenuous:
            return [f"a strenuous {request.days} day(s) restore no {self.pool_label} ({self.rest_rule})"]
        return self.recover(sheet, request.days)

    def recover(self, sheet: dict[str, Any], days: int) -> list[str]:
        """``rest_per_day`` for each day of rest, never above the maximum."""
        value, maximum = int(sheet.get(self.pool, 0)), int(sheet.get(self.pool_max, 0))
        if value >= maximum:
            return []
        restored = min(maximum, value + self.rest_per_day * days)
        sheet[self.pool] = restored
        return [f"{self.pool_label} {value} -> {restored}: {self.rest_per_day} per full day of rest ({self.rest_rule})"]

    def resupply(self, sheet: dict[str, Any]) -> list[str]:
        """A resupply's refill (``sheet`` changes in place); none unless the system has one."""
        return []


_loaded: dict[str, CampaignRules] = {}


def register_campaign_rules(rules: CampaignRules) -> None:
    """Campaign rules for a system added at run time (a plugin)."""
    _loaded[rules.system] = rules


def campaign_rules(system: str) -> CampaignRules:
    rules = _loaded.get(system)
    if rules is None:
        rules = _loaded[system] = system_campaign_rules(system) or CampaignRules(system)
    return rules
