"""`prepare:` of the context-terms baseline: read the terms of every context PDF once, before the evaluation
(network off), into $HARNESS_PREPARED_DIR/terms.txt, which the agent then reads."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from terms import pdf_terms, read_list, write_terms  # noqa: E402


def main() -> int:
    out = os.environ.get("HARNESS_PREPARED_DIR")
    if not out:
        print("prepare.py: HARNESS_PREPARED_DIR is not set (run as a submission's prepare: command)", file=sys.stderr)
        return 2
    context = os.environ.get("HARNESS_CONTEXT_LIST")
    terms = pdf_terms(read_list(context)) if context else {}
    path = write_terms(terms, out)
    print(f"prepare.py: {len(terms)} terms from {context or 'no context'} in {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
