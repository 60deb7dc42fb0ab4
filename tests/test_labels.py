"""Each rule system's words for people live in its folder (engine/systems/<name>/labels.py)."""

from __future__ import annotations

import pytest

from firelane.engine.labels import Labels, labels
from firelane.engine.registry import get_system


@pytest.mark.parametrize("system_name", ["bolt-and-blade", "d100-degrees", "d100-zones", "rond6"])
def test_every_reaction_a_system_arbitrates_has_a_label(system_name: str) -> None:
    system = get_system(system_name)
    assert set(system.reaction_priority) <= set(system.labels.reactions), system_name


def test_a_key_without_a_label_is_said_in_words() -> None:
    words = labels(reactions={"dive_for_cover": "Dive for Cover"})
    assert words.word("reactions", "dive_for_cover") == "Dive for Cover"
    assert words.word("conditions", "mortally_wounded") == "mortally wounded"
    assert words.word("weapons", "marksman_rifle") == "marksman rifle"
    with pytest.raises(ValueError, match="no labels of kind 'spells'"):
        words.word("spells", "fireball")
    assert Labels().as_dict() == {"reactions": {}, "actions": {}, "conditions": {}, "fields": {}, "weapons": {},
                                  "modes": {}, "triggers": {}, "details": {}}
    # a roll detail labelled "" is one the roll's notes already say: it is left out
    assert labels(details={"wild_index": ""}).word("details", "wild_index") == ""
