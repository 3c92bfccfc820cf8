"""The learned fallback: names a failure class for events that no rule claimed, or abstains.

TF-IDF over masked lines (words, word pairs, character 3-5-grams inside words) and a multinomial
logistic regression, trained from the rule library's annotated samples and the scenario fixtures
(logsift.learn.training). scikit-learn is imported only to *train*; the fitted model is plain arrays
(vocabulary, idf, coefficients, the training vectors) applied here with numpy, so a run that
finds the model in its cache never imports scikit-learn, and a run that never meets an unclaimed
failure imports neither.

Confidence and abstention. The probability is the regression's softmax with a temperature fitted
on cross-validated predictions (temperature scaling), so 0.8 means right about four times in
five on held-out samples. The model abstains ("unknown") when the best class is NONE, when the
probability is under a threshold, when the line is unlike every training line of that class
(cosine similarity of the TF-IDF vectors under a second threshold), or when the single most
similar training line has another label: a linear model extrapolates confidently from a few
shared words, so a line of a class it never saw, or a near miss that a rule deliberately leaves
alone (an `# ok:` sample), must also find its nearest neighbour in the class it names. Both
thresholds are chosen by cross-validation on the training data, with whole classes held out to
stand in for classes the library does not have yet.

Persistence is safe by construction: the cache is an `.npz` of numeric and byte arrays read with
`allow_pickle=False`, keyed by the rule library's digest, and anything unexpected in it makes
logsift retrain instead of trusting it. Nothing is ever unpickled.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
import time
import zipfile
import zlib
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from logsift import __version__
from logsift.cache import cache_dir, make_cache
from logsift.exceptions import ModelUnavailable
from logsift.learn.training import (
    NONE,
    Example,
    candidate_lines,
    default_fixture_dirs,
    fixture_digest,
    model_text,
    needs_model,
    training_examples,
)
from logsift.match import Matched
from logsift.records import Finding
from logsift.rules import RuleSet

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray = npt.NDArray[np.float64]
    IntArray = npt.NDArray[np.int64]

MODEL_FORMAT = 1  # bump when features or the stored arrays change: old caches are retrained
MODEL_PRIORITY = 31  # above wrappers (30) and catch-alls, below every rule that names a cause
SEED = 0
C = 10.0
# The share of lines of never-seen classes that the chosen thresholds may still name (measured by
# cross-validation with whole classes held out). A failure shows the model a handful of candidate
# lines, any of which can be misread, so 2% a line keeps a never-seen failure named wrongly in
# about one case out of ten (1 - 0.98**5 = 0.096).
OOD_TARGET = 0.02
FOLDS = 4
# The least confidence at which the model names a class, whatever cross-validation chose. Its
# training lines are the rules' samples; real excerpts are further from them than held-out
# samples are, and on fixtures/corpus's dev cases (2026-12-01) the model overrode the catch-all
# (or an unknown cause) at 0.99 twice rightly and at 0.92 and 0.97 twice wrongly. A wrong class
# costs an operator more than "unknown" does, so the model speaks only when nearly certain.
CONFIDENCE_FLOOR = 0.98
KEEP_MODELS = 40  # files in the cache directory (leave-one-class-out evaluation makes one per class)
_WORD = re.compile(r"<[a-z]+>|[a-z_][a-z0-9_]*")


def features(text: str) -> list[str]:
    """Word, word-pair and in-word character 3-5-gram features of a masked line."""
    words = _WORD.findall(text.lower())
    found = [f"w:{word}" for word in words]
    found.extend(f"b:{a} {b}" for a, b in zip(words, words[1:], strict=False))
    for word in words:
        if word.startswith("<") or len(word) < 2:
            continue
        padded = f" {word} "
        for size in (3, 4, 5):
            found.extend(f"c:{padded[i:i + size]}" for i in range(len(padded) - size + 1))
    return found


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the model says about one line: a class (or NONE) with its calibrated probability and
    its similarity to the closest training line of that class; `named` when both pass."""

    label: str
    confidence: float
    similarity: float
    named: bool
    line: int = 0
    text: str = ""
    nearest: str = ""  # the class of the most similar training line


@dataclass
class Model:
    """A fitted model as plain arrays; predicts with numpy alone."""

    classes: tuple[str, ...]
    vocabulary: dict[str, int]
    idf: FloatArray
    coef: FloatArray  # (classes, features)
    intercept: FloatArray
    temperature: float
    threshold: float
    similarity_threshold: float
    train_data: FloatArray  # training vectors, column-compressed (features -> rows)
    train_rows: IntArray
    train_indptr: IntArray
    train_labels: IntArray  # class index of each training row
    meta: dict[str, Any] = field(default_factory=dict)

    def vector(self, text: str) -> tuple[IntArray, FloatArray]:
        import numpy as np

        counts = Counter(index for index in map(self.vocabulary.get, features(text)) if index is not None)
        if not counts:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        index = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
        values = (1.0 + np.log(np.fromiter(counts.values(), dtype=np.float64, count=len(counts)))) * self.idf[index]
        return index, values / np.linalg.norm(values)

    def predict(self, text: str, threshold: float | None = None, similarity: float | None = None) -> Verdict:
        """Judge one masked line; `threshold` and `similarity` override the trained thresholds."""
        import numpy as np

        index, values = self.vector(text)
        if index.size == 0:
            return Verdict(NONE, 1.0, 0.0, False)
        logits = (self.coef[:, index] @ values + self.intercept) / self.temperature
        logits -= logits.max()
        probabilities = np.exp(logits)
        probabilities /= probabilities.sum()
        best = int(probabilities.argmax())
        label = self.classes[best]
        confidence = float(probabilities[best])
        if label == NONE:
            return Verdict(NONE, confidence, 0.0, False)
        sims = self._similarities(index, values)
        mine = sims[self.train_labels == best]
        closest = float(mine.max()) if mine.size else 0.0
        nearest = self.classes[int(self.train_labels[int(sims.argmax())])] if sims.size else NONE
        limit = max(self.threshold, CONFIDENCE_FLOOR) if threshold is None else threshold
        near = self.similarity_threshold if similarity is None else similarity
        named = confidence >= limit and closest >= near and nearest == label
        return Verdict(label, confidence, closest, named, nearest=nearest)

    def _similarities(self, index: IntArray, values: FloatArray) -> FloatArray:
        """Cosine similarity of a vector to every training line (the stored vectors are unit length)."""
        import numpy as np

        starts = self.train_indptr[index]
        lengths = self.train_indptr[index + 1] - starts
        total = int(lengths.sum())
        if total == 0:
            return np.zeros(self.train_labels.size)
        offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(total)
        rows = self.train_rows[offsets]
        weights = self.train_data[offsets] * np.repeat(values, lengths)
        sums: FloatArray = np.bincount(rows, weights, minlength=self.train_labels.size).astype(np.float64)
        return sums

    # -- safe persistence -----------------------------------------------------------------

    def save(self, path: Path) -> None:
        import numpy as np

        vocabulary = sorted(self.vocabulary, key=self.vocabulary.__getitem__)
        header = {**self.meta, "format": MODEL_FORMAT, "classes": list(self.classes),
                  "temperature": self.temperature, "threshold": self.threshold,
                  "similarity_threshold": self.similarity_threshold}
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".model-", suffix=".npz")
        try:
            with os.fdopen(handle, "wb") as out:
                np.savez_compressed(
                    out,
                    header=_bytes(json.dumps(header)),
                    vocabulary=_bytes(json.dumps(vocabulary)),
                    idf=self.idf, coef=self.coef.astype(np.float32), intercept=self.intercept,
                    train_data=self.train_data.astype(np.float32), train_rows=self.train_rows.astype(np.int32),
                    train_indptr=self.train_indptr.astype(np.int64), train_labels=self.train_labels.astype(np.int32),
                )
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: Path, key: str) -> Model | None:
        """The model stored at `path` for `key`; None when absent, stale or malformed."""
        import numpy as np

        try:
            with np.load(path, allow_pickle=False) as stored:
                header = json.loads(stored["header"].tobytes().decode("utf-8"))
                vocabulary = json.loads(stored["vocabulary"].tobytes().decode("utf-8"))
                if header.get("format") != MODEL_FORMAT or header.get("key") != key:
                    return None
                model = cls(
                    classes=tuple(str(name) for name in header["classes"]),
                    vocabulary={str(feature): number for number, feature in enumerate(vocabulary)},
                    idf=stored["idf"].astype(np.float64), coef=stored["coef"].astype(np.float64),
                    intercept=stored["intercept"].astype(np.float64),
                    temperature=float(header["temperature"]), threshold=float(header["threshold"]),
                    similarity_threshold=float(header["similarity_threshold"]),
                    train_data=stored["train_data"].astype(np.float64),
                    train_rows=stored["train_rows"].astype(np.int64),
                    train_indptr=stored["train_indptr"].astype(np.int64),
                    train_labels=stored["train_labels"].astype(np.int64), meta=header,
                )
        except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile, zlib.error):
            return None  # whatever is wrong with it, the cure is to train again
        return model if model.consistent() else None

    def consistent(self) -> bool:
        features_count = len(self.vocabulary)
        rows = self.train_labels.size
        return bool(
            self.coef.shape == (len(self.classes), features_count)
            and self.idf.shape == (features_count,) and self.intercept.shape == (len(self.classes),)
            and self.train_indptr.shape == (features_count + 1,)
            and self.train_data.shape == self.train_rows.shape == (int(self.train_indptr[-1]),)
            and (rows == 0 or (int(self.train_rows.min()) >= 0 and int(self.train_rows.max()) < rows))
            and (rows == 0 or (int(self.train_labels.min()) >= 0 and int(self.train_labels.max()) < len(self.classes)))
            and math.isfinite(self.temperature) and self.temperature > 0
        )


def _bytes(text: str) -> Any:
    import numpy as np

    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8)


# -- training ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingReport:
    examples: int
    classes: int
    features: int
    seconds: float
    threshold: float
    similarity_threshold: float
    temperature: float
    cross_validation: dict[str, float]


def _sklearn() -> Any:
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise ModelUnavailable(
            "the learned fallback needs scikit-learn to train: pip install 'logsift[ml]' "
            "(or run with --no-model)"
        ) from None
    return sklearn


def train(examples: Sequence[Example], key: str = "", seed: int = SEED) -> tuple[Model, TrainingReport]:
    """Fit the model, choosing temperature and thresholds by cross-validation on `examples`."""
    _sklearn()
    from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

    # One BLAS thread: the problem is small, and threads fighting over a busy machine made the
    # optimiser several times slower.
    with threadpool_limits(limits=1):
        return _train(examples, key, seed)


def _train(examples: Sequence[Example], key: str, seed: int) -> tuple[Model, TrainingReport]:
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    started = time.perf_counter()
    texts = [example.text for example in examples]
    labels = np.array([example.label for example in examples])
    if len(set(labels.tolist()) - {NONE}) < 2:
        raise ModelUnavailable("the rule library has fewer than two classes with samples: nothing to learn")
    in_logits, in_labels, in_sims, in_agree, classes_seen = _cross_validate(examples, seed)
    ood = _held_out_classes(examples, seed)
    temperature = _fit_temperature(in_logits, in_labels)
    threshold, similarity_threshold, scores = _choose_thresholds(
        in_logits, in_labels, in_sims, in_agree, classes_seen, ood, temperature
    )
    vectorizer = TfidfVectorizer(analyzer=features, sublinear_tf=True, norm="l2")
    matrix = vectorizer.fit_transform(texts)
    regression = _regression(seed).fit(matrix, labels)
    classes = tuple(str(name) for name in regression.classes_)
    lookup = {name: number for number, name in enumerate(classes)}
    column = matrix.tocsc()
    column.sort_indices()
    # Stored as float32: round now, so that the model just trained and the one read back from the
    # cache give the same answers to the last digit.
    coef = np.asarray(regression.coef_, dtype=np.float32).astype(np.float64)
    data = np.asarray(column.data, dtype=np.float32).astype(np.float64)
    model = Model(
        classes=classes,
        vocabulary={str(name): int(number) for name, number in vectorizer.vocabulary_.items()},
        idf=np.asarray(vectorizer.idf_, dtype=np.float64),
        coef=coef,
        intercept=np.asarray(regression.intercept_, dtype=np.float64),
        temperature=temperature, threshold=threshold, similarity_threshold=similarity_threshold,
        train_data=data,
        train_rows=np.asarray(column.indices, dtype=np.int64),
        train_indptr=np.asarray(column.indptr, dtype=np.int64),
        train_labels=np.array([lookup[label] for label in labels.tolist()], dtype=np.int64),
    )
    report = TrainingReport(
        examples=len(examples), classes=len(classes) - (NONE in classes), features=len(model.vocabulary),
        seconds=time.perf_counter() - started, threshold=threshold,
        similarity_threshold=similarity_threshold, temperature=temperature, cross_validation=scores,
    )
    model.meta = {"key": key, "examples": len(examples), "sklearn": _sklearn_version(),
                  "logsift": __version__, "cross_validation": scores}
    return model, report


def _regression(seed: int) -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=C, tol=1e-3, max_iter=3000, class_weight="balanced", random_state=seed)


def _fit_predict(
    train_texts: list[str], train_labels: Any, test_texts: list[str], seed: int
) -> tuple[Any, Any, Any, list[str]]:
    """Under a model of the train texts, for each test text: the logits, the similarity to the
    closest training line of the predicted class, and whether the closest training line of all
    has that class (the agreement the model requires to name it)."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(analyzer=features, sublinear_tf=True, norm="l2")
    train_matrix = vectorizer.fit_transform(train_texts)
    regression = _regression(seed).fit(train_matrix, train_labels)
    test_matrix = vectorizer.transform(test_texts)
    logits = regression.decision_function(test_matrix)
    classes = [str(name) for name in regression.classes_]
    similarity = (test_matrix @ train_matrix.T).toarray()
    best = logits.argmax(axis=1)
    label_of_row = np.array([classes.index(label) for label in train_labels])
    sims = np.array([
        similarity[row, label_of_row == best[row]].max() if (label_of_row == best[row]).any() else 0.0
        for row in range(len(test_texts))
    ])
    agree = label_of_row[similarity.argmax(axis=1)] == best
    return logits, sims, agree, classes


def _cross_validate(examples: Sequence[Example], seed: int) -> tuple[Any, Any, Any, Any, list[str]]:
    """Out-of-fold logits, similarities and agreements for every example; folds keep sample
    blocks together, so a block is never judged by a model that saw its twin lines."""
    import warnings

    import numpy as np
    from sklearn.model_selection import StratifiedGroupKFold

    texts = [example.text for example in examples]
    labels = np.array([example.label for example in examples])
    groups = [example.group for example in examples]
    classes = sorted(set(labels.tolist()))
    logits = np.zeros((len(examples), len(classes)))
    sims = np.zeros(len(examples))
    agree = np.zeros(len(examples), dtype=bool)
    folds = StratifiedGroupKFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # classes with fewer members than folds: expected here
        splits = list(folds.split(texts, labels, groups))
    for train_index, test_index in splits:
        fold_logits, fold_sims, fold_agree, fold_classes = _fit_predict(
            [texts[i] for i in train_index], labels[train_index], [texts[i] for i in test_index], seed
        )
        # A class absent from this fold's training part can never be predicted in it.
        full = np.full((len(test_index), len(classes)), -1e9)
        for number, name in enumerate(fold_classes):
            full[:, classes.index(name)] = fold_logits[:, number]
        logits[test_index] = full
        sims[test_index] = fold_sims
        agree[test_index] = fold_agree
    return logits, labels, sims, agree, classes


def _held_out_classes(examples: Sequence[Example], seed: int) -> list[tuple[Any, int, Any, Any]]:
    """(logits, NONE's column, similarities, agreements) of each class's lines under models that
    never saw that class: the classes are split into folds and each fold is held out in turn."""
    import numpy as np

    names = sorted({example.label for example in examples} - {NONE})
    order = np.random.default_rng(seed).permutation(len(names))
    results: list[tuple[Any, int, Any, Any]] = []
    for start in range(FOLDS):
        held = {names[i] for i in order[start::FOLDS]}
        train = [example for example in examples if example.label not in held]
        test = [example for example in examples if example.label in held]
        if len({example.label for example in train} - {NONE}) < 2 or not test:
            continue
        logits, sims, agree, classes = _fit_predict(
            [e.text for e in train], np.array([e.label for e in train]), [e.text for e in test], seed
        )
        results.append((logits, classes.index(NONE) if NONE in classes else -1, sims, agree))
    return results


def _softmax(logits: Any, temperature: float) -> Any:
    import numpy as np

    scaled = logits / temperature
    scaled = scaled - scaled.max(axis=1, keepdims=True)
    exp = np.exp(scaled)
    return exp / exp.sum(axis=1, keepdims=True)


def _fit_temperature(logits: Any, labels: Any) -> float:
    import numpy as np

    classes = sorted(set(labels.tolist()))
    truth = np.array([classes.index(label) for label in labels.tolist()])
    best, best_loss = 1.0, math.inf
    for temperature in np.exp(np.linspace(math.log(0.2), math.log(5.0), 41)):
        probabilities = _softmax(logits, float(temperature))
        loss = -float(np.mean(np.log(np.clip(probabilities[np.arange(len(truth)), truth], 1e-12, 1.0))))
        if loss < best_loss:
            best, best_loss = float(temperature), loss
    return best


def _choose_thresholds(
    in_logits: Any, in_labels: Any, in_sims: Any, in_agree: Any, classes: list[str],
    held_out: list[tuple[Any, int, Any, Any]], temperature: float,
) -> tuple[float, float, dict[str, float]]:
    """The probability and similarity thresholds that name the most held-out lines of known
    classes right (less those named wrongly) while naming at most OOD_TARGET of the lines of
    never-seen classes; when no pair gets there, the pair that names the fewest of those.

    NONE lines named as a class are reported, not constrained: most come from `# ok:` samples,
    near misses written on purpose to keep a rule precise (a warning worded like the error it
    warns about), which the model cannot be expected to tell apart from a single line.
    """
    import numpy as np

    probabilities = _softmax(in_logits, temperature)
    confidence = probabilities.max(axis=1)
    predicted = np.array(classes)[probabilities.argmax(axis=1)]
    positive = in_labels != NONE
    correct = predicted == in_labels
    is_class = (predicted != NONE) & in_agree
    ood_p = [np.zeros(0)]
    ood_class = [np.zeros(0, dtype=bool)]
    ood_s = [np.zeros(0)]
    for logits, none_column, sims, agree in held_out:
        held = _softmax(logits, temperature)
        ood_p.append(held.max(axis=1))
        ood_class.append((held.argmax(axis=1) != none_column) & agree)
        ood_s.append(sims)
    p_out, class_out, s_out = np.concatenate(ood_p), np.concatenate(ood_class), np.concatenate(ood_s)
    positives, negatives = max(1, int(positive.sum())), max(1, int((~positive).sum()))
    options: list[tuple[bool, float, float, float, dict[str, float]]] = []
    for threshold in np.round(np.arange(0.30, 0.99, 0.05), 2):
        for similarity in np.round(np.arange(0.0, 0.81, 0.1), 2):
            accepted = is_class & (confidence >= threshold) & (in_sims >= similarity)
            stats = {
                "named_right": float((accepted & correct & positive).sum()) / positives,
                "named_wrong": float((accepted & ~correct & positive).sum()) / positives,
                "none_named": float((accepted & ~positive).sum()) / negatives,
                "held_out_class_named": float((class_out & (p_out >= threshold) & (s_out >= similarity)).sum())
                / max(1, p_out.size),
            }
            risk = stats["held_out_class_named"]
            feasible = risk <= OOD_TARGET
            score = stats["named_right"] - stats["named_wrong"] if feasible else -risk
            options.append((feasible, round(score, 9), -float(threshold), -float(similarity), stats))
    # Feasible first, then the best score; ties go to the lowest thresholds.
    _, _, threshold, similarity, stats = max(options, key=lambda option: option[:4])
    return -threshold, -similarity, stats


def _sklearn_version() -> str:
    try:
        return metadata.version("scikit-learn")
    except metadata.PackageNotFoundError:
        return "absent"


# -- the cache and the fallback ------------------------------------------------------------


def model_key(rules: RuleSet, fixture_dirs: Sequence[Path], exclude: Iterable[str] = ()) -> str:
    """Changes with the training data (rules, samples, fixtures) and with the code that turns it
    into a model (the whole package: how samples are read and grouped shapes the examples), so a
    cached model is never one that this logsift would not train."""
    hasher = hashlib.sha256()
    for part in (str(MODEL_FORMAT), __version__, _code_digest(), rules.digest, fixture_digest(fixture_dirs),
                 ",".join(sorted(exclude))):
        hasher.update(part.encode("utf-8") + b"\0")
    return hasher.hexdigest()[:20]


@cache
def _code_digest() -> str:
    hasher = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]  # the whole logsift package
    for path in sorted(package.rglob("*.py")):
        hasher.update(str(path.relative_to(package)).encode("utf-8") + b"\0")
        hasher.update(path.read_bytes())
    return hasher.hexdigest()[:16]


_MEMORY: OrderedDict[str, Model] = OrderedDict()


def cached_model(rules: RuleSet, fixture_dirs: Sequence[Path] | None = None, directory: Path | None = None,
                 exclude: Iterable[str] = ()) -> tuple[Model | None, Path]:
    """The model of this rule library from memory or the cache, never trained here: (model or
    None, the cache file it is or would be in)."""
    fixtures = list(default_fixture_dirs() if fixture_dirs is None else fixture_dirs)
    key = model_key(rules, fixtures, sorted(set(exclude)))
    path = (directory or cache_dir()) / f"model-{key}.npz"
    if key in _MEMORY:
        return _MEMORY[key], path
    if path.is_file():
        stored = Model.load(path, key)
        if stored is not None:
            _remember(key, stored)
            return stored, path
    return None, path


def load_or_train(
    rules: RuleSet, fixture_dirs: Sequence[Path] | None = None, directory: Path | None = None,
    exclude: Iterable[str] = (), retrain: bool = False, notify: Callable[[str], None] | None = None,
) -> tuple[Model, TrainingReport | None, Path | None]:
    """The model for this rule library: from memory, from the cache, or trained now (and cached).
    For `logsift train`, the setup and evaluation; triage only ever reads the cache
    (`cached_model`), so a diagnosis never waits for training or writes a model.

    Returns the model, the training report when it was trained now, and the cache file (None
    when the cache directory cannot be written: the model then lives in memory only).
    """
    fixtures = list(default_fixture_dirs() if fixture_dirs is None else fixture_dirs)
    excluded = sorted(set(exclude))
    key = model_key(rules, fixtures, excluded)
    if not retrain:
        model, path = cached_model(rules, fixtures, directory, excluded)
        if model is not None:
            return model, None, path if path.exists() else _save(model, path)
    path = (directory or cache_dir()) / f"model-{key}.npz"
    _sklearn()
    if notify is not None:
        notify(f"training the model fallback for this rule library (cached in {path.parent})")
    model, report = train(training_examples(rules, fixtures, excluded), key)
    _remember(key, model)
    return model, report, _save(model, path)


def _save(model: Model, path: Path) -> Path | None:
    """Cache the model; None when the directory cannot be written (it then lives in memory)."""
    try:
        make_cache(path.parent)
        model.save(path)
        _prune(path.parent)
    except OSError:
        return None
    return path


def _prune(directory: Path, keep: int = KEEP_MODELS) -> None:
    """Old models (of rule libraries since edited) go, newest kept: the cache stays bounded."""
    models = sorted(directory.glob("model-*.npz"), key=lambda item: item.stat().st_mtime, reverse=True)
    for stale in models[keep:]:
        stale.unlink(missing_ok=True)


def _remember(key: str, model: Model) -> None:
    _MEMORY[key] = model
    while len(_MEMORY) > 4:
        _MEMORY.popitem(last=False)


class ModelFallback:
    """The pipeline's fallback stage: consults the model for unclaimed failure events.

    Nothing is loaded until an event needs the model, and it is only ever read from the cache:
    training is `logsift train`'s job (the setup runs it), never a side effect of a diagnosis.
    With `required=False` (the default of `logsift FILE`) a model that is not cached means every
    event stays as the rules left it; `unavailable` says why and what to run.
    """

    def __init__(
        self, rules: RuleSet, threshold: float | None = None, fixture_dirs: Sequence[Path] | None = None,
        directory: Path | None = None, required: bool = False, model: Model | None = None,
        exclude: Iterable[str] = (), notify: Callable[[str], None] | None = None,
    ) -> None:
        self.rules = rules
        self.threshold = threshold
        self.fixture_dirs = fixture_dirs
        self.directory = directory
        self.required = required
        self.exclude = tuple(exclude)
        self.notify = notify
        self.model = model
        self.unavailable: str | None = None
        self.consulted = 0
        self.named = 0
        self.verdicts: OrderedDict[str, Verdict] = OrderedDict()  # masked line -> verdict

    def __call__(self, matched: Matched) -> Matched:
        if not needs_model(matched, self.rules):
            return matched
        model = self._model()
        if model is None:
            return matched
        self.consulted += 1
        verdict = self.judge(model, matched)
        if verdict is None or not verdict.named:
            return matched
        self.named += 1
        rule = self.rules.by_id.get(verdict.label)
        if rule is None:
            return matched
        event = matched.event.event
        finding = Finding(
            rule_id=rule.id, severity=rule.severity, priority=min(rule.priority, MODEL_PRIORITY),
            line=verdict.line, text=verdict.text, event=event, source="model",
            confidence=round(verdict.confidence, 3),
        )
        # The model's reading replaces the catch-all's ("an exception no rule knows"); wrappers stay,
        # as symptoms of the cause the model named.
        kept = [f for f in matched.findings if "catch-all" not in _tags(self.rules, f.rule_id)]
        findings = sorted([*kept, finding], key=lambda item: (item.line, -item.priority))
        return replace(matched, findings=findings)

    def judge(self, model: Model, matched: Matched) -> Verdict | None:
        """The most confident named line of the event; else its best unnamed verdict; None if no line."""
        best: Verdict | None = None
        lines = dict(candidate_lines(matched.event.event))
        for finding in matched.findings:
            lines.setdefault(finding.line, finding.text)
        for number, text in sorted(lines.items()):
            masked = model_text(text)
            verdict = self.verdicts.get(masked)
            if verdict is None:
                verdict = model.predict(masked, self.threshold)
                self.verdicts[masked] = verdict
                if len(self.verdicts) > 4096:
                    self.verdicts.popitem(last=False)
            verdict = replace(verdict, line=number, text=text)
            rank = (verdict.named, verdict.label != NONE, verdict.confidence)
            if best is None or rank > (best.named, best.label != NONE, best.confidence):
                best = verdict
        return best

    def _model(self) -> Model | None:
        if self.model is not None or self.unavailable is not None:
            return self.model
        self.model, path = cached_model(self.rules, self.fixture_dirs, self.directory, self.exclude)
        if self.model is None:
            error = ModelUnavailable(f"no model of this rule library is cached in {path.parent}; train it with "
                                     "`logsift train` (needs the ml extra: pip install 'logsift[ml]')")
            if self.required:
                raise error
            self.unavailable = str(error)
        return self.model


def _tags(rules: RuleSet, rule_id: str) -> tuple[str, ...]:
    rule = rules.by_id.get(rule_id)
    return rule.tags if rule is not None else ()


__all__ = [
    "MODEL_PRIORITY", "Model", "ModelFallback", "ModelUnavailable", "TrainingReport", "Verdict",
    "cache_dir", "cached_model", "features", "load_or_train", "model_key", "train",
]
