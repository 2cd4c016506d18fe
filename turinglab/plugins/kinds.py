"""What the hooks return: one small description per thing a plugin adds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from turinglab.i18n import N_


@dataclass(frozen=True)
class WitnessKind:
    """`build(spec, seed)` -> a `Witness` (turinglab.witnesses.base) for a `WitnessSpec` of this
    kind; `options`: a pydantic model of the kind's own settings (the spec's `options:` mapping is
    validated against it when a study is loaded); `named()` -> {name: WitnessSpec}, the witnesses
    `--witness NAME` offers of this kind (called each time: it may read the environment);
    `uses_model`: the reply comes from a language model (persona draws and the model's capacity
    apply)."""

    name: str
    build: Callable[..., Any]
    options: type | None = None
    named: Callable[[], dict[str, Any]] = dict
    uses_model: bool = False
    description: str = ""


@dataclass(frozen=True)
class StaticTask:
    """One static task. `intro` completes "You will see ..." on the judge's landing page;
    `question` is asked of each item (None: the task asks per speaker, as conversations do);
    `control_question` is the default question of an item's control choices; `fragment` is the
    Jinja source of the item's part of the judge page (it sees `item`, `n`, `root`, `token`);
    `images`: items need a picture (`--images`); `needs_text`: the stimulus text is required on
    import; `check(response)` -> None or what is wrong with a response, on import;
    `show(payload, text)` -> extra fields the page may show (never truth or agent);
    `rules`: the zhang-2023 preset's overrides for the task."""

    name: str
    intro: str
    question: str | None
    fragment: str
    control_question: str = N_("What do you see in the picture?")
    images: bool = False
    needs_text: bool = False
    check: Callable[[str], str | None] | None = None
    show: Callable[[dict, str | None], dict] | None = None
    rules: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Importer:
    """`read(task, responses, judge_trials, images, skip_unknown_truth=)` -> `statictests.zhang.Parsed`
    (stimuli, items, judges, trials), raising `ImportProblem` with every problem found;
    `mapping`: one line on which file fields become which item fields."""

    name: str
    read: Callable[..., Any]
    mapping: str = ""


@dataclass(frozen=True)
class AIJudge:
    """`make(seed, n_trees)` -> an estimator with fit(X, y) and a score (predict_proba or
    decision_function; scikit-learn's contract), or None for a judge evaluated by its own path (the
    LLM judge). `reads_text`: the estimator reads the items' text itself (X is the text), else X
    is the `--features` sets (judges/features.py). `threshold`: the score from which the verdict
    is machine. `description`: where the judge comes from (shown with every result). `tasks`: the
    tasks it judges (empty: any); `features`: its feature sets when `--features` is not given."""

    name: str
    make: Callable[..., Any] | None
    reads_text: bool = False
    threshold: float = 0.5
    description: str = "the project's own"
    tasks: tuple[str, ...] = ()
    features: str | None = None


@dataclass(frozen=True)
class ContentFilterKind:
    """`make(words, use_default[, language])` -> an object (a `make` that takes `language` gets the study's
    BCP 47 tag, e.g. to load that language's word list) whose `check(text)` (sync or async; `text` a str or
    a `textnorm.Seen`) returns None to let the text through, else the reason it is blocked."""

    name: str
    make: Callable[..., Any]


@dataclass(frozen=True)
class ReportSection:
    """`render(analysis, fmt)` -> the section's fragment, HTML (escaped by the section) or Markdown
    (`fmt` "html" or "md"), from the live report's `analysis.core.Analysis`, or "" to leave it out.
    Sections follow the study's own, before the belief-tracking section."""

    name: str
    title: str
    render: Callable[[Any, str], str]
