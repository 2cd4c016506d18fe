"""turinglab: run Turing tests and analyse them correctly."""

__version__ = "0.1.0"
