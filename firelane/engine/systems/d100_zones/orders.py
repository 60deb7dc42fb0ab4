"""d100 zones' standing orders (engine/orders.py): the free attack on a foe leaving engagement."""

from firelane.engine.orders import OrderCatalogue, WindowKind

ORDERS = OrderCatalogue(
    windows=(WindowKind(trigger="leave_engaged", label="an enemy leaves my engagement", reactions=("free_attack",)),),
    turn_actions={"D100ZFirstAid": "first aid"},
)
