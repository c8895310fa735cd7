# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The layering docs/architecture.md states, read from the imports (``ast``: nothing is run).

Every import counts, also one inside a function ("import at use" hides a cycle, it does not
remove it), as ``../shared/tools/layout_report.py`` counts them.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ('dodo_sim', 'dodo_control')


def _modules() -> dict:
    found = {}
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob('*.py')):
            parts = list(path.relative_to(REPO).with_suffix('').parts)
            if parts[-1] == '__init__':
                parts = parts[:-1]
            found['.'.join(parts)] = path
    return found


MODULES = _modules()


def _imports(name: str, path: Path) -> set:
    """Return the package modules ``name`` imports (anywhere in the file)."""
    tree = ast.parse(path.read_text(encoding='utf-8'), str(path))
    package = name if path.name == '__init__.py' else name.rpartition('.')[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            candidates = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                parts = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join(parts + ([base] if base else []))
            candidates = [base] + [f'{base}.{a.name}' for a in node.names]
        else:
            continue
        for candidate in candidates:
            if candidate.split('.')[0] == 'rclpy':
                out.add('rclpy')
                continue
            while candidate and candidate not in MODULES:
                candidate = candidate.rpartition('.')[0]
            if candidate and candidate != name:
                out.add(candidate)
    return out


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _cycles(graph: dict) -> list:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_the_finder_sees_the_imports_it_judges():
    # the rules below are only as good as the graph: a known edge of each kind must be in it
    assert 'dodo_sim.physics.urdf_check' in GRAPH['dodo_sim.physics.robot']
    assert 'dodo_control.registry' in GRAPH['dodo_sim.ros.node_config']
    assert 'rclpy' in GRAPH['dodo_sim.ros.simulator_node']
    assert len(MODULES) > 150


def test_no_import_cycles():
    # a package __init__ importing its own submodules is wiring, not a cycle
    graph = {name: {t for t in targets if not (MODULES[name].name == '__init__.py'
                                               and t.startswith(name + '.'))}
             for name, targets in GRAPH.items()}
    assert _cycles(graph) == []


@pytest.mark.parametrize('layer, never', [
    # "Physics knows nothing about ROS or controllers" (docs/architecture.md)
    ('dodo_sim.physics', ('dodo_sim.ros', 'dodo_sim.tools', 'dodo_sim.hardware', 'dodo_control',
                          'rclpy')),
    # the control core is pure: no node, no CLI, no rclpy (docs/architecture.md)
    ('dodo_control', ('dodo_sim.tools', 'dodo_sim.hardware', 'rclpy')),
])
def test_a_layer_never_imports_what_sits_above_it(layer, never):
    found = sorted((name, target) for name, targets in GRAPH.items()
                   if name == layer or name.startswith(layer + '.')
                   for target in targets
                   if any(target == n or target.startswith(n + '.') for n in never))
    assert found == []


def test_exit_codes_have_one_table():
    # dodo_sim/ros/runtime.py holds the codes every node and command shares; the two programs
    # with codes of their own define only those (docs/layout.md, "Single homes")
    homes = {'dodo_sim.ros.runtime', 'dodo_sim.hardware.driver', 'dodo_sim.tools.optimize_storage'}
    defined = {}
    for name, path in MODULES.items():
        for node in ast.parse(path.read_text(encoding='utf-8')).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                for n in names:
                    if isinstance(n, ast.Name) and n.id.startswith('EXIT_'):
                        defined.setdefault(n.id, []).append(name)
    assert {m for modules in defined.values() for m in modules} <= homes, defined
    assert all(len(modules) == 1 for modules in defined.values()), defined
