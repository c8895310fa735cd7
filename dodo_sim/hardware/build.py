# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Build the hardware driver from a :class:`~dodo_sim.hardware.config.DriverConfig` (no rclpy).

The :class:`~dodo_sim.hardware.driver.DriverCore` on the configured bus, or, with ``hardware:
emulated``, on a virtual bus with the physics and the emulated actuators and sensor board
(:class:`dodo_sim.hardware.emulator.Emulator`) behind it. The ``driver`` node
(:mod:`dodo_sim.ros.driver_node`), the tests and the bench use it.
"""
from __future__ import annotations

from dodo_sim.hardware.backend import open_bus
from dodo_sim.hardware.backends import make_backend
from dodo_sim.hardware.config import actuator_configs, DriverConfig, urdf_joints
from dodo_sim.hardware.driver import DriverCore


def build_driver(config: DriverConfig, urdf_xml: str):
    """
    (DriverCore, Emulator or None) for ``config`` (pure: no rclpy; the node and tests use it).

    ValueError names a bad parameter, an unknown joint or a bus that cannot be opened.
    """
    names, limits = urdf_joints(urdf_xml)
    actuators = actuator_configs(config, limits)
    emulator = None
    if config.hardware == 'emulated':
        from dodo_sim.hardware.emulator import Emulator, EmulatorConfig
        from dodo_sim.simulator import SimConfig, Simulator

        # realtime: the physics follows the wall clock in steps of emulator_dt whatever the
        # driver's period; lockstep: one driver period of physics per cycle
        period = (config.control_period if config.emulator_mode == 'lockstep'
                  else config.emulator_dt)
        sim = Simulator(urdf_xml, SimConfig(initial_q=config.emulator_initial_q,
                                            integrator=config.emulator_integrator,
                                            dt=config.emulator_dt, control_period=period))
        emulator = Emulator(sim, config, EmulatorConfig(mode=config.emulator_mode,
                                                        stand=config.emulator_stand))
        bus = emulator.driver_bus()
    else:
        if not config.calibration_file:
            raise ValueError('DriverConfig.calibration_file is empty: a real bus needs the zero '
                             'offsets of its actuators (docs/hardware.md, "Calibration")')
        bus = open_bus(config.bus_interface, config.bus_channel, config.bus_bitrate)
    has_board = any(config.boom_joints) or bool(config.contact_frame)
    backend = make_backend(bus, actuators, board=has_board)
    try:
        core = DriverCore(config, names, limits, backend)
    except BaseException:
        backend.close()
        if emulator is not None:
            emulator.close()
        raise
    return core, emulator
