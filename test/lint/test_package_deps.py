# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Every third-party module the package imports is declared for ``rosdep install``.

The imports are read from the code itself (``ast``, function-local imports included), so a new
dependency that is not declared in package.xml fails here, as ``tqdm`` (the progress line) and
Pillow (the GIF of ``dodo plot``) once did. Modules with no rosdep key in rosdistro are listed
in :data:`PIP_ONLY` and must be named in package.xml's comments and in the README's pip line.
"""
import ast
import re
import sys

from conftest import REPO
import pytest

pytestmark = pytest.mark.linter

# imported top-level module -> the rosdep key that provides it (rosdistro's rosdep/*.yaml or a
# ROS package name); checked against rosdistro at ros/rosdistro 8468e88 (docs/lint.md)
ROSDEP_KEY = {
    'ament_index_python': 'ament_index_python',
    'builtin_interfaces': 'builtin_interfaces',
    'can': 'python3-can',
    'cantools': 'python3-cantools-pip',
    'diagnostic_msgs': 'diagnostic_msgs',
    'geometry_msgs': 'geometry_msgs',
    'launch': 'launch',
    'launch_ros': 'launch_ros',
    'lz4': 'mcap-ros2-support',          # a dependency of mcap (bounded chunk decompression)
    'matplotlib': 'python3-matplotlib',
    'mcap': 'mcap-ros2-support',
    'nav_msgs': 'nav_msgs',
    'numba': 'python3-numba',
    'numpy': 'python3-numpy',
    'PIL': 'python3-pil',
    'pinocchio': 'pinocchio',
    'rcl_interfaces': 'rcl_interfaces',
    'rclpy': 'rclpy',
    'rosbags': 'python3-rosbags-pip',
    'rosgraph_msgs': 'rosgraph_msgs',
    'scipy': 'python3-scipy',
    'sensor_msgs': 'sensor_msgs',
    'simulation_interfaces': 'simulation_interfaces',
    'std_msgs': 'std_msgs',
    'std_srvs': 'std_srvs',
    'tf2_msgs': 'tf2_msgs',
    'tqdm': 'python3-tqdm',
    'visualization_msgs': 'visualization_msgs',
    'xacro': 'xacro',
    'yaml': 'python3-yaml',
    'zstandard': 'mcap-ros2-support',    # a dependency of mcap (bounded chunk decompression)
}
# a fallback whose primary is a declared key: the ffmpeg binary on PATH (key ffmpeg)
FALLBACK_OF = {'imageio_ffmpeg': 'ffmpeg'}
# no rosdep key exists (pip on a ROS install): PyPI name per module; sqlalchemy comes with optuna
PIP_ONLY = {'optuna': 'optuna', 'cmaes': 'cmaes', 'foxglove': 'foxglove-sdk',
            'sqlalchemy': 'optuna'}
SOURCES = ('dodo_sim', 'dodo_control', 'launch')


def _imports(folders) -> dict[str, set[str]]:
    """Return the top-level module of each absolute import under ``folders``, with its files."""
    found: dict[str, set[str]] = {}
    for folder in folders:
        for path in (REPO / folder).rglob('*.py'):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    found.setdefault(name.split('.')[0], set()).add(str(path.relative_to(REPO)))
    return found


def _imported_modules() -> dict[str, set[str]]:
    """Return each imported third-party module with the files that import it."""
    return {module: files for module, files in _imports(SOURCES).items()
            if module not in sys.stdlib_module_names and module not in SOURCES[:2]}


def _declared_keys() -> set[str]:
    text = (REPO / 'package.xml').read_text()
    text = re.sub(r'<!--.*?-->', '', text, flags=re.S)
    return set(re.findall(r'<(?:exec_|build_|)depend>([^<]+)</', text))


def test_every_imported_module_has_a_declared_rosdep_key_or_is_listed_pip_only():
    modules = _imported_modules()
    unknown = sorted(set(modules) - set(ROSDEP_KEY) - set(FALLBACK_OF) - set(PIP_ONLY))
    assert not unknown, {m: sorted(modules[m]) for m in unknown}
    declared = _declared_keys()
    missing = {m: ROSDEP_KEY[m] for m in modules if m in ROSDEP_KEY
               and ROSDEP_KEY[m] not in declared}
    missing.update({m: FALLBACK_OF[m] for m in modules if m in FALLBACK_OF
                    and FALLBACK_OF[m] not in declared})
    assert not missing, f'imported but not declared in package.xml: {missing}'


def test_pip_only_modules_are_named_in_package_xml_and_the_readme_pip_line():
    modules = _imported_modules()
    package_xml = (REPO / 'package.xml').read_text()
    readme = (REPO / 'README.md').read_text()
    pip_lines = [line for line in readme.splitlines() if line.startswith('pip install')]
    assert pip_lines, 'the README has no "pip install" line for the pip-only modules'
    for module in sorted(set(modules) & set(PIP_ONLY)):
        name = PIP_ONLY[module]
        assert name in package_xml, f'{name} ({module}) is not named in package.xml'
        assert any(name in line.split() for line in pip_lines), \
            f'{name} ({module}) is not on the README pip line {pip_lines}'


def test_the_controllers_and_the_physics_import_no_ros():
    """
    The cores import no rclpy and no message package (docs/architecture.md).

    Every node lives in dodo_sim/ros/ (the controller node included), so dodo_control/,
    dodo_sim/physics/ and dodo_sim/hardware/ run without a ROS client library.
    """
    ros_modules = {'rclpy', 'launch', 'launch_ros'} | {m for m in ROSDEP_KEY if m.endswith(
        ('_msgs', '_interfaces'))}
    imports = _imports(('dodo_control', 'dodo_sim/physics', 'dodo_sim/hardware'))
    offenders = {module: sorted(files) for module, files in imports.items()
                 if module in ros_modules}
    assert not offenders, offenders
