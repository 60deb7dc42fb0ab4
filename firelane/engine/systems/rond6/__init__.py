"""RonD6: D6 dice pools with a Wild Die (rule system "rond6"). See docs/systems/rond6.md.

Exports the rule system (`SYSTEM`), the sample data (`load_data`) and the
demo encounter (`demo_setup`).
"""

from firelane.engine.systems.rond6.data import (
    demo_setup,
    load_data,
    sheet_from_template,
)
from firelane.engine.systems.rond6.system import SYSTEM, RonD6System

__all__ = ["SYSTEM", "RonD6System", "demo_setup", "load_data", "sheet_from_template"]
