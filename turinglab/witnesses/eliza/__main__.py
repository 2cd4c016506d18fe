"""Talk to ELIZA in a terminal: python -m turinglab.witnesses.eliza [SCRIPT] (blank line or EOF ends)."""

from __future__ import annotations

import sys

from turinglab.witnesses.eliza.engine import Eliza
from turinglab.witnesses.eliza.script import ScriptError


def main(argv: list[str]) -> int:
    if len(argv) > 1 or (argv and argv[0] in ("-h", "--help")):
        print(__doc__)
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    try:
        eliza = Eliza.from_file(argv[0]) if argv else Eliza()
    except (ScriptError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(eliza.greeting)
    for line in sys.stdin:
        if not line.strip():
            break
        print(eliza.respond(line))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
