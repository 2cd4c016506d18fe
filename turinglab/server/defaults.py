"""The study `turinglab serve` runs when none is given: playable offline out of the box."""

from __future__ import annotations

from turinglab.game.config import Study


def default_study() -> Study:
    """Two-player, Jones & Bergen rules, ELIZA and the local model as the AI witnesses."""
    from turinglab.witnesses.registry import available

    specs = available()
    witnesses = tuple(specs[n] for n in ("eliza", "local") if n in specs)
    return Study(name="turinglab-default", format="two-player", witnesses=witnesses)
