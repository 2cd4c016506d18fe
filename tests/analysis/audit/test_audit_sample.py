"""The blinding audit capped by a seeded sample of whole interrogators (issue 42 item 7)."""

from __future__ import annotations

from types import SimpleNamespace

from typer.testing import CliRunner

from turinglab.analysis.audit.audit import audit_blinding
from turinglab.analysis.audit.frames import sample_interrogators
from turinglab.cli import app


def games(sizes: dict[str, int]) -> list:
    return [SimpleNamespace(id=f"{who}-{i}", interrogator_id=who) for who, n in sizes.items() for i in range(n)]


def test_sample_takes_whole_interrogators_up_to_the_cap_and_repeats_with_its_seed():
    infos = games({f"i{k}": 1 + k % 4 for k in range(200)})  # 500 games
    kept, note = sample_interrogators(infos, 120, seed=3)
    assert 100 <= len(kept) <= 120
    by = {g.interrogator_id for g in kept}
    assert all(sum(g.interrogator_id == who for g in infos) == sum(g.interrogator_id == who for g in kept) for who in by)
    assert [g.id for g in sample_interrogators(infos, 120, seed=3)[0]] == [g.id for g in kept]
    assert [g.id for g in sample_interrogators(infos, 120, seed=4)[0]] != [g.id for g in kept]
    assert f"{len(kept):,} of the 500 games" in note and "seed 3" in note
    assert sample_interrogators(infos, None) == (infos, "") and sample_interrogators(infos, 500) == (infos, "")


def test_audit_of_a_capped_study_says_so(sqlite_url):
    assert CliRunner().invoke(app, ["demo-data", "--db", sqlite_url, "--games", "160", "--seed", "2"]).exit_code == 0
    full = audit_blinding(sqlite_url, None, max_games=None, n_boot=100, n_perm=0)
    capped = audit_blinding(sqlite_url, None, max_games=80, n_boot=100, n_perm=0)
    assert full.n_games == 160 and not any("seeded sample" in n for n in full.notes)
    assert capped.n_games <= 80 and capped.notes[0].startswith(f"audited a seeded sample of {capped.n_games:,} of the 160")
    lo, hi = capped.channel.classifiers[0].low, capped.channel.classifiers[0].high
    flo, fhi = full.channel.classifiers[0].low, full.channel.classifiers[0].high
    assert hi - lo > fhi - flo  # the sample's own interval, wider than the full study's
