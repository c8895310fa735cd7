# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Pinocchio 4's constraint solvers (PGS, ADMM) against dodo_sim's block solve on the exact cases.

    python bench/bench_pinocchio_solvers.py [--repetitions 2000]

Problems u = G lambda + b from the engine itself (Delassus operators of real configurations):
the hopper's sliding problem (mu |G_NT| / G_NN = 1.44), the same contact sticking and
separating, two feet at rest (the lever rule), a 3-D point mass sliding obliquely, an elbow hitting
its joint stop. Each is given to ``dodo_sim.physics.solver.solve`` and to
``pin.PGSConstraintSolver`` / ``pin.ADMMConstraintSolver`` (``solve_ncp = True``: the Coulomb
NCP, not its convex relaxation) through ``pin.DelassusOperatorDense`` with one
``PointContactConstraintModel`` per contact (normal last in pinocchio's order; a planar contact's
second tangent is a decoupled dummy row; a frictionless unilateral row is a point contact with
mu = 0). Reported: the natural-map residual of each answer (the same function for all, m/s; 0 =
every Coulomb / Signorini condition exact), the iterations, the difference to the exact solution,
and the time per solve (median over ``--repetitions``).
"""
from __future__ import annotations

import argparse
from pathlib import Path
import statistics
import sys
import time

import numpy as np
import pinocchio as pin

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / 'test'))

# These imports must follow the sys.path change above (E402), so they cannot take their
# place in the sorted import block (I100).
from dodo_sim.physics import solver as ncp  # noqa: E402, I100
from dodo_sim.physics.contact import blocks_for  # noqa: E402
from dodo_sim.physics.robot import load_robot  # noqa: E402
from dodo_sim.simulator import SimConfig, Simulator  # noqa: E402
from physics_models import horizontal_double_pendulum, point_mass_3d, two_foot_body  # noqa: E402

URDF = HERE.parent / 'urdf' / 'hopper.urdf.xacro'
MU = 0.8


def hopper_problem(b):
    """Return the foot's Delassus block with the leg nearly straight (hip 0, knee -0.3 rad)."""
    robot = load_robot(URDF)
    model, data = robot.model, robot.create_data()
    q = np.array([0.0, 1.0, 0.0, -0.3])
    minv = pin.computeMinverse(model, data, q)
    jac = pin.computeFrameJacobian(model, data, q, robot.foot_frame_id,
                                   pin.LOCAL_WORLD_ALIGNED)[(2, 0), :]
    return jac @ minv @ jac.T, np.array(b, float), [ncp.Block(0, 2, MU)]


def engine_problem(sim, q, v, force):
    """Return the time-stepping NCP of one step from (q, v) (the generic step's assembly)."""
    integrator = sim.integrator
    model, data = integrator.model, integrator.data
    dt = sim.config.dt
    q_mid = q + 0.5 * dt * v
    v_free = v + dt * pin.aba(model, data, q_mid, v, force, pin.Convention.WORLD)
    active = integrator._active_constraints(q_mid, v_free, 0.5 * dt)
    minv = pin.computeMinverse(model, data)
    W, blocks = blocks_for(active, integrator.contact.friction)
    return W @ minv @ W.T, W @ v_free, blocks


def problems():
    out = {}
    out['hopper sliding (1.44)'] = hopper_problem((-0.01, -1.0))
    out['hopper sticking'] = hopper_problem((-1.0, -0.05))
    out['hopper separating'] = hopper_problem((0.5, -1.0))
    body = Simulator(two_foot_body(com_x=0.1), SimConfig(contact_frames=('left', 'right'),
                                                         initial_q=(0.0, 0.2, 0.0)))
    out['two feet at rest'] = engine_problem(body, np.array([0.0, 0.2, 0.0]), np.zeros(3),
                                             np.zeros(3))
    mass = Simulator(point_mass_3d(), SimConfig(friction=0.5, initial_q=(0.0, 0.0, 0.0)))
    out['3-D oblique slide'] = engine_problem(mass, np.zeros(3), np.array([1.2, -0.9, 0.0]),
                                              np.zeros(3))
    arm = Simulator(horizontal_double_pendulum(elbow_upper=0.0), SimConfig(contact_frames=()))
    out['joint stop'] = engine_problem(arm, np.array([0.0, -1e-4]), np.array([0.0, 3.0]),
                                       np.zeros(2))
    return out


class PinocchioProblem:
    """One problem in pinocchio's form: 3 rows per block [t1, t2, n]."""

    def __init__(self, G, b, blocks):
        self.model = pin.Model()
        self.model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), 'root')
        size = 3 * len(blocks)
        self.index = []          # pinocchio row of each of our rows
        for k, blk in enumerate(blocks):
            base = 3 * k
            rows = [base + 2] + ([base] if blk.size >= 2 else []) + (
                [base + 1] if blk.size == 3 else [])
            self.index += rows
        self.index = np.array(self.index)
        self.G = np.eye(size)
        self.G[np.ix_(self.index, self.index)] = G
        self.g = np.zeros(size)
        self.g[self.index] = b
        self.models = pin.StdVec_ConstraintModel()
        for blk in blocks:
            contact = pin.PointContactConstraintModel(self.model, 1)
            contact.setFriction(blk.mu if blk.size > 1 else 0.0)
            self.models.append(pin.ConstraintModel(contact))
        self.datas = pin.StdVec_ConstraintData()
        for cm in self.models:
            self.datas.append(cm.createData())
        self.size = size

    def ours(self, lam_pin):
        return np.asarray(lam_pin)[self.index]


def make_solver(kind, size, tolerance=1e-12, iterations=1000):
    if kind == 'PGS':
        solver, settings, result = (pin.PGSConstraintSolver(size), pin.PGSSolverSettings(),
                                    pin.PGSSolverResult())
    else:
        solver, settings, result = (pin.ADMMConstraintSolver(size), pin.ADMMSolverSettings(),
                                    pin.ADMMSolverResult())
        settings.lanczos_size = size
    settings.absolute_feasibility_tol = tolerance
    settings.relative_feasibility_tol = 0.0
    settings.absolute_complementarity_tol = tolerance
    settings.relative_complementarity_tol = 0.0
    settings.max_iterations = iterations
    settings.solve_ncp = True
    return solver, settings, result


def median_time(function, repetitions):
    samples = []
    for _ in range(repetitions):
        start = time.perf_counter()
        function()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--repetitions', type=int, default=2000)
    args = parser.parse_args(argv)
    print(f'pinocchio {pin.__version__}; residual: natural map of the Coulomb NCP, m/s '
          f"(0 = exact); |d lambda|: largest difference to dodo_sim's solution")
    header = (f"{'problem':<24}{'solver':<8}{'residual':>11}{'iter':>6}{'|d lambda|':>12}"
              f"{'us/solve':>10}")
    print(header)
    print('-' * len(header))
    for name, (G, b, blocks) in problems().items():
        ours = ncp.solve(G, b, blocks, tolerance=1e-12, max_iterations=1000)
        t_ours = median_time(lambda: ncp.solve(G, b, blocks, tolerance=1e-12,
                                               max_iterations=1000), args.repetitions)
        print(f'{name:<24}{"dodo":<8}{ours.residual:>11.1e}{ours.iterations:>6}{0.0:>12.1e}'
              f'{t_ours:>10.1f}')
        problem = PinocchioProblem(G, b, blocks)
        for kind in ('PGS', 'ADMM'):
            solver, settings, result = make_solver(kind, problem.size)

            def solve():
                delassus = pin.DelassusOperatorDense(problem.G)
                solver.solve(delassus, problem.g, problem.models, problem.datas, settings,
                             result)
                return result

            try:
                solve()
            except Exception as exc:  # report a binding failure as a row, keep going
                print(f'{name:<24}{kind:<8} failed: {exc}')
                continue
            lam = problem.ours(result.retrieveConstraintImpulses())
            residual = ncp.residual(G, b, lam, blocks)
            t_pin = median_time(solve, args.repetitions)
            print(f'{name:<24}{kind:<8}{residual:>11.1e}{result.iterations:>6}'
                  f'{np.abs(lam - ours.lam).max():>12.1e}{t_pin:>10.1f}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
