"""RonD6: D6 dice pools with a Wild Die (rule system "rond6"). See docs/systems/rond6.md."""
