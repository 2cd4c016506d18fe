"""AI judges beside human judges: trained (SVM, random forest, TF-IDF) and zero-shot LLM judges on
static items, and the inverted Turing test on stored live games. See docs/judges.md.

Entry points: `items.load_zhang`, `items.load_human_judges`, `evaluate.evaluate(items, Config(...))`,
`live.from_loaded` (live games), `metrics.summarize` (the same metrics for AI and human judges).
"""
