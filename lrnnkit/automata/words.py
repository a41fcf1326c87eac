"""Words written as text: ``split_word(text, alphabet) -> list of symbols``.

Two spellings are accepted (docs/conventions.rst):

* symbols separated by white space, ``"a b c"`` or ``"(0,1) () (0,1,2)"`` (always accepted);
* when every symbol of the alphabet is one character, the plain string ``"101"``: a word without white space that
  is not itself a symbol is read character by character (``"101"`` over ``0 1`` is ``1 0 1``).

The two never disagree: with one-character symbols a separated word has single characters between its spaces, and
a one-symbol word reads the same either way.
"""
from __future__ import annotations

from typing import Iterable, Sequence

__all__ = ["split_word"]


def split_word(word: str | Iterable[str], alphabet: Sequence[str]) -> list[str]:
    """The symbols of ``word`` (a string in one of the two spellings above, or already a sequence of symbols)."""
    if not isinstance(word, str):
        return list(word)
    parts = word.split()
    if (len(parts) == 1 and len(parts[0]) > 1 and parts[0] not in alphabet
            and all(len(s) == 1 for s in alphabet)):
        return list(parts[0])
    return parts
