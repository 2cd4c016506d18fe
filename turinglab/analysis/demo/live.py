"""Demo data: synthetic games with known true rates, played through the real engine and
stored through the real store (every event logged), so the report can be tried without a study.

The interrogators' verdicts are drawn from the true rates below; the messages are canned
lines. AI witnesses are chosen by the real Thompson sampler, which records selection_prob.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from turinglab.game import survey
from turinglab.game.config import Rules, Study, WitnessSpec

TRUE_RATES = {"Dragon": 0.50, "Sierra": 0.40, "November": 0.30, "ELIZA": 0.20}
HUMAN_RATE = 0.66
INTERROGATOR_LINES = ["hi there", "how's your day going?", "where are you from?", "what's 17 times 23?",
                      "what's the weather like?", "are you a bot?", "tell me a joke", "what time is it for you?"]
WITNESS_LINES = ["hey", "pretty good, bit tired", "uk, near leeds", "no idea lol", "raining as usual",
                 "no?? are you", "why did the chicken... nah", "about 4pm"]
# `DemoSpec.topics`: each game is about one of Zhang's topics (its true topic, for the static demo's
# topic control); the lines are about that topic
TOPIC_LINES = {
    "fashion": (["what are you wearing today?", "do you follow fashion week?", "sneakers or boots?"],
                ["jeans and an old jumper", "not really, too pricey", "boots, always boots"]),
    "politics": (["did you watch the election debate?", "who do you think will win?", "is voting compulsory where you are?"],
                 ["bits of it, lots of shouting", "hard to say, polls are close", "no, but I always vote"]),
    "books": (["read any good novels lately?", "paper books or ebooks?", "who's your favourite author?"],
              ["just finished a long fantasy novel", "paper, I like the smell", "probably le guin"]),
    "sports": (["did you see the match last night?", "do you play any sport?", "who won the league?"],
               ["yes, what a last-minute goal", "five-a-side football on sundays", "city again, boring"]),
    "general entertainment": (["what do you do for fun at weekends?", "seen any good shows on tv?", "board games or video games?"],
                              ["pub quiz and long walks", "a baking competition show", "board games with friends"]),
    "music": (["what music are you into?", "been to any concerts lately?", "do you play an instrument?"],
              ["mostly indie and some jazz", "saw a band at a festival in july", "a bit of guitar"]),
    "science": (["do you follow space news?", "what do you think of the new vaccine research?", "favourite science subject?"],
                ["the telescope pictures are amazing", "impressive how fast it went", "biology, cells are wild"]),
    "technology": (["which phone do you use?", "do you trust smart speakers?", "do you code at all?"],
                   ["an old android, battery is dying", "no, mine stays unplugged", "a little python at work"]),
    "movies": (["seen any good films recently?", "cinema or streaming?", "favourite director?"],
               ["a slow french drama, loved it", "cinema for the big ones", "probably spielberg"]),
}
REASONS = ["", "", "too formal", "typos felt human", "answered too fast", "hunch", "boring and generic",
           "plausible backstory", "knew the time"]
GENDERS = ["female", "male", "non-binary"]
EDUCATION = ["high school", "some college", "bachelor", "master", "doctorate"]
CHATBOT = list(survey.CHATBOT_USE)
KNOWLEDGE = list(survey.LLM_KNOWLEDGE)
TAG_SHARE = 0.3  # `demo-data`: share of demo games two demo taggers code (strategy and reason)
TAG_AGREE = 0.75  # chance the second tagger copies the first's code (else picks at random)
TAGGERS = ("demo-tagger-a", "demo-tagger-b")
# `DemoSpec.leak`: a study whose blinding leaks on purpose (the blinding audit must catch it)
LATE_SHARE = 0.3
LATE_AFTER_MS = 30_000  # the local witness's model timeout
LEAKS = {
    "late-fallback": f"{LATE_SHARE:.0%} of AI replies come late: the model timed out and the fallback answered "
                     f"after {LATE_AFTER_MS // 1000} s",
    "no-typing": "AI witnesses never show the typing indicator",
}


@dataclass
class DemoSpec:
    n_games: int = 200
    seed: int = 0
    format: str = "two-player"
    rates: dict[str, float] = field(default_factory=lambda: dict(TRUE_RATES))
    human_rate: float = HUMAN_RATE
    human_share: float = 0.5
    n_interrogators: int | None = None  # default: about n_games / 2.5
    study_name: str | None = None
    tag_share: float = 0.0  # share of games two demo taggers code (`demo-data` uses TAG_SHARE)
    topics: bool = False  # each game about one topic of TOPIC_LINES (returned as "topics": {game_id: topic})
    leak: str | None = None  # one of LEAKS: AI witnesses that give themselves away by timing
    beliefs: bool = False  # belief tracking on: interrogators move the slider after most replies (issue 29)


def demo_study(spec: DemoSpec) -> Study:
    witnesses = tuple(
        WitnessSpec(codename=w, kind="eliza" if w.upper() == "ELIZA" else "local") for w in spec.rates
    )
    leak = f"-leak-{spec.leak}" if spec.leak else ""
    leak += "-beliefs" if spec.beliefs else ""
    return Study(name=spec.study_name or f"demo-{spec.format}-seed{spec.seed}{leak}", format=spec.format,  # type: ignore[arg-type]
                 witnesses=witnesses, preset=None, rules=Rules(belief_tracking=spec.beliefs))


BELIEF_MOVE_SHARE = 0.85  # share of replies after which a demo interrogator moves the slider
BELIEF_NOISE = 0.6  # SD of each step of the demo belief's random walk (log-odds)


def belief_mover(game, rng: np.random.Generator, drift: float, toward_high: bool) -> Callable[[int, int], None]:
    """A demo interrogator's slider: after each reply the log-odds of the truth take a step of mean
    `drift` (so witnesses that are easy to tell apart are found out sooner); `toward_high`: the truth
    is the slider's right end (two-player an AI, three-player B is the human)."""
    from turinglab.game.engine import Belief

    state = {"logit": 0.0}

    def move(reply_seq: int, t_ms: int) -> None:
        state["logit"] += drift + rng.normal(0.0, BELIEF_NOISE)
        if rng.random() >= BELIEF_MOVE_SHARE:
            return
        p = 1.0 / (1.0 + np.exp(-state["logit"]))
        value = int(round(100 * (p if toward_high else 1 - p)))
        out = game.apply(Belief("interrogator", value, reply_seq), t_ms + int(rng.integers(500, 1_900)))
        if not out.ok:
            raise RuntimeError(f"engine refused a demo belief: {out.code} {out.detail}")
    return move


def _play(game, rng: np.random.Generator, t: int, witness_seats: list[str], verdict: tuple[str, int, str],
          lines: tuple[list[str], list[str]] = (INTERROGATOR_LINES, WITNESS_LINES), *,
          timing_rng: np.random.Generator | None = None, ai_seats: tuple[str, ...] = (), leak: str | None = None,
          on_reply: Callable[[int, int], None] | None = None) -> None:
    """Alternate canned messages in every conversation, then give the verdict (all through the engine).
    With `timing_rng` each reply's typing indicator shows 1–5 s after the question (always at least
    1 s before the reply); `leak` makes the `ai_seats` differ (LEAKS). Neither touches `rng`."""
    from turinglab.game.engine import GiveVerdict, Send, Typing

    asks, replies = lines
    rounds = int(rng.integers(2, 7))
    for _ in range(rounds):
        if leak and t + 2 * 50_000 * len(witness_seats) >= game.deadline_ms:  # late replies: stop in time
            break
        for seat in witness_seats:
            t += int(rng.integers(3_000, 12_000))
            out = game.apply(Send("interrogator", str(rng.choice(asks)), conversation=seat), t)
            if not out.ok:
                raise RuntimeError(f"engine refused a demo message: {out.code} {out.detail}")
            t_q, gap = t, int(rng.integers(3_000, 15_000))
            ai = seat in ai_seats
            # the author as a live game records it: a late reply of the late-fallback leak is the fallback's
            author = {"source": "model", "model": "demo"} if ai else {"source": "human"}
            if timing_rng is not None:
                if ai and leak == "late-fallback" and timing_rng.random() < LATE_SHARE:
                    gap = LATE_AFTER_MS + int(timing_rng.integers(200, 2_500))
                    author = {"source": "fallback", "model": "demo"}
                onset = min(int(timing_rng.integers(1_000, 5_000)), gap - 1_000)
                if not (ai and leak == "no-typing"):
                    game.apply(Typing(seat, seat), t_q + onset)
            t = t_q + gap
            out = game.apply(Send(seat, str(rng.choice(replies)), conversation=seat, author=author), t)
            if not out.ok:
                raise RuntimeError(f"engine refused a demo reply: {out.code} {out.detail}")
            if on_reply is not None:
                on_reply(out.events[-1].seq, t)
    choice, conf, reason = verdict
    out = game.apply(GiveVerdict("interrogator", choice, conf, reason or None), t + int(rng.integers(2_000, 8_000)))
    if not out.ok:
        raise RuntimeError(f"engine refused the demo verdict: {out.code} {out.detail}")


def _demo_tags(store, game_id: str, rng: np.random.Generator, t_ms: int) -> None:
    """Two demo taggers code the game's strategy and reason (so the report's tag sections have data)."""
    from turinglab.analysis.live.taxonomy import codes

    for taxonomy in ("strategy", "reason"):
        options = sorted(codes(taxonomy))
        first = str(options[min(int(rng.geometric(0.25)) - 1, len(options) - 1)])  # a few codes dominate
        second = first if rng.random() < TAG_AGREE else str(rng.choice(options))
        for tagger, code in zip(TAGGERS, (first, second)):
            store.add_tag(game_id, tagger, taxonomy, code, t_ms)


def generate(url: str | None, spec: DemoSpec, progress: Callable[[int], None] | None = None) -> dict:
    """Create a demo study with `spec.n_games` finished games in the database at `url`."""
    from turinglab.game.engine import Game
    from turinglab.game.events import Identity
    from turinglab.matchmaking.thompson import WitnessStats, choose_witness
    from turinglab.store import Store

    if spec.n_games < 1:
        raise ValueError("--games must be at least 1")
    if spec.format not in ("two-player", "three-player"):
        raise ValueError("format must be two-player or three-player")
    if spec.leak is not None and spec.leak not in LEAKS:
        raise ValueError(f"unknown leak {spec.leak!r}; choose one of: {', '.join(LEAKS)}")
    rng = np.random.default_rng(spec.seed)
    tag_rng = np.random.default_rng([spec.seed, 7])  # its own stream: the games stay as they were
    topic_rng = np.random.default_rng([spec.seed, 11])  # likewise for the topics
    timing_rng = np.random.default_rng([spec.seed, 13])  # and for typing indicators and leaks
    belief_rng = np.random.default_rng([spec.seed, 17])  # and for the belief slider
    topics: dict[str, str] = {}
    study = demo_study(spec)
    codenames = list(spec.rates)
    wstats = WitnessStats.for_codenames(codenames)
    store = Store(url)
    try:
        from turinglab.store.api import StudyFrozen

        try:
            study_id = store.register_study(study)
        except StudyFrozen:
            study_id = store.register_study(study, new_version=True)
        n_int = spec.n_interrogators or max(1, int(round(spec.n_games / 2.5)))
        people = []
        for i in range(n_int + max(4, n_int // 2)):
            demo = {"age": int(rng.integers(18, 70)), "gender": str(rng.choice(GENDERS)),
                    "education": str(rng.choice(EDUCATION)), "chatbot_use": str(rng.choice(CHATBOT)),
                    "llm_knowledge": str(rng.choice(KNOWLEDGE))}
            people.append(store.create_participant(label=f"demo-{spec.seed}-{i}", consent_ms=1_700_000_000_000,
                                                   demographics=demo))
        interrogators, witnesses_pool = people[:n_int], people[n_int:]
        t0 = 1_700_000_000_000 + int(rng.integers(0, 10**9))
        for gi in range(spec.n_games):
            t = t0 + gi * 400_000
            inter = interrogators[int(rng.integers(0, n_int))]
            human_w = witnesses_pool[int(rng.integers(0, len(witnesses_pool)))]
            name, prob = choose_witness("thompson", wstats, codenames, rng, prob_draws=500)
            ai = Identity(kind="ai", witness=name, selection_prob=prob)
            hum = Identity(kind="human", participant_id=human_w)
            conf = int(rng.integers(30, 101))
            reason = str(rng.choice(REASONS))
            if spec.format == "two-player":
                is_human = bool(rng.random() < spec.human_share)
                judged_human = bool(rng.random() < (spec.human_rate if is_human else spec.rates[name]))
                seats = {"A": hum if is_human else ai}
                verdict = ("human" if judged_human else "ai", conf, reason)
                witness_seats = ["A"]
                if not is_human:
                    wstats.record(name, judged_human, conf)
            else:
                ai_seat = "A" if rng.random() < 0.5 else "B"
                hum_seat = "B" if ai_seat == "A" else "A"
                machine_chosen = bool(rng.random() < spec.rates[name])
                seats = {ai_seat: ai, hum_seat: hum}
                verdict = (ai_seat if machine_chosen else hum_seat, conf, reason)
                witness_seats = ["A", "B"]
                wstats.record(name, machine_chosen, conf)
            game_id = store.create_game(study_id, spec.format, seats, inter, t)
            game = Game.start(spec.format, study.rules, t)  # type: ignore[arg-type]
            how = dict(timing_rng=timing_rng, ai_seats=tuple(k for k, v in seats.items() if v.kind == "ai"),
                       leak=spec.leak)
            if spec.beliefs:  # the easier a witness is to tell apart, the faster the belief drifts to the truth
                rate = spec.human_rate if seats.get("A") is hum and spec.format == "two-player" else spec.rates[name]
                drift = 0.2 + 1.2 * abs(0.7 - rate) if spec.format == "two-player" else 0.2 + 1.2 * (0.6 - rate)
                right = (seats["A"].kind == "ai") if spec.format == "two-player" else seats["B"].kind == "human"
                how["on_reply"] = belief_mover(game, belief_rng, drift, right)
            if spec.topics:
                topics[game_id] = topic = str(topic_rng.choice(list(TOPIC_LINES)))
                _play(game, rng, t, witness_seats, verdict, TOPIC_LINES[topic], **how)
            else:
                _play(game, rng, t, witness_seats, verdict, **how)
            store.append_events(game_id, game.log)
            if tag_rng.random() < spec.tag_share:
                _demo_tags(store, game_id, tag_rng, t + 600_000)
            if progress:
                progress(gi + 1)
        return {"study_id": study_id, "study": study.name, "games": spec.n_games, "format": spec.format,
                "true_rates": dict(spec.rates), "human_rate": spec.human_rate, "leak": spec.leak,
                **({"topics": topics} if spec.topics else {})}
    finally:
        store.close()
