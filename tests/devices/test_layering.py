"""controller/, vision/ and firmware_bridge/ never import the simulators in hil/ (issue 13): they reach
devices through controller.devices, and hil registers its simulators there by name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PRODUCTION = ("controller", "vision", "firmware_bridge")
HIL_NAME = re.compile(r"^hil(\.|:|$)")


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (they may name hil; code may not)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def hil_imports(path: Path) -> list[str]:
    """`file:line: what` for every import of hil in a module: import statements anywhere (inside
    functions too), and a module named as a string (importlib.import_module("hil.x"), an entry-point
    value "hil.x:y") outside docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    docs = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            names = [node.value]
        for name in names:
            if HIL_NAME.match(name):
                where = path.relative_to(REPO) if path.is_relative_to(REPO) else path.name
                found.append(f"{where}:{node.lineno}: {name}")
    return found


def test_no_production_module_imports_hil():
    modules = [p for pkg in PRODUCTION for p in sorted((REPO / pkg).rglob("*.py"))]
    assert len(modules) > 50  # the walk really found the packages
    found = [hit for p in modules for hit in hil_imports(p)]
    assert not found, "production code imports the simulators:\n" + "\n".join(found)


def test_the_check_sees_every_form_of_import(tmp_path):
    """The walker is not blind: each way of importing hil is caught, a docstring naming it is not."""
    probe = tmp_path / "probe.py"
    source = '''"""Docstring naming hil.camera is fine."""
import hil
import hil.scene as scene
from hil.camera import SimulatedCamera
def f():
    """hil.nfc named here is fine too."""
    from hil import panel_sim
    import importlib
    return importlib.import_module("hil.nfc")
ENTRY = "hil.devices:sim_camera"
OK = "while hilly"
'''
    probe.write_text(source, encoding="utf-8")
    found = hil_imports(probe)
    lines = sorted(int(hit.split(":")[1]) for hit in found)
    assert lines == [2, 3, 4, 7, 9, 10], found
