"""The built-in AI judges (the paper's linear SVM, the authors' benchmark SVC, the project's RBF SVM,
random forest, TF-IDF + logistic regression, the conversation judge and the zero-shot LLM judge),
registered through the plugin hook."""

from __future__ import annotations

from turinglab.plugins import hookimpl
from turinglab.plugins.kinds import AIJudge


def _linear_svm(seed: int, n_trees: int = 200):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import LinearSVC

    # the paper names a linear SVM (scikit-learn) and no C: the library default C = 1
    return make_pipeline(StandardScaler(), LinearSVC(C=1.0, dual="auto", max_iter=20000, random_state=seed))


def _svm(seed: int, n_trees: int = 200):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    return make_pipeline(StandardScaler(), SVC(kernel="rbf", C=1.0, gamma="scale"))


def _rbf_svc(seed: int, n_trees: int = 200):
    from sklearn.svm import SVC

    # the authors' benchmark code (svm_judge.py): SVC() with every scikit-learn default, features unscaled
    return SVC()


def _rf(seed: int, n_trees: int = 200):
    from sklearn.ensemble import RandomForestClassifier

    return RandomForestClassifier(n_estimators=n_trees, random_state=seed, n_jobs=1)


def _tfidf_lr(seed: int, n_trees: int = 200):
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline, make_union

    vec = make_union(TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, min_df=1),
                     TfidfVectorizer(analyzer="word", ngram_range=(1, 2), sublinear_tf=True,
                                     token_pattern=r"(?u)\b\w+\b"))
    return make_pipeline(vec, LogisticRegression(C=4.0, max_iter=2000))


@hookimpl
def turinglab_ai_judges() -> list[AIJudge]:
    # SVM scores are decision values: their verdict threshold is 0
    return [
        AIJudge("svm", _svm, threshold=0.0, description="the project's own: an RBF SVM on standardised features"),
        AIJudge("linear-svm", _linear_svm, threshold=0.0,
                description="the paper's judge: a linear SVM on one embedding (Zhang et al., word and caption tasks)"),
        AIJudge("rbf-svc", _rbf_svc, threshold=0.0,
                description="the authors' benchmark code (kreimanlab/TuringTest benchmarking/svm_judge.py): "
                            "scikit-learn's SVC() with its defaults (RBF, C = 1, gamma = 'scale') on unscaled features"),
        AIJudge("conversation", _linear_svm, threshold=0.0, tasks=("conversation", "transcript"), features="turns",
                description="the project's conversation judge: a linear SVM (the paper's kind for conversations) on "
                            "per-speaker turn features (length, questions, register, vocabulary; conversation.py)"),
        AIJudge("rf", _rf, description="the project's own: a random forest (the paper used one for colour, on image "
                                       "+ text features)"),
        AIJudge("tfidf-lr", _tfidf_lr, reads_text=True,
                description="the project's own: TF-IDF and logistic regression"),
        AIJudge("llm", None, reads_text=True, description="the project's own: a zero-shot LLM judge (not in the paper)"),
    ]
