"""Datasets, all generated or shipped (no downloads): toy 2-D sets, regression data, the 8×8
digits bundled with scikit-learn, and a structured text corpus for word embeddings."""
from .digits import load_digits
from .text import (COUNTRIES, VERBS, Vocabulary, capital_analogies, generate_corpus,
                   skipgram_pairs, tokenize)
from .toy import make_blobs, make_moons, make_regression, make_spirals, random_regression

__all__ = ["load_digits", "make_spirals", "make_moons", "make_blobs", "make_regression",
           "random_regression", "generate_corpus", "capital_analogies", "Vocabulary",
           "skipgram_pairs", "tokenize", "COUNTRIES", "VERBS"]
