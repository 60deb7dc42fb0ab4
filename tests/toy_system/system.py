"""The toy's rules and AI, wired to the shared engine through `BaseRuleSystem`."""

from __future__ import annotations

from typing import Any, ClassVar

from firelane.engine.core import BaseRuleSystem, Decision, require
from firelane.engine.dice import Dice
from firelane.engine.state import EncounterState, ReactionWindow
from firelane.events.schemas import (
    ActionTaken,
    AttackResolved,
    ClaimReaction,
    Command,
    DamageDealt,
    EligibleReactor,
    InitiativeEntry,
    InitiativeRolled,
    Moved,
    OrderedClaim,
    Roll,
)
from tests.toy_system import narration
from tests.toy_system.labels import LABELS
from tests.toy_system.orders import ORDERS
from tests.toy_system.schemas import Step, Strike
from tests.toy_system.state import ToyCombatant, ToyState


class ToySystem(BaseRuleSystem):
    name = "toy"
    title = "Toy"
    command_types = (Strike, Step)
    state_type = ToyState
    combatant_type = ToyCombatant
    reaction_priority: ClassVar[dict[str, int]] = {"duck": 0, "snap": 1}
    sentences = narration.SENTENCES
    shared_event_sentences = narration.SHARED_EVENT_SENTENCES
    labels = LABELS
    orders = ORDERS
    default_settings: ClassVar[dict[str, Any]] = {"hit_on": 4, "brace": False}

    def roll_initiative(self, decision: Decision, dice: Dice) -> InitiativeRolled:
        entries = []
        for cid, c in decision.state.combatants.items():
            die = dice.roll(6)
            entries.append(InitiativeEntry(combatant=cid, total=die.face + c.speed))
        order = [e.combatant for e in sorted(entries, key=lambda e: (-e.total, e.combatant))]
        return InitiativeRolled(round=decision.state.round, entries=entries, order=order)

    def decide_action(self, decision: Decision, command: Command, dice: Dice) -> None:
        state = decision.state
        self.require_turn(state, command.actor)
        if isinstance(command, Strike):
            target = self.require_combatant(state, command.target)
            require(not target.out_of_fight, f"{command.target} is already down")
            self._strike(decision, command.actor, command.target, dice, "attack", state.settings["hit_on"])
        elif isinstance(command, Step):
            decision.emit(Moved(combatant=command.actor, path=[command.to]))
            reactors = [
                EligibleReactor(combatant=c.id, reactions=["duck", "snap"])
                for c in state.combatants.values()
                if c.side != state.combatants[command.actor].side and not c.out_of_fight and not c.reaction_used
            ]
            self.open_window(decision, trigger="step", actor=command.actor, reactors=reactors, continuation={})
        else:
            super().decide_action(decision, command, dice)

    def _strike(self, decision: Decision, attacker: str, target: str, dice: Dice, kind: str, hit_on: int) -> None:
        die = dice.roll(6)
        hit = die.face >= hit_on
        roll = Roll(purpose=kind, rule="TOY-1", dice=[die], total=die.face, target=hit_on, success=hit)
        decision.emit(AttackResolved(attacker=attacker, target=target, weapon="fist", roll=roll, hit=hit, kind=kind))
        state = decision.state
        if hit and kind == "snap" and state.settings["brace"] and not state.combatants[target].reaction_used:
            self.open_window(decision, trigger="snap_hit", actor=attacker,
                             reactors=[EligibleReactor(combatant=target, reactions=["brace"])],
                             continuation={"target": target, "attacker": attacker})
            return
        if hit:
            self._wound(decision, attacker, target)

    def _wound(self, decision: Decision, attacker: str, target: str) -> None:
        hp = decision.state.combatants[target].hp - 1
        decision.emit(DamageDealt(target=target, source=attacker, amount=1, remaining=hp))
        if hp <= 0:
            self.down(decision, target, "no hp left")

    def resolve_reaction(self, decision: Decision, window: ReactionWindow, claim: OrderedClaim, dice: Dice) -> str | None:
        state = decision.state
        if claim.reaction == "brace":
            decision.emit(ActionTaken(combatant=claim.combatant, action="brace", slot="reaction"))
            return None
        if state.combatants[window.actor].out_of_fight:
            return f"{window.actor} is already down"
        decision.emit(ActionTaken(combatant=claim.combatant, action=claim.reaction, slot="reaction"))
        if claim.reaction == "snap":
            self._strike(decision, claim.combatant, window.actor, dice, "snap", 5)
        return None

    def after_window(self, decision: Decision, window: ReactionWindow, dice: Dice) -> None:
        if window.trigger == "snap_hit" and not any(c.reaction == "brace" for c in window.claims):
            self._wound(decision, window.continuation["attacker"], window.continuation["target"])

    def evolve_event(self, state: EncounterState, event: Any) -> None:
        if isinstance(event, DamageDealt) and event.remaining is not None:
            state.combatants[event.target].hp = event.remaining  # type: ignore[attr-defined]

    def health(self, combatant: Any) -> dict[str, Any] | None:
        return {"value": max(0, combatant.hp), "max": 2, "label": "hit points"}

    def choose_command(self, state: EncounterState, combatant: str) -> Command | None:
        """The toy's AI (deterministic: it strikes on even versions, steps on every third)."""
        me = state.combatants[combatant]
        if state.window is not None:
            offered = state.window.eligible(combatant)
            reaction = offered.reactions[-1] if offered else "snap"  # snap when stepped past; brace when hit
            return ClaimReaction(command_id=f"{combatant}@v{state.version}", actor=combatant, window=state.window.window, reaction=reaction)
        if "struck" in me.conditions or state.acted_this_round.count(combatant):
            return None
        foes = sorted(c.id for c in state.combatants.values() if c.side != me.side and not c.out_of_fight)
        if not foes or state.version % 2:
            return None
        if state.version % 3 == 0 and me.position is not None:
            return Step(command_id=f"{combatant}@v{state.version}", actor=combatant, to=(me.position[0] + 1, me.position[1]))
        return Strike(command_id=f"{combatant}@v{state.version}", actor=combatant, target=foes[0])


TOY = ToySystem()
