"""Speed of ``Simulator.step`` against MuJoCo on the same hopper, measured side by side.

    python bench/bench_simulator.py [--steps 1000] [--repetitions 7] [--profile]

For both dodo_sim integrators and for MuJoCo (``mujoco.mj_step``, same URDF/xacro, see
``mujoco_model.py``), dt = control period = 1 ms:

* drop test: the PD-held bent leg (hip/knee held at the start pose) falls from a foot height
  of 0.3 m and settles for 2 s; worst and resting penetration of the foot point (dodo_sim: min
  foot z; MuJoCo: depth of the foot sphere in the floor - its contacts are soft);
* stance: the settled leg keeps standing under the PD hold; time per step;
* flight: the leg far above the ground with zero torque (a free fall); time per step.

Each timed block runs ``--steps`` steps of one case; the cases take turns block by block
(``--repetitions`` rounds after one warm-up round) so that machine noise hits them alike, and
the table shows the median over rounds. Every step is timed on its own with
``time.perf_counter`` (the PD law and setting MuJoCo's ctrl are outside the timed region;
the timer's own overhead is measured and subtracted). Ratios are against MuJoCo in this run;
nothing here asserts on time.
"""
from __future__ import annotations

import argparse
import cProfile
import math
import pstats
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import mujoco
import numpy as np

from dodo_sim.model import Kinematics, load_leg_model
from dodo_sim.paths import default_urdf_path
from dodo_sim.simulator import INTEGRATORS, SimConfig, Simulator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mujoco_model import MujocoHopper, build_mujoco_hopper, compare_with_pinocchio  # noqa: E402


@dataclass(frozen=True)
class BenchParams:
    """Attributes:
        dt_s: physics step = control period of every engine, s.
        hold_stiffness_nm_per_rad / hold_damping_nms_per_rad: PD hold of hip and knee.
        stance_pose: [x m, z m, hip rad, knee rad] held by the PD law (z is shifted for the drop).
        drop_height_m: initial height of the foot point above the ground, m.
        drop_duration_s: simulated drop-and-settle time before the stance timing, s.
        rest_window_s: the last part of the drop test averaged for the resting penetration, s.
        flight_base_z_m: base height of the flight case (the foot stays above ground for > 3 s).
        friction: Coulomb coefficient of both engines (-).
        goal_stance_us: issue-2 goal for the time-stepping integrator in stance, us/step.
        mujoco_reference_us: MuJoCo's stance cost the goal was set against, us/step.
    """

    dt_s: float = 0.001
    hold_stiffness_nm_per_rad: float = 300.0
    hold_damping_nms_per_rad: float = 20.0
    stance_pose: tuple = (0.0, 1.0, 0.3, -0.6)
    drop_height_m: float = 0.3
    drop_duration_s: float = 2.0
    rest_window_s: float = 0.2
    flight_base_z_m: float = 8.0
    friction: float = 0.8
    goal_stance_us: float = 25.0
    mujoco_reference_us: float = 5.0


class DodoEngine:
    """dodo_sim ``Simulator`` behind the small interface the bench drives."""

    def __init__(self, urdf, integrator: str, params: BenchParams):
        self.label = integrator
        self.sim = Simulator(urdf, SimConfig(integrator=integrator, dt=params.dt_s,
                                             control_period=params.dt_s,
                                             friction=params.friction))
        self.state = self.sim.state

    def reset(self, q, v) -> None:
        self.state = self.sim.reset(q, v)

    def joints(self):
        """hip, knee, hip rate, knee rate as Python floats."""
        q, v = self.state.q, self.state.v
        return float(q[2]), float(q[3]), float(v[2]), float(v[3])

    def timed_step(self, tau, clock=time.perf_counter) -> float:
        start = clock()
        self.state = self.sim.step(tau)
        return clock() - start

    def foot_z(self) -> float:
        return float(self.state.foot_position[1])

    def in_contact(self) -> bool:
        return self.state.in_contact


class MujocoEngine:
    """``mujoco.mj_step`` on the converted hopper behind the same interface."""

    label = 'mujoco'

    def __init__(self, hopper: MujocoHopper):
        self.hopper = hopper
        self.model = hopper.model
        self.data = mujoco.MjData(hopper.model)

    def reset(self, q, v) -> None:
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:] = q
        self.data.qvel[:] = v
        mujoco.mj_forward(self.model, self.data)

    def joints(self):
        qpos, qvel = self.data.qpos, self.data.qvel
        return float(qpos[2]), float(qpos[3]), float(qvel[2]), float(qvel[3])

    def timed_step(self, tau, clock=time.perf_counter, step=mujoco.mj_step) -> float:
        ctrl = self.data.ctrl
        ctrl[0] = tau[0]
        ctrl[1] = tau[1]
        model, data = self.model, self.data
        start = clock()
        step(model, data)
        return clock() - start

    def foot_z(self) -> float:
        # mj_step leaves geom_xpos at the state before its integration: recompute it
        mujoco.mj_kinematics(self.model, self.data)
        return self.hopper.foot_z(self.data)

    def in_contact(self) -> bool:
        return self.data.ncon > 0


class PDHold:
    """tau = kp (q_ref - q) - kd v on hip and knee, in Python floats."""

    def __init__(self, params: BenchParams):
        self.kp = params.hold_stiffness_nm_per_rad
        self.kd = params.hold_damping_nms_per_rad
        self.hip_ref, self.knee_ref = params.stance_pose[2], params.stance_pose[3]

    def __call__(self, engine) -> tuple:
        hip, knee, hip_rate, knee_rate = engine.joints()
        return (self.kp * (self.hip_ref - hip) - self.kd * hip_rate,
                self.kp * (self.knee_ref - knee) - self.kd * knee_rate)


@dataclass
class DropResult:
    worst_penetration_m: float
    rest_penetration_m: float
    touchdown_s: float


def drop_pose(leg, params: BenchParams, foot_height_m: float) -> np.ndarray:
    q = np.array(params.stance_pose, dtype=float)
    q[1] += foot_height_m - Kinematics(leg).foot_position(q)[1]
    return q


def drop_test(engine, q0, params: BenchParams, hold: PDHold) -> DropResult:
    """PD-held drop and settle; leaves the engine standing (the stance case continues it)."""
    engine.reset(q0, np.zeros(4))
    steps = int(round(params.drop_duration_s / params.dt_s))
    rest_steps = int(round(params.rest_window_s / params.dt_s))
    foot_z = np.empty(steps)
    touchdown = math.nan
    for k in range(steps):
        engine.timed_step(hold(engine))
        foot_z[k] = engine.foot_z()
        if math.isnan(touchdown) and engine.in_contact():
            touchdown = (k + 1) * params.dt_s
    return DropResult(worst_penetration_m=max(0.0, -float(foot_z.min())),
                      rest_penetration_m=-float(foot_z[-rest_steps:].mean()),
                      touchdown_s=touchdown)


@dataclass
class Case:
    engine: object
    phase: str
    samples_us: list
    contact_steps: int = 0
    steps: int = 0

    @property
    def label(self) -> str:
        return self.engine.label


def timer_overhead_s(clock=time.perf_counter, n: int = 20000) -> float:
    samples = []
    for _ in range(n):
        start = clock()
        samples.append(clock() - start)
    return statistics.median(samples)


def run_block(case: Case, steps: int, hold: PDHold, flight_q: np.ndarray,
              overhead_s: float) -> float:
    """Mean us per step of ``steps`` steps of one case."""
    engine = case.engine
    total = 0.0
    contact = 0
    if case.phase == 'flight':
        engine.reset(flight_q, np.zeros(4))
        zero = (0.0, 0.0)
        for _ in range(steps):
            total += engine.timed_step(zero)
            contact += engine.in_contact()
    else:
        for _ in range(steps):
            total += engine.timed_step(hold(engine))
            contact += engine.in_contact()
    case.contact_steps += contact
    case.steps += steps
    return (total / steps - overhead_s) * 1e6


def profile_timestepping_stance(urdf, params: BenchParams, steps: int) -> None:
    """Per-line profile of Simulator.step + the time-stepping step in settled stance.

    Uses line_profiler when installed (``pip install line_profiler``): cProfile cannot see the
    pinocchio calls (Boost.Python functions) and lumps them into the caller's own time.
    """
    leg = load_leg_model(urdf)
    engine = DodoEngine(urdf, 'timestepping', params)
    hold = PDHold(params)
    drop_test(engine, drop_pose(leg, params, params.drop_height_m), params, hold)
    sim = engine.sim
    try:
        from line_profiler import LineProfiler
    except ImportError:
        LineProfiler = None
    if LineProfiler is not None:
        integrator = type(sim.integrator)
        profiler = LineProfiler(type(sim).step, type(sim)._make_state, integrator.step,
                                *(getattr(integrator, name) for name in ('_gap', '_project_out')
                                  if hasattr(integrator, name)))
    else:
        profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(steps):
        engine.state = sim.step(hold(engine))
    profiler.disable()
    print(f'\nProfile of Simulator.step, timestepping, stance, {steps} steps (the profiler adds '
          'about 0.3 us per line: read proportions, not absolute times):')
    if LineProfiler is not None:
        profiler.print_stats(output_unit=1e-6, stripzeros=True)
    else:
        print('(line_profiler not installed: cProfile hides the pinocchio calls in the callers)')
        pstats.Stats(profiler).sort_stats('tottime').print_stats(18)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--urdf', default=str(default_urdf_path()))
    parser.add_argument('--steps', type=int, default=1000, help='steps per timed block')
    parser.add_argument('--repetitions', type=int, default=7, help='timed rounds (median)')
    parser.add_argument('--profile', action='store_true',
                        help='also print a cProfile of the time-stepping stance step')
    args = parser.parse_args(argv)
    params = BenchParams()
    wall_start = time.perf_counter()

    leg = load_leg_model(args.urdf)
    hopper = build_mujoco_hopper(args.urdf, timestep_s=params.dt_s, friction=params.friction)
    check = compare_with_pinocchio(hopper, leg, params.stance_pose)
    print(f'mujoco {mujoco.__version__}, python {sys.version.split()[0]}; '
          f'model check vs pinocchio at the stance pose: max |dM| = {check["mass_matrix"]:.1e}'
          f' (boom carriage mass), |dg| = {check["gravity_torque"]:.1e} N, '
          f'|dfoot| = {check["foot_position"]:.1e} m')

    hold = PDHold(params)
    q_drop = drop_pose(leg, params, params.drop_height_m)
    flight_q = np.array(params.stance_pose, dtype=float)
    flight_q[1] = params.flight_base_z_m

    engines = {name: DodoEngine(args.urdf, name, params) for name in INTEGRATORS}
    engines['mujoco'] = MujocoEngine(hopper)
    drops = {name: drop_test(engine, q_drop, params, hold) for name, engine in engines.items()}
    cases = []
    for name, engine in engines.items():
        flight_engine = (MujocoEngine(hopper) if name == 'mujoco'
                         else DodoEngine(args.urdf, name, params))
        cases.append(Case(engine, 'stance', []))
        cases.append(Case(flight_engine, 'flight', []))

    overhead = timer_overhead_s()
    for case in cases:  # warm-up round, not recorded
        run_block(case, args.steps, hold, flight_q, overhead)
        case.contact_steps = case.steps = 0
    for _ in range(args.repetitions):
        for case in cases:
            case.samples_us.append(run_block(case, args.steps, hold, flight_q, overhead))

    median = {(c.label, c.phase): statistics.median(c.samples_us) for c in cases}
    print(f'\nSimulator.step vs mujoco.mj_step, dt = {params.dt_s * 1e3:g} ms, median of '
          f'{args.repetitions} interleaved blocks of {args.steps} steps '
          f'(timer overhead {overhead * 1e9:.0f} ns/step subtracted)')
    header = (f"{'integrator':<14}{'phase':<8}{'us/step':>9}{'min-max us':>14}{'steps/s':>10}"
              f"{'ours/MuJoCo':>13}{'in contact':>12}")
    print(header)
    print('-' * len(header))
    for case in cases:
        us = median[(case.label, case.phase)]
        ratio = us / median[('mujoco', case.phase)]
        spread = f'{min(case.samples_us):.1f}-{max(case.samples_us):.1f}'
        print(f'{case.label:<14}{case.phase:<8}{us:>9.2f}{spread:>14}{1e6 / us:>10.0f}'
              f'{ratio:>12.1f}x{case.contact_steps / case.steps:>12.0%}')

    print(f'\nDrop test: PD hold (kp = {params.hold_stiffness_nm_per_rad:g} N*m/rad, '
          f'kd = {params.hold_damping_nms_per_rad:g} N*m*s/rad), foot dropped from '
          f'{params.drop_height_m:g} m, {params.drop_duration_s:g} s')
    header = (f"{'integrator':<14}{'touchdown s':>12}{'worst penetration mm':>22}"
              f"{'resting depth mm':>18}")
    print(header)
    print('-' * len(header))
    for name, drop in drops.items():
        print(f'{name:<14}{drop.touchdown_s:>12.3f}{drop.worst_penetration_m * 1e3:>22.4f}'
              f'{drop.rest_penetration_m * 1e3:>18.4f}')
    solref = ' '.join(f'{x:g}' for x in hopper.model.geom_solref[hopper.foot_geom_id])
    solimp = ' '.join(f'{x:g}' for x in hopper.model.geom_solimp[hopper.foot_geom_id])
    print('(dodo_sim: -min foot-point z; MuJoCo: depth of the foot sphere in the floor, default '
          f'soft contact solref = [{solref}], solimp = [{solimp}]; resting depth: mean over the '
          f'last {params.rest_window_s:g} s, negative = above the ground)')

    ours = median[('timestepping', 'stance')]
    reference = median[('mujoco', 'stance')]
    verdict = 'MET' if ours <= params.goal_stance_us else (
        f'NOT MET, {ours / params.goal_stance_us:.1f}x over')
    print(f'\nGoal (issue 2): timestepping stance <= {params.goal_stance_us:g} us/step '
          f'(MuJoCo ~{params.mujoco_reference_us:g} us) -> measured {ours:.1f} us/step: '
          f'{verdict}.')
    print(f'  same goal as a ratio: <= {params.goal_stance_us / params.mujoco_reference_us:.0f}x '
          f'MuJoCo -> measured {ours / reference:.1f}x (MuJoCo here {reference:.2f} us/step)')
    best = {(c.label, c.phase): min(c.samples_us) for c in cases}
    print(f'  least disturbed block (min over rounds): timestepping stance '
          f'{best[("timestepping", "stance")]:.1f} us/step, MuJoCo '
          f'{best[("mujoco", "stance")]:.2f} us/step (a shared machine inflates the medians)')
    print(f'bench wall time {time.perf_counter() - wall_start:.1f} s')

    if args.profile:
        profile_timestepping_stance(args.urdf, params, args.steps * 3)
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
