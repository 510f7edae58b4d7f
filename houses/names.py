"""What a username, a display name and a handle may be: nothing that reads as someone else.

- **Hidden characters**: bidi controls (``U+202E`` turns ``evil\u202egnp.exe`` into
  ``evilexe.png``), zero-width and other invisible characters (format characters, variation
  selectors, Hangul fillers, which ``\\w`` takes for letters) are refused in usernames and
  display names, and stripped from names arbe derives itself.
- **Usernames** are NFKC-normalised (Django's ``UsernameField``) and held to the user model's
  ``UnicodeUsernameValidator``; then refused when they mix scripts confusably (``οwner`` with a
  Greek omicron: ``confusable_homoglyphs.is_dangerous``, as django-registration does) or when
  their ``skeleton`` is an existing username's (``Owner``, ``0wner``, ``оwner`` all-Cyrillic).
- **Display names** keep any real script (``Zoë``, ``Ζωή``, ``李雷``); only hidden characters
  are refused.
- **Thread titles** are one line: line and paragraph breaks (CR, LF, NEL, ``U+2028``,
  ``U+2029``), tabs and runs of spaces become one space; other hidden characters are refused
  in a title someone types, and stripped from one arbe derives (a bot run's thread).
- **Handles** are ASCII by their pattern (``houses.models.HANDLE_PATTERN``); a person's is
  derived from the username with look-alikes made ASCII (``οwner`` -> ``owner``), so no
  handle is ever outside the pattern.
"""

from __future__ import annotations

import functools
import re
import unicodedata

from confusable_homoglyphs import confusables
from django.core.exceptions import ValidationError

# Characters that draw nothing or reorder what is drawn, beyond the general categories
# Cc/Cf/Co/Cs/Cn/Zl/Zp: combining grapheme joiner, Hangul and Khmer fillers, Mongolian
# free variation selectors, variation selectors, tag characters (Default_Ignorable_Code_Point).
INVISIBLE = frozenset(
    [0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0]
    + list(range(0x180B, 0x1810))
    + list(range(0xFE00, 0xFE10))
    + list(range(0xE0000, 0xE1000))
)
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


def is_hidden(char: str) -> bool:
    return ord(char) in INVISIBLE or unicodedata.category(char) in HIDDEN_CATEGORIES


def hidden_characters(text: str) -> list[str]:
    """The code points (``U+202E``) of ``text``'s hidden characters, each once, in order."""
    found = dict.fromkeys(f"U+{ord(c):04X}" for c in text if is_hidden(c))
    return list(found)


def strip_hidden(text: str) -> str:
    return "".join(c for c in text if not is_hidden(c))


def check_display_name(name: str) -> None:
    hidden = hidden_characters(name)
    if hidden:
        raise ValidationError(
            f"A name can't contain invisible or text-direction characters ({', '.join(hidden)})."
        )


# Everything that breaks a line (str.splitlines' set) or spaces it: one space each run.
_BREAKS = re.compile(r"[\s\x1c-\x1f\x85\u2028\u2029]+")


def one_line(text: str) -> str:
    """``text`` on one line, without hidden characters: what an email header or any other
    one-line place may show of a title stored before titles were checked."""
    return strip_hidden(_BREAKS.sub(" ", text)).strip()


def clean_title(title: str, *, derived: bool = False) -> str:
    """A thread title as stored: one line, trimmed. Hidden characters left after the breaks
    are made spaces are refused (``ValidationError``), or stripped when ``derived``."""
    title = _BREAKS.sub(" ", title).strip()
    hidden = hidden_characters(title)
    if hidden and not derived:
        raise ValidationError(
            f"A title can't contain invisible or text-direction characters ({', '.join(hidden)})."
        )
    title = strip_hidden(title).strip()
    if not title:
        raise ValidationError("A title can't be blank.")
    return title


@functools.cache
def _stand_in(char: str) -> str:
    """One character for ``char`` and everything confusable with it: an ASCII letter if
    one is among them, else an ASCII character, else the smallest."""
    glyphs = {char.casefold()}
    for glyph in confusables.confusables_data.get(char, ()):
        text = glyph["c"].strip("\u200e\u200f")
        if len(text) == 1:
            glyphs.add(text.casefold())
    return min(glyphs, key=lambda g: (not (g.isascii() and g.isalpha()), not g.isascii(), g))


def skeleton(text: str) -> str:
    """What ``text`` looks like, after the idea of Unicode TR39's skeleton: NFKC, case
    folded, hidden characters dropped, each character replaced by one stand-in for all
    that look like it (twice, so a chain of look-alikes ends in one place), ``rn`` as ``m``.
    Two usernames with the same skeleton can be taken for each other."""
    text = strip_hidden(unicodedata.normalize("NFKC", text).casefold())
    for _ in range(2):
        text = "".join(_stand_in(c) for c in text)
    return text.replace("rn", "m")


def check_username(username: str, *, exclude_pk=None) -> None:
    """Refuse a username that can be taken for another one (``ValidationError``)."""
    from django.contrib.auth import get_user_model

    hidden = hidden_characters(username)
    if hidden:
        raise ValidationError(
            f"A username can't contain invisible or text-direction characters"
            f" ({', '.join(hidden)})."
        )
    if confusables.is_dangerous(username):
        raise ValidationError(
            "This username mixes scripts with letters that look alike; use one script."
        )
    mine = skeleton(username)
    others = get_user_model().objects.exclude(pk=exclude_pk).values_list("username", flat=True)
    # A scan of the usernames: sign-up and admin edits are rare, a site's people few.
    if any(skeleton(other) == mine for other in others.iterator()):
        raise ValidationError("This username looks like one that is already taken.")


def ascii_handle_base(username: str) -> str:
    """A person's handle from their username: its ASCII letters, digits, ``-`` and ``_``
    lower-cased, accents dropped (``Zoë`` -> ``zoe``), other characters as the ASCII
    letter they look like or left out (at most
    28, leaving room for a number), or ``person``."""
    letters = unicodedata.normalize("NFKD", strip_hidden(username).lower())
    chars = (c if c.isascii() else _stand_in(c) for c in letters if not unicodedata.combining(c))
    base = "".join(c for c in chars if c.isascii() and (c.isalnum() or c in "-_"))
    return base.lstrip("-_")[:28] or "person"
