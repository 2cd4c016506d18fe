"""The redactor of `export --redact` (turinglab/witnesses/redact.py), and its benchmark corpus."""

from __future__ import annotations

import csv
from pathlib import Path

from turinglab.witnesses.redact import find, redact

CORPUS = Path(__file__).parents[2] / "benchmarks" / "redact" / "corpus.tsv"


def test_each_kind_gets_its_placeholder():
    assert redact("my name is siobhan, I live in Harrogate") == "my name is [NAME], I live in [PLACE]"
    assert redact("mail jo.b@gmail.com or 07700 900461, insta is @jo_b") == "mail [EMAIL] or [PHONE], insta is [HANDLE]"
    assert redact("staff id 5567123, since 2019") == "staff id [NUMBER], since 2019"
    assert redact("I'm fine, I'm studying Biology in March") == "I'm fine, I'm studying Biology in March"


def test_persona_words_are_kept_and_marked():
    spans = find("I'm Emily from Phoenix, and you?", keep=("Emily", "Phoenix"))
    assert [(x.kind, x.kept, x.text) for x in spans] == [("persona", True, "Emily"), ("persona", True, "Phoenix")]
    assert redact("I'm Emily from Phoenix", keep=("Emily", "Phoenix")) == "I'm Emily from Phoenix"
    assert redact("I'm Emily from Phoenix") == "I'm [NAME] from [PLACE]"


def test_the_corpus_recall_and_false_redactions_hold():
    """The figures docs/rights.md gives (benchmarks/bench_redact.py) stay at least that good."""
    with CORPUS.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    planted = [r for r in rows if r["label"] == "planted"]
    clean = [r for r in rows if r["label"] == "clean"]
    assert len(planted) >= 300 and len(clean) >= 300
    found = sum(r["planted"] not in redact(r["text"]) for r in planted)
    changed = sum(redact(r["text"]) != r["text"] for r in clean)
    assert found >= 323 and changed <= 8
