# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The driver and the emulated hardware in one process, stepped like a simulator (no ROS).

``rollout(EmulatedRig(sim, DriverConfig(...)), controller)`` closes the loop through the wire
format, the safety supervisor and the calibration (docs/hardware.md).
"""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import NamedTuple

import numpy as np

from .backends import make_backend
from .calibration import Calibration
from .config import actuator_configs, DriverConfig, urdf_joints
from .driver import DriverCore
from .emulator import Emulator, EmulatorConfig


class RigState(NamedTuple):
    """What :func:`dodo_sim.rollout.rollout` reads from a state (all measured by the driver)."""

    t: float
    q: np.ndarray
    v: np.ndarray
    in_contact: bool
    contact_force: np.ndarray
    contact_forces: np.ndarray      # one world [fx, fy, fz] row per contact frame, N
    tau_applied: np.ndarray


class EmulatedRig:
    """
    The driver core on the emulated hardware in lockstep, with a simulator's ``step``.

    ``rollout(EmulatedRig(...), controller)`` closes the loop through the wire format, the safety
    supervisor and the calibration, no ROS.

    Each :meth:`step` is one driver cycle: the command goes out in this cycle's frames and acts
    over the following period (the one-period delay of a fixed-rate hardware loop).
    """

    def __init__(self, sim, driver_config: DriverConfig,
                 emulator_config: EmulatorConfig | None = None,
                 calibration: Calibration | None = None, enable: bool = True):
        ecfg = emulator_config or EmulatorConfig()
        if ecfg.mode != 'lockstep':
            ecfg = dataclasses.replace(ecfg, mode='lockstep')
        if abs(sim.config.control_period - driver_config.control_period) > 1e-12:
            raise ValueError(f'driver control_period {driver_config.control_period} s differs '
                             f"from the simulator's {sim.config.control_period} s")
        self.sim = sim
        self.emulator = Emulator(sim, driver_config, ecfg)
        names, limits = urdf_joints(sim.leg.urdf_xml)
        actuators = actuator_configs(driver_config, limits)
        backend = make_backend(self.emulator.driver_bus(), actuators,
                               board=self.emulator.has_board)
        self.driver = DriverCore(driver_config, names, limits, backend, calibration)
        self.config = SimpleNamespace(control_period=driver_config.control_period)
        #: the one contact the sensor board measures (driver config), under the simulator's
        #: frame name; the rollout reads contact forces per frame
        self.contact_frames = ((driver_config.contact_frame,) if driver_config.contact_frame
                               else ())
        self.joint_names = tuple(names)
        self.actuated_joint_names = tuple(driver_config.joints)
        self._index = [names.index(j) for j in self.driver.actuated_joint_names]
        self.state = self._cycle()
        if enable:
            ok, message = self.driver.enable(self.state.t)
            if not ok:
                raise RuntimeError(f'cannot enable the emulated rig: {message}')
            for _ in range(2):          # zero command, enable frame
                self.state = self._cycle()

    @property
    def time(self) -> float:
        return self.state.t

    def _cycle(self) -> RigState:
        now = (self.emulator.steps + 1) * self.emulator.period
        s = self.driver.cycle(now)
        fx, fz = s.contact_force
        rows = np.array([[fx, 0.0, fz]] * len(self.contact_frames)).reshape(-1, 3)
        return RigState(s.t, s.q, s.v, s.in_contact, s.contact_force, rows,
                        s.effort[self._index])

    def step(self, tau) -> RigState:
        """
        One cycle with command ``tau`` (actuated joints, N*m); None: no command this cycle.

        None stands for a silent controller.
        """
        if tau is not None:
            self.driver.set_command(self.state.t, tau)
        self.state = self._cycle()
        return self.state

    def close(self) -> None:
        self.driver.shutdown()
        self.emulator.close()
