"""Every number printed in a table of the HTML report has a key in `report --format json` (issue 42
item 1): the cells' numbers are counted and each must be the printed form of a JSON number."""

from __future__ import annotations

import html as htmllib
import json
import re
from collections import Counter

import pytest
from typer.testing import CliRunner

from turinglab.analysis.pformat import p_text
from turinglab.cli import app

runner = CliRunner()
NUMBER = re.compile(r"< 0\.001|[-−]?\d+(?:\.\d+)?")


def printed_forms(doc) -> set[str]:
    """Every way the report may print a number of the JSON (the report's formats: 0-3 decimals, p)."""
    forms: set[str] = set()

    def walk(x):
        if isinstance(x, bool) or x is None:
            return
        if isinstance(x, (int, float)):
            v = float(x)
            if v != v:
                return
            forms.update(f"{abs(v):.{d}f}" for d in (1, 2, 3))
            forms.add(p_text(v))
            if v == int(v):
                forms.add(str(abs(int(v))))
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(doc)
    return forms


def unkeyed(doc: dict, page: str) -> tuple[int, Counter]:
    """(numbers in the HTML's number cells, those matching no JSON number with the cell they sit in)."""
    forms = printed_forms(doc)
    total, missing = 0, Counter()
    for attrs, cell in re.findall(r"<td([^>]*)>(.*?)</td>", page, flags=re.S):
        if re.search(r'class="l\b', attrs):  # a label column (a witness, a bin such as 20–40), not a number
            continue
        text = htmllib.unescape(re.sub(r"<[^>]+>", "", cell))
        for num in NUMBER.findall(text):
            total += 1
            if num.replace("−", "-").lstrip("-") not in forms:
                missing[(num, text[:60])] += 1
    return total, missing


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    d = tmp_path_factory.mktemp("keys")
    url = f"sqlite:///{d / 'demo.db'}"
    r = runner.invoke(app, ["demo-data", "--db", url, "--games", "160", "--seed", "3", "--beliefs"])
    assert r.exit_code == 0, r.output
    for fmt, name in (("json", "r.json"), ("html", "r.html")):
        r = runner.invoke(app, ["report", "--db", url, "--format", fmt, "--out", str(d / name)])
        assert r.exit_code == 0, r.output
    return json.loads((d / "r.json").read_text()), (d / "r.html").read_text()


def test_every_printed_table_number_has_a_key(demo):
    doc, page = demo
    total, missing = unkeyed(doc, page)
    assert total > 1000  # the tables were counted, beliefs and tags included
    assert "Accuracy in games with each tag" in page and "belief" in page.lower()
    assert not missing, f"{sum(missing.values())} of {total} printed numbers have no key: {missing.most_common(10)}"


def test_the_count_notices_a_missing_key(demo):
    doc, page = demo
    # without the keys of Table "Accuracy in games with each tag" and of the comparisons' differences,
    # numbers of those tables go unmatched
    numbers = {k: v for k, v in doc["numbers"].items()
               if not k.startswith("tag_accuracy.") and not k.endswith(".diff") and not k.endswith(".z")}
    _, missing = unkeyed({**doc, "numbers": numbers}, page)
    assert sum(missing.values()) >= 5
