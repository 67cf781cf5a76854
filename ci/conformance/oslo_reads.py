"""Reads INI documents with oslo.config's own parser, one per line of stdin (JSON strings),
and prints, per document, a JSON line: the sorted [section, option, value] assignments
oslo.config's ConfigParser collects, or ["error", message] for a parse error.

The documents are parsed as ConfigParser.parse parses a file, `open(path).readlines()` (text
mode, universal newlines), but from memory: tests/tests/it/oslo_grammar.rs sends a million
of them, one per code point, and a file each would take minutes.
"""

import io
import json
import sys

from oslo_config import cfg
from oslo_config import iniparser


def read(text):
    sections = {}
    parser = cfg.ConfigParser("<document>", sections)
    try:
        iniparser.BaseParser.parse(parser, io.StringIO(text, newline=None).readlines())
    except iniparser.ParseError as e:
        return ["error", e.msg]
    return sorted(
        [section, key, value]
        for section, options in sections.items()
        for key, values in options.items()
        for value in values
    )


def main():
    out = sys.stdout
    for line in sys.stdin:
        out.write(json.dumps(read(json.loads(line)), ensure_ascii=True))
        out.write("\n")


if __name__ == "__main__":
    main()
