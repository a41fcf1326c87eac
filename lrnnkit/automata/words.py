"""Words written as text: ``split_word(text, alphabet) -> list of symbols``; words given as symbol indices:
``index_words(words, n_letters) -> int64 array (B, T)``.

Two spellings are accepted (docs/conventions.rst):

* symbols separated by white space, ``"a b c"`` or ``"(0,1) () (0,1,2)"`` (always accepted);
* when every symbol of the alphabet is one character, the plain string ``"101"``: a word without white space that
  is not itself a symbol is read character by character (``"101"`` over ``0 1`` is ``1 0 1``).

The two never disagree: with one-character symbols a separated word has single characters between its spaces, and
a one-symbol word reads the same either way.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np

from ..errors import MESSAGE_CHARS, InputError

__all__ = ["split_word", "index_words"]


def split_word(word: str | Iterable[str], alphabet: Sequence[str]) -> list[str]:
    """The symbols of ``word`` (a string in one of the two spellings above, or already a sequence of symbols)."""
    if not isinstance(word, str):
        return list(word)
    parts = word.split()
    if (len(parts) == 1 and len(parts[0]) > 1 and parts[0] not in alphabet
            and all(len(s) == 1 for s in alphabet)):
        return list(parts[0])
    return parts


def index_words(words, n_letters: int, where: str = "words"):
    """``words`` (one word as a 1-D sequence of symbol indices, or a batch (B, T) of them) as an int64 array
    (B, T), every entry an integer in ``0 .. n_letters - 1``. Indices must be integers: a float (``0.5``, even
    ``1.0``), a string (``"0"``), a boolean or a ragged batch is an InputError naming ``where``, never cast."""
    if isinstance(words, (str, bytes)):
        raise InputError(f"{where}: expected symbol indices (integers), got a string {words[:20]!r}; encode a "
                         "word written as text with the model's encode()")
    try:
        arr = np.asarray(words)
    except (ValueError, TypeError):
        raise InputError(f"{where}: expected a word or a batch of words of equal length (integers)") from None
    if arr.dtype == object and arr.size and all(isinstance(x, int) and not isinstance(x, bool) for x in arr.flat):
        arr = arr.astype(np.int64)    # Python ints too large for int64 fail the range check below
    if arr.size and (arr.dtype.kind not in "iu"):
        raise InputError(f"{where}: symbol indices must be integers, got {arr.dtype} values such as "
                         f"{arr.flat[0]!r}"[:MESSAGE_CHARS])
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise InputError(f"{where}: expected one word (1-D) or a batch (B, T), got {arr.ndim} dimensions")
    arr = arr.astype(np.int64) if arr.size else np.zeros(arr.shape, dtype=np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n_letters):
        raise InputError(f"{where}: symbol indices must lie in 0..{n_letters - 1}")
    return arr
