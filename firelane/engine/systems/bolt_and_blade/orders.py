"""Bolt & Blade's standing orders (engine/orders.py): the windows it opens
(reactions.py lists them) and the actions a timed-out turn may take."""

from firelane.engine.orders import OrderCatalogue, WindowKind

ORDERS = OrderCatalogue(
    windows=(
        WindowKind(trigger="fire_lane", label="an enemy crosses my fire lane", reactions=("reactive_fire",)),
        WindowKind(trigger="leaving_reach", label="an enemy leaves my reach", reactions=("opportunity_strike",)),
        WindowKind(trigger="ranged_attack", label="I am shot at", reactions=("return_fire",)),
        WindowKind(trigger="ranged_hit", label="I am hit (cover within reach)", reactions=("dive_for_cover",)),
        WindowKind(trigger="reactive_fire_choice", label="I am hit while moving", reactions=("continue", "stop")),
    ),
    turn_actions={"BBTakeCover": "Take Cover", "BBAim": "Aim", "BBOverwatch": "Overwatch", "BBReload": "Reload"},
)
