"""Sheet templates and sheet validation: every problem at once, and no rating hidden in a name."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rolls.systems import SYSTEM_IDS
from rolls.systems.errors import SheetErrors
from rolls.systems.sheets import TEMPLATES, listed_trait, looks_rated
from rolls.systems.traits import validate_resources, validate_traits


def test_each_system_has_a_template_with_its_traits():
    assert set(TEMPLATES) == set(SYSTEM_IDS)
    cofd = TEMPLATES["cofd"]
    assert len(cofd.group("attributes").traits) == 9
    assert len(cofd.group("skills").traits) == 24
    assert {s.key for s in cofd.group("skills").sections} == {"mental", "physical", "social"}
    assert len(TEMPLATES["storyteller"].group("attributes").traits) == 9
    assert len(TEMPLATES["storyteller"].group("abilities").traits) == 30
    assert [r.key for r in TEMPLATES["storyteller"].resources] == ["willpower"]
    assert len(TEMPLATES["age"].group("abilities").traits) == 9
    assert TEMPLATES["age"].group("focuses").of == "abilities"
    assert not TEMPLATES["nice_damnit"].group("attributes").rollable
    assert len(TEMPLATES["nice_damnit"].group("attributes").traits) == 12


@pytest.mark.parametrize("system", SYSTEM_IDS)
def test_a_sheet_of_every_listed_trait_at_its_default_is_valid(system):
    template = TEMPLATES[system]
    sheet = {
        g.key: {t.key: g.default for t in g.traits} for g in template.groups if g.kind != "chips"
    }
    assert validate_traits(system, sheet) == {
        **sheet,
        **{g.key: {} for g in template.groups if g.kind == "chips"},
    }


def test_any_spelling_of_a_listed_trait_is_stored_under_its_key():
    clean = validate_traits(
        "cofd",
        {
            "attributes": {"wits": 3, "Сила": 2},
            "skills": {"драка": 3, "animal  ken": 1},
            "specialties": {"Brawl": ["Boxing", "boxing"]},
        },
    )
    assert clean == {
        "attributes": {"Wits": 3, "Strength": 2},
        "skills": {"Brawl": 3, "Animal Ken": 1},
        "specialties": {"Brawl": ["Boxing"]},
    }
    assert listed_trait("age", "сила воли") == ("abilities", "Willpower")


def test_every_bad_field_is_reported_at_once():
    with pytest.raises(SheetErrors) as caught:
        validate_traits(
            "cofd",
            {
                "attributes": {"Wits": 0, "Luck": 3},
                "skills": {"Brawl 3 (Boxing)": 0, "Occult": "two", "Wits": 2},
                "specialties": {"Telepathy": ["Minds"]},
                "merits": {},
            },
        )
    errors = caught.value.errors
    assert set(errors) == {
        "traits.attributes.Wits",
        "traits.attributes.Luck",
        "traits.skills.Brawl 3 (Boxing)",
        "traits.skills.Occult",
        "traits.skills.Wits",
        "traits.specialties.Telepathy",
        "traits.merits",
    }
    boxing = errors["traits.skills.Brawl 3 (Boxing)"].message
    assert "Brawl" in boxing and "3" in boxing and "Boxing" in boxing
    assert "from 1 to 10" in errors["traits.attributes.Wits"].message


@pytest.mark.parametrize(
    ("system", "group", "name"),
    [
        ("cofd", "skills", "Brawl 3 (Boxing)"),
        ("d6pool", "abilities", "Shooting 4"),
        ("d6pool", "abilities", "Shooting: 4"),
        ("storyteller", "abilities", "Lockpicking=4"),
        ("nice_damnit", "areas", "Riding 2"),
        ("d6pool", "abilities", "Fists+Feet"),
        ("age", "focuses", "Dexterity"),
    ],
)
def test_a_rating_or_a_joiner_in_a_name_is_refused(system, group, name):
    sheet = {group: {name: 0 if group != "focuses" else ["x"]}}
    if group == "focuses":
        sheet = {"focuses": {"Dexterity": ["Acrobatics 2"]}}
    with pytest.raises(SheetErrors):
        validate_traits(system, sheet)


@given(name=st.text(min_size=1, max_size=20), value=st.integers(-20, 20))
@settings(max_examples=200, deadline=None)
def test_no_name_that_ends_in_its_rating_is_ever_stored(name, value):
    raw = f"{name} {value}"
    try:
        clean = validate_traits("d6pool", {"abilities": {raw: 1}})
    except SheetErrors:
        return
    assert all(looks_rated(stored) is None for stored in clean["abilities"])


def test_custom_names_in_open_groups_are_kept():
    clean = validate_traits(
        "storyteller", {"attributes": {"Physical": 2}, "abilities": {"Lockpicking": 4}}
    )
    assert clean["attributes"] == {"Physical": 2}


def test_starting_resources_are_capped_for_players():
    assert validate_resources("cofd", {"willpower": 5}, starting=True) == {
        "willpower": 5,
        "beats": 0,
    }
    with pytest.raises(SheetErrors) as caught:
        validate_resources("cofd", {"beats": 30, "willpower": 11, "xp": 1}, starting=True)
    assert set(caught.value.errors) == {
        "resources.beats",
        "resources.willpower",
        "resources.xp",
    }
    assert validate_resources("cofd", {"beats": 30})["beats"] == 30  # the GM, later


def test_a_trait_the_sheet_lacks_counts_as_zero_and_is_named_missing():
    from rolls.checks.assembly import assemble
    from rolls.systems.traits import sheet_for_roll

    sheet = {"attributes": {"Wits": 3}, "skills": {"Brawl": 2}}
    keys, filled, missing = sheet_for_roll("cofd", sheet, ["wits", "Оккультизм"])
    assert keys == ["Wits", "Occult"] and missing == ["Occult"]
    assert sheet == {"attributes": {"Wits": 3}, "skills": {"Brawl": 2}}  # not changed
    assembled = assemble("cofd", filled, {"traits": keys}, {})
    assert assembled.check["pool"] == 3
    assert [(line["label"], line["value"]) for line in assembled.breakdown] == [
        ("Wits", 3),
        ("Occult", 0),
    ]


def test_a_trait_the_system_does_not_have_is_refused():
    from rolls.systems.errors import RuleError
    from rolls.systems.traits import sheet_for_roll

    with pytest.raises(RuleError) as caught:
        sheet_for_roll("cofd", {}, ["Telepathy"])
    assert caught.value.field == "traits" and "Telepathy" in caught.value.message
    with pytest.raises(RuleError):
        sheet_for_roll("nice_damnit", {}, ["Charm"])  # the GM's attribute, never rolled
    # Open groups: a custom trait another sheet of the campaign has counts as 0 here.
    keys, filled, missing = sheet_for_roll(
        "d6pool", {}, ["Lasso"], also_known={"Lasso": "abilities"}
    )
    assert keys == ["Lasso"] and missing == ["Lasso"] and filled["abilities"]["Lasso"] == 0


def test_trait_changes_name_each_changed_trait():
    from rolls.systems.traits import trait_changes

    before = {"skills": {"Brawl": 2, "Occult": 1}}
    after = {"skills": {"Brawl": 3}, "specialties": {"Brawl": ["Boxing"]}}
    assert trait_changes(before, after) == [
        {"group": "skills", "trait": "Brawl", "from": 2, "to": 3},
        {"group": "skills", "trait": "Occult", "from": 1, "to": None},
        {"group": "specialties", "trait": "Brawl", "from": None, "to": ["Boxing"]},
    ]


def test_the_template_document_is_in_the_asked_language():
    from rolls.systems.sheets import template_document

    ru = template_document("cofd", "ru")
    skills = next(g for g in ru["groups"] if g["key"] == "skills")
    occult = next(t for t in skills["traits"] if t["key"] == "Occult")
    assert occult["label"] == "Оккультизм" and occult["section"] == "mental"
    assert template_document("cofd", "en")["groups"][0]["traits"][0]["label"] == "Intelligence"
    assert ru["resources"][0] == {
        "key": "willpower",
        "min": 0,
        "max": 10,
        "default": 0,
        "start_max": 10,
    }
