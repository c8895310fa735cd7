# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The walk judged one state at a time: falls, steps, distance, speed.

No rclpy.

The controller node hosts this next to the Kneed Walker controller (``dodo_control.registry``)
and publishes what it finds; ``dodo walk`` turns a fall into a non-zero exit. It is the online
form of :func:`dodo_control.walker.outcome.walk` and uses the same parts, so a run over ROS and
the offline ``walk()`` of the same parameters report the same fall, step count and speed:

* falls: :class:`~dodo_control.walker.outcome.FallDetector` (torso pitch, hip height above the
  terrain, a knee below it) on the robot description's kinematics and the ground of
  :class:`TerrainConfig` (the simulator's terrain parameters, handed over by the graph);
* steps: :class:`~dodo_control.walker.outcome.OnlineStepCounter`, alternating-foot touchdowns;
  a foot is in contact when its measured force is non-zero (the simulator's contact topics carry
  zero force without contact);
* distance: hip (``forward_joint``) x travelled; speed: over the steps after the first
  ``settle_steps``, as ``walk()`` measures it.

Everything is frozen at the first fall (steps, distance and speed before it); the judge never
reads the controller's telemetry.

::

    monitor = WalkMonitor(urdf_xml, joint_names, FallCriteria(), TerrainConfig())
    reason = monitor.update(t, q, contact_forces)     # the reason, once, at the first fall
    monitor.channels(), monitor.summary()
"""
from __future__ import annotations

import dataclasses
import math
import types

from dodo_control.registry import TERRAIN_PARAMETERS
from dodo_control.walker.outcome import FALL_REASONS, FallCriteria, FallDetector, OnlineStepCounter
import numpy as np


def _terrain_config_class():
    """
    Return a frozen dataclass of the SimConfig fields in TERRAIN_PARAMETERS.

    It has the same names, defaults and documentation (each parameter is defined once, in
    SimConfig).
    """
    from dodo_sim.physics.terrain import make_terrain as terrain_from
    from dodo_sim.ros.params import field_docs
    from dodo_sim.simulator import SimConfig
    fields = {f.name: f for f in dataclasses.fields(SimConfig)}
    docs = field_docs(SimConfig)
    spec = [(name, fields[name].type, dataclasses.field(default=fields[name].default))
            for name in TERRAIN_PARAMETERS]

    def __post_init__(self):
        for name in ('step_edges_x_m', 'step_rises_m'):
            object.__setattr__(self, name, tuple(float(x) for x in getattr(self, name)))
        self.make_terrain()           # raises ValueError naming a bad value

    def make_terrain(self):
        """Return the terrain object (``height(x)``, ``slope(x)``, ``normal(x)``)."""
        return terrain_from(self.terrain, height_m=self.terrain_height_m,
                            slope_deg=self.slope_deg, step_edges_x_m=self.step_edges_x_m,
                            step_rises_m=self.step_rises_m,
                            sine_amplitude_m=self.sine_amplitude_m,
                            sine_wavelength_m=self.sine_wavelength_m)

    cls = dataclasses.make_dataclass(
        'TerrainConfig', spec, frozen=True,
        namespace={'__post_init__': __post_init__, 'make_terrain': make_terrain,
                   '__module__': __name__})
    cls.__doc__ = ("The ground a walk is judged on: the simulator's terrain parameters "
                   "(dodo_sim.simulator.SimConfig; the graph copies the simulator's values).\n\n"
                   '    Attributes:\n'
                   + ''.join(f'        {name}: {docs.get(name, "")}\n'
                             for name in TERRAIN_PARAMETERS))
    return cls


TerrainConfig = _terrain_config_class()


class WalkMonitor:
    """
    Online judge of a walk (module docs).

    Inputs:
        urdf_xml: robot description (XML or a path), the model the simulator simulates.
        joint_names: order of the q given to :meth:`update` (the controller's joint names).
        criteria: fall criteria.
        terrain: the ground (:class:`TerrainConfig`).
        forward_joint: the coordinate whose travel is the distance walked.
        settle_steps: steps left out of the speed (the start transient).
    """

    #: Channel names of :meth:`channels`, in order.
    CHANNELS = ('fallen', 'fall_reason', 'steps', 'distance_m', 'speed_m_s')
    #: Its configuration (read-only parameters of the controller node), in the order
    #: ``__init__`` takes them after ``joint_names``.
    config_classes = (FallCriteria, TerrainConfig)

    def __init__(self, urdf_xml, joint_names, criteria: FallCriteria | None = None,
                 terrain=None, forward_joint: str = 'base_x', settle_steps: int = 4):
        from dodo_sim.physics.robot import load_robot
        robot = load_robot(urdf_xml, contact_frames=())
        names = tuple(joint_names)
        missing = [n for n in robot.joint_names if n not in names]
        if missing or not robot.vector_space:
            raise ValueError(f'the walk monitor needs every joint of the robot in the '
                             f"controller's joint_names {list(names)} (missing: {missing}; "
                             f'one coordinate per joint)')
        if forward_joint not in names:
            raise ValueError(f'forward_joint {forward_joint!r} is not in joint_names '
                             f'{list(names)}')
        self._order = np.array([names.index(n) for n in robot.joint_names], dtype=int)
        terrain = terrain if terrain is not None else TerrainConfig()
        view = types.SimpleNamespace(robot=robot, terrain=terrain.make_terrain(),
                                     joint_names=robot.joint_names)
        self.detector = FallDetector(view, criteria)
        self._counter = OnlineStepCounter()
        self._forward = names.index(forward_joint)
        self.settle_steps = int(settle_steps)
        self._x0 = None
        self._x = math.nan
        self._step_points: list = []          # (t, x) at each step's touchdown
        self.fall_reason: str | None = None
        self.fall_time_s = math.nan

    @property
    def fallen(self) -> bool:
        return self.fall_reason is not None

    @property
    def steps(self) -> int:
        return self._counter.steps

    @property
    def distance_m(self) -> float:
        return 0.0 if self._x0 is None else self._x - self._x0

    @property
    def speed_m_s(self) -> float:
        """Mean speed from step ``settle_steps`` to the last step (NaN with fewer steps)."""
        points = self._step_points
        if len(points) <= self.settle_steps + 1:
            return math.nan
        (t0, x0), (t1, x1) = points[self.settle_steps], points[-1]
        return (x1 - x0) / (t1 - t0) if t1 > t0 else math.nan

    def update(self, t: float, q, contact_forces) -> str | None:
        """Judge one state; returns the fall reason at the first fallen state, else None."""
        if self.fall_reason is not None:
            return None
        q = np.asarray(q, dtype=float)
        x = float(q[self._forward])
        if self._x0 is None:
            self._x0 = x
        self._x = x
        reason = self.detector.check(q[self._order])
        if reason is not None:
            self.fall_reason, self.fall_time_s = reason, float(t)
            return reason
        forces = np.asarray(contact_forces, dtype=float).reshape(len(contact_forces), -1)
        if self._counter.add_flags(t, np.any(forces != 0.0, axis=1)):
            self._step_points.append((float(t), x))
        return None

    def channels(self) -> list:
        """
        Values of :data:`CHANNELS`.

        They are fallen (0/1), fall_reason (index in ``walker_outcome.FALL_REASONS``, -1 none),
        steps, distance_m, speed_m_s.
        """
        reason = -1.0 if self.fall_reason is None else float(FALL_REASONS.index(self.fall_reason))
        return [float(self.fallen), reason, float(self.steps), self.distance_m, self.speed_m_s]

    def summary(self) -> dict:
        """Return steps, distance_m, speed_m_s, fall_reason (None: did not fall), fall_time_s."""
        return {'steps': self.steps, 'distance_m': self.distance_m, 'speed_m_s': self.speed_m_s,
                'fall_reason': self.fall_reason,
                'fall_time_s': None if self.fall_reason is None else self.fall_time_s}

    def fall_message(self) -> str:
        return (f'the robot fell: {self.fall_reason} at t = {self.fall_time_s:.3f} s after '
                f'{self.steps} steps and {self.distance_m:.3f} m')


__all__ = ['WalkMonitor', 'TerrainConfig']
