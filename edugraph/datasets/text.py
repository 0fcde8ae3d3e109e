"""A small generated text corpus with real structure, for training word embeddings.

Sentences come from templates filled with true facts: countries, their capitals, languages and
continents, and verbs in three tenses. Words that play the same role share contexts ("... is
the capital of ...", "people in ... speak ..."), and each capital shares contexts with its own
country only, so skip-gram or CBOW embeddings trained on it show the famous analogies:
vec(berlin) − vec(germany) + vec(france) ≈ vec(paris), and walked − walk + go ≈ went.
"""
import collections

import numpy as np

# country, capital, language, continent (one word each)
COUNTRIES = [
    ("france", "paris", "french", "europe"), ("germany", "berlin", "german", "europe"),
    ("italy", "rome", "italian", "europe"), ("spain", "madrid", "spanish", "europe"),
    ("portugal", "lisbon", "portuguese", "europe"), ("greece", "athens", "greek", "europe"),
    ("poland", "warsaw", "polish", "europe"), ("sweden", "stockholm", "swedish", "europe"),
    ("norway", "oslo", "norwegian", "europe"), ("finland", "helsinki", "finnish", "europe"),
    ("netherlands", "amsterdam", "dutch", "europe"), ("russia", "moscow", "russian", "europe"),
    ("austria", "vienna", "german", "europe"), ("hungary", "budapest", "hungarian", "europe"),
    ("denmark", "copenhagen", "danish", "europe"), ("czechia", "prague", "czech", "europe"),
    ("ireland", "dublin", "english", "europe"), ("japan", "tokyo", "japanese", "asia"),
    ("china", "beijing", "chinese", "asia"), ("korea", "seoul", "korean", "asia"),
    ("thailand", "bangkok", "thai", "asia"), ("vietnam", "hanoi", "vietnamese", "asia"),
    ("turkey", "ankara", "turkish", "asia"), ("iran", "tehran", "persian", "asia"),
    ("india", "delhi", "hindi", "asia"), ("egypt", "cairo", "arabic", "africa"),
    ("kenya", "nairobi", "swahili", "africa"), ("brazil", "brasilia", "portuguese", "america"),
    ("peru", "lima", "spanish", "america"), ("chile", "santiago", "spanish", "america"),
    ("colombia", "bogota", "spanish", "america"), ("cuba", "havana", "spanish", "america"),
    ("canada", "ottawa", "english", "america"), ("australia", "canberra", "english", "oceania"),
]

# base form, past tense, -ing form
VERBS = [
    ("walk", "walked", "walking"), ("play", "played", "playing"), ("talk", "talked", "talking"),
    ("cook", "cooked", "cooking"), ("work", "worked", "working"), ("paint", "painted", "painting"),
    ("go", "went", "going"), ("eat", "ate", "eating"), ("see", "saw", "seeing"),
    ("write", "wrote", "writing"), ("run", "ran", "running"), ("swim", "swam", "swimming"),
    ("sing", "sang", "singing"), ("drink", "drank", "drinking"), ("speak", "spoke", "speaking"),
]

_FACT_TEMPLATES = [
    "{capital} is the capital of {country}",
    "the capital of {country} is {capital}",
    "the government of {country} sits in {capital}",
    "{capital} is the largest city of {country}",
    "people in {country} speak {language}",
    "in {capital} most people speak {language}",
    "{country} is a country in {continent}",
    "the country {country} lies in {continent}",
    "i visited the city of {capital} last year",
    "the city of {capital} has a famous old town",
    "the country {country} has a long history",
    "{language} is spoken in {country}",
]
_TRAVEL_TEMPLATES = [
    "she flew from {capital} to {other_capital}",
    "the train from {capital} to {other_capital} was late",
    "{country} and {other_country} signed a treaty",
    "{country} played {other_country} in the final",
]
_SUBJECTS = ["i", "you", "he", "she", "we", "they"]
_VERB_TEMPLATES = [
    ("yesterday {subject} {past} with friends", 1),
    ("last week {subject} {past} a lot", 1),
    ("every day {subject} {base} with friends", 0),
    ("usually {subject} {base} a lot", 0),
    ("right now {subject} {be} {ing} with friends", 2),
    ("at the moment {subject} {be} {ing} a lot", 2),
]
_BE = {"i": "am", "he": "is", "she": "is"}


def generate_corpus(n_sentences=20000, seed=0, verb_fraction=0.3):
    """``n_sentences`` lower-case sentences (strings), facts and verb-tense sentences mixed."""
    rng = np.random.default_rng(seed)
    sentences = []
    for _ in range(n_sentences):
        if rng.random() < verb_fraction:
            template, form = _VERB_TEMPLATES[rng.integers(len(_VERB_TEMPLATES))]
            verb = VERBS[rng.integers(len(VERBS))]
            subject = _SUBJECTS[rng.integers(len(_SUBJECTS))]
            sentences.append(template.format(subject=subject, base=verb[0], past=verb[1],
                                             ing=verb[2], be=_BE.get(subject, "are")))
            continue
        country, capital, language, continent = COUNTRIES[rng.integers(len(COUNTRIES))]
        if rng.random() < 0.15:
            other = COUNTRIES[rng.integers(len(COUNTRIES))]
            template = _TRAVEL_TEMPLATES[rng.integers(len(_TRAVEL_TEMPLATES))]
            sentences.append(template.format(capital=capital, other_capital=other[1],
                                             country=country, other_country=other[0]))
            continue
        template = _FACT_TEMPLATES[rng.integers(len(_FACT_TEMPLATES))]
        sentences.append(template.format(country=country, capital=capital, language=language,
                                         continent=continent))
    return sentences


def capital_analogies():
    """Every (country_a, capital_a, country_b, capital_b) with a ≠ b: capital_a − country_a +
    country_b should be nearest to capital_b."""
    return [(a[0], a[1], b[0], b[1]) for a in COUNTRIES for b in COUNTRIES if a is not b]


def tokenize(sentence):
    return sentence.lower().split()


class Vocabulary:
    """Words ↔ integer ids, most frequent first (id 0 is the most common word)."""

    def __init__(self, sentences, min_count=1):
        counts = collections.Counter(w for s in sentences for w in tokenize(s))
        self.words = [w for w, c in sorted(counts.items(), key=lambda wc: (-wc[1], wc[0]))
                      if c >= min_count]
        self.counts = np.array([counts[w] for w in self.words])
        self.index = {w: i for i, w in enumerate(self.words)}

    def __len__(self):
        return len(self.words)

    def __contains__(self, word):
        return word in self.index

    def encode(self, sentence):
        """Token ids of the known words of a sentence."""
        return [self.index[w] for w in tokenize(sentence) if w in self.index]

    def decode(self, ids):
        return " ".join(self.words[int(i)] for i in ids)


def skipgram_pairs(encoded_sentences, window=2):
    """(center, context) id pairs: every word with each neighbour up to ``window`` away."""
    centers, contexts = [], []
    for ids in encoded_sentences:
        for i, center in enumerate(ids):
            for j in range(max(0, i - window), min(len(ids), i + window + 1)):
                if j != i:
                    centers.append(center)
                    contexts.append(ids[j])
    return np.array(centers, dtype=np.int64), np.array(contexts, dtype=np.int64)
