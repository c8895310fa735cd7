# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
:class:`SimConfig`: every parameter of a simulation, with its unit and bounds, checked at build.

The simulator core (:mod:`dodo_sim.physics.simulator`), the simulator node's ROS parameters and
the params files' ``simulator:`` section all read it; the public import is
``dodo_sim.simulator.SimConfig``.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Mapping

from dodo_sim.parameter import bounded, check_fields, config_from_dict, one_of

from .collision import COLLISION_MODES
from .motor import (DING_RAMOS_BACK_EMF_CONSTANT_V_S_PER_RAD, DING_RAMOS_GEAR_RATIOS,
                    DING_RAMOS_RESISTANCE_OHM, DING_RAMOS_ROTOR_INERTIA_KGM2,
                    DING_RAMOS_TORQUE_CONSTANT_NM_PER_A)
from .robot import AUTO, BASES
from .terrain import make_terrain, TERRAIN_KINDS
from .timestepping import SOLVERS

#: SimConfig.event_accumulation: an event step the event integrator cannot resolve
EVENT_ACCUMULATION = ('timestepping', 'stop')

INTEGRATORS = ('timestepping', 'event')
#: SimConfig fields of the motors of the actuated joints (one value each, or one per joint).
MOTOR_PARAMETERS = ('motor_gear_ratio', 'motor_rotor_inertia_kgm2', 'motor_supply_voltage_v',
                    'motor_resistance_ohm', 'motor_torque_constant_nm_per_a',
                    'motor_back_emf_constant_v_s_per_rad', 'motor_peak_torque_nm')
MODES = ('lockstep', 'realtime')
#: SimConfig fields of the joint encoders (none, one value each, or one per 1-DoF joint).
JOINT_SENSOR_PARAMETERS = tuple(f'joint_{quantity}_{part}' for quantity in ('position', 'velocity')
                                for part in ('noise', 'bias', 'bias_walk', 'resolution'))
#: Largest sensor latency, control periods (bounds the memory of a sensor's delay line).
MAX_LATENCY_PERIODS = 1000
#: SimConfig.imu_link values that are not link names: the root link of a floating base (none
#: for a robot attached to the world), no IMU.
IMU_AUTO, IMU_NONE = 'auto', 'none'

_MODEL = 'the robot model is built from it at start; a new model is a new run'
_CLOCK = ('the exchange runs on it from the first state (stamps, bags and replay rely on one '
          'control period and mode for a run)')
_METHOD = 'the numerical method is fixed for a run; compare methods in separate runs'
_INERTIA = ("it is part of the mass matrix (the motors' reflected inertia): changing it while "
            "running would change the robot's momentum")
#: The physics' SimConfig fields fixed for a run, with their reasons (:data:`STARTUP_ONLY`).
_FIXED_PHYSICS = {
    'integrator': _METHOD, 'dt': _METHOD, 'control_period': _CLOCK, 'mode': _CLOCK,
    'command_timeout': _CLOCK, 'base': _MODEL, 'contact_frames': _MODEL,
    'contact_radii': _MODEL, 'collisions': _MODEL, 'collision_exclude_links': _MODEL,
    'actuated_joints': _MODEL, 'joint_limits': _MODEL, 'solver': _METHOD,
    'solver_relaxation': _METHOD, 'solver_max_iterations': _METHOD, 'solver_tolerance': _METHOD,
    'position_correction': _METHOD, 'drift_correction_rate': _METHOD,
    'event_tolerance_s': _METHOD, 'event_accumulation_speed': _METHOD,
    'event_accumulation': _METHOD, 'motor_dynamics': _INERTIA, 'motor_gear_ratio': _INERTIA,
    'motor_rotor_inertia_kgm2': _INERTIA,
}


@dataclass(frozen=True)
class SimConfig:
    """
    Simulator parameters (the simulator node declares exactly these as ROS parameters).

    Fields:
        integrator: 'timestepping' (Moreau-Jean midpoint) or 'event' (event-driven hybrid).
        dt: physics step, s. Event-driven: the fixed RK4 step between located events.
        control_period: one ``step()``, s; must be an integer multiple of dt.
        mode: 'lockstep' or 'realtime' (used by the simulator node; the core ignores it).
        command_timeout: wall s without a valid command before the node warns; lockstep keeps
            waiting (simulated time pauses), realtime applies zero torque (at most 60 s: a
            realtime run never holds a torque longer).
        initial_q: configuration used by ``reset()``, one value per entry of q in URDF joint order
            (m, rad; a free flyer: x y z qx qy qz qw); empty: the model's default (neutral pose, or
            the URDF's ros2_control initial_value).
        initial_v: joint velocities used by ``reset()`` (m/s, rad/s), one per DoF; empty: zero (or
            the URDF's ros2_control initial_value).
        base: 'auto' (default): a floating base (free flyer, 7 coordinates [x y z qx qy qz qw]
            first in q, 6 velocities first in v) when the URDF's root link is not a link named
            'world', the URDF's own joints to the world otherwise (the ROS/Gazebo convention);
            'floating' or 'fixed' force it.
        contact_frames: URDF frames (links) whose origins are point contacts with the terrain.
        contact_radii: sphere radius of each contact frame, m (>= 0); empty: all 0.
        collisions: 'links' (default): every moving link's URDF collision shapes (sphere,
            box, cylinder, STL mesh as its bounding box) touch the terrain too, as hard contacts
            with Coulomb friction, the contact frames keep their point contacts (docs/physics.md
            "Link collisions"; a URDF without collision shapes: the feet only); 'feet': only the
            contact frames touch it (the rest passes through); no self-collision.
        collision_exclude_links: comma-separated links whose collision shapes never touch the
            terrain ('links' only; a string, not a list, so that the ROS parameter has a type while
            empty).
        actuated_joints: joints commanded by ``step(tau)``; 'auto' (default): every movable joint
            whose URDF effort limit is > 0, in URDF order.
        joint_limits: enforce the URDF position limits as unilateral constraints with impacts.
        friction: Coulomb coefficient mu (-), >= 0.
        restitution: normal restitution e in [0, 1] (0: plastic impact).
        terrain: one of 'flat', 'slope', 'steps', 'sinusoid'.
        terrain_height_m: ground height at x = 0 (flat/slope/sinusoid) or before the first step, m.
        slope_deg: slope angle, degrees in (-60, 60) (positive: ground rises with x).
        step_edges_x_m: x of each step edge, m (increasing).
        step_rises_m: height change at each edge, m.
        sine_amplitude_m / sine_wavelength_m: sinusoidal ground, m.
        solver: contact solver of the time-stepping step, 'gauss_seidel' (block Gauss-Seidel with
            an exact solve per contact) or 'jacobi' (block Jacobi).
        solver_relaxation: SOR/JOR factor in (0, 2).
        solver_max_iterations: sweep cap of the contact solver (1 to 100000: the cost of one step
            stays bounded).
        solver_tolerance: contact-solver residual (complementarity and Coulomb conditions) at which
            a solve counts as converged, m/s (> 0).
        position_correction: time-stepping: project residual penetration out after each step.
        drift_correction_rate: event-driven constraint stabilisation (Baumgarte), 1/s.
        event_tolerance_s: event-driven root-finding tolerance on event times, s.
        event_accumulation_speed: event-driven end of Zeno sequences (a wheel rocking, a ball
            bouncing), m/s (>= 0): an impact slower than this is plastic and a constraint
            separating slower than this after an impact stays closed; 1e-4 m/s rises < 1e-9 m under
            gravity; 0 switches the rule off.
        event_accumulation: what the event-driven integrator does with a physics step holding
            more events than it can resolve (an accumulation it does not pass: a robot landing
            on dozens of support points at once): 'timestepping' (default) takes that one
            physics step with the time-stepping scheme and then derives the contact modes anew
            (counted in ``Simulator.accumulation_steps``, logged once); 'stop' raises
            SimulationDiverged (EventLimitExceeded), as before.
        torque_saturation: clip commanded torques at the peak torques (motor_peak_torque_nm, else
            the URDF effort limits) and, when motor_supply_voltage_v is set, at the back-EMF
            torque-speed limit of each actuated joint: clip(G K_t (V - K_e G |qdot|) / R, 0, peak)
            along the motion, clip(G K_t (V + K_e G |qdot|) / R, 0, peak) against it (Ding & Ramos'
            isControlSaturate; docs/physics.md "Motors").
        motor_time_constant: first-order torque lag, s (0: ideal motors).
        motor_dynamics: add each actuated joint's rotor inertia reflected through its gear, G^2
            J_rotor, to the mass matrix (pinocchio armature; Ding & Ramos' isMotorDynamics without
            their back-EMF damping).
        motor_gear_ratio: G of each actuated joint (-), > 0; one value: every actuated joint.
            Default: Ding & Ramos' hip, 26.9.
        motor_rotor_inertia_kgm2: J_rotor of each actuated joint's motor, kg*m^2, >= 0; one value:
            every joint. Default: Ding & Ramos' 7e-6.
        motor_supply_voltage_v: V, volts, > 0; one value: every joint; empty (default): no back-EMF
            limit (Ding & Ramos: 12).
        motor_resistance_ohm: winding resistance R, ohm, > 0; one value: every joint. Default: Ding
            & Ramos' 1.3.
        motor_torque_constant_nm_per_a: K_t, N*m/A, > 0; one value: every joint. Default: Ding &
            Ramos' 0.0135.
        motor_back_emf_constant_v_s_per_rad: K_e, V*s/rad, >= 0; one value: every joint. Default:
            Ding & Ramos' 0.0186.
        motor_peak_torque_nm: joint-side stall/peak torque of each actuated joint, N*m, > 0; one
            value: every joint; empty (default): the URDF effort limits.
        push_times: times of scheduled pushes on the base, s.
        push_impulses_x / push_impulses_z: impulse of each push, N*s (world x / z).
        max_speed: |v| above this (m/s or rad/s) or non-finite state stops the run as diverged
            (at most 1e6: the divergence check cannot be switched off).

        Sensors (:mod:`dodo_sim.physics.sensors`, docs/ros_contract.md "Sensors"): what the
        controller is given, on /joint_states, /<frame>_contact and imu and in ``rollout``; the
        truth stays on ground_truth/* and in the rollout's q, v. Every default is an ideal sensor.
        A reading is truth + bias + bias random walk + white noise, rounded to the resolution,
        and reported ``*_latency`` control periods later.
        sensor_seed: seed of every sensor's noise stream (a run is a function of it).
        joint_position_noise: white noise sigma of the encoders (1-DoF joints' positions), rad
            (m for a prismatic joint); every joint_* field: empty = 0, one value = every joint,
            else one per joint in /joint_states order.
        joint_position_bias: constant bias of the joint positions, rad (m).
        joint_position_bias_walk: bias random walk of the joint positions, rad (m) per sqrt(s).
        joint_position_resolution: least significant bit of the joint positions, rad (m): 2 pi /
            counts per revolution of a rotary encoder; 0: continuous.
        joint_velocity_noise: white noise sigma of the joint velocities, rad/s (m/s).
        joint_velocity_bias: constant bias of the joint velocities, rad/s (m/s).
        joint_velocity_bias_walk: bias random walk of the joint velocities, rad/s (m/s) per
            sqrt(s).
        joint_velocity_resolution: least significant bit of the joint velocities, rad/s (m/s).
        joint_state_latency: /joint_states reports the reading of this many control periods ago.
        contact_force_noise: white noise sigma of each component of every contact force (the
            foot force sensor), N.
        contact_force_bias: constant bias of each contact force component, N.
        contact_force_bias_walk: bias random walk of each contact force component, N per sqrt(s).
        contact_force_resolution: least significant bit of the contact forces, N.
        contact_force_latency: the contact topics report the force of this many periods ago.
        imu_link: link whose frame carries the IMU (sensor_msgs/Imu on imu); 'auto': the root
            link of a floating base, none for a robot attached to the world; 'none': no IMU.
        imu_angular_velocity_noise: white noise sigma of the gyroscope, rad/s per axis.
        imu_angular_velocity_bias: constant gyroscope bias, rad/s per axis.
        imu_angular_velocity_bias_walk: gyroscope bias random walk, rad/s per sqrt(s).
        imu_angular_velocity_resolution: least significant bit of the gyroscope, rad/s.
        imu_linear_acceleration_noise: white noise sigma of the accelerometer (specific force),
            m/s^2 per axis.
        imu_linear_acceleration_bias: constant accelerometer bias, m/s^2 per axis.
        imu_linear_acceleration_bias_walk: accelerometer bias random walk, m/s^2 per sqrt(s).
        imu_linear_acceleration_resolution: least significant bit of the accelerometer, m/s^2.
        imu_orientation_noise: white noise sigma of the orientation error (a rotation vector in
            the IMU's axes), rad per axis.
        imu_orientation_bias: constant orientation error (misalignment), rad per axis.
        imu_orientation_bias_walk: orientation drift, a random walk, rad per sqrt(s).
        imu_latency: imu reports the reading of this many control periods ago.
    """

    integrator: str = one_of('timestepping', INTEGRATORS)
    dt: float = bounded(0.001, low=0.0, low_open=True, unit='s')
    control_period: float = bounded(0.001, low=0.0, low_open=True, unit='s')
    mode: str = one_of('lockstep', MODES)
    command_timeout: float = bounded(0.5, low=0.0, low_open=True, high=60.0, unit='s')
    initial_q: tuple = bounded((), unit='m, rad')
    initial_v: tuple = bounded((), unit='m/s, rad/s')
    base: str = one_of(AUTO, BASES)
    contact_frames: tuple = ('foot',)
    contact_radii: tuple = bounded((), low=0.0, unit='m')
    collisions: str = one_of('links', COLLISION_MODES)
    collision_exclude_links: str = ''
    actuated_joints: tuple = (AUTO,)
    joint_limits: bool = True
    friction: float = bounded(0.8, low=0.0, unit='-')
    restitution: float = bounded(0.0, low=0.0, high=1.0, unit='-')
    terrain: str = one_of('flat', TERRAIN_KINDS)
    terrain_height_m: float = bounded(0.0, unit='m')
    slope_deg: float = bounded(0.0, -60.0, 60.0, low_open=True, high_open=True, unit='deg')
    step_edges_x_m: tuple = bounded((), unit='m')
    step_rises_m: tuple = bounded((), unit='m')
    sine_amplitude_m: float = bounded(0.0, unit='m')
    sine_wavelength_m: float = bounded(1.0, low=0.0, low_open=True, unit='m')
    solver: str = one_of('gauss_seidel', SOLVERS)
    solver_relaxation: float = bounded(1.0, low=0.0, high=2.0, low_open=True, high_open=True,
                                       unit='-')
    solver_max_iterations: int = bounded(100, low=1, high=100_000, unit='sweeps')
    solver_tolerance: float = bounded(1e-10, low=0.0, low_open=True, unit='m/s')
    position_correction: bool = True
    drift_correction_rate: float = bounded(200.0, low=0.0, low_open=True, unit='1/s')
    event_tolerance_s: float = bounded(1e-12, low=0.0, low_open=True, unit='s')
    event_accumulation_speed: float = bounded(1e-4, low=0.0, unit='m/s')
    event_accumulation: str = one_of('timestepping', EVENT_ACCUMULATION)
    torque_saturation: bool = False
    motor_time_constant: float = bounded(0.0, low=0.0, unit='s')
    motor_dynamics: bool = False
    motor_gear_ratio: tuple = bounded((DING_RAMOS_GEAR_RATIOS[0],), low=0.0, low_open=True,
                                      unit='-')
    motor_rotor_inertia_kgm2: tuple = bounded((DING_RAMOS_ROTOR_INERTIA_KGM2,), low=0.0,
                                              unit='kg*m^2')
    motor_supply_voltage_v: tuple = bounded((), low=0.0, low_open=True, unit='V')
    motor_resistance_ohm: tuple = bounded((DING_RAMOS_RESISTANCE_OHM,), low=0.0, low_open=True,
                                          unit='ohm')
    motor_torque_constant_nm_per_a: tuple = bounded((DING_RAMOS_TORQUE_CONSTANT_NM_PER_A,),
                                                    low=0.0, low_open=True, unit='N*m/A')
    motor_back_emf_constant_v_s_per_rad: tuple = bounded(
        (DING_RAMOS_BACK_EMF_CONSTANT_V_S_PER_RAD,), low=0.0, unit='V*s/rad')
    motor_peak_torque_nm: tuple = bounded((), low=0.0, low_open=True, unit='N*m')
    push_times: tuple = bounded((), low=0.0, unit='s')
    push_impulses_x: tuple = bounded((), unit='N*s')
    push_impulses_z: tuple = bounded((), unit='N*s')
    max_speed: float = bounded(1.0e3, low=0.0, low_open=True, high=1.0e6, unit='m/s or rad/s')
    # sensors (dodo_sim.physics.sensors): every default an ideal sensor
    sensor_seed: int = bounded(0, low=0, high=2 ** 63 - 1, unit='-')
    joint_position_noise: tuple = bounded((), low=0.0, unit='rad or m')
    joint_position_bias: tuple = bounded((), unit='rad or m')
    joint_position_bias_walk: tuple = bounded((), low=0.0, unit='rad/sqrt(s) or m/sqrt(s)')
    joint_position_resolution: tuple = bounded((), low=0.0, unit='rad or m')
    joint_velocity_noise: tuple = bounded((), low=0.0, unit='rad/s or m/s')
    joint_velocity_bias: tuple = bounded((), unit='rad/s or m/s')
    joint_velocity_bias_walk: tuple = bounded((), low=0.0, unit='rad/s/sqrt(s) or m/s/sqrt(s)')
    joint_velocity_resolution: tuple = bounded((), low=0.0, unit='rad/s or m/s')
    joint_state_latency: int = bounded(0, low=0, high=MAX_LATENCY_PERIODS, unit='periods')
    contact_force_noise: float = bounded(0.0, low=0.0, unit='N')
    contact_force_bias: float = bounded(0.0, unit='N')
    contact_force_bias_walk: float = bounded(0.0, low=0.0, unit='N/sqrt(s)')
    contact_force_resolution: float = bounded(0.0, low=0.0, unit='N')
    contact_force_latency: int = bounded(0, low=0, high=MAX_LATENCY_PERIODS, unit='periods')
    imu_link: str = IMU_AUTO
    imu_angular_velocity_noise: float = bounded(0.0, low=0.0, unit='rad/s')
    imu_angular_velocity_bias: float = bounded(0.0, unit='rad/s')
    imu_angular_velocity_bias_walk: float = bounded(0.0, low=0.0, unit='rad/s/sqrt(s)')
    imu_angular_velocity_resolution: float = bounded(0.0, low=0.0, unit='rad/s')
    imu_linear_acceleration_noise: float = bounded(0.0, low=0.0, unit='m/s^2')
    imu_linear_acceleration_bias: float = bounded(0.0, unit='m/s^2')
    imu_linear_acceleration_bias_walk: float = bounded(0.0, low=0.0, unit='m/s^2/sqrt(s)')
    imu_linear_acceleration_resolution: float = bounded(0.0, low=0.0, unit='m/s^2')
    imu_orientation_noise: float = bounded(0.0, low=0.0, unit='rad')
    imu_orientation_bias: float = bounded(0.0, unit='rad')
    imu_orientation_bias_walk: float = bounded(0.0, low=0.0, unit='rad/sqrt(s)')
    imu_latency: int = bounded(0, low=0, high=MAX_LATENCY_PERIODS, unit='periods')

    @property
    def excluded_collision_links(self) -> tuple:
        """``collision_exclude_links`` as a tuple of link names."""
        return tuple(n.strip() for n in self.collision_exclude_links.split(',') if n.strip())

    def __post_init__(self):
        for name in ('initial_q', 'initial_v', 'contact_radii', 'step_edges_x_m',
                     'step_rises_m', 'push_times', 'push_impulses_x', 'push_impulses_z') \
                + MOTOR_PARAMETERS + JOINT_SENSOR_PARAMETERS:
            object.__setattr__(self, name, tuple(float(x) for x in getattr(self, name)))
        for name in ('contact_frames', 'actuated_joints'):
            value = getattr(self, name)
            if isinstance(value, str):
                value = (value,)
            object.__setattr__(self, name, tuple(str(x) for x in value))
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad value."""
        def bad(name, why):
            raise ValueError(f'SimConfig.{name} = {getattr(self, name)!r}: {why}')

        # ranges, units, allowed values: the fields' metadata (dodo_sim.parameter), the same the
        # ROS parameter descriptors show; below: rules that relate fields or lengths
        check_fields(self)
        ratio = self.control_period / self.dt
        if abs(ratio - round(ratio)) > 1e-9 * ratio or round(ratio) < 1:
            bad('control_period', f'must be an integer multiple of dt = {self.dt} s '
                                  f'(ratio is {ratio:.6g})')
        if len(set(self.contact_frames)) != len(self.contact_frames) or not all(
                self.contact_frames):
            bad('contact_frames', 'needs distinct, non-empty frame names')
        if self.contact_radii and len(self.contact_radii) != len(self.contact_frames):
            bad('contact_radii', f'needs one radius per contact frame '
                                 f'({len(self.contact_frames)}) or none')
        if not self.actuated_joints or not all(self.actuated_joints):
            bad('actuated_joints', f"needs joint names, or ('{AUTO}',) for the joints with a URDF "
                                   f'effort limit > 0')
        for name in MOTOR_PARAMETERS:
            values = getattr(self, name)
            if not values and name not in ('motor_supply_voltage_v', 'motor_peak_torque_nm'):
                bad(name, 'needs one value, or one per actuated joint')
        if not len(self.push_times) == len(self.push_impulses_x) == len(self.push_impulses_z):
            bad('push_times', 'push_times, push_impulses_x and push_impulses_z need equal lengths')
        self.make_terrain()  # raises ValueError naming the bad shape value

    @property
    def substeps(self) -> int:
        return int(round(self.control_period / self.dt))

    def make_terrain(self):
        return make_terrain(self.terrain, height_m=self.terrain_height_m,
                            slope_deg=self.slope_deg, step_edges_x_m=self.step_edges_x_m,
                            step_rises_m=self.step_rises_m,
                            sine_amplitude_m=self.sine_amplitude_m,
                            sine_wavelength_m=self.sine_wavelength_m)

    @classmethod
    def from_dict(cls, values: Mapping[str, object]) -> 'SimConfig':
        """Build from a parameter mapping; unknown keys raise ValueError naming them."""
        return config_from_dict(cls, values, 'simulator')


#: The SimConfig fields of the sensors (:mod:`dodo_sim.physics.sensors`), in field order.
SENSOR_PARAMETERS = tuple(f.name for f in fields(SimConfig) if f.name.startswith(
    ('sensor_', 'joint_position_', 'joint_velocity_', 'joint_state_', 'contact_force_', 'imu_')))

_SENSORS = ("the simulator node builds the sensors' seeded noise, bias and delay lines from it "
            'at start')
#: SimConfig fields fixed for a run, with the reason ``ros2 param describe`` shows; every other
#: field is in :data:`RUNTIME_FIELDS` (docs/simulation_interfaces.md, "Runtime parameters").
STARTUP_ONLY = {**_FIXED_PHYSICS, **dict.fromkeys(SENSOR_PARAMETERS, _SENSORS)}

#: SimConfig fields a running simulator takes at a step boundary
#: (:meth:`dodo_sim.physics.simulator.Simulator.reconfigure`): the contact law, the terrain, the
#: motors' limits and lag, the scheduled pushes, the divergence bound and the start state of
#: later resets (``initial_q``, ``initial_v``).
RUNTIME_FIELDS = tuple(name for name in SimConfig.__dataclass_fields__
                       if name not in STARTUP_ONLY)
