"""The one-line roll box: what a player types becomes the check request the form would send,
and a word it does not know is reported at its place, with the nearest words."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rolls.checks.assembly import assemble
from rolls.systems import SYSTEM_IDS
from rolls.systems.errors import RuleError
from rolls.systems.rollbox import RollBoxError, parse
from rolls.systems.sheets import TEMPLATES

COFD = {
    "attributes": {"Wits": 3, "Strength": 2, "Composure": 2},
    "skills": {"Occult": 2, "Investigation": 3},
    "specialties": {"Investigation": ["Crime scenes"], "Occult": ["Ghosts"]},
}


def request(system, text, sheet=None):
    return parse(system, text, sheet=sheet).request


@pytest.mark.parametrize(
    ("system", "text", "expected"),
    [
        (
            "cofd",
            "Wits + Occult 8again rote",
            {"traits": ["Wits", "Occult"], "again": 8, "rote": True},
        ),
        ("cofd", "wits+occult", {"traits": ["Wits", "Occult"]}),
        ("cofd", "Сообразительность + Оккультизм", {"traits": ["Wits", "Occult"]}),
        ("cofd", "Wits + Animal Ken noagain", {"traits": ["Wits", "Animal Ken"], "again": None}),
        ("cofd", "6d10 t8", {"pool": 6}),
        ("cofd", "6d10 ie9", {"pool": 6, "again": 9}),
        (
            "cofd",
            "Wits + Investigation (Crime scenes) +2 equipment -1",
            {
                "traits": ["Wits", "Investigation"],
                "specialty": "Crime scenes",
                "modifiers": [{"value": 2, "label": "equipment", "group": "equipment"}, -1],
            },
        ),
        (
            "cofd",
            "Wits + Occult spec Ghosts",
            {"traits": ["Wits", "Occult"], "specialty": "Ghosts"},
        ),
        ("cofd", "Wits-2", {"traits": ["Wits"], "modifiers": [-2]}),
        ("storyteller", "5d10 diff 6", {"pool": 5, "difficulty": 6}),
        ("storyteller", "5d10 t7 f1", {"pool": 5, "difficulty": 7}),
        (
            "storyteller",
            "Dexterity + Brawl сложность 8",
            {"traits": ["Dexterity", "Brawl"], "difficulty": 8},
        ),
        (
            "storyteller",
            "Physical + Lockpicking auto",
            {"traits": ["Physical", "Lockpicking"], "automatic": True},
        ),
        (
            "age",
            "Dexterity (Acrobatics) tn 11",
            {"traits": ["Dexterity"], "focus": "Acrobatics", "target": 11},
        ),
        (
            "age",
            "Dexterity focus Acrobatics vs 11",
            {"traits": ["Dexterity"], "focus": "Acrobatics", "target": 11},
        ),
        ("age", "3d6+3", {"modifiers": [3]}),
        (
            "d6pool",
            "Reaction + Shooting - 6 size",
            {
                "traits": ["Reaction", "Shooting"],
                "modifiers": [{"value": -6, "label": "size", "group": "circumstance"}],
            },
        ),
        (
            "d6pool",
            "Reaction + Shooting very hard",
            {
                "traits": ["Reaction", "Shooting"],
                "modifiers": [{"value": -6, "label": "very hard", "group": "difficulty"}],
            },
        ),
        ("d6pool", "4d6", {"pool": 4}),
        ("nice_damnit", "2d10 + Firearms + Quick draw", {"traits": ["Firearms", "Quick draw"]}),
        (
            "cofd",
            "Wits + Occult blind # the ritual",
            {"traits": ["Wits", "Occult"], "visibility": "blind", "label": "the ritual"},
        ),
    ],
)
def test_lines_become_the_requests_the_form_sends(system, text, expected):
    sheet = (
        COFD
        if system == "cofd"
        else {
            "storyteller": {"attributes": {"Physical": 2}, "abilities": {"Lockpicking": 4}},
            "nice_damnit": {"skills": {"Quick draw": "pro_1"}},
        }.get(system)
    )
    assert request(system, text, sheet) == expected


def test_vs_names_the_other_side():
    parsed = parse("storyteller", "Dexterity + Brawl vs @Theo Dexterity + Dodge +1")
    assert parsed.request == {"traits": ["Dexterity", "Brawl"]}
    assert parsed.versus.character == "Theo"
    assert parsed.versus.spec() == {"traits": ["Dexterity", "Dodge"], "modifiers": [1]}


def test_cofd_resistance_keeps_modifiers_with_the_roller():
    parsed = parse("cofd", "Wits + Occult - Composure + 2", sheet=COFD)
    assert parsed.request == {"traits": ["Wits", "Occult"], "modifiers": [2]}
    assert parsed.versus.spec() == {"traits": ["Composure"]}
    assert parse("cofd", "Wits + Occult vs Composure").versus.spec() == {"traits": ["Composure"]}


@pytest.mark.parametrize(
    ("system", "text", "word", "message_part", "suggestion"),
    [
        ("cofd", "Wits + Ocult 8again", "Ocult", "neither a trait", "Occult"),
        ("cofd", "Wits + Occult 8agian", "8agian", "neither a trait", "8again"),
        ("cofd", "Wits 3", "3", "needs a sign", None),
        ("cofd", "6d6", "6d6", "rolls d10", None),
        ("cofd", "6d10 t7", "t7", "8, 9 and 10", None),
        ("storyteller", "5d10 diff 11", "11", "from 2 to 10", None),
        ("storyteller", "5d10 diff", "diff", "number is expected", None),
        ("age", "4d6", "4d6", "3d6", None),
        ("age", "Dexterity - Perception", "Perception", "subtracting a trait", None),
        ("nice_damnit", "Firearms vs 3", "vs", "no opposed", None),
        ("cofd", "Wits + Occult 8again 9again", "9again", "contradicts", None),
        ("cofd", "Wits + Wits", "Wits", "already in the roll", None),
        ("cofd", "@Theo Wits", "@Theo", "after «vs»", None),
        ("nice_damnit", "Firearms + Charm", "Charm", "GM's attribute", None),
    ],
)
def test_errors_point_at_the_word(system, text, word, message_part, suggestion):
    with pytest.raises(RollBoxError) as caught:
        parse(system, text, sheet=COFD if system == "cofd" else None)
    error = caught.value
    assert text[error.start : error.end] == word == error.word
    assert message_part in error.message
    assert error.field == "text"
    if suggestion:
        assert suggestion in error.suggestions


def test_russian_typo_gets_a_russian_suggestion():
    with pytest.raises(RollBoxError) as caught:
        parse("cofd", "Сообразительность + Оккультизьм")
    assert "Оккультизм" in caught.value.suggestions


def test_unknown_system_and_non_text_are_rule_errors():
    with pytest.raises(RuleError):
        parse("chess", "Wits")
    with pytest.raises(RuleError):
        parse("cofd", 42)  # type: ignore[arg-type]


# --- properties ---------------------------------------------------------------------------

ALPHABET = st.sampled_from([*"abcdeWOt0123456789 +-()#@dvs\u0440", "Wits", " Occult", "8again"])


@settings(max_examples=400, deadline=None)
@given(system=st.sampled_from(SYSTEM_IDS), text=st.lists(ALPHABET, max_size=30).map("".join))
def test_any_line_parses_or_names_a_word_of_it(system, text):
    """Nothing a player types crashes the parser; an error's span is a word of the line."""
    try:
        parsed = parse(system, text, sheet=COFD if system == "cofd" else None)
    except RollBoxError as error:
        assert 0 <= error.start <= error.end <= len(text)
        assert text[error.start : error.end] == error.word
        return
    spans = [(t.start, t.end) for t in parsed.tokens]
    assert spans == sorted(spans)
    assert all(0 <= s < e <= len(text) for s, e in spans)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def _listed(system, group):
    return [t.key for t in TEMPLATES[system].group(group).traits]


@settings(max_examples=200, deadline=None)
@given(
    data=st.data(),
    again=st.sampled_from([None, 8, 9, 10, "none"]),
    rote=st.booleans(),
    modifiers=st.lists(st.integers(-9, 9).filter(bool), max_size=3),
    spacing=st.sampled_from([" ", "  ", ""]),
)
def test_cofd_lines_written_from_a_request_read_back_to_it(data, again, rote, modifiers, spacing):
    attribute = data.draw(st.sampled_from(_listed("cofd", "attributes")))
    skill = data.draw(st.sampled_from(_listed("cofd", "skills")))
    parts = [f"{attribute}{spacing}+{spacing}{skill}"]
    parts += [f"{'+' if m > 0 else '-'}{spacing}{abs(m)}" for m in modifiers]
    expected = {"traits": [attribute, skill]}
    if modifiers:
        expected["modifiers"] = modifiers
    if again is not None:
        parts.append("noagain" if again == "none" else f"{again}again")
        expected["again"] = None if again == "none" else again
    if rote:
        parts.append("rote")
        expected["rote"] = True
    assert request("cofd", " ".join(parts)) == expected


@settings(max_examples=100, deadline=None)
@given(system=st.sampled_from(SYSTEM_IDS), data=st.data())
def test_a_parsed_line_assembles_against_a_full_sheet(system, data):
    """Whatever the box accepts from listed traits is a check the server can assemble."""
    template = TEMPLATES[system]
    groups = [g for g in template.groups if g.rollable and g.kind != "chips"]
    sheet = {g.key: {t.key: g.default for t in g.traits} for g in groups}
    names = [t.key for g in groups for t in g.traits]
    count = 1 if system == "age" else data.draw(st.integers(1, 2))
    chosen = data.draw(
        st.lists(st.sampled_from(names), min_size=count, max_size=count, unique=True)
    )
    text = " + ".join(chosen) + data.draw(st.sampled_from(["", " +1", " -2 wounds"]))
    parsed = parse(system, text, sheet=sheet)
    assembled = assemble(system, sheet, parsed.request, {})
    assert [line["label"] for line in assembled.breakdown[: len(chosen)]] == chosen


def test_vs_becomes_a_cofd_resistance_or_the_other_side():
    from rolls.systems.rollbox import Target, with_versus

    theo = Target("t-1", "Theo", {"attributes": {"Composure": 3, "Resolve": 2}})
    parsed = parse("cofd", "Wits + Occult vs Composure + Resolve", sheet=COFD)
    # A resistance is its own field (the server reads the target's sheet; it is not a capped
    # modifier group: README, Resistance).
    assert with_versus("cofd", parsed, theo) == {
        "traits": ["Wits", "Occult"],
        "resistance": {"traits": ["Composure", "Resolve"], "character": "t-1"},
    }
    with pytest.raises(RollBoxError) as caught:
        with_versus("cofd", parsed, None)
    assert caught.value.word == "vs"
    opposed = parse("storyteller", "Dexterity + Brawl vs Dexterity + Dodge")
    assert with_versus("storyteller", opposed, theo)["against"] == {
        "traits": ["Dexterity", "Dodge"],
        "character": "t-1",
    }
    assert with_versus("cofd", parse("cofd", "Wits vs 2"), None)["resistance"] == {"value": 2}


@pytest.mark.parametrize("word", ["willpower", "WP", "воля", "Сила воли"])
def test_the_willpower_word_in_both_languages(word):
    assert parse("cofd", f"Wits + Occult {word}").request["willpower"] is True
    assert parse("storyteller", f"{word} Dexterity + Brawl").request["willpower"] is True
    # After «vs» in CofD: the resisting character's Willpower (+2 to the trait).
    from rolls.systems.rollbox import Target, with_versus

    theo = Target("t-1", "Theo", {"attributes": {"Composure": 3}})
    parsed = parse("cofd", f"Wits vs Composure {word}")
    assert "willpower" not in parsed.request
    assert with_versus("cofd", parsed, theo)["resistance"] == {
        "traits": ["Composure"],
        "character": "t-1",
        "willpower": True,
    }


@pytest.mark.parametrize(
    ("system", "text", "word"),
    [
        ("nice_damnit", "Firearms wp", "wp"),  # no Willpower (AGE's is an ability)
        ("cofd", "Wits vs Composure wp wp", "wp"),
        ("storyteller", "Dexterity vs Dodge wp", "wp"),
    ],
)
def test_willpower_words_out_of_place_point_at_the_word(system, text, word):
    with pytest.raises(RollBoxError) as caught:
        parse(system, text)
    assert caught.value.word == word
