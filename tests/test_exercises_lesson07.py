"""Lesson 7's exercises: the reference answers pass (written here by hand, in other ways than
the module's), nudged answers fail, the test inputs tell every known mistake apart, and the
mistakes and forms that need more than their example get the right line."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.exercises.answers import close
from edugraph.exercises.checking import find
from tests.exercise_lines import line_of


# ------------------------------------------------------------------------ solutions by hand
def table_gradient(ids, upstream, vocab_size):
    grad = np.zeros((vocab_size, upstream.shape[-1]))
    for word, row in zip(ids.reshape(-1), upstream.reshape(-1, upstream.shape[-1])):
        grad[word] += row
    return grad


def skipgram_pairs_of(ids, window):
    pairs = []
    for i, center in enumerate(ids):
        for context in ids[max(0, i - window):i] + ids[i + 1:i + window + 1]:
            pairs.append((center, context))
    return pairs


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def negative_sampling_loss(v, u_context, u_negatives):
    positive = np.einsum("bd,bd->b", v, u_context)
    negative = np.einsum("bd,bkd->bk", v, u_negatives)
    return np.mean(-np.log(sigmoid(positive)) - np.log(1 - sigmoid(negative)).sum(axis=1))


def cosine_to(vectors, target):
    return vectors @ target / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(target))


def nearest_words(vectors, words, query, k):
    similarity = cosine_to(vectors, vectors[words.index(query)])
    return [words[i] for i in np.argsort(-similarity)[1:k + 1]]   # [0] is the query


def analogy_words(vectors, words, a, b, c, k):
    x = dict(zip(words, vectors))
    similarity = cosine_to(vectors, x[b] - x[a] + x[c])
    return [words[i] for i in np.argsort(-similarity) if words[i] not in (a, b, c)][:k]


SOLUTIONS = {
    "7.1": {"table_gradient": table_gradient},
    "7.2": {"skipgram_pairs_of": skipgram_pairs_of},
    "7.3": {"negative_sampling_loss": negative_sampling_loss},
    "7.4": {"nearest_words": nearest_words},
    "7.5": {"analogy_words": analogy_words},
}


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_reference_answer_passes(exercise_id):
    assert line_of(exercise_id, SOLUTIONS[exercise_id]).startswith(f"✓ {exercise_id}: ")


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_inputs_tell_the_known_mistakes_apart(exercise_id):
    """No mistake gives the right answer, and no two mistakes give the same one."""
    exercise = find(exercise_id)
    reference = exercise.right_answer()
    answers = [m.gives() for m in exercise.mistakes if m.gives is not None]
    for i, answer in enumerate(answers):
        assert not close(answer, reference, exercise.rtol, exercise.atol), i
        for j, other in enumerate(answers[:i]):
            assert not close(answer, other, exercise.rtol, exercise.atol), (j, i)


# ------------------------------------------------------------------------------ 7.1
def test_7_1_a_nudged_gradient_fails_and_other_right_forms_pass():
    nudged = lambda ids, upstream, n: table_gradient(ids, upstream, n) * 1.001   # noqa: E731
    assert line_of("7.1", {"table_gradient": nudged}).startswith("✗ 7.1: not right yet")

    def by_one_hot_as_list(ids, upstream, vocab_size):
        one_hot = np.eye(vocab_size)[ids.reshape(-1)]
        return (one_hot.T @ upstream.reshape(-1, upstream.shape[-1])).tolist()

    def by_edugraph_in_float32(ids, upstream, vocab_size):
        table = eg.Variable(np.zeros((vocab_size, upstream.shape[-1]), np.float32))
        with eg.GradientTape() as tape:
            looked_up = eg.gather(table, eg.tensor(ids))
            loss = eg.reduce_sum(looked_up * eg.tensor(upstream.astype(np.float32)))
        return tape.gradient(loss, table)

    for right in (by_one_hot_as_list, by_edugraph_in_float32):
        assert line_of("7.1", {"table_gradient": right}).startswith("✓ 7.1"), right.__name__


def test_7_1_a_table_sized_by_the_ids_and_a_missing_return_are_explained():
    def sized_by_ids(ids, upstream, vocab_size):
        return table_gradient(ids, upstream, ids.max() + 1)

    assert line_of("7.1", {"table_gradient": sized_by_ids}) == (
        "✗ 7.1: not right yet. table_gradient(ids, upstream, vocab_size) returns the table's "
        "gradient, an array of shape (vocab_size, D) (checked on a 1-D and a 2-D batch of "
        "ids, to 1e-6).")

    def no_return(ids, upstream, vocab_size):
        table_gradient(ids, upstream, vocab_size)

    assert line_of("7.1", {"table_gradient": no_return}) == (
        "✗ 7.1: table_gradient(ids of shape (4,), upstream, 6) returned None: did you forget "
        "the `return`?")


def test_7_1_code_for_one_sentence_only_fails_on_the_batch_naming_the_students_line():
    def one_sentence_only(ids, upstream, vocab_size):
        return np.eye(vocab_size)[ids].T @ upstream

    line = line_of("7.1", {"table_gradient": one_sentence_only})
    assert line.startswith("✗ 7.1: running your answer raised ValueError: matmul")
    assert "(in one_sentence_only, line " in line
    assert line.endswith(": return np.eye(vocab_size)[ids].T @ upstream)")


# ------------------------------------------------------------------------------ 7.2
def test_7_2_a_missing_pair_fails_and_order_or_container_do_not_matter():
    def one_missing(ids, window):
        return skipgram_pairs_of(ids, window)[1:]

    assert line_of("7.2", {"skipgram_pairs_of": one_missing}).startswith("✗ 7.2: not right")
    for right in (lambda ids, w: skipgram_pairs_of(ids, w)[::-1],
                  lambda ids, w: np.array(skipgram_pairs_of(ids, w)),
                  lambda ids, w: (pair for pair in skipgram_pairs_of(ids, w))):
        assert line_of("7.2", {"skipgram_pairs_of": right}).startswith("✓ 7.2")


def test_7_2_other_forms_are_explained():
    def two_lists(ids, window):
        pairs = skipgram_pairs_of(ids, window)
        return [c for c, _ in pairs], [t for _, t in pairs]

    assert line_of("7.2", {"skipgram_pairs_of": two_lists}) == (
        "✗ 7.2: skipgram_pairs_of([7, 3, 7, 1, 4, 3], 2) returned two rows (all centres, "
        "then all contexts); return one (centre, context) pair per item, e.g. [(7, 3), "
        "(7, 7), ...].")
    as_text = lambda ids, w: [(str(c), str(t)) for c, t in skipgram_pairs_of(ids, w)]  # noqa
    assert line_of("7.2", {"skipgram_pairs_of": as_text}).startswith(
        "✗ 7.2: skipgram_pairs_of([7, 3, 7, 1, 4, 3], 2) should return (centre, context) "
        "pairs of word ids")


def test_7_2_running_past_the_sentences_end_names_the_students_line():
    def past_the_end(ids, window):
        pairs = []
        for i, center in enumerate(ids):
            for j in range(max(0, i - window), i + window + 1):
                if j != i:
                    pairs.append((center, ids[j]))
        return pairs

    line = line_of("7.2", {"skipgram_pairs_of": past_the_end})
    assert line.startswith("✗ 7.2: running your answer raised IndexError: list index out of "
                           "range (in past_the_end, line ")
    assert line.endswith(": pairs.append((center, ids[j])))")


# ------------------------------------------------------------------------------ 7.3
def test_7_3_a_nudged_loss_fails_and_edugraph_in_float32_passes():
    nudged = lambda *vectors: negative_sampling_loss(*vectors) * 1.001    # noqa: E731
    assert line_of("7.3", {"negative_sampling_loss": nudged}).startswith("✗ 7.3: not right")

    def by_edugraph(v, u_context, u_negatives):
        v, u_context, u_negatives = (eg.tensor(a.astype(np.float32))
                                     for a in (v, u_context, u_negatives))
        positive = eg.reduce_sum(v * u_context, -1)
        negative = eg.reduce_sum(eg.expand_dims(v, 1) * u_negatives, -1)
        per_pair = (-eg.log(eg.sigmoid(positive))
                    - eg.reduce_sum(eg.log(eg.sigmoid(-negative)), -1))
        return eg.reduce_mean(per_pair)

    assert line_of("7.3", {"negative_sampling_loss": by_edugraph}).startswith("✓ 7.3")


def test_7_3_a_loss_per_pair_asks_for_one_number_and_a_mean_over_all_scores_fails():
    def per_pair(v, u_context, u_negatives):
        positive = np.einsum("bd,bd->b", v, u_context)
        negative = np.einsum("bd,bkd->bk", v, u_negatives)
        return -np.log(sigmoid(positive)) - np.log(sigmoid(-negative)).sum(axis=1)

    assert line_of("7.3", {"negative_sampling_loss": per_pair}) == (
        "✗ 7.3: negative_sampling_loss(v, u_context, u_negatives of shape (3, 4, 5)) should "
        "return one number, the loss averaged over the batch; it returned a numpy array of "
        "shape (3,).")

    def mean_of_all_scores(v, u_context, u_negatives):
        positive = np.einsum("bd,bd->b", v, u_context)[:, None]
        negative = np.einsum("bd,bkd->bk", v, u_negatives)
        return np.mean(np.concatenate([-np.log(sigmoid(positive)),
                                       -np.log(sigmoid(-negative))], axis=1))

    assert line_of("7.3", {"negative_sampling_loss": mean_of_all_scores}).startswith(
        "✗ 7.3: not right yet.")


# ------------------------------------------------------------------------------ 7.4
def test_7_4_other_right_forms_pass_and_a_missing_word_fails():
    def as_array(vectors, words, query, k):
        return np.array(nearest_words(vectors, words, query, k))

    def rows_normalised_only(vectors, words, query, k):   # |query| does not change the order
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        order = np.argsort(-(unit @ vectors[words.index(query)]))
        return [words[i] for i in order if words[i] != query][:k]

    for right in (as_array, rows_normalised_only):
        assert line_of("7.4", {"nearest_words": right}).startswith("✓ 7.4"), right.__name__

    def one_short(vectors, words, query, k):
        return nearest_words(vectors, words, query, k - 1)

    assert line_of("7.4", {"nearest_words": one_short}) == (
        "✗ 7.4: the list should hold exactly k words: the k nearest, the query not counted.")


def test_7_4_a_query_scaled_to_length_one_alone_still_ranks_by_the_dot_product():
    def query_normalised_only(vectors, words, query, k):
        q = vectors[words.index(query)]
        order = np.argsort(-(vectors @ (q / np.linalg.norm(q))))
        return [words[i] for i in order if words[i] != query][:k]

    assert line_of("7.4", {"nearest_words": query_normalised_only}).startswith(
        "✗ 7.4: you ranked by the dot product")


def test_7_4_row_numbers_pairs_and_text_are_explained():
    def rows(vectors, words, query, k):
        return [words.index(w) for w in nearest_words(vectors, words, query, k)]

    def with_distances(vectors, words, query, k):
        return [(w, 0.1) for w in nearest_words(vectors, words, query, k)]

    def as_text(vectors, words, query, k):
        return ", ".join(nearest_words(vectors, words, query, k))

    prefix = "✗ 7.4: nearest_words(vectors, words, 'cat', 3) "
    assert line_of("7.4", {"nearest_words": rows}) == \
        prefix + "returned row numbers; return the words themselves (words[i])."
    assert line_of("7.4", {"nearest_words": with_distances}) == \
        prefix + "should return just the words, not (word, distance) pairs."
    assert line_of("7.4", {"nearest_words": as_text}) == \
        prefix + "should return a list of words; it returned a str ('kitten, tiger, dog')."


# ------------------------------------------------------------------------------ 7.5
def test_7_5_word2vecs_unit_vectors_pass_too_and_swapped_words_fail():
    def on_unit_vectors(vectors, words, a, b, c, k):
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        return analogy_words(unit, words, a, b, c, k)

    assert line_of("7.5", {"analogy_words": on_unit_vectors}).startswith("✓ 7.5")

    def a_and_c_swapped(vectors, words, a, b, c, k):
        return analogy_words(vectors, words, c, b, a, k)

    assert line_of("7.5", {"analogy_words": a_and_c_swapped}).startswith("✗ 7.5: not right")


def test_7_5_leaving_out_only_c_or_only_the_nearest_word_keeps_a_question_word():
    hint = "✗ 7.5: a question word is among your answers"

    def only_c_left_out(vectors, words, a, b, c, k):
        x = dict(zip(words, vectors))
        similarity = cosine_to(vectors, x[b] - x[a] + x[c])
        return [words[i] for i in np.argsort(-similarity) if words[i] != c][:k]

    def nearest_skipped(vectors, words, a, b, c, k):
        x = dict(zip(words, vectors))
        similarity = cosine_to(vectors, x[b] - x[a] + x[c])
        return [words[i] for i in np.argsort(-similarity)[1:k + 1]]

    for wrong in (only_c_left_out, nearest_skipped):
        assert line_of("7.5", {"analogy_words": wrong}).startswith(hint), wrong.__name__


def test_7_2_pairs_of_floats_are_told_to_keep_the_ids():
    def skipgram_pairs_of(ids, window):
        return [(float(ids[i]), float(ids[j])) for i in range(len(ids))
                for j in range(max(0, i - window), min(len(ids), i + window + 1)) if j != i]

    line = line_of("7.2", {"skipgram_pairs_of": skipgram_pairs_of})
    assert "returned pairs of floats" in line and "word ids are whole numbers" in line, line
