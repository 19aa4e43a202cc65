#!/usr/bin/env python3
"""The fenced blocks of code in the project's Markdown, found by the marker on the line above each:

    <!-- doc-test: MARKER -->
    ```python
    ...
    ```

so that tests and scripts run the docs' examples as they stand (python/tests/test_docs.py says which
markers mean what). As a program it prints the code of the blocks of FILE whose marker is MARKER:

    scripts/doc_blocks.py README.md scripts/check-install.sh
"""

import re
import sys

FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)
MARKER = re.compile(r"<!-- doc-test: (.*?) -->\n$")


def blocks(text):
    """(line of the fence, language, marker or None, code) for every fenced block of `text`."""
    found = []
    for m in FENCE.finditer(text):
        before = text[:m.start()]
        marker = MARKER.search(before)
        found.append((before.count("\n") + 1, m.group(1), marker.group(1) if marker else None, m.group(2)))
    return found


def code_marked(path, marker):
    """The code of the blocks of the Markdown file at `path` marked `marker`, joined; an error if none."""
    with open(path, encoding="utf-8") as f:
        codes = [code for _, _, m, code in blocks(f.read()) if m == marker]
    if not codes:
        raise LookupError(f"{path} has no block marked <!-- doc-test: {marker} -->")
    return "".join(codes)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    try:
        sys.stdout.write(code_marked(sys.argv[1], sys.argv[2]))
    except (LookupError, OSError) as e:
        sys.exit(f"doc_blocks: {e}")
