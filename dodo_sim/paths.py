# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Where the package's shared files (URDF, config, launch, rviz) live.

Works from a source checkout / editable install (files next to the package), from a pip install
(``<prefix>/share/dodo_sim``) and from a colcon install (ament index).
"""
from __future__ import annotations

import os
from pathlib import Path
import sys

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


#: URI prefix of a file in a package's share directory (the ROS convention of URDF meshes).
PACKAGE_URI = 'package://'


def resolve_package_uri(path_or_uri: str) -> str:
    """
    ``package://dodo_sim/<rel>`` -> the file ``<rel>`` in dodo_sim's share directory.

    A URI of any other package is resolved through the ament index (a ROS install). Anything else
    is returned unchanged (a path, or URDF XML). ValueError names a URI whose package cannot be
    found.
    """
    text = str(path_or_uri)
    if not text.startswith(PACKAGE_URI):
        return text
    package, _, rel = text[len(PACKAGE_URI):].partition('/')
    if package == PACKAGE_NAME:
        return str(share_dir() / rel)
    try:
        from ament_index_python.packages import get_package_share_directory
        return str(Path(get_package_share_directory(package)) / rel)
    except (ImportError, LookupError, OSError, ValueError):
        raise ValueError(f'{text}: package {package!r} not found (only {PACKAGE_NAME} '
                         f'without a ROS install)') from None
