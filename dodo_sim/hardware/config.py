# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Configuration of the hardware path.

The driver node's parameters (one frozen dataclass, :class:`DriverConfig`), the per-actuator and
boom views built from them and URDF joint limits (the calibration file is
:mod:`dodo_sim.hardware.calibration`). Pure data: no rclpy, no bus.

Joint conventions (actuator ``a``, joint ``q``; ``N`` = ``gear_ratio``, ``d`` = ``direction``,
``p0`` = the calibrated zero offset in actuator radians)::

    q = d (p - p0) / N      q' = d v / N      tau_joint = d N tau_actuator
    kp_actuator = kp_joint / N^2              kd_actuator = kd_joint / N^2

Boom (sensor board): ``yaw = dy 2 pi (counts_yaw - c0_yaw) / cpr_yaw``, same for pitch; a
``boom_arc`` joint is ``R yaw`` (the hopper's base_x), a ``boom_height`` joint is ``h + R sin
pitch`` (base_z), an ``angle`` joint is the angle itself (a revolute boom joint).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import math
from typing import Mapping
import xml.etree.ElementTree as ET

from dodo_sim.parameter import bounded, check_fields, one_of
from dodo_sim.ros.contract import HOSTED_CONTROLLER_NODE

from .odrive_protocol import odrive_error_name, odrive_model
from .protocol import error_name, MitRanges, model_ranges

HARDWARE_KINDS = ('can', 'emulated')
#: actuator protocols (DriverConfig.protocols): MIT mode (protocol.py), ODrive CAN Simple
#: (odrive.py)
PROTOCOLS = ('mit', 'odrive_can_simple')
ESTOP_MODES = ('disable', 'damping')
WATCHDOG_MODES = ('land', 'damp')
BOOM_KINDS = ('boom_arc', 'boom_height', 'angle')
EMULATOR_MODES = ('realtime', 'lockstep')
#: How the emulated robot is held before the motors are enabled (docs/hardware.md).
EMULATOR_STANDS = ('until_enable', 'clamped', 'none')


#: Longest watchdog delay, s: a hopper's leg falls from standing in ~0.3 s
#: (sqrt(2 x 0.5 m / g)); a watchdog that trips seconds later protects nothing.
MAX_COMMAND_TIMEOUT_S = 1.0
#: Highest temperature limit, degC: the top of the MIT reply's signed temperature byte
#: (protocol.py clamps there, and an unreadable temperature is reported as it), so a higher
#: limit could never trip.
MAX_TEMPERATURE_DEGC = 127.0


@dataclass(frozen=True)
class DriverConfig:
    """
    Parameters of the ``driver`` node (each one a ROS parameter; see config/hardware.yaml).

    Fields:
        hardware: 'can' (a real bus) or 'emulated' (the physics answers on an in-process
            python-can virtual bus with the same wire format).
        bus_interface: python-can interface of the real bus: socketcan, pcan, slcan, kvaser, ...
        bus_channel: channel of that interface (socketcan: can0).
        bus_bitrate: bit/s (interfaces that set it themselves; socketcan is set with ip link).
        control_period: period of the driver loop (send commands, read replies, publish), s.
        reply_timeout: how long a cycle waits for all replies after sending, s (< control_period).
        robot_description: URDF XML; empty: the package's urdf/hopper.urdf.xacro. Joint limits
            and effort limits come from it.
        joints: actuated joints driven by MIT-mode actuators, in command order.
        protocols: per joint 'mit' (MIT-mode actuator) or 'odrive_can_simple' (an ODrive axis
            in torque control); empty: all 'mit'. One protocol per bus (every entry the same).
        can_ids: CAN id of each joint's actuator (11-bit, 1..0x7F); an ODrive axis: its node
            id (0..0x3F; its frames are node_id << 5 | cmd_id).
        models: actuator model of each joint (protocol.MODELS: AK80-9, AK10-9, ...; an ODrive
            axis: odrive.ODRIVE_MODELS, e.g. ODrivePro-M8325s).
        directions: +1 or -1 per joint: sign between actuator and joint rotation.
        gear_ratios: external transmission ratio per joint (actuator turns per joint turn), -.
        torque_constants: output torque per ampere of each actuator, N*m/A (reports current).
        max_torques: joint-side torque clamp per joint, N*m, at most the model's torque range
            x gear ratio; empty: min(URDF effort, model torque range x gear ratio).
        damping: joint damping of the watchdog / e-stop damping mode per joint, N*m*s/rad.
        command_timeout: no valid command for this long while enabled: zero torque plus
            damping until commands return, s (<= 1 s: a leg falls in ~0.3 s).
        estop_mode: 'disable' (motors off, joints free) or 'damping' (motors on, zero torque
            plus damping) while the e-stop is active.
        watchdog_mode: what the actuators get while the watchdog is tripped: 'land' (hold the
            pose measured at the trip with low gains, then lower to ``fallback_crouch_pose``
            inside the soft limits and rest there; safety.py has the law) or 'damp' (zero
            torque plus ``damping``: a standing leg sinks onto its limits).
        fallback_stiffness: stiffness of the 'land' law per joint, N*m/rad (>= 0).
        fallback_damping: damping of the 'land' law per joint, N*m*s/rad (>= 0).
        fallback_crouch_pose: the pose the 'land' law lowers to, per actuated joint, rad
            (clipped inside the soft limits); empty: keep the pose measured at the trip.
        fallback_hold_time: 'land': s the trip pose is held before lowering (>= 0).
        fallback_lower_time: 'land': s the lowering to the crouch takes (>= 0).
        soft_limit_margin: width of the soft zone inside each URDF position limit, rad.
        soft_limit_stiffness: restoring stiffness in the soft zone, N*m/rad.
        soft_limit_damping: damping of motion towards the limit in the soft zone, N*m*s/rad.
        max_consecutive_missed: replies an actuator (or the sensor board) may miss in a row
            before the driver faults and disables, cycles.
        temperature_warn: actuator temperature reported as a warning, degC.
        temperature_limit: actuator temperature that faults and disables the driver, degC.
        stuck_reading_time: an enabled actuator whose position and velocity counts do not change
            for this long is faulted (frozen encoder), s; 0 disables the check.
        calibration_file: YAML file with the zero offsets (written by ~/calibrate); empty: no
            offsets (zeros), calibrate refuses.
        calibration_pose: joint positions of the calibration pose, one per joint in
            /joint_states order (m or rad); empty: all zero.
        boom_joints: joints measured by the sensor board's two encoders: [yaw joint, pitch
            joint] (empty strings: not present).
        boom_kinds: how each boom encoder maps to its joint: boom_arc (R yaw), boom_height
            (h + R sin pitch) or angle.
        boom_radius: boom length from the pivot to the body, m.
        boom_pivot_height: height of the boom pivot above the ground, m.
        boom_counts_per_rev: encoder counts per revolution [yaw, pitch].
        boom_directions: +1 or -1 per boom encoder.
        contact_frame: the contact frame whose force the sensor board measures ('' = none).
        contact_threshold: vertical force above which the foot counts as in contact, N
            (the foot switch also counts).
        diagnostics_period: period of /diagnostics, s (0.1 .. 1).
        warn_period: wall-clock s between repeated warnings of the same kind.
        emulator_mode: emulated hardware: 'realtime' (the physics follows the wall clock) or
            'lockstep' (one physics period per driver cycle, deterministic).
        emulator_initial_q: initial configuration of the emulated robot (SimConfig.initial_q).
        emulator_integrator: integrator of the emulated physics ('timestepping' | 'event').
        emulator_stand: how the emulated robot is held: 'until_enable' (frozen on its stand
            until the first enable), 'clamped' (body clamped, leg hanging free) or 'none'.
        emulator_dt: emulated physics step, s (realtime: the physics follows the wall clock in
            steps of this, whatever control_period is; lockstep: control_period must be an
            integer multiple of it).
        enable_on_start: emulated hardware only (refused with hardware 'can': a real bus is
            enabled by an explicit ~/enable call): enable once the start gate is open — every
            state topic has min_subscribers matched subscriptions and a valid command came
            (the controller is up and answers states), held for discovery_settle.
        min_subscribers: start gate of enable_on_start: matched subscriptions each state topic
            (/joint_states, the contact topic) needs, >= 1.
        discovery_settle: wall-clock s the start gate must have been open before enabling.
        startup_timeout: wall-clock s after which enable_on_start enables with the gate still
            closed (warning), s.
        stop_after: driver time after which the driver disables the actuators and the node
            exits with code 0, s; driver time runs from the first successful enable (the run
            starts when the motors do). 0: run until shut down.
        publish_robot_description: publish robot_description on /robot_description
            (transient local) for the controller; false when robot_state_publisher does.
        state_log: path of an MCAP file the driver writes every /joint_states it published
            to when it stops (a ring buffer in memory during the run: lossless whatever the
            recorder keeps; hardware/state_log.py); empty: none. ``dodo hop --bag B`` sets
            ``B.driver.mcap``.
        hosted_controller_node: name of the controller node the graph started ('' when the
            controller is the user's own node): the bound controller is announced on
            /simulator/controller as ``hosted`` when it is this node, else ``external``
            (SimulatorNodeConfig.hosted_controller_node).
    """

    hardware: str = one_of('can', HARDWARE_KINDS)
    bus_interface: str = 'socketcan'
    bus_channel: str = 'can0'
    bus_bitrate: int = bounded(1000000, low=1, unit='bit/s')
    control_period: float = bounded(0.001, low=0.0, low_open=True, unit='s')
    reply_timeout: float = bounded(0.0006, low=0.0, low_open=True, unit='s')
    robot_description: str = ''
    joints: tuple = ('hip', 'knee')
    protocols: tuple = ('mit', 'mit')
    can_ids: tuple = (1, 2)
    models: tuple = ('AK10-9', 'AK10-9')
    directions: tuple = (1, 1)
    gear_ratios: tuple = bounded((4.0, 4.0), low=0.0, low_open=True, unit='-')
    torque_constants: tuple = bounded((1.44, 1.44), low=0.0, low_open=True, unit='N*m/A')
    max_torques: tuple = bounded((), low=0.0, low_open=True, unit='N*m')
    damping: tuple = bounded((4.0, 4.0), low=0.0, unit='N*m*s/rad')
    command_timeout: float = bounded(0.05, low=0.0, high=MAX_COMMAND_TIMEOUT_S, low_open=True,
                                     unit='s')
    estop_mode: str = one_of('disable', ESTOP_MODES)
    watchdog_mode: str = one_of('land', WATCHDOG_MODES)
    fallback_stiffness: tuple = bounded((300.0, 300.0), low=0.0, unit='N*m/rad')
    fallback_damping: tuple = bounded((15.0, 15.0), low=0.0, unit='N*m*s/rad')
    fallback_crouch_pose: tuple = bounded((0.6, -1.2), unit='rad')
    fallback_hold_time: float = bounded(0.2, low=0.0, unit='s')
    fallback_lower_time: float = bounded(1.0, low=0.0, unit='s')
    soft_limit_margin: float = bounded(0.15, low=0.0, unit='rad')
    soft_limit_stiffness: float = bounded(1000.0, low=0.0, unit='N*m/rad')
    soft_limit_damping: float = bounded(20.0, low=0.0, unit='N*m*s/rad')
    max_consecutive_missed: int = bounded(10, low=1, high=1000, unit='cycles')
    temperature_warn: float = bounded(70.0, high=MAX_TEMPERATURE_DEGC, unit='degC')
    temperature_limit: float = bounded(85.0, high=MAX_TEMPERATURE_DEGC, unit='degC')
    stuck_reading_time: float = bounded(0.2, low=0.0, high=10.0, unit='s')
    calibration_file: str = ''
    calibration_pose: tuple = bounded((), unit='m, rad')
    boom_joints: tuple = ('base_x', 'base_z')
    boom_kinds: tuple = ('boom_arc', 'boom_height')
    boom_radius: float = bounded(2.5, low=0.0, low_open=True, unit='m')
    boom_pivot_height: float = bounded(1.0, unit='m')
    boom_counts_per_rev: tuple = bounded((65536, 65536), low=1, unit='counts')
    boom_directions: tuple = (1, 1)
    contact_frame: str = 'foot'
    contact_threshold: float = bounded(10.0, low=0.0, unit='N')
    diagnostics_period: float = bounded(0.5, low=0.0, low_open=True, unit='s')
    warn_period: float = bounded(1.0, low=0.0, low_open=True, unit='s')
    emulator_mode: str = one_of('realtime', EMULATOR_MODES)
    emulator_initial_q: tuple = bounded((0.0, 1.2, 0.3, -0.6), unit='m, rad')
    emulator_integrator: str = 'timestepping'
    emulator_stand: str = one_of('until_enable', EMULATOR_STANDS)
    emulator_dt: float = bounded(0.001, low=0.0, low_open=True, unit='s')
    enable_on_start: bool = False
    min_subscribers: int = bounded(1, low=1)
    discovery_settle: float = bounded(0.5, low=0.0, unit='s')
    startup_timeout: float = bounded(60.0, low=0.0, unit='s')
    stop_after: float = bounded(0.0, low=0.0, unit='s')
    publish_robot_description: bool = True
    state_log: str = ''
    hosted_controller_node: str = HOSTED_CONTROLLER_NODE

    def __post_init__(self):
        for name in ('joints', 'models', 'boom_joints', 'boom_kinds', 'protocols'):
            object.__setattr__(self, name, tuple(str(x) for x in getattr(self, name)))
        for name in ('can_ids', 'directions', 'boom_counts_per_rev', 'boom_directions'):
            object.__setattr__(self, name, tuple(int(x) for x in getattr(self, name)))
        for name in ('gear_ratios', 'torque_constants', 'max_torques', 'damping',
                     'fallback_stiffness', 'fallback_damping', 'fallback_crouch_pose',
                     'calibration_pose', 'emulator_initial_q'):
            object.__setattr__(self, name, tuple(float(x) for x in getattr(self, name)))
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the first bad value."""
        def bad(name, why):
            raise ValueError(f'DriverConfig.{name} = {getattr(self, name)!r}: {why}')

        # ranges, units, allowed values: the fields' metadata (dodo_sim.parameter, shown by the
        # ROS parameter descriptors); below: rules that relate fields, lengths and id spaces
        check_fields(self)
        if self.enable_on_start and self.hardware != 'emulated':
            bad('enable_on_start', 'emulated hardware only: real motors are enabled by an '
                                   'explicit ~/enable call (docs/hardware.md, checklist)')
        if self.reply_timeout >= self.control_period:
            bad('reply_timeout', f'must be below control_period = {self.control_period} s')
        n = len(self.joints)
        if n == 0:
            bad('joints', 'needs at least one actuated joint')
        if len(set(self.joints)) != n:
            bad('joints', 'joint names must be unique')
        for name in ('can_ids', 'models', 'directions', 'gear_ratios', 'torque_constants',
                     'damping'):
            if len(getattr(self, name)) != n:
                bad(name, f'needs one entry per joint ({n}: {list(self.joints)})')
        if self.max_torques and len(self.max_torques) != n:
            bad('max_torques', f'needs one entry per joint ({n}) or none')
        if self.protocols and len(self.protocols) != n:
            bad('protocols', f'needs one entry per joint ({n}) or none (all mit)')
        if any(p not in PROTOCOLS for p in self.protocols):
            bad('protocols', f'entries must be one of {PROTOCOLS}')
        if len(set(self.protocols)) > 1:
            bad('protocols', 'one protocol per bus: every actuator the same (a mixed bus needs '
                             'a backend per protocol, not built yet)')
        if len(set(self.can_ids)) != n:
            bad('can_ids', 'must be unique')
        if self.actuator_protocol(0) == 'odrive_can_simple':
            if not all(0 <= i <= 0x3F for i in self.can_ids):
                bad('can_ids', 'ODrive node ids are 0..0x3F')
            # node 4's ids 0x080-0x09F hold the Sync, node 8's 0x100-0x11F the board's frames
            if {4, 8} & set(self.can_ids):
                bad('can_ids', "ODrive node ids 4 and 8 share ids with the sensor board's "
                               'frames (Sync 0x080, BoomAngles 0x101, BoomRatesFoot 0x102)')
        elif not all(1 <= i <= 0x7F for i in self.can_ids):
            bad('can_ids', 'must be unique 11-bit ids in 1..0x7F (0 is the reply id)')
        for k, model in enumerate(self.models):
            try:
                ranges = protocol_model_ranges(self.actuator_protocol(k), model)
            except ValueError as exc:
                bad('models', str(exc))
            if self.max_torques and self.max_torques[k] > ranges.max_torque * self.gear_ratios[k]:
                bad('max_torques', f'{self.joints[k]}: above what a {model} through gear ratio '
                                   f'{self.gear_ratios[k]:g} gives, '
                                   f'{ranges.max_torque * self.gear_ratios[k]:g} N*m')
        for name in ('directions', 'boom_directions'):
            if any(d not in (1, -1) for d in getattr(self, name)):
                bad(name, 'entries must be +1 or -1')
        for name in ('fallback_stiffness', 'fallback_damping'):
            if len(getattr(self, name)) != n:
                bad(name, f'needs one entry >= 0 per joint ({n})')
        if self.fallback_crouch_pose and len(self.fallback_crouch_pose) != n:
            bad('fallback_crouch_pose', f'needs one finite entry per joint ({n}) or none')
        if not self.temperature_warn < self.temperature_limit:
            bad('temperature_warn', f'must be below temperature_limit = {self.temperature_limit}')
        if len(self.boom_joints) != 2 or len(self.boom_kinds) != 2:
            bad('boom_joints', 'boom_joints and boom_kinds need 2 entries [yaw, pitch] '
                               '(an empty joint name: encoder not used)')
        if any(k not in BOOM_KINDS for k in self.boom_kinds):
            bad('boom_kinds', f'entries must be one of {BOOM_KINDS}')
        if len(self.boom_counts_per_rev) != 2:
            bad('boom_counts_per_rev', 'needs 2 positive counts [yaw, pitch]')
        if len(self.boom_directions) != 2:
            bad('boom_directions', 'needs 2 entries [yaw, pitch]')
        overlap = set(self.joints) & {j for j in self.boom_joints if j}
        if overlap:
            bad('boom_joints', f'{sorted(overlap)} is also an actuated joint')

    def actuator_protocol(self, k: int) -> str:
        """Protocol of actuator ``k`` ('mit' when ``protocols`` is empty)."""
        return self.protocols[k] if self.protocols else 'mit'

    @classmethod
    def from_dict(cls, values: Mapping[str, object]) -> 'DriverConfig':
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f'unknown driver parameter(s) {unknown}; known: {sorted(known)}')
        return cls(**values)


def protocol_model_ranges(protocol: str, model: str) -> MitRanges:
    """Return the ranges of an actuator model of ``protocol`` (ValueError if unknown)."""
    if protocol == 'odrive_can_simple':
        return odrive_model(model).ranges()
    return model_ranges(model)


def actuator_error_name(protocol: str, code: int) -> str:
    """Name of an actuator's error code (MIT: protocol.ERROR_CODES; ODrive: ODriveError bits)."""
    if protocol == 'odrive_can_simple':
        return odrive_error_name(code)
    return error_name(code)


# -- URDF limits ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class JointLimit:
    """URDF limits of one joint (inf when the URDF gives none)."""

    lower: float
    upper: float
    effort: float
    velocity: float


def urdf_joints(urdf_xml: str) -> tuple[tuple, dict]:
    """(movable joint names in URDF order, {name: JointLimit}) of a URDF."""
    try:
        root = ET.fromstring(urdf_xml)
    except ET.ParseError as exc:
        raise ValueError(f'robot_description is not valid XML: {exc}') from exc
    names, limits = [], {}
    for joint in root.iter('joint'):
        kind = joint.get('type')
        if kind in ('fixed', None):
            continue
        name = joint.get('name')
        names.append(name)
        limit = joint.find('limit')
        get = (lambda key, default: float(limit.get(key, default))) if limit is not None \
            else (lambda key, default: float(default))
        if kind == 'continuous':
            lower, upper = -math.inf, math.inf
        else:
            lower, upper = get('lower', -math.inf), get('upper', math.inf)
        limits[name] = JointLimit(lower, upper, get('effort', math.inf),
                                  get('velocity', math.inf))
    return tuple(names), limits


# -- per-actuator and boom views ------------------------------------------------------------------

@dataclass(frozen=True)
class ActuatorConfig:
    """
    One MIT-mode actuator and its joint (see the module docs for the conventions).

    Fields:
        joint: joint name.  can_id: CAN id.  model: actuator model.  ranges: its MIT ranges.
        direction: +1/-1.  gear_ratio: actuator turns per joint turn.
        torque_constant: N*m/A at the actuator output.  zero_offset: actuator position at
        joint zero, rad (from the calibration file).  max_torque: joint-side clamp, N*m.
        damping: joint damping of the damping mode, N*m*s/rad.
    """

    joint: str
    can_id: int
    model: str
    ranges: MitRanges
    direction: int = 1
    gear_ratio: float = 1.0
    torque_constant: float = 1.0
    zero_offset: float = 0.0
    max_torque: float = math.inf
    damping: float = 0.0
    protocol: str = 'mit'

    def joint_position(self, actuator_position: float) -> float:
        return self.direction * (actuator_position - self.zero_offset) / self.gear_ratio

    def joint_velocity(self, actuator_velocity: float) -> float:
        return self.direction * actuator_velocity / self.gear_ratio

    def joint_torque(self, actuator_torque: float) -> float:
        return self.direction * self.gear_ratio * actuator_torque

    def actuator_position(self, joint_position: float) -> float:
        return self.zero_offset + self.direction * self.gear_ratio * joint_position

    def actuator_torque(self, joint_torque: float) -> float:
        return self.direction * joint_torque / self.gear_ratio

    def actuator_gain(self, joint_gain: float) -> float:
        """Return the kp or kd seen by the actuator for a joint-side gain."""
        return joint_gain / (self.gear_ratio * self.gear_ratio)

    @property
    def joint_position_range(self) -> tuple:
        """Joint positions the 16-bit position field can carry with this offset, rad."""
        a = self.joint_position(self.ranges.p_min)
        b = self.joint_position(self.ranges.p_max)
        return (min(a, b), max(a, b))


@dataclass(frozen=True)
class BoomConfig:
    """The sensor board's boom encoders and foot sensor."""

    joints: tuple = ('base_x', 'base_z')
    kinds: tuple = ('boom_arc', 'boom_height')
    radius: float = 2.5
    pivot_height: float = 1.0
    counts_per_rev: tuple = (65536, 65536)
    directions: tuple = (1, 1)
    zero_counts: tuple = (0, 0)
    contact_frame: str = 'foot'
    contact_threshold: float = 10.0

    def angle(self, axis: int, counts: int) -> float:
        return (self.directions[axis] * 2.0 * math.pi * (counts - self.zero_counts[axis])
                / self.counts_per_rev[axis])

    def counts(self, axis: int, angle: float) -> float:
        """Encode an angle as encoder counts, not rounded."""
        return (self.zero_counts[axis]
                + self.directions[axis] * angle * self.counts_per_rev[axis] / (2.0 * math.pi))

    def joint_state(self, axis: int, angle: float, rate: float) -> tuple:
        """
        (position, velocity) of boom joint ``axis`` from its angle and rate.

        The angle and rate are in rad and rad/s, in encoder direction.
        """
        kind = self.kinds[axis]
        rate = self.directions[axis] * rate
        if kind == 'boom_arc':
            return self.radius * angle, self.radius * rate
        if kind == 'boom_height':
            return (self.pivot_height + self.radius * math.sin(angle),
                    self.radius * math.cos(angle) * rate)
        return angle, rate

    def angle_of(self, axis: int, position: float, velocity: float) -> tuple:
        """
        (angle, rate in encoder direction) of boom joint ``axis`` at (position, velocity).

        It is the inverse of :meth:`joint_state`.
        """
        kind = self.kinds[axis]
        if kind == 'boom_arc':
            angle, rate = position / self.radius, velocity / self.radius
        elif kind == 'boom_height':
            s = (position - self.pivot_height) / self.radius
            if not -1.0 < s < 1.0:
                raise ValueError(f'height {position} m is out of reach of a {self.radius} m boom '
                                 f'pivoting at {self.pivot_height} m')
            angle = math.asin(s)
            rate = velocity / (self.radius * math.cos(angle))
        else:
            angle, rate = position, velocity
        return angle, self.directions[axis] * rate


def actuator_configs(config: DriverConfig, limits: Mapping[str, JointLimit],
                     zero_offsets: Mapping[str, float] | None = None) -> tuple:
    """Return the :class:`ActuatorConfig` of every actuated joint (URDF limits checked)."""
    zero_offsets = zero_offsets or {}
    out = []
    for k, joint in enumerate(config.joints):
        if joint not in limits:
            raise ValueError(f'DriverConfig.joints: {joint!r} is not a movable joint of the '
                             f'robot description (has {sorted(limits)})')
        ranges = protocol_model_ranges(config.actuator_protocol(k), config.models[k])
        gear = config.gear_ratios[k]
        clamp = ranges.max_torque * gear
        if math.isfinite(limits[joint].effort) and limits[joint].effort > 0.0:
            clamp = min(clamp, limits[joint].effort)
        if config.max_torques:
            clamp = min(clamp, config.max_torques[k])
        out.append(ActuatorConfig(joint=joint, can_id=config.can_ids[k], model=config.models[k],
                                  ranges=ranges, direction=config.directions[k],
                                  gear_ratio=gear, torque_constant=config.torque_constants[k],
                                  zero_offset=float(zero_offsets.get(joint, 0.0)),
                                  max_torque=clamp, damping=config.damping[k],
                                  protocol=config.actuator_protocol(k)))
    return tuple(out)


def boom_config(config: DriverConfig, zero_counts=(0, 0)) -> BoomConfig:
    return BoomConfig(joints=config.boom_joints, kinds=config.boom_kinds,
                      radius=config.boom_radius, pivot_height=config.boom_pivot_height,
                      counts_per_rev=config.boom_counts_per_rev,
                      directions=config.boom_directions, zero_counts=tuple(zero_counts),
                      contact_frame=config.contact_frame,
                      contact_threshold=config.contact_threshold)


__all__ = ['DriverConfig', 'JointLimit', 'ActuatorConfig', 'BoomConfig', 'urdf_joints',
           'actuator_configs', 'boom_config', 'protocol_model_ranges', 'actuator_error_name',
           'PROTOCOLS', 'HARDWARE_KINDS', 'ESTOP_MODES', 'BOOM_KINDS', 'EMULATOR_MODES']
