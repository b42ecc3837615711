#!/usr/bin/env python3
"""Checks the repository's docs stand on their own: every relative link in
README.md, docs/*.md and the clients' READMEs resolves to a file of the
repository, and no text points outside it (../shared, /work/...).
Exits 1 listing every problem; run by `make test-docs` (part of make test)."""
import glob
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
OUTSIDE = re.compile(r"\.\./shared|(?<![\w.])/work/|/home/\w+|/root/")


def problems(path):
    rel = os.path.relpath(path, ROOT)
    text = open(path, encoding="utf-8").read()
    # Fenced code is text, not links; it is still checked for paths outside.
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    for m in LINK.finditer(prose):
        target = m.group(1)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL or an anchor of this page
        if target.startswith("/"):
            yield f"{rel}: absolute link {target}"
            continue
        file = os.path.normpath(os.path.join(os.path.dirname(path), target.split("#")[0]))
        if not file.startswith(ROOT + os.sep):
            yield f"{rel}: link {target} leaves the repository"
        elif not os.path.exists(file):
            yield f"{rel}: link {target} does not resolve"
    for n, line in enumerate(text.splitlines(), 1):
        if OUTSIDE.search(line):
            yield f"{rel}:{n}: points outside the repository: {line.strip()[:120]}"


def main():
    files = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    files += sorted(glob.glob(os.path.join(ROOT, "clients", "*", "README.md")))
    found = [p for f in files for p in problems(f)]
    for p in found:
        print(p)
    if found:
        print(f"check-docs: {len(found)} problem(s) in {len(files)} files")
        return 1
    print(f"check-docs: ok ({len(files)} files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
