"""`judges evaluate --protocol zhang`: the cross-validation design of Zhang et al., and a line saying
whether a judge follows the paper or is this project's own.

The design, from the paper's benchmark code (`benchmarking/svm_judge.py` in kreimanlab/TuringTest):
10-fold `KFold(shuffle=True, random_state=42)`, one run, folds not grouped by stimulus, classes
balanced by splitting the machine items into human-sized groups (`trained.balanced_groups`; the
paper splits them in file order, this project at random with the same seed). Word association reads
the squared difference of the cue's and the response's embeddings (`sqdiff`, GloVe here).
The paper's methods describe a linear SVM (`--judge linear-svm`); its public benchmark code calls
scikit-learn's default `SVC()` (RBF kernel, no scaling), which is closest to `--judge svm`.
"""

from __future__ import annotations

PROTOCOLS = ("zhang",)
ZHANG = {"folds": 10, "seed": 42, "repeats": 1, "group_by_stimulus": False}
ZHANG_FEATURES = {"word": "sqdiff", "fv": "fixations10"}  # other text tasks: the project's defaults (the paper used OpenAI embeddings)


def conflicts(folds: int, seed: int, repeats: int, group_by_stimulus: bool) -> list[str]:
    """The options that contradict the protocol (it fixes them)."""
    given = {"folds": folds, "seed": seed, "repeats": repeats, "group_by_stimulus": group_by_stimulus}
    return [f"--{k.replace('_', '-')}" for k, v in given.items() if v != ZHANG[k]]


def paper_note(judge: str, task: str, features: list[str] | None, protocol: str | None) -> str:
    """Whether this result is the paper's judge reproduced, or the project's own."""
    if judge == "llm":
        return "the project's own judge (zero-shot LLM); the paper's zero-shot judges were GPT-4 prompts"
    paper_feats = ZHANG_FEATURES.get(task)
    same_feats = paper_feats is not None and list(features or []) == [paper_feats]
    if judge == "svm" and task == "fv" and protocol == "zhang" and same_feats:
        return ("the paper's fixation judge: SVM (RBF; standardised here) on the first 10 fixations in [-1, 1], "
                "shorter scanpaths dropped, 10 shuffled folds, seed 42 (the paper averaged 3 to 5 seeds)")
    if judge == "linear-svm" and protocol == "zhang" and same_feats:
        return ("the paper's judge, reproduced: linear SVM on the squared embedding difference, 10 shuffled "
                "folds, seed 42, balanced groups (GloVe 6B 50d here; the paper's embeddings differ)")
    if judge == "linear-svm":
        return ("the paper's classifier (linear SVM)" + ("" if protocol == "zhang" else " outside its fold design")
                + ("" if same_feats else " on this project's features"))
    return f"the project's own judge ({judge})" + (" in the paper's fold design" if protocol == "zhang" else "")
