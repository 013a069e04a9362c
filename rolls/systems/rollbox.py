"""The one-line roll box: ``Wits + Occult 8again rote`` → a check request, one grammar per system.

Pure (no Django). ``parse(system, text, sheet=…)`` returns the request that ``POST …/checks/``
takes, the tokens with their positions (for highlighting), and the other side of a ``vs`` clause,
which the server resolves against a character's sheet. A word the grammar does not know raises
``RollBoxError`` naming its position and the nearest words. docs/rollbox.md is the user's guide.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rolls.systems.errors import RuleError
from rolls.systems.errors import gettext_noop as _
from rolls.systems.sheets import TEMPLATES, fold

MAX_TEXT = 300
MAX_NUMBER = 100
MAX_TRAIT_WORDS = 5

VISIBILITY = {
    "public": "public",
    "публично": "public",
    "private": "private",
    "приватно": "private",
    "blind": "blind",
    "вслепую": "blind",
}
VERSUS = {"vs", "vs.", "против"}
# Spending 1 Willpower (Storyteller, CofD): on the roll, or after «vs» in CofD on the resistance.
WILLPOWER = {"willpower", "wp", "воля"}
WILLPOWER_PHRASES = {"сила воли"}
WILLPOWER_SYSTEMS = ("storyteller", "cofd")
EQUIPMENT = {"equipment", "gear", "tool", "tools", "снаряжение", "инструменты", "оружие"}
DICE = re.compile(r"^(\d{1,3})d(\d{1,3})$")

# Options that are one word: fold(word) → (request key, value), per system.
FLAGS: dict[str, dict[str, tuple[str, Any]]] = {
    "cofd": {
        **{f"{n}again": ("again", n) for n in (8, 9, 10)},
        **{f"{n}-again": ("again", n) for n in (8, 9, 10)},
        **{f"ie{n}": ("again", n) for n in (8, 9, 10)},
        "noagain": ("again", None),
        "no-again": ("again", None),
        "no10again": ("again", None),
        "rote": ("rote", True),
        "машинально": ("rote", True),
        "t8": ("", None),  # Dice Maiden's target; CofD always counts 8+
    },
    "storyteller": {
        "auto": ("automatic", True),
        "automatic": ("automatic", True),
        "авто": ("automatic", True),
        "f1": ("", None),  # Dice Maiden's "ones subtract": the rule anyway
    },
    "d6pool": {},
    "age": {},
    "nice_damnit": {},
}
# Words followed by a number: fold(word) → request key, per system.
NUMBERED: dict[str, dict[str, str]] = {
    "cofd": {},
    "storyteller": {"diff": "difficulty", "difficulty": "difficulty", "сложность": "difficulty"},
    "age": {"tn": "target", "target": "target", "цель": "target"},
    "d6pool": {},
    "nice_damnit": {},
}
# d6 pool: the seed's difficulty scale, as dice taken from the pool.
D6POOL_DIFFICULTY = {
    "trivial": 0,
    "элементарно": 0,
    "easy": -2,
    "легко": -2,
    "hard": -4,
    "сложно": -4,
    "very hard": -6,
    "трудно": -6,
    "unreal": -8,
    "нереально": -8,
}
# Words that name a chip of the trait before: CofD specialties, AGE focuses.
CHIP_WORDS = {"cofd": {"spec", "specialty", "спец"}, "age": {"focus", "фокус"}}
CHIP_KEY = {"cofd": "specialty", "age": "focus"}
CHIP_GROUP = {"cofd": "specialties", "age": "focuses"}
POOL_DIE = {"cofd": 10, "storyteller": 10, "d6pool": 6}
FIXED_DICE = {"age": (3, 6), "nice_damnit": (2, 10)}


class RollBoxError(RuleError):
    """A word the roll box does not understand; ``start``/``end`` index into the text."""

    def __init__(
        self,
        message: str,
        *,
        start: int,
        end: int,
        word: str,
        suggestions: Sequence[str] = (),
        params: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message, field="text", params={"word": word, **(params or {})})
        self.start, self.end, self.word = start, end, word
        self.suggestions = list(suggestions)

    def details(self) -> dict[str, Any]:
        """What the API adds to the error body: where the word is, and the nearest words."""
        return {
            "at": {"start": self.start, "end": self.end, "word": self.word},
            "suggestions": self.suggestions,
        }


@dataclass(frozen=True)
class Token:
    start: int
    end: int
    kind: str
    value: Any = None
    label: str = ""


@dataclass
class Side:
    """One side of the roll: what the box read for it."""

    traits: list[str] = field(default_factory=list)
    pool: int | None = None
    modifiers: list[Any] = field(default_factory=list)
    character: str | None = None  # a name after @
    willpower: bool = False  # CofD: the resisting character spends 1 Willpower (+2)
    start: int = 0
    end: int = 0

    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {}
        if self.traits:
            spec["traits"] = list(self.traits)
        if self.pool is not None:
            spec["pool"] = self.pool
        if self.modifiers:
            spec["modifiers"] = list(self.modifiers)
        return spec

    def empty(self) -> bool:
        return not (self.traits or self.pool is not None or self.modifiers)


@dataclass
class Parsed:
    request: dict[str, Any]
    tokens: list[Token]
    versus: Side | None = None  # cofd: resistance; others: the other side of an opposed roll
    text: str = ""


_WORD = re.compile(r"\([^()]*\)?|#.*|[+\-]|[^\s+()#]+")


def _split(text: str) -> list[tuple[int, int, str]]:
    """Words with their spans; ``+``, ``(…)`` and ``#…`` are words of their own, and so is a
    ``-`` that stands before a word or a number (``Wits-2``) but not one inside a word
    (``Free-fall``, ``8-again``)."""
    words: list[tuple[int, int, str]] = []
    for match in _WORD.finditer(text):
        word, start = match.group(), match.start()
        inner = re.match(r"^([^\W\d_][\w']*)-(\d+)$", word)  # Wits-2
        if inner:
            cut = start + len(inner.group(1))
            words += [(start, cut, inner.group(1)), (cut, cut + 1, "-")]
            words.append((cut + 1, match.end(), inner.group(2)))
            continue
        words.append((start, match.end(), word))
    return words


@functools.cache
def _template_words(system: str) -> tuple[dict, dict, tuple, dict]:
    """The template's spellings for a system, built once: traits (fold → (group, key)), the
    GM's attributes that are never rolled, spellings as written, suggested chip names."""
    template = TEMPLATES[system]
    rollable = set(template.rollable_groups())
    traits: dict[str, tuple[str, str]] = {}
    not_rollable: dict[str, str] = {}
    spellings: list[str] = []
    for group in template.groups:
        if group.kind == "chips":
            continue
        for trait in group.traits:
            for spelling in (trait.key, trait.ru, *trait.aliases):
                if group.key in rollable:
                    traits.setdefault(fold(spelling), (group.key, trait.key))
                    spellings.append(spelling)
                else:
                    not_rollable.setdefault(fold(spelling), trait.key)
    chips: dict[str, str] = {}
    if system in CHIP_GROUP:
        for trait in template.group(CHIP_GROUP[system]).traits:
            chips.setdefault(fold(trait.key), trait.key)
            chips.setdefault(fold(trait.ru), trait.key)
    return traits, not_rollable, tuple(spellings), chips


class _Vocabulary:
    """Trait spellings (template and these sheets) → (group, key); chip names per trait."""

    def __init__(self, system: str, sheets: Sequence[Mapping[str, Any]]) -> None:
        traits, self.not_rollable, spellings, chips = _template_words(system)
        self.traits = dict(traits)  # fold(spelling) → (group, key)
        self.spellings = list(spellings)  # as written, for suggestions
        self.chips: dict[str, str] = {}  # fold(spelling) → the chip's name
        for sheet in sheets:
            self._add_sheet(system, sheet if isinstance(sheet, Mapping) else {})
        for folded, name in chips.items():
            self.chips.setdefault(folded, name)

    def _add_sheet(self, system: str, sheet: Mapping[str, Any]) -> None:
        for group_key in TEMPLATES[system].rollable_groups():
            values = sheet.get(group_key)
            for name in values if isinstance(values, Mapping) else ():
                if isinstance(name, str) and fold(name) not in self.traits:
                    self.traits[fold(name)] = (group_key, name)
                    self.spellings.append(name)
        chip_group = CHIP_GROUP.get(system)
        if chip_group:
            on_sheet = sheet.get(chip_group)
            for names in on_sheet.values() if isinstance(on_sheet, Mapping) else ():
                for name in names if isinstance(names, list) else ():
                    if isinstance(name, str):
                        self.chips.setdefault(fold(name), name)

    def longest_trait(self, words: Sequence[str]) -> tuple[int, str] | None:
        for size in range(min(MAX_TRAIT_WORDS, len(words)), 0, -1):
            hit = self.traits.get(fold(" ".join(words[:size])))
            if hit:
                return size, hit[1]
        return None


class _Parser:
    def __init__(self, system: str, text: str, sheets: Sequence[Mapping[str, Any]]) -> None:
        self.system = system
        self.text = text
        self.words = _split(text)
        self.vocabulary = _Vocabulary(system, sheets)
        self.tokens: list[Token] = []
        self.request: dict[str, Any] = {}
        self.me = Side()
        self.versus: Side | None = None
        self.i = 0

    # --- helpers -----------------------------------------------------------------------------

    def fail(self, index: int, message: str, suggestions: Sequence[str] = (), **params: Any):
        start, end, word = self.words[min(index, len(self.words) - 1)]
        raise RollBoxError(
            message, start=start, end=end, word=word, suggestions=suggestions, params=params
        )

    def emit(self, first: int, last: int, kind: str, value: Any = None, label: str = "") -> None:
        self.tokens.append(Token(self.words[first][0], self.words[last][1], kind, value, label))

    def word(self, index: int) -> str:
        return self.words[index][2] if index < len(self.words) else ""

    def side(self) -> Side:
        """Where modifiers and a pool go: after «vs», to the other side (in CofD the other side
        is only a resistance, so they stay with the roller)."""
        if self.versus is not None and self.system != "cofd":
            return self.versus
        return self.me

    def set_once(self, index: int, key: str, value: Any) -> None:
        if key in self.request and self.request[key] != value:
            self.fail(index, _("«{word}» contradicts an earlier word of the line"))
        self.request[key] = value

    def number(self, index: int, low: int = 0, high: int = MAX_NUMBER) -> int:
        word = self.word(index)
        if not word.isdigit():
            self.fail(index, _("a number is expected after this word"))
        value = int(word)
        if not low <= value <= high:
            self.fail(
                index, _("{word}: expected a number from {low} to {high}"), low=low, high=high
            )
        return value

    def vocabulary_words(self) -> list[str]:
        words = list(self.vocabulary.spellings)
        words += list(FLAGS[self.system]) + list(NUMBERED[self.system]) + sorted(VISIBILITY)
        words += ["vs"] + (list(D6POOL_DIFFICULTY) if self.system == "d6pool" else [])
        if self.system in WILLPOWER_SYSTEMS:
            words += [*WILLPOWER, *WILLPOWER_PHRASES]
        return sorted(set(words))

    def unknown(self, index: int) -> None:
        word = self.word(index)
        not_rollable = self.vocabulary.not_rollable.get(fold(word))
        if not_rollable:
            self.fail(index, _("{word} is the GM's attribute; it is not added to a roll"))
        close = difflib.get_close_matches(word, self.vocabulary_words(), n=3, cutoff=0.6)
        if not close:
            folded = {fold(w): w for w in self.vocabulary_words()}
            close = [folded[w] for w in difflib.get_close_matches(fold(word), folded, n=3)]
        self.fail(index, _("«{word}» is neither a trait of this sheet nor a roll-box word"), close)

    # --- the grammar -------------------------------------------------------------------------

    def parse(self) -> Parsed:
        if len(self.text) > MAX_TEXT:
            raise RollBoxError(
                _("the line is longer than {n} characters"),
                start=MAX_TEXT,
                end=len(self.text),
                word=self.text[MAX_TEXT : MAX_TEXT + 20],
                params={"n": MAX_TEXT},
            )
        if not self.words:
            raise RollBoxError(_("type a roll, e.g. Wits + Occult"), start=0, end=0, word="")
        while self.i < len(self.words):
            self.step()
        if self.me.empty() and self.system in POOL_DIE:
            self.fail(0, _("name the traits to roll, or a number of dice"))
        self.request.update(self.me.spec())
        versus = self.versus
        if versus is not None and versus.empty() and versus.character is None:
            raise RollBoxError(
                _("say what «vs» is against"),
                start=versus.start,
                end=versus.end,
                word=self.text[versus.start : versus.end],
            )
        return Parsed(self.request, self.tokens, versus, self.text)

    def step(self) -> None:
        i, word = self.i, self.word(self.i)
        folded = fold(word)
        if word.startswith("#"):
            self.emit(i, i, "comment", word[1:].strip())
            if word[1:].strip():
                self.request["label"] = word[1:].strip()[:200]
            self.i += 1
        elif word in ("+", "-"):
            self.signed(i, 1 if word == "+" else -1)
        elif word.startswith("@"):
            self.at_character(i)
        elif folded in VERSUS:
            self.vs(i)
        elif self.system in WILLPOWER_SYSTEMS and self.willpower_words(i):
            self.willpower(i, self.willpower_words(i))
        elif folded in VISIBILITY:
            self.set_once(i, "visibility", VISIBILITY[folded])
            self.emit(i, i, "visibility", VISIBILITY[folded])
            self.i += 1
        elif DICE.match(folded):
            self.dice(i, *map(int, DICE.match(folded).groups()))
        elif word.isdigit():
            self.bare_number(i)
        elif folded in FLAGS[self.system]:
            self.flag(i, folded)
        elif self.system == "storyteller" and re.fullmatch(r"t\d+", folded):
            self.difficulty(i, i, int(folded[1:]))
        elif re.fullmatch(r"t\d+", folded) and self.system == "cofd":
            self.fail(i, _("Chronicles of Darkness always succeeds on 8, 9 and 10"))
        elif folded in NUMBERED[self.system]:
            self.numbered(i, NUMBERED[self.system][folded])
        elif folded in CHIP_WORDS.get(self.system, ()):
            self.chip_word(i)
        elif word.startswith("("):
            self.chip(i, i, word.strip("()"))
        elif self.system == "d6pool" and self.d6pool_difficulty(i):
            pass
        else:
            self.trait(i, sign=1)

    def willpower_words(self, i: int) -> int:
        """How many words from ``i`` say «Willpower» (0: none)."""
        if fold(" ".join(self.word(k) for k in (i, i + 1))) in WILLPOWER_PHRASES:
            return 2
        return 1 if fold(self.word(i)) in WILLPOWER else 0

    def willpower(self, i: int, size: int) -> None:
        last = i + size - 1
        if self.versus is not None and self.system == "cofd":
            # After «vs»: the resisting character raises the trait by 2 (their Willpower).
            if self.versus.willpower:
                self.fail(i, _("«{word}» contradicts an earlier word of the line"))
            self.versus.willpower = True
            self.emit(i, last, "option", "resistance.willpower=True")
        elif self.versus is not None:
            self.fail(i, _("Willpower is spent by the one who rolls: write it before «vs»"))
        else:
            self.set_once(i, "willpower", True)
            self.emit(i, last, "option", "willpower=True")
        self.i = last + 1

    def trait(self, i: int, sign: int) -> None:
        remaining = [w for _, _, w in self.words[i : i + MAX_TRAIT_WORDS]]
        hit = self.vocabulary.longest_trait(remaining)
        if hit is None:
            self.unknown(i)
        size, key = hit
        side = self.versus if self.versus is not None else self.me
        if sign < 0:
            if self.system != "cofd":
                self.fail(i, _("subtracting a trait is not a rule of this system"))
            # CofD: "- Composure" is a resistance, like "vs Composure".
            if self.versus is None:
                self.versus = Side(start=self.words[i - 1][0], end=self.words[i - 1][1])
            side = self.versus
        if key in side.traits:
            self.fail(i, _("{word} is already in the roll"))
        side.traits.append(key)
        self.emit(i, i + size - 1, "trait", key)
        self.i = i + size

    def signed(self, i: int, sign: int) -> None:
        self.emit(i, i, "sign", "+" if sign > 0 else "-")
        nxt = self.word(i + 1)
        if not nxt:
            self.fail(i, _("a sign must be followed by a number or a trait"))
        if nxt.isdigit():
            value = sign * self.number(i + 1, 0, MAX_NUMBER)
            label_words: list[int] = []
            j = i + 2
            while j < len(self.words) and self.is_label_word(j):
                label_words.append(j)
                j += 1
            label = " ".join(self.word(k) for k in label_words)[:60]
            modifier: Any = value
            if label:
                group = "equipment" if fold(label) in EQUIPMENT else "circumstance"
                modifier = {"value": value, "label": label, "group": group}
            self.side().modifiers.append(modifier)
            self.emit(i + 1, j - 1, "modifier", value, label)
            self.i = j
            return
        self.i = i + 1
        if DICE.match(fold(nxt)) and self.system in FIXED_DICE:
            self.fail(i + 1, _("this system always rolls {dice}"), dice=self._fixed())
        self.trait(i + 1, sign)

    def is_label_word(self, j: int) -> bool:
        """Words after ``+2`` that name it (``+2 equipment``), up to anything the grammar knows."""
        word = self.word(j)
        folded = fold(word)
        known = (
            word in ("+", "-")
            or word.startswith(("#", "@", "("))
            or word.isdigit()
            or folded in VERSUS
            or folded in WILLPOWER
            or folded in VISIBILITY
            or folded in FLAGS[self.system]
            or folded in NUMBERED[self.system]
            or folded in CHIP_WORDS.get(self.system, ())
            or folded in D6POOL_DIFFICULTY
            or DICE.match(folded) is not None
            or re.fullmatch(r"t\d+", folded) is not None
        )
        if known:
            return False
        remaining = [w for _, _, w in self.words[j : j + MAX_TRAIT_WORDS]]
        return self.vocabulary.longest_trait(remaining) is None

    def bare_number(self, i: int) -> None:
        versus = self.versus
        if versus is not None and versus.empty() and versus.character is None:
            if self.system == "age":
                self.age_target(i)
                return
            versus.pool = self.number(i)  # "vs 3": a bare pool (CofD: a resistance of 3)
            self.emit(i, i, "number", versus.pool)
            self.i = i + 1
            return
        side = self.side()
        if side.traits or side.pool is not None or side.modifiers or self.system in FIXED_DICE:
            self.fail(i, _("a number here needs a sign: +{word} or -{word}"))
        side.pool = self.number(i)
        self.emit(i, i, "number", side.pool)
        self.i = i + 1

    def age_target(self, i: int) -> None:
        """AGE: «vs 11» is the target number, not an opposed roll."""
        self.versus = None
        vs_token = self.tokens[-1]
        self.tokens[-1] = Token(vs_token.start, vs_token.end, "keyword", "target")
        self.set_once(i, "target", self.number(i, 1, 40))
        self.emit(i, i, "number", self.request["target"])
        self.i = i + 1

    def dice(self, i: int, count: int, sides: int) -> None:
        if self.system in FIXED_DICE:
            if (count, sides) != FIXED_DICE[self.system]:
                self.fail(i, _("this system always rolls {dice}"), dice=self._fixed())
            self.emit(i, i, "dice", f"{count}d{sides}")
            self.i = i + 1
            return
        if sides != POOL_DIE[self.system]:
            self.fail(i, _("this system rolls d{sides}"), sides=POOL_DIE[self.system])
        side = self.side()
        if side.pool is not None:
            self.fail(i, _("the roll already has a number of dice"))
        if count > MAX_NUMBER:
            self.fail(
                i, _("{word}: expected a number from {low} to {high}"), low=0, high=MAX_NUMBER
            )
        side.pool = count
        self.emit(i, i, "dice", count)
        self.i = i + 1

    def _fixed(self) -> str:
        count, sides = FIXED_DICE[self.system]
        return f"{count}d{sides}"

    def flag(self, i: int, folded: str) -> None:
        key, value = FLAGS[self.system][folded]
        if key:
            self.set_once(i, key, value)
        self.emit(i, i, "option", f"{key}={value}" if key else folded)
        self.i = i + 1

    def numbered(self, i: int, key: str) -> None:
        if key == "difficulty":
            self.difficulty(i, i + 1, self.number(i + 1, 2, 10))
            return
        self.set_once(i, key, self.number(i + 1, 1, 40))
        self.emit(i, i, "keyword", key)
        self.emit(i + 1, i + 1, "number", self.request[key])
        self.i = i + 2

    def difficulty(self, i: int, last: int, value: int) -> None:
        if not 2 <= value <= 10:
            self.fail(last, _("the difficulty is from 2 to 10"))
        self.set_once(i, "difficulty", value)
        self.emit(i, last, "option", f"difficulty={value}")
        self.i = last + 1

    def chip_word(self, i: int) -> None:
        self.emit(i, i, "keyword", CHIP_KEY[self.system])
        j = i + 1
        names = [self.word(k) for k in range(j, min(j + MAX_TRAIT_WORDS, len(self.words)))]
        for size in range(len(names), 0, -1):
            name = self.vocabulary.chips.get(fold(" ".join(names[:size])))
            if name:
                self.chip(j, j + size - 1, name)
                return
        if not names:
            self.fail(i, _("name the specialty or focus after this word"))
        self.chip(j, j, names[0])

    def chip(self, first: int, last: int, name: str) -> None:
        if self.system not in CHIP_KEY:
            self.fail(first, _("this system has no specialties or focuses"))
        name = self.vocabulary.chips.get(fold(name), " ".join(name.split()))
        if not name:
            self.fail(first, _("name the specialty or focus after this word"))
        self.set_once(first, CHIP_KEY[self.system], name)
        self.emit(first, last, CHIP_KEY[self.system], name)
        self.i = last + 1

    def d6pool_difficulty(self, i: int) -> bool:
        for size in (2, 1):
            phrase = fold(" ".join(self.word(k) for k in range(i, i + size)))
            if size == 2 and i + 1 >= len(self.words):
                continue
            if phrase in D6POOL_DIFFICULTY:
                value = D6POOL_DIFFICULTY[phrase]
                self.side().modifiers.append(
                    {"value": value, "label": phrase, "group": "difficulty"}
                )
                self.emit(i, i + size - 1, "modifier", value, phrase)
                self.i = i + size
                return True
        return False

    def vs(self, i: int) -> None:
        if self.versus is not None:
            self.fail(i, _("a roll has one «vs»"))
        if self.me.empty():
            self.fail(i, _("say first what is rolled, then «vs»"))
        if self.system == "nice_damnit":
            self.fail(i, _("this system has no opposed rolls"))
        self.versus = Side(start=self.words[i][0], end=self.words[i][1])
        self.emit(i, i, "keyword", "vs")
        self.i = i + 1

    def at_character(self, i: int) -> None:
        if self.versus is None:
            self.fail(i, _("@name picks the other side: write it after «vs»"))
        name = self.word(i)[1:]
        if not name:
            self.fail(i, _("write the character's name after @"))
        if self.versus.character is not None:
            self.fail(i, _("the other side already has a character"))
        self.versus.character = name.replace("_", " ")
        self.emit(i, i, "character", self.versus.character)
        self.i = i + 1


def parse(
    system_id: str,
    text: str,
    *,
    sheet: Mapping[str, Any] | None = None,
    sheets: Sequence[Mapping[str, Any]] = (),
) -> Parsed:
    """Read one line of the roll box for ``system_id``; ``sheet`` adds the character's own
    (custom) trait names and specialties/focuses to the words it knows, ``sheets`` those of
    every character a GM's group check names (a word of any of them is a word of the line)."""
    if system_id not in TEMPLATES:
        raise RuleError(
            _("unknown game system {system}"), field="system", params={"system": system_id}
        )
    if not isinstance(text, str):
        raise RuleError(_("expected a line of text"), field="text")
    return _Parser(system_id, text, [sheet, *sheets] if sheet is not None else sheets).parse()


def keywords(system_id: str) -> list[str]:
    """The roll box's own words for a system (for completion in the page)."""
    words = list(FLAGS[system_id]) + list(NUMBERED[system_id]) + list(CHIP_WORDS.get(system_id, ()))
    words += [*sorted(VISIBILITY), "vs"]
    if system_id in WILLPOWER_SYSTEMS:
        words += ["willpower", "wp", "воля", "сила воли"]
    if system_id == "d6pool":
        words += list(D6POOL_DIFFICULTY)
    return words


@dataclass(frozen=True)
class Target:
    """The other side's character, as the server found it."""

    id: str
    name: str
    sheet: Mapping[str, Any]


def with_versus(system_id: str, parsed: Parsed, target: Target | None) -> dict[str, Any]:
    """The request with the «vs» side filled in: in CofD a resistance (the target's traits as
    a penalty), elsewhere the other side of an opposed roll (``against``)."""
    request = dict(parsed.request)
    versus = parsed.versus
    if versus is None:
        if target is not None:
            raise RuleError(_("a target needs «vs» in the line"), field="target")
        return request
    where = {"start": versus.start, "end": versus.end}
    if versus.traits and target is None:
        raise RollBoxError(
            _("name whose traits these are: «vs @Name …» or choose the target"),
            word=parsed.text[versus.start : versus.end],
            **where,
        )
    if system_id == "cofd":
        # A resistance: the server reads the traits from the target's sheet and the rating is
        # a part of the pool, not a modifier group (README: Resistance).
        resistance: dict[str, Any] = (
            {"traits": list(versus.traits)} if versus.traits else {"value": versus.pool or 0}
        )
        if target is not None:
            resistance["character"] = target.id
        if versus.willpower:
            resistance["willpower"] = True
        request["resistance"] = resistance
        return request
    against = versus.spec()
    if target is not None:
        against["character"] = target.id
    request["against"] = against
    return request
