"""Rebuild papersift/extract/domain/rules/known_terms.txt from real conference abstracts.

    PYTHONPATH=$PWD .venv/bin/python tools/known_terms.py [CONFERENCES_DIR]

How many papers write a name: the field's common terms ('KL', 'QA', 'CLT', 'SFDA',
'Representational Similarity Analysis') are written by many papers of a conference, a
paper's own coined name ('FFCP', 'UM2N') by one. The method decision weighs this as one
feature (see rules/known_terms.py), so an acronym that a proposal sentence happens to
define ('a novel Hilbert-Schmidt Independence Criterion (HSIC)-based approach') is not
taken for the paper's own name on its definition alone.

Two kinds of entries, each with the number of papers that write it:
- a coined-looking word (two capitals, or a capital and a digit: 'HSIC', 'DD-GAN', 'ViT');
- a capitalised expansion before an acronym in parentheses ('Local Truncation Error
  (LTE)') that at least two papers define, counted wherever a paper writes it (any case).

Only names at least MIN_PAPERS papers write are kept. Every abstract of a gold set
(bench/gold) and of the bundled corpus is left out, as in tools/known_benchmarks.py, so no
figure measured on gold is helped by its own abstract.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from known_benchmarks import REPO, conference_texts, write_list

OUT = REPO / "papersift" / "extract" / "domain" / "rules" / "known_terms.txt"
MIN_PAPERS = 5
# A coined-looking word: letters, digits and inner dashes, with two capitals or a capital
# and a digit somewhere ('KL', 'DD-GAN', 'Llama-2', 'ViT').
_WORD = re.compile(r"(?<![\w-])[A-Za-z0-9][\w-]*[A-Za-z0-9](?![\w-])")
# 'Local Truncation Error (LTE)': two to six capitalised words before a parenthesis.
_EXPANSION = re.compile(
    r"((?:[A-Z][\w-]*\s+){1,5}[A-Z][\w-]*)\s*\(([A-Z][A-Za-z0-9-]{1,12})\)")


def coined_looking(word: str) -> bool:
    capitals = sum(c.isupper() for c in word)
    return capitals >= 2 or (capitals >= 1 and any(c.isdigit() for c in word))


def counts(texts: list[str]) -> Counter[str]:
    """Papers per coined-looking word, and per capitalised expansion (lowercased)."""
    words: Counter[str] = Counter()
    defined: Counter[str] = Counter()
    for text in texts:
        words.update({w for w in _WORD.findall(text) if coined_looking(w)})
        defined.update({" ".join(m.group(1).lower().split()) for m in _EXPANSION.finditer(text)})
    phrases: Counter[str] = Counter()
    lowered = [" ".join(text.lower().split()) for text in texts]
    for phrase in (p for p, n in defined.items() if n >= 2):  # one paper's coinage: skip
        phrases[phrase] = sum(phrase in text for text in lowered)
    kept = Counter({w: n for w, n in words.items() if n >= MIN_PAPERS})
    kept.update({p: n for p, n in phrases.items() if n >= MIN_PAPERS})
    return kept


def main(argv: list[str]) -> int:
    texts = conference_texts(argv)
    header = (
        f"# How many papers write a name: written by tools/known_terms.py from {len(texts)}\n"
        f"# real conference abstracts (gold-set abstracts left out). Coined-looking words\n"
        f"# as written, capitalised expansions of acronyms in lowercase; only names at least\n"
        f"# {MIN_PAPERS} papers write. Columns: name, papers.\n")
    rows = sorted(counts(texts).items(), key=lambda item: (-item[1], item[0]))
    write_list(OUT, header, list(rows), len(texts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
