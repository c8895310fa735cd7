# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Speed of ``Simulator.step`` against MuJoCo, DART and pybullet on the same robots, side by side.

    python bench/bench_simulator.py [--steps 1000] [--repetitions 7] [--model PATH]
                                    [--biped PATH] [--no-biped] [--profile] [--collisions]
                                    [--quadruped [--python-solve]] [--no-hopper]

Cases (dt = control period = 1 ms, every engine built from the same URDF/xacro):

* hopper (``--model``, default urdf/hopper.urdf.xacro): dodo_sim timestepping and event, MuJoCo
  (``mujoco_model.py``), DART (``dart_model.py``: Featherstone dynamics + boxed-LCP Dantzig
  contact) and pybullet (``pybullet_model.py``, if installed);
  *stance*: the leg dropped 5 cm and settled under a PD hold of hip and knee, then timed while
  standing; *flight*: the leg far above the ground with zero torque.
* biped (``--biped``, default urdf/kneed_walker.urdf.xacro, contact frames left_foot and
  right_foot): *double support*, standing on both feet under a PD hold of the four joints at
  the model's default pose; dodo_sim (both integrators) and DART.

Each timed block runs ``--steps`` steps of one case; cases take turns block by block
(``--repetitions`` rounds after one warm-up round) so machine noise hits them alike. Each step
is timed on its own with ``time.perf_counter`` (the PD law is outside; the timer's overhead is
subtracted). The table shows the median over rounds and the least disturbed block (min); the
ratios are against the peers measured in this run. Nothing here asserts on time.
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
from dataclasses import dataclass, field
import importlib.util
from pathlib import Path
import pstats
import statistics
import sys
import time

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

# These imports must follow the sys.path change above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_sim.physics.robot import load_robot, robot_description_xml  # noqa: E402, I100
from dodo_sim.simulator import SimConfig, Simulator  # noqa: E402


@dataclass(frozen=True)
class BenchParams:
    """
    The fields of ``BenchParams``.

    Fields:
        dt_s: physics step = control period of every engine, s.
        kp_nm_per_rad / kd_nms_per_rad: PD hold of the hopper's hip and knee.
        biped_kp_nm_per_rad / biped_kd_nms_per_rad: PD hold of the biped's joints (its light
            shanks make the sampled hopper gains unstable at a 1 ms control period).
        hopper_pose: hopper [x m, z m, hip rad, knee rad] held by the PD law (z is shifted so the
            foot starts ``drop_height_m`` above the ground).
        drop_height_m: initial foot height of the stance cases, m.
        settle_s: simulated time before the stance timing starts, s.
        flight_base_z_m: base height of the flight case (no ground contact for > 3 s), m.
        friction: Coulomb coefficient of every engine (-).
        contact_radius_m: sphere radius of the peers' contact geoms (DART, pybullet), m; dodo_sim
            uses the same radius so that the geometry is the same.
    """

    dt_s: float = 0.001
    kp_nm_per_rad: float = 300.0
    kd_nms_per_rad: float = 20.0
    biped_kp_nm_per_rad: float = 100.0
    biped_kd_nms_per_rad: float = 2.0
    hopper_pose: tuple = (0.0, 1.0, 0.3, -0.6)
    drop_height_m: float = 0.05
    settle_s: float = 1.0
    flight_base_z_m: float = 8.0
    friction: float = 0.8
    contact_radius_m: float = 1e-3


# -- engines behind one small interface ------------------------------------------------------

@contextlib.contextmanager
def python_3d_solve():
    """Inside the block the 3-D contact solve and position correction run in Python."""
    from dodo_sim.physics.kernels import correction, ncp_general
    saved = ncp_general.solve_general, correction.position_correction
    ncp_general.solve_general = correction.position_correction = lambda *args: None
    try:
        yield
    finally:
        ncp_general.solve_general, correction.position_correction = saved


class DodoEngine:
    def __init__(self, model, integrator, params, contact_frames, radius, initial_q,
                 collisions='feet', python_solve=False):
        self.label = (f'dodo {integrator}' + (' links' if collisions == 'links' else '')
                      + (' py3d' if python_solve else ''))
        self.python_solve = python_solve
        self.sim = Simulator(model, SimConfig(
            integrator=integrator, dt=params.dt_s, control_period=params.dt_s,
            friction=params.friction, contact_frames=tuple(contact_frames),
            contact_radii=(radius,) * len(contact_frames), initial_q=tuple(initial_q),
            collisions=collisions))
        self.state = self.sim.state

    def reset(self, q, v):
        self.state = self.sim.reset(q, v)

    def qv(self):
        return self.state.q.tolist(), self.state.v.tolist()

    def leg_state(self):
        """
        Angles and rates of the actuated joints.

        A floating base's 7 / 6 coordinates are skipped.
        """
        robot, state = self.sim.robot, self.state
        return ([state.q[i + 1] for i in robot.actuated_idx_v] if robot.floating_base
                else [state.q[i] for i in robot.actuated_idx_v],
                [state.v[i] for i in robot.actuated_idx_v])

    def timed_step(self, tau, clock=time.perf_counter):
        if self.python_solve:   # the context switch stays outside the timed interval
            with python_3d_solve():
                start = clock()
                self.state = self.sim.step(tau)
                return clock() - start
        start = clock()
        self.state = self.sim.step(tau)
        return clock() - start

    def contacts(self) -> int:
        return sum(self.state.in_contacts)


class MujocoEngine:

    def __init__(self, model, params):
        import mujoco
        from mujoco_model import build_mujoco_hopper
        self.label = 'mujoco'
        self.mujoco = mujoco
        self.hopper = build_mujoco_hopper(model, timestep_s=params.dt_s, friction=params.friction)
        self.model = self.hopper.model
        self.data = mujoco.MjData(self.model)

    def reset(self, q, v):
        self.mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:] = q
        self.data.qvel[:] = 0.0 if v is None else v
        self.mujoco.mj_forward(self.model, self.data)

    def qv(self):
        return self.data.qpos.tolist(), self.data.qvel.tolist()

    def timed_step(self, tau, clock=time.perf_counter):
        self.data.ctrl[:] = tau
        model, data, step = self.model, self.data, self.mujoco.mj_step
        start = clock()
        step(model, data)
        return clock() - start

    def contacts(self) -> int:
        return int(self.data.ncon)


class DartEngine:

    def __init__(self, model, params, contact_frames, actuated_idx):
        from dart_model import build_dart_robot
        self.label = 'dart'
        self.robot = build_dart_robot(robot_description_xml(model), contact_frames,
                                      contact_radius_m=params.contact_radius_m,
                                      friction=params.friction, timestep_s=params.dt_s)
        self.skeleton = self.robot.skeleton
        self.world = self.robot.world
        self.force = np.zeros(self.skeleton.getNumDofs())
        self.actuated = list(actuated_idx)

    def reset(self, q, v):
        self.robot.reset(q, np.zeros(len(q)) if v is None else v)

    def qv(self):
        return self.skeleton.getPositions().tolist(), self.skeleton.getVelocities().tolist()

    def timed_step(self, tau, clock=time.perf_counter):
        self.force[self.actuated] = tau
        skeleton, world, force = self.skeleton, self.world, self.force
        start = clock()
        skeleton.setForces(force)
        world.step()
        return clock() - start

    def contacts(self) -> int:
        return sum(self.robot.in_contact())


class BulletEngine:

    def __init__(self, model, params, contact_frames, actuated_idx):
        from pybullet_model import build_bullet_robot
        self.label = 'pybullet'
        self.robot = build_bullet_robot(robot_description_xml(model), contact_frames,
                                        contact_radius_m=params.contact_radius_m,
                                        friction=params.friction, timestep_s=params.dt_s)
        self.actuated = list(actuated_idx)

    def reset(self, q, v):
        self.robot.reset(q, np.zeros(len(q)) if v is None else v)

    def qv(self):
        return self.robot.qv()

    def timed_step(self, tau, clock=time.perf_counter):
        full = [0.0] * self.robot.ndof
        for i, value in zip(self.actuated, tau):
            full[i] = value
        start = clock()
        self.robot.step(full)
        return clock() - start

    def contacts(self) -> int:
        return self.robot.contact_count()


class MujocoUrdfEngine:
    """
    Any URDF in MuJoCo (mujoco_urdf.py: floating base made explicit, point-like feet).

    Joint torques through qfrc_applied; q and v in dodo_sim's (pinocchio's) layout.
    """

    def __init__(self, model, params, contact_frames, joint_names, link_collisions=False):
        import mujoco
        from mujoco_urdf import build_mujoco_robot
        self.label = 'mujoco' + (' links' if link_collisions else '')
        self.mujoco = mujoco
        # with link collisions the floor is at z = 0 and a foot's sphere centred at its frame
        self.lift_m = params.contact_radius_m if link_collisions else 0.0
        self.robot = build_mujoco_robot(robot_description_xml(model), contact_frames,
                                        contact_radius_m=params.contact_radius_m,
                                        friction=params.friction, timestep_s=params.dt_s,
                                        link_collisions=link_collisions,
                                        urdf_dir=Path(model).parent)
        self.joint_names = tuple(joint_names)
        self.qpos_index = [self.robot.joint_qpos[n] for n in joint_names]
        self.dof_index = [self.robot.joint_dof[n] for n in joint_names]

    def reset(self, q, v):
        # q: pinocchio's [x y z qx qy qz qw, joints in self.joint_names order]; MuJoCo's floor
        # lies one sphere radius below z = 0, so a foot frame at z = 0 touches it
        self.robot.set_state(np.asarray(q[:3]) + (0.0, 0.0, self.lift_m), q[3:7],
                             dict(zip(self.joint_names, q[7:])))

    def leg_state(self):
        d = self.robot.data
        return [d.qpos[i] for i in self.qpos_index], [d.qvel[i] for i in self.dof_index]

    def timed_step(self, tau, clock=time.perf_counter):
        model, data = self.robot.model, self.robot.data
        data.qfrc_applied[self.dof_index] = tau
        step = self.mujoco.mj_step
        start = clock()
        step(model, data)
        return clock() - start

    def contacts(self) -> int:
        return int(self.robot.data.ncon)


# -- cases -----------------------------------------------------------------------------------

class LegHold:
    """
    PD hold of the actuated joints: tau = tau_ff + kp (angles_ref - angles) - kd rates.

    For engines with ``leg_state()``, i.e. a floating-base robot.
    """

    def __init__(self, angles_ref, tau_ff, kp: float, kd: float):
        self.kp, self.kd = kp, kd
        self.ref = [float(a) for a in angles_ref]
        self.ff = [float(t) for t in tau_ff]
        self.index = list(range(len(self.ref)))

    def __call__(self, engine):
        angles, rates = engine.leg_state()
        kp, kd = self.kp, self.kd
        return [f + kp * (r - a) - kd * w
                for f, r, a, w in zip(self.ff, self.ref, angles, rates)]


class PDHold:
    """PD hold of the actuated coordinates: tau = kp (q_ref - q) - kd v, on Python floats."""

    def __init__(self, q_ref, actuated_idx, kp: float, kd: float):
        self.kp, self.kd = kp, kd
        self.index = list(actuated_idx)
        self.ref = [float(q_ref[i]) for i in self.index]

    def __call__(self, engine):
        q, v = engine.qv()
        kp, kd = self.kp, self.kd
        return [kp * (r - q[i]) - kd * v[i] for i, r in zip(self.index, self.ref)]


@dataclass
class Case:
    robot: str
    phase: str
    engine: object
    hold: PDHold
    start_q: np.ndarray
    samples_us: list = field(default_factory=list)
    contact_steps: int = 0
    steps: int = 0

    @property
    def label(self):
        return self.engine.label


def lift_to_height(sim, q, height_m):
    """
    Return q with the base z raised.

    The lowest contact point ends ``height_m`` above the ground.
    """
    q = np.array(q, float)
    q[1] += height_m - sim.contact_positions(q)[:, 2].min()
    return q


def prepare(case: Case, params: BenchParams):
    case.engine.reset(case.start_q, None)
    if case.phase != 'flight':
        for _ in range(int(round(params.settle_s / params.dt_s))):
            case.engine.timed_step(case.hold(case.engine))


def run_block(case: Case, steps: int, overhead_s: float) -> float:
    engine, hold = case.engine, case.hold
    total = 0.0
    contact = 0
    if case.phase == 'flight':
        engine.reset(case.start_q, None)
        zero = [0.0] * len(hold.index)
        for _ in range(steps):
            total += engine.timed_step(zero)
            contact += engine.contacts() > 0
    else:
        for _ in range(steps):
            total += engine.timed_step(hold(engine))
            contact += engine.contacts() > 0
    case.contact_steps += contact
    case.steps += steps
    return (total / steps - overhead_s) * 1e6


def timer_overhead_s(clock=time.perf_counter, n: int = 20000) -> float:
    samples = []
    for _ in range(n):
        start = clock()
        samples.append(clock() - start)
    return statistics.median(samples)


def build_cases(args, params: BenchParams) -> list:
    radius = params.contact_radius_m
    cases = []
    # --collisions: each dodo case twice, feet only and with link collisions (side by side)
    collision_modes = ('feet', 'links') if args.collisions else ('feet',)
    if not args.no_hopper:
        hopper = Simulator(args.model, SimConfig(contact_radii=(radius,),
                                                 initial_q=(0.0, 2.0, 0.0, 0.0)))
        act = list(hopper.robot.actuated_idx_v)
        stance_q = lift_to_height(hopper, params.hopper_pose, params.drop_height_m)
        flight_q = np.array(params.hopper_pose, float)
        flight_q[1] = params.flight_base_z_m
        hold = PDHold(params.hopper_pose, act, params.kp_nm_per_rad, params.kd_nms_per_rad)
        factories = [lambda i=i, c=c: DodoEngine(args.model, i, params, ('foot',), radius,
                                                 stance_q, c)
                     for i in ('timestepping', 'event') for c in collision_modes]
        factories.append(lambda: MujocoEngine(args.model, params))
        if importlib.util.find_spec('dartpy'):
            factories.append(lambda: DartEngine(args.model, params, ('foot',), act))
        if importlib.util.find_spec('pybullet'):
            factories.append(lambda: BulletEngine(args.model, params, ('foot',), act))
        for make in factories:
            cases.append(Case('hopper', 'stance', make(), hold, stance_q))
            cases.append(Case('hopper', 'flight', make(), hold, flight_q))
    if not args.no_biped:
        feet = ('left_foot', 'right_foot')
        q0 = load_robot(args.biped, contact_frames=feet).default_q.copy()
        q0[1] += 0.1  # the Kneed Walker's URDF default has its feet 17 um under the ground
        biped = Simulator(args.biped, SimConfig(contact_frames=feet, contact_radii=(radius,) * 2,
                                                initial_q=tuple(q0)))
        act = list(biped.robot.actuated_idx_v)
        start = lift_to_height(biped, q0, params.drop_height_m)
        hold = PDHold(q0, act, params.biped_kp_nm_per_rad, params.biped_kd_nms_per_rad)
        factories = [lambda i=i, c=c: DodoEngine(args.biped, i, params, feet, radius, start, c)
                     for i in ('timestepping', 'event') for c in collision_modes]
        if importlib.util.find_spec('dartpy'):
            factories.append(lambda: DartEngine(args.biped, params, feet, act))
        for make in factories:
            cases.append(Case('biped', 'double', make(), hold, start))
    if args.quadruped:
        cases += quadruped_cases(params, args.python_solve, collision_modes)
    return cases


def quadruped_cases(params: BenchParams, python_solve: bool = False,
                    collision_modes=('feet',)) -> list:
    """
    Solo-12 standing on four feet: dodo_sim and MuJoCo.

    ``collision_modes`` with 'links': also both engines with every link's collision shapes
    (meshes as their bounding boxes in both; 88 support points in dodo_sim, 17 geoms in MuJoCo).

    Solo-12 (example-robot-data, floating base) standing on four feet under its static torques plus
    a PD hold (kp 30, kd 0.3 N*m/rad), dropped 1 mm and settled; dodo_sim (both integrators) and
    MuJoCo (same URDF, bench/mujoco_urdf.py). ``python_solve``: also time-stepping with the 3-D
    contact solve and position correction in Python (kernels switched off around its
    steps), the state before the compiled kernel, interleaved in the same run.
    """
    sys.path.insert(0, str(REPO / 'test'))
    import public_robots as pr
    if pr.robots_dir() is None:
        print('quadruped: example-robot-data is not installed, skipped')
        return []
    path, feet = pr.solo12(), pr.SOLO_FEET
    probe = Simulator(path, SimConfig(contact_frames=feet, collisions='feet'))
    q = pr.standing_pose(probe, pr.SOLO_STAND_LEGS)
    _, tau = pr.static_torques(probe.robot, q)
    start = q.copy()
    start[2] += 1e-3
    hold = LegHold(pr.SOLO_STAND_LEGS, tau, 30.0, 0.3)
    factories = [lambda i=i, c=c: DodoEngine(path, i, params, feet, 0.0, start, c)
                 for i in ('timestepping', 'event') for c in collision_modes]
    if python_solve:
        factories.append(lambda: DodoEngine(path, 'timestepping', params, feet, 0.0, start,
                                            python_solve=True))
    factories += [lambda c=c: MujocoUrdfEngine(path, params, feet,
                                               probe.robot.actuated_joint_names, c == 'links')
                  for c in collision_modes]
    return [Case('quad', 'stance', make(), hold, start) for make in factories]


def profile_stance(case: Case, params: BenchParams, steps: int) -> None:
    """Per-line profile (line_profiler) of Simulator.step in settled stance, else cProfile."""
    prepare(case, params)
    sim = case.engine.sim
    try:
        from line_profiler import LineProfiler
    except ImportError:
        LineProfiler = None
    if LineProfiler is not None:
        integrator = type(sim.integrator)
        profiler = LineProfiler(type(sim).step, type(sim)._make_state, integrator.step)
    else:
        profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        case.engine.timed_step(case.hold(case.engine))
    profiler.disable()
    print(f'\nProfile of Simulator.step, {case.label}, {case.robot} {case.phase}, {steps} steps '
          '(the profiler adds ~0.3 us per line: read proportions):')
    if LineProfiler is not None:
        profiler.print_stats(output_unit=1e-6, stripzeros=True)
    else:
        pstats.Stats(profiler).sort_stats('tottime').print_stats(18)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--model', default=str(REPO / 'urdf' / 'hopper.urdf.xacro'),
                        help='hopper-like model (joints base_x, base_z, hip, knee; frame foot)')
    parser.add_argument('--biped', default=str(REPO / 'urdf' / 'kneed_walker.urdf.xacro'))
    parser.add_argument('--no-biped', action='store_true')
    parser.add_argument('--quadruped', action='store_true',
                        help='also the Solo-12 quadruped (example-robot-data) against MuJoCo')
    parser.add_argument('--python-solve', action='store_true',
                        help='with --quadruped: also time-stepping with the 3-D solve in Python')
    parser.add_argument('--no-hopper', action='store_true', help='skip the hopper cases')
    parser.add_argument('--collisions', action='store_true',
                        help="also run each dodo case with SimConfig.collisions='links'")
    parser.add_argument('--steps', type=int, default=1000, help='steps per timed block')
    parser.add_argument('--repetitions', type=int, default=7, help='timed rounds (median)')
    parser.add_argument('--profile', action='store_true',
                        help='also profile the time-stepping hopper stance step')
    args = parser.parse_args(argv)
    params = BenchParams()
    wall_start = time.perf_counter()
    versions = []
    for module in ('mujoco', 'dartpy', 'pybullet', 'pinocchio'):
        if importlib.util.find_spec(module):
            mod = __import__(module)
            versions.append(f'{module} {getattr(mod, "__version__", "?")}')
    print(', '.join(versions) + f', python {sys.version.split()[0]}')

    cases = build_cases(args, params)
    for case in cases:
        prepare(case, params)
    overhead = timer_overhead_s()
    for case in cases:  # warm-up round, not recorded
        run_block(case, args.steps, overhead)
        case.contact_steps = case.steps = 0
    for _ in range(args.repetitions):
        for case in cases:
            case.samples_us.append(run_block(case, args.steps, overhead))

    med = {(c.robot, c.phase, c.label): statistics.median(c.samples_us) for c in cases}
    low = {(c.robot, c.phase, c.label): min(c.samples_us) for c in cases}
    peers = [p for p in ('mujoco', 'dart', 'pybullet')
             if any(c.label == p for c in cases)]
    print(f'\nus per step, dt = {params.dt_s * 1e3:g} ms, median (min) of {args.repetitions} '
          f'interleaved blocks of {args.steps} steps, timer overhead {overhead * 1e9:.0f} ns '
          f'subtracted; ratios = median / median of the peer in this run')
    header = (f"{'robot':<7}{'phase':<8}{'engine':<18}{'us/step':>9}{'(min)':>9}{'contact':>9}"
              + ''.join(f'{"/" + p:>10}' for p in peers))
    print(header)
    print('-' * len(header))
    for c in cases:
        key = (c.robot, c.phase, c.label)
        ratios = ''
        for p in peers:
            ref = med.get((c.robot, c.phase, p))
            ratios += f'{med[key] / ref:>9.2f}x' if ref else f'{"-":>10}'
        print(f'{c.robot:<7}{c.phase:<8}{c.label:<18}{med[key]:>9.2f}{low[key]:>9.2f}'
              f'{c.contact_steps / max(c.steps, 1):>9.0%}{ratios}')
    print('goals, as median ratio (min ratio: least disturbed blocks):')
    for label in ('dodo timestepping', 'dodo event'):
        stance = ('hopper', 'stance', label)
        if stance not in med:
            continue
        for peer, goal in (('dart', 'goal <= 1'), ('mujoco', 'moonshot <= 1')):
            ref = ('hopper', 'stance', peer)
            if ref in med:
                print(f'  hopper stance, {label} / {peer} = {med[stance] / med[ref]:.2f} '
                      f'({low[stance] / low[ref]:.2f}) ({goal})')
        biped = ('biped', 'double', label)
        if biped in med:
            print(f'  biped double support / hopper stance, {label} = '
                  f'{med[biped] / med[stance]:.2f} ({low[biped] / low[stance]:.2f}) (goal <= 2)')
    for label in ('dodo timestepping', 'dodo timestepping py3d', 'dodo event'):
        quad, ref = ('quad', 'stance', label), ('quad', 'stance', 'mujoco')
        if quad in med and ref in med:
            print(f'  quadruped stance, {label} / mujoco = {med[quad] / med[ref]:.1f} '
                  f'({low[quad] / low[ref]:.1f}) (goal <= 3 for timestepping)')
    quad_ts, quad_ev = ('quad', 'stance', 'dodo timestepping'), ('quad', 'stance', 'dodo event')
    if quad_ts in med and quad_ev in med:
        print(f'  quadruped stance, event / timestepping = {med[quad_ev] / med[quad_ts]:.1f} '
              f'(goal <= 3)')
    print(f'bench wall time {time.perf_counter() - wall_start:.1f} s')
    if args.profile:
        case = next(c for c in cases if c.label == 'dodo timestepping' and c.phase == 'stance')
        profile_stance(case, params, args.steps * 3)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
