# ruff: noqa: RUF001 (Russian labels are Cyrillic on purpose)
"""Sheet templates per system: the trait groups, the traits each lists, their ranges, resources.

Pure data plus name lookup (no Django). A trait's ``key`` is what a sheet stores and a roll names
(the English name); ``ru`` is its Russian label; ``aliases`` are further spellings a player may
type. Writes and the roll box normalise any of these to the key (``trait_key``).

Closed groups accept only their listed traits (CofD's 9 Attributes and 24 Skills, AGE's 9
abilities); open groups list suggestions and take custom names too (the seeds of the d6 pool
and 2d10 systems name no fixed list; the Storyteller seed merges Attributes into Physical/
Social/Mental).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

NICE_DAMNIT_RANKS: dict[str, int] = {
    "perk": 0,
    "novice_1": 1,
    "novice_2": 2,
    "pro_1": 3,
    "pro_2": 4,
    "pro_3": 5,
    "master_1": 6,
    "master_2": 7,
    "master_3": 8,
}


@dataclass(frozen=True)
class Trait:
    key: str
    ru: str
    section: str = ""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    key: str
    en: str
    ru: str


@dataclass(frozen=True)
class GroupTemplate:
    key: str
    kind: str  # dots | number | rank | chips
    low: int | None = None
    high: int | None = None
    default: int | str | None = None
    dots: int | None = None
    rollable: bool = True
    open: bool = False
    of: str | None = None  # chips: the group whose traits they hang on
    sections: tuple[Section, ...] = ()
    traits: tuple[Trait, ...] = ()


@dataclass(frozen=True)
class Resource:
    key: str
    low: int = 0
    high: int = 999
    default: int = 0
    start_max: int = 999  # the most a player may give their own character at creation


@dataclass(frozen=True)
class SheetTemplate:
    system: str
    groups: tuple[GroupTemplate, ...]
    resources: tuple[Resource, ...] = ()
    _index: dict[str, tuple[str, str]] = field(default_factory=dict, compare=False, repr=False)

    def group(self, key: str) -> GroupTemplate | None:
        return next((g for g in self.groups if g.key == key), None)

    def rollable_groups(self) -> tuple[str, ...]:
        return tuple(g.key for g in self.groups if g.rollable and g.kind != "chips")


def _traits(section: str, *rows: tuple[str, ...]) -> tuple[Trait, ...]:
    return tuple(Trait(row[0], row[1], section, tuple(row[2:])) for row in rows)


MENTAL, PHYSICAL, SOCIAL = (
    Section("mental", "Mental", "Ментальные"),
    Section("physical", "Physical", "Физические"),
    Section("social", "Social", "Социальные"),
)

_COFD = SheetTemplate(
    "cofd",
    (
        GroupTemplate(
            "attributes",
            "dots",
            1,
            10,
            default=1,
            dots=5,
            sections=(MENTAL, PHYSICAL, SOCIAL),
            traits=_traits(
                "mental",
                ("Intelligence", "Интеллект", "int"),
                ("Wits", "Сообразительность", "Смекалка"),
                ("Resolve", "Решимость", "Решительность"),
            )
            + _traits(
                "physical",
                ("Strength", "Сила", "str"),
                ("Dexterity", "Ловкость", "dex"),
                ("Stamina", "Выносливость", "sta"),
            )
            + _traits(
                "social",
                ("Presence", "Внушительность", "Присутствие", "Харизма"),
                ("Manipulation", "Манипулирование", "Манипуляция"),
                ("Composure", "Самообладание"),
            ),
        ),
        GroupTemplate(
            "skills",
            "dots",
            0,
            10,
            default=0,
            dots=5,
            sections=(MENTAL, PHYSICAL, SOCIAL),
            traits=_traits(
                "mental",
                ("Academics", "Гуманитарные науки", "Академические знания"),
                ("Computer", "Компьютеры", "Компьютер"),
                ("Crafts", "Ремесло"),
                ("Investigation", "Расследование"),
                ("Medicine", "Медицина"),
                ("Occult", "Оккультизм"),
                ("Politics", "Политика"),
                ("Science", "Естественные науки", "Наука"),
            )
            + _traits(
                "physical",
                ("Athletics", "Атлетика"),
                ("Brawl", "Драка", "Рукопашный бой"),
                ("Drive", "Вождение"),
                ("Firearms", "Огнестрельное оружие", "Стрельба"),
                ("Larceny", "Воровство"),
                ("Stealth", "Скрытность"),
                ("Survival", "Выживание"),
                ("Weaponry", "Холодное оружие", "Оружие ближнего боя"),
            )
            + _traits(
                "social",
                ("Animal Ken", "Обращение с животными"),
                ("Empathy", "Эмпатия"),
                ("Expression", "Самовыражение", "Выразительность"),
                ("Intimidation", "Запугивание"),
                ("Persuasion", "Убеждение"),
                ("Socialize", "Социализация"),
                ("Streetwise", "Знание улиц", "Уличное чутьё"),
                ("Subterfuge", "Обман"),
            ),
        ),
        GroupTemplate("specialties", "chips", of="skills", rollable=False, open=True),
    ),
    (Resource("willpower", 0, 10, 0, 10), Resource("beats", 0, 999, 0, 4)),
)

_STORYTELLER = SheetTemplate(
    "storyteller",
    (
        GroupTemplate(
            "attributes",
            "dots",
            0,
            10,
            default=1,
            dots=5,
            open=True,
            sections=(PHYSICAL, SOCIAL, MENTAL),
            traits=_traits(
                "physical",
                ("Strength", "Сила"),
                ("Dexterity", "Ловкость"),
                ("Stamina", "Выносливость"),
            )
            + _traits(
                "social",
                ("Charisma", "Обаяние", "Харизма"),
                ("Manipulation", "Манипулирование", "Манипуляция"),
                ("Appearance", "Внешность"),
            )
            + _traits(
                "mental",
                ("Perception", "Восприятие"),
                ("Intelligence", "Интеллект"),
                ("Wits", "Сообразительность", "Смекалка"),
            ),
        ),
        GroupTemplate(
            "abilities",
            "dots",
            0,
            10,
            default=0,
            dots=5,
            open=True,
            sections=(
                Section("talents", "Talents", "Таланты"),
                Section("skills", "Skills", "Навыки"),
                Section("knowledges", "Knowledges", "Познания"),
            ),
            traits=_traits(
                "talents",
                ("Alertness", "Бдительность", "Внимательность"),
                ("Athletics", "Атлетика"),
                ("Brawl", "Рукопашный бой", "Драка"),
                ("Dodge", "Уклонение"),
                ("Empathy", "Эмпатия"),
                ("Expression", "Самовыражение"),
                ("Intimidation", "Запугивание"),
                ("Leadership", "Лидерство"),
                ("Streetwise", "Знание улиц"),
                ("Subterfuge", "Хитрость", "Обман"),
            )
            + _traits(
                "skills",
                ("Animal Ken", "Обращение с животными"),
                ("Crafts", "Ремесло"),
                ("Drive", "Вождение"),
                ("Etiquette", "Этикет"),
                ("Firearms", "Огнестрельное оружие", "Стрельба"),
                ("Melee", "Фехтование", "Ближний бой"),
                ("Performance", "Исполнение"),
                ("Security", "Безопасность", "Взлом"),
                ("Stealth", "Скрытность"),
                ("Survival", "Выживание"),
            )
            + _traits(
                "knowledges",
                ("Academics", "Гуманитарные науки"),
                ("Computer", "Компьютеры"),
                ("Finance", "Финансы"),
                ("Investigation", "Расследование"),
                ("Law", "Право", "Закон"),
                ("Linguistics", "Лингвистика"),
                ("Medicine", "Медицина"),
                ("Occult", "Оккультизм"),
                ("Politics", "Политика"),
                ("Science", "Наука"),
            ),
        ),
    ),
    (Resource("willpower", 0, 10, 0, 10),),
)

_AGE_ABILITIES = (
    ("Accuracy", "Точность"),
    ("Communication", "Общение"),
    ("Constitution", "Телосложение"),
    ("Dexterity", "Ловкость"),
    ("Fighting", "Борьба", "Бой"),
    ("Intelligence", "Интеллект"),
    ("Perception", "Восприятие"),
    ("Strength", "Сила"),
    ("Willpower", "Сила воли", "Воля"),
)
# Suggested focuses per ability (The Expanse RPG core); chips take custom names too.
_AGE_FOCUSES: dict[str, tuple[tuple[str, str], ...]] = {
    "Accuracy": (
        ("Bows", "Луки"),
        ("Gunnery", "Артиллерия"),
        ("Pistols", "Пистолеты"),
        ("Rifles", "Винтовки"),
        ("Throwing", "Метание"),
    ),
    "Communication": (
        ("Bargaining", "Торг"),
        ("Deception", "Обман"),
        ("Etiquette", "Этикет"),
        ("Expression", "Выразительность"),
        ("Gambling", "Азартные игры"),
        ("Leadership", "Лидерство"),
        ("Performing", "Выступление"),
        ("Persuasion", "Убеждение"),
        ("Seduction", "Соблазнение"),
    ),
    "Constitution": (
        ("Running", "Бег"),
        ("Stamina", "Выносливость"),
        ("Swimming", "Плавание"),
        ("Tolerance", "Стойкость"),
    ),
    "Dexterity": (
        ("Acrobatics", "Акробатика"),
        ("Crafting", "Ремесло"),
        ("Driving", "Вождение"),
        ("Free-fall", "Невесомость"),
        ("Initiative", "Инициатива"),
        ("Piloting", "Пилотирование"),
        ("Sleight of Hand", "Ловкость рук"),
        ("Stealth", "Скрытность"),
    ),
    "Fighting": (
        ("Brawling", "Драка"),
        ("Grappling", "Захваты"),
        ("Heavy Weapons", "Тяжёлое оружие"),
        ("Light Weapons", "Лёгкое оружие"),
    ),
    "Intelligence": (
        ("Art", "Искусство"),
        ("Business", "Бизнес"),
        ("Cryptography", "Криптография"),
        ("Current Affairs", "Текущие события"),
        ("Engineering", "Инженерия"),
        ("Evaluation", "Оценка"),
        ("Law", "Право"),
        ("Medicine", "Медицина"),
        ("Navigation", "Навигация"),
        ("Research", "Исследования"),
        ("Science", "Наука"),
        ("Security", "Безопасность"),
        ("Tactics", "Тактика"),
        ("Technology", "Технологии"),
    ),
    "Perception": (
        ("Empathy", "Эмпатия"),
        ("Hearing", "Слух"),
        ("Intuition", "Интуиция"),
        ("Searching", "Поиск"),
        ("Seeing", "Зрение"),
        ("Survival", "Выживание"),
        ("Tracking", "Выслеживание"),
    ),
    "Strength": (
        ("Climbing", "Лазание"),
        ("Intimidation", "Запугивание"),
        ("Jumping", "Прыжки"),
        ("Might", "Мощь"),
    ),
    "Willpower": (
        ("Courage", "Храбрость"),
        ("Faith", "Вера"),
        ("Self-Discipline", "Самодисциплина"),
    ),
}

_AGE = SheetTemplate(
    "age",
    (
        GroupTemplate(
            "abilities",
            "number",
            -5,
            15,
            default=0,
            traits=tuple(Trait(row[0], row[1], "", tuple(row[2:])) for row in _AGE_ABILITIES),
        ),
        GroupTemplate(
            "focuses",
            "chips",
            of="abilities",
            rollable=False,
            open=True,
            sections=tuple(Section(key, key, ru) for key, ru, *_ in _AGE_ABILITIES),
            traits=tuple(
                Trait(key, ru, ability)
                for ability, focuses in _AGE_FOCUSES.items()
                for key, ru in focuses
            ),
        ),
    ),
    (Resource("fortune", 0, 999, 0, 50),),
)

_D6POOL = SheetTemplate(
    "d6pool",
    (
        GroupTemplate(
            "attributes",
            "number",
            0,
            10,
            default=1,
            open=True,
            traits=_traits("", ("Reaction", "Реакция"), ("Strength", "Сила"), ("Wits", "Смекалка")),
        ),
        GroupTemplate(
            "abilities",
            "number",
            0,
            10,
            default=0,
            open=True,
            traits=_traits(
                "",
                ("Shooting", "Стрельба"),
                ("Swimming", "Плавание"),
                ("Persuasion", "Убеждение"),
                ("Riding", "Верховая езда"),
                ("Medicine", "Медицина"),
                ("Gambling", "Азартные игры"),
            ),
        ),
    ),
)

_NICE_DAMNIT = SheetTemplate(
    "nice_damnit",
    (
        GroupTemplate(
            "areas",
            "number",
            0,
            10,
            default=0,
            open=True,
            traits=_traits(
                "",
                ("Athletics", "Атлетика"),
                ("Firearms", "Огнестрельное оружие"),
                ("Riding", "Верховая езда"),
                ("Survival", "Выживание"),
            ),
        ),
        GroupTemplate(
            "skills",
            "rank",
            default="novice_1",
            open=True,
            traits=_traits(
                "",
                ("Running", "Бег"),
                ("Snap shooting", "Стрельба навскидку"),
                ("First aid", "Первая помощь"),
                ("Quick draw", "Мгновенное выхватывание"),
                ("Rapid fire", "Скоростная стрельба"),
                ("Shooting from horseback", "Стрельба с лошади"),
                ("Tracking", "Выслеживание"),
            ),
        ),
        # The seed's Attributes are the GM's: modifiers for their rolls and comparisons between
        # characters; they are never added to a player's 2d10.
        GroupTemplate(
            "attributes",
            "number",
            0,
            10,
            default=0,
            rollable=False,
            sections=(
                Section("body", "Body", "Атрибуты тела"),
                Section("personality", "Personality", "Атрибуты личности"),
            ),
            traits=_traits(
                "body",
                ("Agility", "Ловкость"),
                ("Strength", "Сила"),
                ("Marksmanship", "Меткость"),
                ("Endurance", "Выносливость"),
                ("Speed", "Скорость"),
                ("Vitality", "Живучесть"),
            )
            + _traits(
                "personality",
                ("Awareness", "Внимание"),
                ("Intellect", "Интеллект"),
                ("Charm", "Обаяние"),
                ("Temper", "Характер"),
                ("Instinct", "Чутьё", "Чутье"),
                ("Experience", "Жизненный опыт"),
            ),
        ),
    ),
)

TEMPLATES: dict[str, SheetTemplate] = {
    t.system: t for t in (_D6POOL, _STORYTELLER, _NICE_DAMNIT, _AGE, _COFD)
}


def fold(name: str) -> str:
    """The form names are compared in: case-, ё- and space-insensitive."""
    return " ".join(name.casefold().replace("ё", "е").split())


def _index(template: SheetTemplate) -> dict[str, tuple[str, str]]:
    """fold(spelling) → (group, key) for the listed traits of non-chip groups."""
    if not template._index:
        for group in template.groups:
            if group.kind == "chips":
                continue
            for trait in group.traits:
                for spelling in (trait.key, trait.ru, *trait.aliases):
                    template._index.setdefault(fold(spelling), (group.key, trait.key))
    return template._index


def template_for(system_id: str) -> SheetTemplate | None:
    return TEMPLATES.get(system_id)


def listed_trait(system_id: str, name: str) -> tuple[str, str] | None:
    """(group, key) of a trait the system's template lists under any spelling, else None."""
    template = TEMPLATES.get(system_id)
    return _index(template).get(fold(name)) if template and isinstance(name, str) else None


def trait_labels(system_id: str) -> dict[str, str]:
    """key → Russian label, for every listed trait and suggested chip."""
    template = TEMPLATES[system_id]
    return {trait.key: trait.ru for group in template.groups for trait in group.traits}


# A custom trait name must not look like a rating or a specialty: "Brawl 3 (Boxing)" is the
# skill Brawl at 3 dots with the specialty Boxing, not a skill of that name. "+" joins traits in
# the roll box, so it cannot be part of a name either.
_RATED = re.compile(r"^(?P<name>.*?)[\s:=]+(?P<value>[-+]?\d+)\s*(?:\((?P<extra>[^()]*)\))?$")
FORBIDDEN_CHARACTERS = set("+()[]:=@#")


def looks_rated(name: str) -> tuple[str, int, list[str]] | None:
    """``"Brawl 3 (Boxing)"`` → ``("Brawl", 3, ["Boxing"])``; None if the name is a plain name."""
    match = _RATED.match(name.strip())
    if not match or not match.group("name").strip():
        return None
    extras = [x.strip() for x in (match.group("extra") or "").split(",") if x.strip()]
    return match.group("name").strip(), int(match.group("value")), extras


def template_document(system_id: str, language: str = "en") -> dict:
    """The template as the pages and the API deliver it (docs: /work/contract/sheets.md); the
    server adds the group and resource labels from its translations."""
    template = TEMPLATES[system_id]
    russian = language.startswith("ru")

    def section(s: Section) -> dict:
        return {"key": s.key, "label": s.ru if russian else s.en}

    def trait(t: Trait) -> dict:
        return {
            "key": t.key,
            "label": t.ru if russian else t.key,
            "section": t.section,
            "aliases": sorted({t.ru, *t.aliases} - {t.key}),
        }

    return {
        "system": system_id,
        "groups": [
            {
                "key": g.key,
                "kind": g.kind,
                "min": g.low,
                "max": g.high,
                "dots": g.dots,
                "default": g.default,
                "rollable": g.rollable,
                "open": g.open,
                "of": g.of,
                "sections": [section(s) for s in g.sections],
                "traits": [trait(t) for t in g.traits],
            }
            for g in template.groups
        ],
        "resources": [
            {
                "key": r.key,
                "min": r.low,
                "max": r.high,
                "default": r.default,
                "start_max": min(r.start_max, r.high),
            }
            for r in template.resources
        ],
        "rank_values": dict(NICE_DAMNIT_RANKS) if system_id == "nice_damnit" else None,
    }
