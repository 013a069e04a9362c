"""Imports go one way: eventlog ← campaign ← rolls.checks/reads/trust, accounts ← rolls.api/live,
pages; the pure rules (rolls.systems ← rolls.rules) and the log's chain and vocabulary import no
Django part. Read from the source (ast), so a lazy import inside a function counts too; an import
only for type hints (under `if TYPE_CHECKING:`) is not a dependency at run time and does not."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("eventlog", "campaign", "accounts", "rolls", "pages", "config", "webhooks")
# Pure Python: the standard library and each other only (the standalone verifier needs them).
PURE = ("rolls.systems", "rolls.rules", "rolls.luck", "eventlog.chain", "eventlog.event_types")
# Lower number = lower layer; a module may import its own layer or lower ones.
LAYERS = (
    (0, PURE),
    (1, ("eventlog",)),
    (2, ("campaign",)),
    (3, ("rolls.checks", "rolls.reads", "rolls.trust", "rolls.models", "rolls.management")),
    (3, ("rolls.words",)),
    (3, ("accounts",)),  # sign-in, tokens, throttles: used by the API, the socket and the pages
    (4, ("rolls.api", "rolls.live", "rolls.admin", "rolls.apps", "campaign.api")),
    (4, ("campaign.admin", "pages", "config", "webhooks")),
)
TYPE_CHECKING_TESTS = ("TYPE_CHECKING", "typing.TYPE_CHECKING")


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None  # (prefix length, layer): the longest prefix wins
    for number, prefixes in LAYERS:
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (
                best is None or len(prefix) > best[0]
            ):
                best = (len(prefix), number)
    return None if best is None else best[1]


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def project_modules() -> dict[str, set[str]]:
    """Each project module and the modules it imports (``from campaign import services`` is an
    import of campaign.services; ``from campaign.models import Event`` of campaign.models)."""
    paths = {
        _module_name(path): path
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
        if "migrations" not in path.parts
    }
    modules = {}
    for name, path in paths.items():
        imported = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {
            id(child)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and ast.unparse(node.test) in TYPE_CHECKING_TESTS
            for child in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    submodule = f"{node.module}.{alias.name}"
                    imported.add(submodule if submodule in paths else node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
        modules[name] = imported
    return modules


MODULES = project_modules()


def test_imports_never_go_up_a_layer():
    upward = sorted(
        (module, target)
        for module, imported in MODULES.items()
        for target in imported
        if (own := layer_of(module)) is not None
        and (theirs := layer_of(target)) is not None
        and theirs > own
    )
    assert upward == []


@pytest.mark.parametrize("module", sorted(m for m in MODULES if layer_of(m) == 0))
def test_the_pure_modules_import_only_the_standard_library_and_each_other(module):
    for target in MODULES[module]:
        top = target.split(".")[0]
        if top in PACKAGES:
            assert layer_of(target) == 0, f"{module} imports {target}"
        else:
            assert top not in ("django", "rest_framework", "channels"), f"{module} imports {target}"


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) is None and m not in ("rolls", "eventlog")] == []
