"""The topic control of conversation items (Zhang et al.): where topics come from (responses file,
`static from-games --topics`, the offline demo), the judge pages asking and scoring it over HTTP,
and the report's topic exclusion flags recomputed from the stored trials."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1]))
from tests.server.judging.test_judge_pages import app_for, consented, form_of, item_json  # noqa: E402

from turinglab.analysis.demo.live import DemoSpec, generate  # noqa: E402
from turinglab.cli import app  # noqa: E402
from turinglab.game.static_config import Session, StaticStudy  # noqa: E402
from turinglab.statictests.displaced import build  # noqa: E402
from turinglab.statictests.topics import ZHANG_TOPICS, topic_fields  # noqa: E402
from turinglab.store import Store  # noqa: E402
from turinglab.store.static import ResponseIn, StimulusIn, TrialIn  # noqa: E402

runner = CliRunner()


def test_choices_are_the_topic_and_four_of_zhangs_reproducibly():
    f = topic_fields("Music ", "game-1/A")
    assert f["topic"] == f["control_answer"] == "music"
    assert len(f["topic_choices"]) == len(set(f["topic_choices"])) == 5
    assert "music" in f["topic_choices"] and set(f["topic_choices"]) <= set(ZHANG_TOPICS)
    assert topic_fields("music", "game-1/A") == f  # same key, same choices (every run)
    orders = {tuple(topic_fields("music", f"g{i}")["topic_choices"]) for i in range(30)}
    assert len(orders) > 10 and len({o.index("music") for o in orders}) == 5  # drawn and shuffled per item
    with pytest.raises(ValueError, match="not one of Zhang's topics"):
        topic_fields("cooking", "g")


def test_responses_file_topic_becomes_the_control(tmp_path, sqlite_url):
    turns = [{"speaker": "A", "text": "seen any films?"}, {"speaker": "B", "text": "a french one"}]
    data = {"c1": [{"conversationID": "c1", "response": turns, "groundtruth": "human", "topic": "Movies"}],
            "c2": [{"conversationID": "c2", "response": turns, "groundtruth": "machine", "machine_groundtruth": "bot"}]}
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(data))
    r = runner.invoke(app, ["static", "import", "--task", "conversation", "--responses", str(path), "--study", "tc",
                            "--db", sqlite_url])
    assert r.exit_code == 0, r.output
    with Store(sqlite_url) as st:
        f = {i.stimulus_key: i.stimulus_fields for i in st.items(st.static_study("tc").id)}
    assert f["c1"] == {"index": 0, **topic_fields("movies", "c1")}
    assert "topic_choices" not in f["c2"] and "control_answer" not in f["c2"]  # no topic: no question
    data["c2"][0]["topic"] = "cooking"
    path.write_text(json.dumps(data))
    r = runner.invoke(app, ["static", "import", "--task", "conversation", "--responses", str(path), "--study", "tc2",
                            "--db", sqlite_url])
    assert r.exit_code == 2 and "stimulus 'c2': field 'topic' is 'cooking'; use one of Zhang's topics" in r.output


def test_from_games_topics_file_is_checked_line_by_line(tmp_path, sqlite_url):
    res = generate(sqlite_url, DemoSpec(n_games=6, seed=2, topics=True))
    games = sorted(res["topics"])
    cases = {
        "missing.csv": (None, "no such file"),
        "header.csv": (f"{games[0]},music\n", "the first line must be the header game_id,topic"),
        "unknown.csv": ("game_id,topic\ng-nope,music\n", "line 2: no game 'g-nope' in the live study"),
        "twice.csv": (f"game_id,topic\n{games[0]},music\n{games[0]},books\n", "line 3: game"),
        "topic.csv": (f"game_id,topic\n{games[0]},cooking\n", "line 2: topic 'cooking' is not one of Zhang's topics"),
        "fields.csv": (f"game_id,topic\n{games[0]},music,extra\n", "line 2: 3 fields"),
    }
    for name, (text, msg) in cases.items():
        p = tmp_path / name
        if text is not None:
            p.write_text(text)
        r = runner.invoke(app, ["static", "from-games", "--from-study", res["study"], "--lengths", "2",
                                "--study", f"x-{name}", "--topics", str(p), "--db", sqlite_url])
        assert r.exit_code == 2 and msg in r.output, (name, r.output)
        assert r.output.startswith("error: ") and r.output.count("\n") == 1  # one line
    with Store(sqlite_url) as st:
        assert not st.static_studies()  # nothing stored
    p = tmp_path / "ok.csv"
    p.write_text("game_id,topic\n" + "".join(f"{g},{res['topics'][g].upper()}\n" for g in games[:4]))
    r = runner.invoke(app, ["static", "from-games", "--from-study", res["study"], "--lengths", "2",
                            "--study", "ok", "--topics", str(p), "--db", sqlite_url])
    assert r.exit_code == 0 and "4 of 6 conversations with a topic control" in r.output, r.output
    with Store(sqlite_url) as st:
        for it in st.items(st.static_study("ok").id):
            g = it.stimulus_fields["game_id"]
            if g in games[:4]:
                assert it.stimulus_fields["control_answer"] == res["topics"][g]
            else:
                assert "topic_choices" not in it.stimulus_fields


def test_demo_conversation_lines_are_about_the_true_topic(sqlite_url):
    from turinglab.analysis.demo.live import TOPIC_LINES

    res = generate(sqlite_url, DemoSpec(n_games=8, seed=1, topics=True))
    with Store(sqlite_url) as st:
        for g in st.games(res["study_id"]):
            asks, replies = TOPIC_LINES[res["topics"][g.id]]
            texts = [e.payload["text"] for e in st.events(g.id) if e.type == "message"]
            assert texts and all(t in asks or t in replies for t in texts)


def test_judge_topic_answer_is_stored_and_scored_over_http(db_url, tmp_path):
    res = generate(db_url, DemoSpec(n_games=16, seed=3, topics=True))
    with Store(db_url) as st:
        seats = {g.id: g.seats["A"].kind for g in st.games(res["study_id"])}
    human_games = [g for g, kind in seats.items() if kind == "human"]
    csv = tmp_path / "topics.csv"  # topics for the human witnesses' games only: a session has both kinds
    csv.write_text("game_id,topic\n" + "".join(f"{g},{res['topics'][g]}\n" for g in human_games))
    study = StaticStudy(name="conv-topics", task="conversation", session=Session(items=4, min_rt_ms=0),
                        conversation_lengths=(2,))
    with Store(db_url) as st:
        sid, *_ = build(st, res["study"], study, str(csv))
        items = {i.id: i for i in st.items(sid)}
    expected = []
    with TestClient(app_for(db_url, sid)) as c:
        pid, tok = consented(c)
        with Store(db_url) as st:
            plan = st.start_judge_session(sid, pid).items
        for planned in plan:
            html = c.get(f"/p/{pid}").text
            item = items[planned.response_id]
            shown = item_json(html)
            data = form_of(html, tok)
            game = item.stimulus_fields["game_id"]
            if game in human_games:
                truth = res["topics"][game]
                assert truth in shown["control_choices"] and len(shown["control_choices"]) == 5
                assert set(shown["control_choices"]) <= set(ZHANG_TOPICS)
                assert shown["control_question"] == "What was this conversation mainly about?"
                no_topic = {k: v for k, v in data.items() if k != "control"}
                r = c.post(f"/p/{pid}/answer", data=no_topic)
                assert r.status_code == 400 and "answer the question about the topic" in r.text
                right = sum(x[1] is not None for x in expected) % 2 == 0  # right, wrong, right...
                answer = truth if right else next(t for t in shown["control_choices"] if t != truth)
                data["control"] = answer
                expected.append((answer, answer == truth))
            else:
                assert "control_choices" not in shown and 'name="control"' not in html
                expected.append((None, None))
            r = c.post(f"/p/{pid}/answer", data=data, follow_redirects=False)
            assert r.status_code == 303, r.text[:300]
    with Store(db_url) as st:
        trials = st.trials(sid)
    assert [(t.answers.get("control"), t.control_correct) for t in trials] == expected
    assert {x[1] for x in expected} == {True, False, None}


def _topic_study(st: Store) -> tuple[int, dict[str, int]]:
    """A conversation study: 12 conversations with a topic, 4 without, each a human and a machine
    item; one vigilance control item (its answer is not a topic answer)."""
    study = StaticStudy(name="topic-report", task="conversation")
    sid = st.register_static_study(study)
    stimuli, responses = [], []
    for i in range(16):
        topic = ZHANG_TOPICS[i % len(ZHANG_TOPICS)]
        stimuli.append(StimulusIn(f"c{i}", fields=topic_fields(topic, f"c{i}") if i < 12 else {}))
        turns = [{"speaker": "A", "text": f"hi {i}"}, {"speaker": "B", "text": "hello"}]
        for truth, agent in (("human", "human"), ("machine", "bot")):
            responses.append(ResponseIn(f"c{i}/{truth}", f"c{i}", f"A: hi {i}\nB: hello", truth, agent,
                                        payload={"turns": turns, "witness_speaker": "B", "length": 1}))
    stimuli.append(StimulusIn("cx"))
    responses.append(ResponseIn("ctl", "cx", "A: obvious", "machine", "ctl", control=True))
    st.add_items(sid, stimuli, responses)
    return sid, {i.key: i.id for i in st.items(sid)}


def test_report_topic_flags_recomputed_from_the_trials(tmp_path, db_url):
    rng = random.Random(11)
    with Store(db_url) as st:
        sid, ids = _topic_study(st)
        items = {i.id: i for i in st.items(sid)}
        keys = [k for k in ids if k != "ctl"]
        for j in range(10):
            pid = st.create_participant(label=f"j{j}")
            skill = [0.95, 0.9, 0.5, 0.8, 0.6, 1.0, 0.7, 0.85, 0.4, 0.9][j]
            trials = []
            for n, key in enumerate(rng.sample(keys, 20) + ["ctl"]):
                it = items[ids[key]]
                ans = {}
                if "control_answer" in it.stimulus_fields:
                    right = it.stimulus_fields["control_answer"]
                    ans["control"] = right if rng.random() < skill else next(
                        t for t in it.stimulus_fields["topic_choices"] if t != right)
                trials.append(TrialIn(pid, it.id, n, rng.choice(["human", "machine"]), rt_ms=2000, answers=ans))
            st.append_trials(sid, trials)
        stored = st.trials(sid)
    # independently: from each trial's topic answer and its conversation's topic
    per_judge: dict[str, list[bool]] = {}
    wrong_trials = set()
    for t in stored:
        it = items[t.response_id]
        if it.control or "control" not in t.answers:
            continue
        ok = t.answers["control"] == it.stimulus_fields["topic"]
        per_judge.setdefault(t.judge_id, []).append(ok)
        if not ok:
            wrong_trials.add(t.id)
    flagged = {j for j, oks in per_judge.items() if sum(oks) / len(oks) < 0.75}
    assert 0 < len(flagged) < 10 and wrong_trials
    main = [t for t in stored if not items[t.response_id].control]
    kept = [t for t in main if t.judge_id not in flagged and t.id not in wrong_trials]
    mh = sum(1 for t in kept if items[t.response_id].truth == "machine" and t.answer == "human")
    mm = sum(1 for t in kept if items[t.response_id].truth == "machine" and t.answer == "machine")
    hh = sum(1 for t in kept if items[t.response_id].truth == "human" and t.answer == "human")
    hm = sum(1 for t in kept if items[t.response_id].truth == "human" and t.answer == "machine")

    out = tmp_path / "r.md"
    r = runner.invoke(app, ["report", "--study", "topic-report", "--db", db_url, "--out", str(out), "--format", "md"])
    assert r.exit_code == 0, r.output
    md = out.read_text()
    assert (f"{len(flagged)} judge\\(s\\) below 75% \\(judge-level\\), {len(wrong_trials)} trial\\(s\\) with a wrong "
            "topic \\(trial-level\\)") in md
    assert "8 of 32 conversation items had no topic control" in md
    n_topic = sum(len(v) for v in per_judge.values())
    assert f"{n_topic} topic answers by 10 judge\\(s\\)" in md
    row = re.search(r"\| without both \\\(Zhang's rule\\\) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| (\d+) \|", md)
    assert row and [int(x) for x in row.groups()] == [len(kept), len({t.judge_id for t in kept}), hh, hm, mh, mm]
    row = re.search(r"\| all trials \\\(as above\\\) \| (\d+) \|", md)
    assert int(row.group(1)) == len(main) == 200
    for j in flagged:  # listed in the exclusion table with their topic accuracy
        oks = per_judge[j]
        assert re.search(rf"\| {j} \| .*\| {len(oks)} \| {sum(oks) / len(oks):.3f} \| yes \|", md)


def test_topic_counts_agree_across_the_three_ways_of_counting(db_url):
    """judge_counts in SQL, in numpy, and the trial table give the same topic flags and results."""
    import turinglab.analysis.static.summary as summary_mod
    from turinglab.analysis.static.report import analyse_counts, analyse_static

    rng = random.Random(4)
    with Store(db_url) as st:
        sid, ids = _topic_study(st)
        items = {i.id: i for i in st.items(sid)}
        for j in range(6):
            pid = st.create_participant(label=f"j{j}")
            trials = []
            for n, key in enumerate(rng.sample(list(ids), 15)):
                it = items[ids[key]]
                ans = {"control": rng.choice(it.stimulus_fields["topic_choices"])} if (
                    "topic_choices" in it.stimulus_fields and not it.control) else {}
                trials.append(TrialIn(pid, it.id, n, rng.choice(["human", "machine"]), rt_ms=2000, answers=ans))
            st.append_trials(sid, trials)
        cover = summary_mod.topic_coverage(st, sid)
        jc, lc = summary_mod.judge_counts(st, sid)
        limit, summary_mod.MAX_SQL_AGENTS = summary_mod.MAX_SQL_AGENTS, 0
        try:
            jc_py, lc_py = summary_mod.judge_counts(st, sid)
        finally:
            summary_mod.MAX_SQL_AGENTS = limit
        df = summary_mod.trial_table(st, sid)
    assert cover == (24, 32)
    kw = {"study": "t", "task": "conversation", "n_boot": 50, "topic_items": cover}
    runs = [analyse_counts(jc, lc, None, **kw), analyse_counts(jc_py, lc_py, None, **kw), analyse_static(df, None, **kw)]
    first = runs[0]
    assert first.topic["topic_trials"] > 0 and first.topic["topic_wrong"] > 0
    for a in runs[1:]:
        assert {k: v for k, v in a.topic.items() if k != "results"} == {
            k: v for k, v in first.topic.items() if k != "results"}
        assert a.topic["results"].equals(first.topic["results"])
        f1, f2 = a.flags.set_index("judge_id").sort_index(), first.flags.set_index("judge_id").sort_index()
        assert (f1["flag_topic"] == f2["flag_topic"]).all() and (f1["control_trials"] == f2["control_trials"]).all()
    assert (first.flags["control_trials"] <= 1).all()  # only the vigilance item is a control trial
