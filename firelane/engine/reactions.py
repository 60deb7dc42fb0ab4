"""Priority arbitration of reaction claims.

When a reaction window closes (everyone answered, or the deadline passed), the
claims are ordered by the rule system's priority for the reaction kind (lower
number first), then by initiative (higher first), then by combatant ID, so the
order is total and stable. The sequencer records the order as an event; later
claims are re-validated against the state the earlier ones produced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from firelane.events.schemas import OrderedClaim
from firelane.engine.state import Claim

UNKNOWN_REACTION_PRIORITY = 1_000


def order_claims(
    claims: Sequence[Claim],
    priority: Mapping[str, int],
    initiative: Mapping[str, int],
) -> list[OrderedClaim]:
    ordered = [
        OrderedClaim(
            combatant=claim.combatant,
            reaction=claim.reaction,
            priority=priority.get(claim.reaction, UNKNOWN_REACTION_PRIORITY),
            initiative=initiative.get(claim.combatant, 0),
            options=dict(claim.options),
        )
        for claim in claims
    ]
    ordered.sort(key=lambda c: (c.priority, -c.initiative, c.combatant))
    return ordered
