#!/usr/bin/env python3
"""Builds the fuzzer's seed corpus from PTX files.

    make_seeds.py --out DIR [--max-bytes N] PATH...

Each PATH is a .ptx file or a folder searched for .ptx files at any depth; a PATH that does
not exist is skipped with a note, since generated PTX is there only in some builds. A file of
at most --max-bytes is a seed as it is. A larger one is cut at its top-level statements
(functions, declarations, sections) into pieces of about --max-bytes, each starting with the
file's .version/.target/.address_size lines, so that the fuzzer mutates whole functions
rather than the first bytes of a megabyte file. Seeds are named by the SHA-1 of their text,
as libFuzzer names its own, so equal pieces are stored once.
"""

import argparse
import hashlib
import pathlib
import sys

HEADER_DIRECTIVES = (".version", ".target", ".address_size")


def ptx_files(path):
    if path.is_dir():
        return sorted(p for p in path.rglob("*.ptx") if p.is_file())
    return [path]


def next_char(text, i):
    """The first character at or after i that is not white space ('' at the end)."""
    while i < len(text) and text[i].isspace():
        i += 1
    return text[i:i + 1]


def top_level_pieces(text):
    """Splits text into top-level statements: each ends at a ';' or at the '}' that closes
    the brace it opened, outside comments and strings."""
    pieces = []
    start = 0
    depth = 0
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == "/" and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if c == '"':
            end = text.find('"', i + 1)
            i = n if end < 0 else end + 1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            # An initializer's '}' is followed by the ';' that ends its declaration.
            if depth == 0 and next_char(text, i + 1) not in (";", ","):
                pieces.append(text[start:i + 1])
                start = i + 1
        elif c == ";" and depth == 0:
            pieces.append(text[start:i + 1])
            start = i + 1
        i += 1
    if text[start:].strip():
        pieces.append(text[start:])
    return pieces


def split(text, max_bytes):
    pieces = top_level_pieces(text)
    header = "".join(p for p in pieces if p.strip().startswith(HEADER_DIRECTIVES))
    body = [p for p in pieces if not p.strip().startswith(HEADER_DIRECTIVES)]
    seeds = []
    current = header
    for piece in body:
        if len(current) > len(header) and len(current) + len(piece) > max_bytes:
            seeds.append(current + "\n")
            current = header
        current += piece
    if len(current) > len(header):
        seeds.append(current + "\n")
    return seeds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=pathlib.Path)
    parser.add_argument("--max-bytes", type=int, default=64 * 1024)
    parser.add_argument("paths", nargs="*", type=pathlib.Path)
    args = parser.parse_args()

    args.out.mkdir(parents=True, exist_ok=True)
    files = []
    for path in args.paths:
        if not path.exists():
            print(f"make_seeds: {path} does not exist, skipped", file=sys.stderr)
            continue
        files.extend(ptx_files(path))
    if not files:
        print("make_seeds: error: no PTX files found", file=sys.stderr)
        return 1

    written = set()
    for path in files:
        text = path.read_bytes().decode("utf-8", errors="surrogateescape")
        seeds = [text] if len(text) <= args.max_bytes else split(text, args.max_bytes)
        for seed in seeds:
            data = seed.encode("utf-8", errors="surrogateescape")
            name = hashlib.sha1(data).hexdigest()
            if name not in written:
                (args.out / name).write_bytes(data)
                written.add(name)
    print(f"make_seeds: {len(written)} seeds from {len(files)} files in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
