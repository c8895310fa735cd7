"""Joint motor model: torque saturation and first-order torque dynamics (the ``isControlSaturate``
and ``isMotorDynamics`` options of the boom hopping-leg simulator of Ding & Ramos, UIUC)."""
from __future__ import annotations

import math

import numpy as np


class MotorModel:
    """Turns commanded joint torques into applied torques, one physics step at a time.

    Args:
        torque_limits: |tau| bound of each actuated joint (N*m), or None for no saturation.
        time_constant_s: first-order lag T of the torque (s); 0 applies commands at once.
        size: number of actuated joints (defaults to the length of ``torque_limits``, else 2).
    """

    def __init__(self, torque_limits: np.ndarray | None, time_constant_s: float,
                 size: int | None = None):
        self.torque_limits = None if torque_limits is None else np.asarray(torque_limits, float)
        if size is None:
            size = 2 if self.torque_limits is None else len(self.torque_limits)
        self.size = size
        self.time_constant_s = time_constant_s
        self.applied = np.zeros(size)

    def reset(self) -> None:
        self.applied = np.zeros(self.size)

    def advance(self, command: np.ndarray, dt: float) -> np.ndarray:
        """Applied torque held over the next physics step of length dt (N*m).

        The lag is integrated exactly for a command held over the step (zero-order hold).
        """
        if self.torque_limits is None and self.time_constant_s == 0.0:
            self.applied = command
            return command
        target = command
        if self.torque_limits is not None:
            target = np.clip(command, -self.torque_limits, self.torque_limits)
        if self.time_constant_s > 0.0:
            blend = 1.0 - math.exp(-dt / self.time_constant_s)
            self.applied = self.applied + blend * (target - self.applied)
        else:
            self.applied = target
        return self.applied
