# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The Fast DDS profile of ``dodo hop``'s private runs: every socket on 127.0.0.1, data by SHM.

With ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` Fast DDS discovers only participants of this
host, but rmw_fastrtps_cpp still gives every participant a UDP transport on all interfaces: its
discovery and data ports are bound on 0.0.0.0 and accept datagrams from the network (measured
with ``ss -lunp`` during a ``dodo hop`` run; docs/running.md, "What the run's DDS exposes").
:func:`loopback_only` gives the run's nodes ``config/fastdds_loopback.xml`` instead (UDPv4
allowed on 127.0.0.1 only, shared memory, unicast discovery on loopback, no multicast) and
``ROS_AUTOMATIC_DISCOVERY_RANGE=SYSTEM_DEFAULT``, so that rmw_fastrtps_cpp adds nothing to the
profile. Tools started with ``LOCALHOST`` (``ros2 topic echo``) still see the run, and the run
sees them. No rclpy.
"""
from __future__ import annotations

from dodo_sim.paths import share_dir

#: The profile, in the package's share directory (installed by setup.py).
PROFILE_FILE = ('config', 'fastdds_loopback.xml')
#: Environment variables naming a Fast DDS XML profiles file (Fast DDS 3 and its older name).
PROFILE_VARIABLES = ('FASTDDS_DEFAULT_PROFILES_FILE', 'FASTRTPS_DEFAULT_PROFILES_FILE')
#: The RMW this profile is written for (an unset RMW_IMPLEMENTATION means this one).
FAST_DDS_RMW = 'rmw_fastrtps_cpp'


def loopback_only(env: dict) -> bool:
    """
    Make the nodes started with ``env`` bind 127.0.0.1 only; return whether it was done.

    Done for localhost discovery (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, ``dodo hop``'s
    default) on Fast DDS when the user names no profiles file of their own and does not force
    the deprecated ``ROS_LOCALHOST_ONLY=1`` (which brings back the UDP transport on every
    interface); any other choice of the user's is left alone.
    """
    if env.get('ROS_AUTOMATIC_DISCOVERY_RANGE') != 'LOCALHOST':
        return False
    if env.get('RMW_IMPLEMENTATION') not in (None, '', FAST_DDS_RMW):
        return False
    if any(env.get(name) for name in PROFILE_VARIABLES) or env.get('ROS_LOCALHOST_ONLY') == '1':
        return False
    env['FASTDDS_DEFAULT_PROFILES_FILE'] = str(share_dir().joinpath(*PROFILE_FILE))
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'SYSTEM_DEFAULT'
    return True


__all__ = ['FAST_DDS_RMW', 'PROFILE_FILE', 'PROFILE_VARIABLES', 'loopback_only']
