"""RonD6's standing orders (engine/orders.py): an interruption while waiting,
an active defense when attacked, points spent against a hit."""

from firelane.engine.orders import OrderCatalogue, WindowKind
from firelane.engine.systems.rond6.rules import DEFENSE_REACTIONS, INTERRUPT, RESIST

ORDERS = OrderCatalogue(
    windows=(
        WindowKind(trigger="action_declared", label="an enemy acts while I wait", reactions=(INTERRUPT,)),
        WindowKind(trigger="attack_declared", label="I am attacked", reactions=tuple(DEFENSE_REACTIONS)),
        WindowKind(trigger="hit", label="I am hit", reactions=(RESIST,)),
    ),
    turn_actions={"R6DropProne": "drop prone"},
)
