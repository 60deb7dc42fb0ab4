"""d100 degrees' standing orders (engine/orders.py): evasion when attacked."""

from firelane.engine.orders import OrderCatalogue, WindowKind

ORDERS = OrderCatalogue(
    windows=(WindowKind(trigger="hit:", label="I am hit by an attack", reactions=("dodge", "parry")),),
    turn_actions={"D100DClearJam": "clear a jam"},
)
