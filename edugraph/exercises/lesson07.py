"""Lesson 7's exercises: the gradient of an embedding table, skip-gram pairs, the
negative-sampling loss, cosine nearest neighbours and analogies by vector arithmetic.

Every check runs the student's function on small fixed inputs (no training), built so that
each known mistake gives an answer of its own.
"""
import numbers

import numpy as np

import edugraph as eg
from edugraph import datasets, losses
from edugraph.neighbours import analogy, neighbours

from .answers import WrongForm, array, describe, function
from .checking import Exercise, Mistake


def _returned(value, call):
    """What the student's function returned; None means a forgotten `return`."""
    if value is None:
        raise WrongForm(f"{call} returned None: did you forget the `return`?")
    return value


# ------------------------------------------------ 7.1: the gradient of an embedding table
VOCAB_SIZE, DIM = 6, 3
_rng = np.random.default_rng(71)
# (ids, upstream): one sentence and a batch of two, each with a word looked up more than
# once. The upstream values are small whole numbers and never 0, so that every
# contribution counts and a row written once instead of summed shows.
_LOOKUPS = tuple(
    (ids, _rng.choice([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0], size=ids.shape + (DIM,)))
    for ids in (np.array([2, 0, 2, 5]), np.array([[1, 4, 1], [4, 4, 0]])))


def _table_gradient_by_edugraph(ids, upstream):
    """d(Σ upstream · table[ids]) / d table: the backward pass of a lookup, by edugraph."""
    # the gradient of a lookup does not depend on the table's values: zeros will do
    table = eg.tensor(np.zeros((VOCAB_SIZE, DIM)), dtype=eg.float64, requires_grad=True)
    looked_up = eg.gather(table, eg.tensor(ids))
    (looked_up * eg.tensor(upstream, dtype=eg.float64)).sum().backward()
    return table.grad.numpy()


def _gradients_of(table_gradient):
    return {"gradients": tuple(table_gradient(ids, upstream) for ids, upstream in _LOOKUPS)}


def _run_table_gradient(answer):
    table_gradient = answer["table_gradient"]
    gradients = []
    for ids, upstream in _LOOKUPS:
        call = f"table_gradient(ids of shape {ids.shape}, upstream, {VOCAB_SIZE})"
        got = table_gradient(ids.copy(), upstream.copy(), VOCAB_SIZE)
        gradients.append(array(_returned(got, call), call))
    return {"gradients": tuple(gradients)}


def _written_once(ids, upstream, vocab_size=VOCAB_SIZE):
    grad = np.zeros((vocab_size, upstream.shape[-1]))
    grad[ids] += upstream           # numpy buffers repeated indices: the last one wins
    return grad


def _counts(ids, upstream, vocab_size=VOCAB_SIZE):
    grad = np.zeros((vocab_size, upstream.shape[-1]))
    np.add.at(grad, ids, 1.0)
    return grad


def _every_row(ids, upstream, vocab_size=VOCAB_SIZE):
    total = upstream.reshape(-1, upstream.shape[-1]).sum(axis=0)
    return np.tile(total, (vocab_size, 1))


def _transposed(ids, upstream, vocab_size=VOCAB_SIZE):
    one_hot = np.eye(vocab_size)[ids.reshape(-1)]
    return upstream.reshape(-1, upstream.shape[-1]).T @ one_hot


def _loop_over_first_axis(ids, upstream, vocab_size=VOCAB_SIZE):
    """Right for a sentence; for a batch, ids[i] is a whole sentence and `+=` buffers it."""
    grad = np.zeros((vocab_size, upstream.shape[-1]))
    for i, word in enumerate(ids):
        grad[word] += upstream[i]
    return grad


def _upstream_itself(ids, upstream, vocab_size=VOCAB_SIZE):
    return upstream


def _has_the_lookups_shape(got, reference):
    return all(g.shape == upstream.shape for g, (_, upstream) in zip(got["gradients"], _LOOKUPS))


ex7_1 = Exercise(
    "7.1",
    reads={"table_gradient": function},
    run=_run_table_gradient,
    reference=lambda: _gradients_of(_table_gradient_by_edugraph),
    passed="table_gradient matches edugraph's backward of a lookup on a sentence and a "
           "batch: only the rows looked up get a gradient, and repeated ids add up.",
    expected="table_gradient(ids, upstream, vocab_size) returns the table's gradient, an "
             "array of shape (vocab_size, D) (checked on a 1-D and a 2-D batch of ids, to "
             "1e-6).",
    mistakes=(
        Mistake("a word looked up twice must get the SUM of both upstream rows, but "
                "`grad[ids] += upstream` writes each row only once (numpy keeps the last "
                "write). Use np.add.at, or one-hot.T @ upstream.",
                gives=lambda: _gradients_of(_written_once),
                example={"table_gradient": _written_once}),
        Mistake("right for one sentence, but in a batch ids[i] is a whole sentence, and "
                "`grad[ids[i]] += upstream[i]` keeps only one of its repeated words. Loop "
                "over ids.reshape(-1) and upstream.reshape(-1, D), or use np.add.at.",
                gives=lambda: _gradients_of(_loop_over_first_axis),
                example={"table_gradient": _loop_over_first_axis}),
        Mistake("your rows count how often each word was looked up: by the chain rule, "
                "each lookup passes on the upstream gradient of its position, not 1.",
                gives=lambda: _gradients_of(_counts), example={"table_gradient": _counts}),
        Mistake("every row got a gradient, but only the rows that were looked up took part "
                "in the forward pass; the others get zeros.",
                gives=lambda: _gradients_of(_every_row), example={"table_gradient": _every_row}),
        Mistake("your gradient is transposed: the table has one row per word, shape "
                "(vocab_size, D), and so does its gradient.",
                gives=lambda: _gradients_of(_transposed),
                example={"table_gradient": _transposed}),
        Mistake("that is the gradient of the looked-up vectors, one row per position in "
                "ids. The table's gradient has one row per word of the vocabulary: "
                "(vocab_size, D).",
                when=_has_the_lookups_shape, example={"table_gradient": _upstream_itself}),
    ),
)


# ------------------------------------------------------------------ 7.2: skip-gram pairs
# (sentence of ids, window). The first repeats word 7 two places apart, a real pair; the
# third is shorter than its window; the last has no pairs at all.
_SENTENCES = (([7, 3, 7, 1, 4, 3], 2), ([5, 9, 2, 9, 8, 6, 1], 1), ([4, 6, 1], 5), ([8], 2))


def _sorted_pairs(pairs):
    """(n, 2) pairs in one order, since the order of the pairs does not matter."""
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    return pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]


def _read_pairs(value, call):
    """A list of (centre, context) id pairs as a sorted (n, 2) array."""
    value = _returned(value, call)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise WrongForm(f"{call} should return a list of (centre, context) pairs; it "
                        f"returned {describe(value)}.")
    if not hasattr(value, "__len__") or isinstance(value, (set, frozenset)):
        value = list(value)     # a generator of pairs will do; a set, with its lost repeats
    try:
        pairs = np.asarray(value)
    except ValueError:          # ragged: pairs of different lengths
        pairs = np.asarray(value, dtype=object)
    if pairs.size == 0:
        return _sorted_pairs(np.zeros((0, 2)))
    if pairs.ndim == 2 and pairs.shape[0] == 2 and pairs.shape[1] != 2:
        raise WrongForm(f"{call} returned two rows (all centres, then all contexts); return "
                        "one (centre, context) pair per item, e.g. [(7, 3), (7, 7), ...].")
    if pairs.ndim == 2 and pairs.shape[1] == 2 and pairs.dtype.kind == "f":
        raise WrongForm(f"{call} returned pairs of floats, such as {tuple(pairs[0].tolist())}: "
                        "word ids are whole numbers; pair the ids themselves, (ids[i], "
                        "ids[j]), without converting them.")
    if pairs.ndim != 2 or pairs.shape[1] != 2 or pairs.dtype.kind not in "iu":
        raise WrongForm(f"{call} should return (centre, context) pairs of word ids, e.g. "
                        f"[(7, 3), (7, 7), ...]; it returned {describe(value)}.")
    return _sorted_pairs(pairs)


def _pairs_by_edugraph(ids, window):
    centers, contexts = datasets.skipgram_pairs([ids], window)
    return np.stack([centers, contexts], axis=1)


def _pairs_of(skipgram_pairs_of):
    return {"pairs": tuple(_sorted_pairs(skipgram_pairs_of(list(ids), window))
                           for ids, window in _SENTENCES)}


def _run_pairs(answer):
    skipgram_pairs_of = answer["skipgram_pairs_of"]
    pairs = []
    for ids, window in _SENTENCES:
        call = f"skipgram_pairs_of({ids}, {window})"
        pairs.append(_read_pairs(skipgram_pairs_of(list(ids), window), call))
    return {"pairs": tuple(pairs)}


def _pairs_at(positions):
    """A skip-gram function that pairs position i with the positions(i, n, window) give."""
    def skipgram_pairs_of(ids, window):
        return [(ids[i], ids[j]) for i in range(len(ids))
                for j in positions(i, len(ids), window)]
    return skipgram_pairs_of


_after_only = _pairs_at(lambda i, n, w: range(i + 1, min(n, i + w + 1)))
_with_itself = _pairs_at(lambda i, n, w: range(max(0, i - w), min(n, i + w + 1)))
_right_end_missed = _pairs_at(lambda i, n, w: [j for j in range(max(0, i - w), min(n, i + w))
                                               if j != i])
_both_ends_missed = _pairs_at(lambda i, n, w: [j for j in range(max(0, i - w + 1),
                                                                min(n, i + w)) if j != i])
# ids[i - w:i] with i < w: a negative start counts from the end, and the slice is empty
_wrapped_slice = _pairs_at(lambda i, n, w: [*range(n)[i - w:i], *range(n)[i + 1:i + w + 1]])


def _in_a_set(ids, window):
    """The right pairs, collected in a set: a pair that occurs twice is kept once."""
    return set(map(tuple, _pairs_by_edugraph(ids, window).tolist()))


def _positions(ids, window):
    return [(i, j) for i in range(len(ids))
            for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i]


def _skips_the_same_word(ids, window):
    return [(center, context) for i, center in enumerate(ids)
            for context in ids[max(0, i - window):i + window + 1] if context != center]


ex7_2 = Exercise(
    "7.2",
    reads={"skipgram_pairs_of": function},
    run=_run_pairs,
    reference=lambda: _pairs_of(_pairs_by_edugraph),
    passed="skipgram_pairs_of gives the same pairs as datasets.skipgram_pairs on 4 "
           "sentences: every neighbour up to `window` away on both sides, never the centre "
           "itself.",
    expected="skipgram_pairs_of(ids, window) returns a list of (centre, context) pairs of "
             "ids, in any order (checked on 4 sentences and windows 1, 2 and 5).",
    mistakes=(
        Mistake("you pair each word only with the words after it: the window reaches both "
                "ways, `window` words before the centre and `window` after.",
                gives=lambda: _pairs_of(_after_only), example={"skipgram_pairs_of": _after_only}),
        Mistake("each word is paired with itself: skip the centre's own position (j != i).",
                gives=lambda: _pairs_of(_with_itself),
                example={"skipgram_pairs_of": _with_itself}),
        Mistake("the word `window` places to the right is missing: range(a, b) stops before "
                "b, so go up to i + window + 1.",
                gives=lambda: _pairs_of(_right_end_missed),
                example={"skipgram_pairs_of": _right_end_missed}),
        Mistake("the words `window` places away are missing on both sides: the neighbours "
                "run from i - window to i + window, both included, range(max(0, i - window), "
                "min(len(ids), i + window + 1)).",
                gives=lambda: _pairs_of(_both_ends_missed),
                example={"skipgram_pairs_of": _both_ends_missed}),
        Mistake("near the start of a sentence the left neighbours are missing: for i < window, "
                "i - window is negative, and a slice from a negative index counts from the "
                "END (ids[-2:1] is empty). Start at max(0, i - window).",
                gives=lambda: _pairs_of(_wrapped_slice),
                example={"skipgram_pairs_of": _wrapped_slice}),
        Mistake("you skip every occurrence of the centre word, not just its own position: in "
                "[7, 3, 7], the two 7s are two words apart, a real pair.",
                gives=lambda: _pairs_of(_skips_the_same_word),
                example={"skipgram_pairs_of": _skips_the_same_word}),
        Mistake("each pair appears once, but a pair that occurs twice in the sentence counts "
                "twice (in [7, 3, 7, 1, 4, 3] both 7s are next to the first 3): keep the "
                "repeats, in a list rather than a set.",
                gives=lambda: _pairs_of(lambda ids, window: sorted(_in_a_set(ids, window))),
                example={"skipgram_pairs_of": _in_a_set}),
        Mistake("your pairs hold positions in the sentence, (i, j); the pairs are of the "
                "words' ids there, (ids[i], ids[j]).",
                gives=lambda: _pairs_of(_positions), example={"skipgram_pairs_of": _positions}),
    ),
)


# -------------------------------------------------------- 7.3: the negative-sampling loss
def _batch(seed, batch, negatives, dim=5):
    """v (B, D), u_context (B, D), u_negatives (B, K, D): vectors of a moderate size."""
    rng = np.random.default_rng(seed)
    return (rng.normal(0, 0.7, (batch, dim)), rng.normal(0, 0.7, (batch, dim)),
            rng.normal(0, 0.7, (batch, negatives, dim)))


_BATCHES = (_batch(73, batch=3, negatives=4), _batch(74, batch=2, negatives=3))


def _loss_by_edugraph(v, u_context, u_negatives):
    """The lesson's skipgram_loss, given the vectors instead of the tables."""
    v, u_context, u_negatives = (eg.tensor(a, dtype=eg.float64)
                                 for a in (v, u_context, u_negatives))
    positive = eg.reduce_sum(v * u_context, -1)
    negative = eg.reduce_sum(eg.expand_dims(v, 1) * u_negatives, -1)
    num_negatives = u_negatives.shape[1]
    return (losses.sigmoid_cross_entropy(eg.ones_like(positive), positive)
            + num_negatives * losses.sigmoid_cross_entropy(eg.zeros_like(negative),
                                                           negative)).item()


def _losses_of(loss):
    return {"losses": tuple(loss(*batch) for batch in _BATCHES)}


def _run_loss(answer):
    negative_sampling_loss = answer["negative_sampling_loss"]
    values = []
    for v, u_context, u_negatives in _BATCHES:
        call = f"negative_sampling_loss(v, u_context, u_negatives of shape {u_negatives.shape})"
        got = negative_sampling_loss(v.copy(), u_context.copy(), u_negatives.copy())
        value = array(_returned(got, call), call)
        if value.size != 1:
            raise WrongForm(f"{call} should return one number, the loss averaged over the "
                            f"batch; it returned {describe(got)}.")
        values.append(float(value.reshape(())))
    return {"losses": tuple(values)}


def _log_sigmoid(x):
    return -np.logaddexp(0, -x)


def _scores(v, u_context, u_negatives):
    return np.sum(v * u_context, -1), np.einsum("bd,bkd->bk", v, u_negatives)


def _sgns(positive_term, negative_term, batch_mean=True):
    """A negative-sampling loss assembled from per-pair terms (for the mistakes)."""
    def loss(v, u_context, u_negatives):
        positive, negative = _scores(v, u_context, u_negatives)
        per_pair = positive_term(positive) + negative_term(negative)
        return per_pair.mean() if batch_mean else per_pair.sum()
    return loss


_right_terms = (lambda s: -_log_sigmoid(s), lambda s: -_log_sigmoid(-s).sum(-1))
_negatives_as_positives = _sgns(_right_terms[0], lambda s: -_log_sigmoid(s).sum(-1))
_negatives_averaged = _sgns(_right_terms[0], lambda s: -_log_sigmoid(-s).mean(-1))
_log_likelihood = _sgns(lambda s: _log_sigmoid(s), lambda s: _log_sigmoid(-s).sum(-1))
_summed_over_batch = _sgns(*_right_terms, batch_mean=False)
_no_positive_term = _sgns(lambda s: 0 * s, _right_terms[1])

ex7_3 = Exercise(
    "7.3",
    reads={"negative_sampling_loss": function},
    run=_run_loss,
    reference=lambda: _losses_of(_loss_by_edugraph),
    passed="negative_sampling_loss matches the lesson's skip-gram loss on two batches: "
           "the real pair's score is pushed up, each of the K negatives' scores down.",
    expected="negative_sampling_loss(v, u_context, u_negatives) returns one number, the loss "
             "averaged over the batch (checked on two batches to 1e-5).",
    rtol=1e-5,
    mistakes=(
        Mistake("your negatives are scored like real pairs: a negative's target is 0, so its "
                "term is -log σ(-v·u) = -log(1 - σ(v·u)), which is small when v·u is low.",
                gives=lambda: _losses_of(_negatives_as_positives),
                example={"negative_sampling_loss": _negatives_as_positives}),
        Mistake("you average over the K negatives: each negative adds its own term to the "
                "pair's loss, so sum them (the lesson multiplies the mean over B·K by K).",
                gives=lambda: _losses_of(_negatives_averaged),
                example={"negative_sampling_loss": _negatives_averaged}),
        Mistake("the sign is flipped: that is the log-likelihood, which training makes "
                "large; the loss to minimise is its negative.",
                gives=lambda: _losses_of(_log_likelihood),
                example={"negative_sampling_loss": _log_likelihood}),
        Mistake("you sum over the batch: average over the B pairs instead, as the lesson's "
                "loss does, so that the loss does not grow with the batch size.",
                gives=lambda: _losses_of(_summed_over_batch),
                example={"negative_sampling_loss": _summed_over_batch}),
        Mistake("the real pair's term is missing: -log σ(v·u_context) wants its score high; "
                "without it, nothing pulls a word towards its contexts.",
                gives=lambda: _losses_of(_no_positive_term),
                example={"negative_sampling_loss": _no_positive_term}),
    ),
)


# ---------------------------------------------------- 7.4: cosine nearest neighbours by hand
def _read_words(value, call):
    """A list of words (str) as a tuple."""
    value = _returned(value, call)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise WrongForm(f"{call} should return a list of words; it returned "
                        f"{describe(value)}.")
    items = list(value)
    if any(isinstance(w, (tuple, list)) and len(w) == 2 and isinstance(w[0], str)
           for w in items):
        raise WrongForm(f"{call} should return just the words, not (word, distance) pairs.")
    if any(isinstance(w, numbers.Integral) for w in items):
        raise WrongForm(f"{call} returned row numbers; return the words themselves "
                        "(words[i]).")
    if not all(isinstance(w, str) for w in items):
        raise WrongForm(f"{call} should return a list of words (str); it returned "
                        f"{describe(value)}.")
    return tuple(items)


# A small picture in 2-D, made so that each way of measuring "near" picks its own words:
# kitten points the same way as cat but is short (cosine's choice), dog is long and at an
# angle (the dot product's), tiger lies close by at a larger angle (Euclid's).
_ANIMALS = {"cat": (1.0, 0.0), "kitten": (0.3, 0.02), "dog": (3.0, 1.5), "tiger": (0.9, 0.3),
            "car": (0.0, 1.0), "stone": (-1.0, 0.2), "tree": (0.4, -0.9)}


def _random_words(seed, count=30, dim=8):
    """Random vectors whose lengths vary tenfold, as word vectors' lengths do."""
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(count, dim)) * rng.uniform(0.3, 3.0, size=(count, 1))
    return vectors, [f"w{i}" for i in range(count)]


_WORDS = _random_words(74)
# (vectors, words, query, k)
_QUERIES = ((np.array(list(_ANIMALS.values())), list(_ANIMALS), "cat", 3),
            (*_WORDS, "w3", 5), (*_WORDS, "w17", 4))


def _nearest_by_projector(vectors, words, query, k):
    rows, _ = neighbours(vectors, words.index(query), k)
    return [words[r] for r in rows]


def _neighbours_of(nearest_words):
    return {"neighbours": tuple(tuple(nearest_words(vectors, words, query, k))
                                for vectors, words, query, k in _QUERIES)}


def _run_nearest(answer):
    nearest_words = answer["nearest_words"]
    found = []
    for vectors, words, query, k in _QUERIES:
        call = f"nearest_words(vectors, words, {query!r}, {k})"
        found.append(_read_words(nearest_words(vectors.copy(), list(words), query, k), call))
    return {"neighbours": tuple(found)}


def _ranked_by(similarity, keep_query=False, farthest_first=False):
    """A nearest_words that ranks by similarity(vectors, q), highest first, for the mistakes."""
    def nearest_words(vectors, words, query, k):
        scores = similarity(vectors, vectors[words.index(query)])
        order = np.argsort(-scores, kind="stable")
        if not keep_query:
            order = order[order != words.index(query)]
        chosen = order[::-1][:k] if farthest_first else order[:k]
        return [words[i] for i in chosen]
    return nearest_words


def _cosine(vectors, q):
    return vectors @ q / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(q))


_with_query = _ranked_by(_cosine, keep_query=True)
_by_dot_product = _ranked_by(lambda vectors, q: vectors @ q)
_by_euclid = _ranked_by(lambda vectors, q: -np.linalg.norm(vectors - q, axis=1))
_farthest = _ranked_by(_cosine, farthest_first=True)


def _nearest_last(vectors, words, query, k):
    return _ranked_by(_cosine)(vectors, words, query, k)[::-1]


def _has_the_query(got, reference):
    return any(query in found for (_, _, query, _), found in zip(_QUERIES, got["neighbours"]))


def _same_words_other_order(got, reference):
    pairs = list(zip(got["neighbours"], reference["neighbours"]))
    return all(sorted(g) == sorted(r) for g, r in pairs) and any(g != r for g, r in pairs)


def _wrong_count(got, reference):
    return any(len(found) != k for (_, _, _, k), found in zip(_QUERIES, got["neighbours"]))


ex7_4 = Exercise(
    "7.4",
    reads={"nearest_words": function},
    run=_run_nearest,
    reference=lambda: _neighbours_of(_nearest_by_projector),
    passed="nearest_words ranks by cosine similarity, nearest first, without the query "
           "word: it agrees with projector.neighbours on 3 queries.",
    expected="nearest_words(vectors, words, query, k) returns a list of k words (str), "
             "nearest first (checked on 3 queries, vectors of different lengths).",
    mistakes=(
        Mistake("the query word is in the list: it is its own nearest neighbour (cosine "
                "distance 0), so leave it out.",
                when=_has_the_query, example={"nearest_words": _with_query}),
        Mistake("you ranked by the dot product, where long vectors win whatever their "
                "direction: divide by both lengths (cosine), so that only the angle counts.",
                gives=lambda: _neighbours_of(_by_dot_product),
                example={"nearest_words": _by_dot_product}),
        Mistake("you ranked by Euclidean distance, which depends on the vectors' lengths; "
                "nearest neighbours here are by angle: cosine similarity.",
                gives=lambda: _neighbours_of(_by_euclid), example={"nearest_words": _by_euclid}),
        Mistake("these are the farthest words: the most similar come first (sort the cosine "
                "similarity from high to low, or the distance 1 - cos from low to high).",
                gives=lambda: _neighbours_of(_farthest), example={"nearest_words": _farthest}),
        Mistake("the right words, in the wrong order: the nearest comes first.",
                when=_same_words_other_order, example={"nearest_words": _nearest_last}),
        Mistake("the list should hold exactly k words: the k nearest, the query not "
                "counted.",
                when=_wrong_count,
                example={"nearest_words": lambda vectors, words, query, k:
                         _nearest_by_projector(vectors, words, query, k + 1)}),
    ),
)


# ------------------------------------------------------ 7.5: analogies by vector arithmetic
def _capitals(seed, dim=8):
    """Countries and capitals: each capital is its country plus a shared "capital of"
    offset and a little noise, with lengths that vary fourfold. The offset is short next to
    the vectors, so c itself is often nearest to b - a + c, as with real word vectors."""
    rng = np.random.default_rng(seed)
    countries = ["france", "germany", "italy", "spain", "japan", "kenya", "peru"]
    capitals = ["paris", "berlin", "rome", "madrid", "tokyo", "nairobi", "lima"]
    places = rng.normal(size=(len(countries), dim))
    offset = rng.normal(0, 0.3, size=dim)
    noise = rng.normal(0, 0.2, size=places.shape)
    vectors = np.concatenate([places, places + offset + noise])
    vectors *= rng.uniform(0.5, 2.0, size=(len(vectors), 1))
    return vectors, countries + capitals


# The seed gives every question its right capital first, and the same answers whether or
# not the vectors are scaled to length 1 before the arithmetic (word2vec does, the projector
# does not), so both pass; the dot product and Euclid's distance give others.
_PLACES = _capitals(47)
_QUESTIONS = (("france", "paris", "germany", 2), ("japan", "tokyo", "kenya", 2),
              ("italy", "rome", "peru", 3), ("spain", "madrid", "japan", 2))


def _analogy_by_projector(vectors, words, a, b, c, k):
    rows, _ = analogy(vectors, words.index(a), words.index(b), words.index(c), k)
    return [words[r] for r in rows]


def _answers_of(analogy_words):
    vectors, words = _PLACES
    return {"answers": tuple(tuple(analogy_words(vectors, words, a, b, c, k))
                             for a, b, c, k in _QUESTIONS)}


def _run_analogy(answer):
    analogy_words = answer["analogy_words"]
    vectors, words = _PLACES
    found = []
    for a, b, c, k in _QUESTIONS:
        call = f"analogy_words(vectors, words, {a!r}, {b!r}, {c!r}, {k})"
        found.append(_read_words(analogy_words(vectors.copy(), list(words), a, b, c, k),
                                 call))
    return {"answers": tuple(found)}


def _analogy_with(target, similarity=_cosine, exclude=True):
    """An analogy_words with this target and similarity, for the mistakes."""
    def analogy_words(vectors, words, a, b, c, k):
        x = {w: vectors[words.index(w)] for w in (a, b, c)}
        scores = similarity(vectors, target(x[a], x[b], x[c]))
        order = [i for i in np.argsort(-scores, kind="stable")
                 if not (exclude and words[i] in (a, b, c))]
        return [words[i] for i in order[:k]]
    return analogy_words


_sign_flipped = _analogy_with(lambda a, b, c: a - b + c)
_inputs_kept = _analogy_with(lambda a, b, c: b - a + c, exclude=False)
_analogy_by_dot = _analogy_with(lambda a, b, c: b - a + c, similarity=lambda v, t: v @ t)
_analogy_by_euclid = _analogy_with(lambda a, b, c: b - a + c,
                                   similarity=lambda v, t: -np.linalg.norm(v - t, axis=1))


def _answers_an_input(got, reference):
    return any(set(found) & {a, b, c} for (a, b, c, _), found in zip(_QUESTIONS, got["answers"]))


def _answer_count_wrong(got, reference):
    return any(len(found) != k for (_, _, _, k), found in zip(_QUESTIONS, got["answers"]))


def _left_out_after_taking_k(vectors, words, a, b, c, k):
    ranked = _inputs_kept(vectors, words, a, b, c, len(words))
    return [w for w in ranked[:k] if w not in (a, b, c)]


ex7_5 = Exercise(
    "7.5",
    reads={"analogy_words": function},
    run=_run_analogy,
    reference=lambda: _answers_of(_analogy_by_projector),
    passed="analogy_words answers 4 questions as projector.analogy does: the words nearest "
           "to b - a + c by cosine, the three question words left out.",
    expected="analogy_words(vectors, words, a, b, c, k) returns a list of k words (str), "
             "nearest to b - a + c first (checked on 4 questions).",
    mistakes=(
        Mistake("a question word is among your answers: since the offset b - a is short, "
                "c itself is often nearest to b - a + c. Leave out a, b and c.",
                when=_answers_an_input, example={"analogy_words": _inputs_kept}),
        Mistake("the list should hold exactly k words: leave out a, b and c first, then take "
                "the k nearest of the others.",
                when=_answer_count_wrong, example={"analogy_words": _left_out_after_taking_k}),
        Mistake("the sign is flipped: \"a is to b as c is to ?\" adds the offset from a to b, "
                "b - a, to c.",
                gives=lambda: _answers_of(_sign_flipped),
                example={"analogy_words": _sign_flipped}),
        Mistake("you ranked by the dot product, where long vectors win: compare directions "
                "with cosine similarity, as for the nearest neighbours.",
                gives=lambda: _answers_of(_analogy_by_dot),
                example={"analogy_words": _analogy_by_dot}),
        Mistake("you ranked by Euclidean distance, which depends on the vectors' lengths: "
                "compare directions with cosine similarity, as for the nearest neighbours.",
                gives=lambda: _answers_of(_analogy_by_euclid),
                example={"analogy_words": _analogy_by_euclid}),
    ),
)

EXERCISES = [ex7_1, ex7_2, ex7_3, ex7_4, ex7_5]
