# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The sliding-foot sequence in dodo_sim (both integrators) and in DART, side by side.

    python bench/compare_sliding_dart.py [--dt 1e-4 1e-5]

The open-loop sequence of test/physics/test_physics_sliding.py (hopper dropped with its foot 0.15 m
above flat ground, hip 0.3 / knee -0.6 rad, mu = 0.8, e = 0; zero torque in flight; from 0.17 s
tau = 120 N*m sin(pi (t - 0.17) / 0.25) on both joints until 0.42 s) run by each engine on the
same URDF, with the same contact geometry (a sphere of radius 1 mm at the foot frame, see
``dart_model.py``). Per control period (1 ms) it records the state; the contact flag (normal
force > 0) and the slide flag (|velocity of the sphere's lowest point along x| > 1 mm/s, both
engines' states evaluated with the same pinocchio kinematics) give the change times. Prints the
change times, the largest state difference, and DART's contact impulses around each change.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass, field
import math
from pathlib import Path
import sys

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# These imports must follow the sys.path change above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_sim.physics.robot import load_robot, robot_description_xml  # noqa: E402, I100
from dodo_sim.simulator import SimConfig, Simulator  # noqa: E402
import pinocchio as pin  # noqa: E402

URDF = HERE.parent / 'urdf' / 'hopper.urdf.xacro'
MU = 0.8
RADIUS_M = 1e-3
CONTROL_PERIOD_S = 1e-3
END_S = 0.45
POSE = (0.0, 1.0, 0.3, -0.6)
DROP_M = 0.15
SLIDE_SPEED = 1e-3


def torque_sequence(t):
    if 0.17 <= t < 0.42:
        s = math.sin(math.pi * (t - 0.17) / 0.25)
        return [120.0 * s, 120.0 * s]
    return [0.0, 0.0]


@dataclass
class Run:
    """One engine's run: per control period t, q, v, normal force, tangential force."""

    label: str
    t: list = field(default_factory=list)
    q: list = field(default_factory=list)
    v: list = field(default_factory=list)
    force: list = field(default_factory=list)   # world [fx, fz] on the foot, N (period mean)

    def arrays(self):
        return (np.array(self.t), np.array(self.q), np.array(self.v), np.array(self.force))


class Kinematics:
    """Lowest point of the foot sphere: height and velocity along x (pinocchio)."""

    def __init__(self):
        self.robot = load_robot(URDF)
        self.data = self.robot.create_data()

    def sphere_bottom(self, q, v):
        model, data, frame = self.robot.model, self.data, self.robot.foot_frame_id
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        jac = pin.getFrameJacobian(model, data, frame, pin.LOCAL_WORLD_ALIGNED)
        z = data.oMf[frame].translation[2] - RADIUS_M
        return z, float((jac[0] - RADIUS_M * jac[4]) @ v)


def start_state(kin: Kinematics):
    q = np.array(POSE)
    pin.framesForwardKinematics(kin.robot.model, kin.data, q)
    q[1] += DROP_M - kin.data.oMf[kin.robot.foot_frame_id].translation[2]
    return q


def run_dodo(integrator: str, dt: float, kin: Kinematics) -> Run:
    sim = Simulator(URDF, SimConfig(integrator=integrator, dt=dt,
                                    control_period=CONTROL_PERIOD_S, friction=MU,
                                    contact_radii=(RADIUS_M,),
                                    initial_q=tuple(start_state(kin))))
    state = sim.state
    run = Run(f'dodo {integrator}')
    for _ in range(int(round(END_S / CONTROL_PERIOD_S))):
        state = sim.step(torque_sequence(state.t))
        run.t.append(state.t)
        run.q.append(state.q.copy())
        run.v.append(state.v.copy())
        run.force.append(state.contact_force.copy())
    return run


def run_dart(dt: float, kin: Kinematics) -> Run:
    from dart_model import build_dart_robot
    robot = build_dart_robot(robot_description_xml(URDF), ['foot'], contact_radius_m=RADIUS_M,
                             friction=MU, timestep_s=dt)
    robot.reset(start_state(kin), np.zeros(4))
    substeps = int(round(CONTROL_PERIOD_S / dt))
    run = Run('dart')
    t = 0.0
    for k in range(int(round(END_S / CONTROL_PERIOD_S))):
        tau = torque_sequence(t)
        force = np.zeros(3)
        for _ in range(substeps):
            robot.step([0.0, 0.0, tau[0], tau[1]])
            force += robot.contact_forces()[0]
        t = (k + 1) * CONTROL_PERIOD_S
        run.t.append(t)
        run.q.append(robot.q.copy())
        run.v.append(robot.v.copy())
        run.force.append(force[0:3:2] / substeps)
    return run


def changes(run: Run, kin: Kinematics) -> dict:
    """Return the times of contact and slide changes, at control-period resolution."""
    contact_times, slide_times = [], []
    was_contact = was_sliding = False
    for t, q, v, force in zip(run.t, run.q, run.v, run.force):
        contact = bool(force[1] > 0.0)
        sliding = contact and abs(kin.sphere_bottom(q, v)[1]) > SLIDE_SPEED
        if contact != was_contact:
            contact_times.append(t)
        if sliding != was_sliding:
            slide_times.append(t)
        was_contact, was_sliding = contact, sliding
    return {'contact': contact_times, 'slide': slide_times}


def compare(dt: float, kin: Kinematics | None = None) -> dict:
    kin = kin or Kinematics()
    runs = {r.label: r for r in (run_dodo('timestepping', dt, kin), run_dodo('event', dt, kin),
                                 run_dart(dt, kin))}
    return {'runs': runs, 'changes': {label: changes(r, kin) for label, r in runs.items()}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--dt', type=float, nargs='+', default=[1e-4, 1e-5])
    args = parser.parse_args(argv)
    kin = Kinematics()
    for dt in args.dt:
        result = compare(dt, kin)
        print(f'\ndt = {dt:g} s (control period 1 ms): change times, s')
        for label, ch in result['changes'].items():
            print(f"  {label:<18} contact {ch['contact']}  slide {ch['slide']}")
        runs = result['runs']
        _, q_ref, v_ref, f_ref = runs['dodo event'].arrays()
        for label in ('dodo timestepping', 'dart'):
            _, q, v, f = runs[label].arrays()
            print(f'  {label:<18} vs event: max |dq| = {np.abs(q - q_ref).max():.2e}, '
                  f'max |dv| = {np.abs(v - v_ref).max():.2e}, final |dq| = '
                  f'{np.abs(q[-1] - q_ref[-1]).max():.2e}')
        _, q, v, f = runs['dart'].arrays()
        print('  DART foot force [fx, fz] N and lowest-point speed near the changes:')
        for t_change in result['changes']['dart']['slide']:
            k = int(round(t_change / CONTROL_PERIOD_S)) - 1
            for j in range(max(0, k - 2), min(len(q), k + 3)):
                z, speed = kin.sphere_bottom(q[j], v[j])
                ratio = abs(f[j, 0]) / f[j, 1] if f[j, 1] > 0 else float('nan')
                print(f'    t={runs["dart"].t[j]:.3f} f={f[j].round(2)} |fx|/fz={ratio:.3f} '
                      f'z={z:+.2e} vx={speed:+.4f}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
