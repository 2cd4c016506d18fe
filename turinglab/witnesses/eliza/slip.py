"""The SLIP HASH function and the IBM 7094 character code, as ELIZA used them.

The 1966 paper says a MEMORY transformation is "randomly selected". The program
itself (Weizenbaum's MAD-SLIP listing, found in the MIT archives in 2021) picks
it with ``HASH.(BOT.(INPUT), 2) + 1``: a 2-bit hash of the last cell of the input
text. SLIP's HASH(D, N) is a mid-square hash: the middle N bits of D squared,
where D is a 36-bit word holding six 6-bit BCD characters (the sign bit is not
squared). The paper itself gives one check: the 7-bit hash of ALWAYS is 14.
"""

from __future__ import annotations

# IBM 7090/7094 BCD codes (octal) for the characters ELIZA's input can hold.
_BCD: dict[str, int] = {" ": 0o60, "+": 0o20, "-": 0o40, ".": 0o33, ",": 0o73, "(": 0o74, ")": 0o34,
                        "/": 0o61, "=": 0o13, "'": 0o14, "$": 0o53, "*": 0o54}
_BCD.update({str(d): d for d in range(10)})
_BCD.update({c: 0o21 + i for i, c in enumerate("ABCDEFGHI")})
_BCD.update({c: 0o41 + i for i, c in enumerate("JKLMNOPQR")})
_BCD.update({c: 0o62 + i for i, c in enumerate("STUVWXYZ")})

CELL_CHARS = 6  # characters per SLIP cell (one 36-bit word)


def bcd_word(chars: str) -> int:
    """Six characters (padded with blanks) packed into a 36-bit word, first char highest.

    Characters the 7094 could not represent (lower case is upper-cased first) count as blanks.
    """
    chars = chars.upper()[:CELL_CHARS].ljust(CELL_CHARS)
    word = 0
    for ch in chars:
        word = (word << 6) | _BCD.get(ch, 0o60)
    return word


def slip_hash(d: int, n: int) -> int:
    """SLIP HASH(D, N): the middle `n` bits (0 <= n <= 15) of the 35-bit magnitude of `d`, squared."""
    if not 0 <= n <= 15:
        raise ValueError(f"HASH takes 0..15 bits, got {n}")
    d &= (1 << 35) - 1  # the 7094 squares the magnitude; bit 35 is the sign
    return ((d * d) >> (35 - n // 2)) & ((1 << n) - 1)


def last_cell(word: str) -> str:
    """The last SLIP cell of `word`: words longer than six characters continue into further cells."""
    if len(word) <= CELL_CHARS:
        return word
    return word[(len(word) - 1) // CELL_CHARS * CELL_CHARS :]


def memory_index(words: list[str]) -> int:
    """Which of the four MEMORY transformations the program picks for this text (0..3)."""
    return slip_hash(bcd_word(last_cell(words[-1])), 2) if words else 0
