"""Where the package's shared files (URDF, config, launch, rviz) live.

Works from a source checkout / editable install (files next to the package), from a pip install
(``<prefix>/share/dodo_sim``) and from a colcon install (ament index).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE_NAME = 'dodo_sim'


def share_dir() -> Path:
    """Directory holding ``urdf/``, ``config/``, ``launch/`` of dodo_sim."""
    source_root = Path(__file__).resolve().parent.parent
    if (source_root / 'urdf' / 'hopper.urdf.xacro').is_file():
        return source_root
    prefix_share = Path(sys.prefix) / 'share' / PACKAGE_NAME
    if (prefix_share / 'urdf').is_dir():
        return prefix_share
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        candidate = Path(prefix) / 'share' / PACKAGE_NAME
        if prefix and (candidate / 'urdf').is_dir():
            return candidate
    raise FileNotFoundError(
        f'cannot find the {PACKAGE_NAME} share directory (looked next to the sources, in '
        f'{prefix_share} and in AMENT_PREFIX_PATH)')


def default_urdf_path() -> Path:
    return share_dir() / 'urdf' / 'hopper.urdf.xacro'


def default_params_path() -> Path:
    return share_dir() / 'config' / 'hop.yaml'
