"""The toy's standing orders (engine/orders.py): ducking or snapping at a stepper, bracing when hit."""

from firelane.engine.orders import OrderCatalogue, WindowKind

ORDERS = OrderCatalogue(
    windows=(
        WindowKind(trigger="step", label="an enemy steps past me", reactions=("duck", "snap")),
        WindowKind(trigger="snap_hit", label="I am hit by a snap", reactions=("brace",)),
    ),
)
