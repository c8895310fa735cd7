# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Acting on a run from the live view: parameters, services and client publishing (docs/viewing.md).

:class:`LiveActions` is what the live view's Foxglove server (:mod:`dodo_sim.tools.live_view`)
offers besides the recorded topics, the way foxglove_bridge offers it on a ROS install:

* **parameters** (capabilities ``parameters`` and ``parametersSubscribe``): every parameter of
  the run's nodes (the nodes in the run's namespace but the one hosting the live view, whose
  parameters are read once at start), named ``<node>.<parameter>`` as foxglove_bridge names them
  (``/controller.apex_height``, ``/left/controller.apex_height``). A get or set is passed to the
  node's own parameter services, so a set meets exactly the validation of ``ros2 param set``: a
  refused set comes back with the node's reason (a ``status`` warning to the clients, and the
  unchanged value), a read-only one says so (rclpy's reason). Changes made by anyone (the app,
  ``ros2 param set``) reach clients subscribed to the parameter.
* **services** (capability ``services``): every service the run's nodes offer, found on the graph,
  but their parameter services (those are the parameters above): ``simulator/reset`` and any
  service a node adds later, with its type's request and response schemas (``ros2msg``), called
  with CDR as the Foxglove app sends it. Types whose Python module is not installed here are
  left out (they cannot be encoded); their names are said once.
* **client publishing** (capability ``clientPublish``): the run's disturbance and safety inputs,
  ``simulator/push`` and ``simulator/force`` (geometry_msgs/msg/Vector3: an impulse in N s, a
  force in N) and ``estop`` (std_msgs/msg/Bool), in ``cdr`` or ``json``. Set-points are
  parameters (the controller's ``target_velocity``, ``apex_height``, ...), not topics.

Everything a client sends is hostile input: names, types and sizes are checked before anything
reaches ROS, each kind of request has a rate limit (:data:`LIMITS`), a service call or parameter
request waits at most :data:`PARAMETER_TIMEOUT_S` / :data:`SERVICE_TIMEOUT_S`, at most
:data:`MAX_CALLS_IN_FLIGHT` calls wait at once, and what is refused is counted and logged at most
once per :data:`LOG_PERIOD_S` per reason. Nothing a client sends can raise out of a callback of
the server.

The ROS side (nodes, parameter services, service clients, publishers) is a *backend*
(:class:`Backend`; :mod:`dodo_sim.ros.live_bridge` over rclpy). This module imports neither
rclpy nor foxglove at module level and is tested in process with a backend of plain Python.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
import json
import math
import struct
import sys
import threading
import time
from typing import Callable, Protocol

from dodo_sim.ros import contract

# -- limits (docs/viewing.md, "Acting on a run") ------------------------------------------------
#: A parameter get or set waits at most this long for the nodes' parameter services, s (the
#: whole request; a set then gets the values afterwards within as long again).
PARAMETER_TIMEOUT_S = 2.0
#: A service call waits this long for the node's answer, s (then the client gets a failure).
SERVICE_TIMEOUT_S = 10.0
#: Service calls and parameter requests waiting for ROS at once, all clients together; more are
#: refused at once ("busy"), so a flood of calls never piles up threads. Parameter requests
#: also go one at a time (they wait on the server's own thread of the client).
MAX_CALLS_IN_FLIGHT = 4
#: Parameters in one get or set request.
MAX_PARAMETERS_PER_REQUEST = 100
#: A string or byte-array parameter value, bytes; an array parameter, elements.
MAX_PARAMETER_BYTES = 65536
MAX_PARAMETER_ELEMENTS = 10000
#: A service request, bytes.
MAX_SERVICE_REQUEST_BYTES = 65536
#: A client-published message, bytes (a Vector3 in CDR is 28, in JSON well under this).
MAX_CLIENT_MESSAGE_BYTES = 1024
#: Client channels remembered at once (all clients); the oldest is forgotten beyond this.
MAX_CLIENT_CHANNELS = 64
#: Services advertised at once (a graph offering more is cut here, said once).
MAX_SERVICES = 64
#: One log line per reason at most this often, s (with the count of those not shown).
LOG_PERIOD_S = 5.0


@dataclass(frozen=True)
class Rate:
    """A rate limit: ``per_s`` on average, ``burst`` at once (a token bucket)."""

    per_s: float
    burst: int


#: Rate limits (all clients together per kind; client-published messages per topic).
LIMITS = {
    'parameters': Rate(10.0, 20),         # get and set requests
    'services': Rate(10.0, 10),           # service calls
    'status': Rate(10.0, 20),             # refusals said to the clients (status messages)
    contract.PUSH: Rate(10.0, 3),         # impulses on the base
    contract.FORCE: Rate(50.0, 10),       # constant forces on the base
    contract.ESTOP: Rate(10.0, 3),
}

# rcl_interfaces/msg/ParameterType (the wire values of ROS parameter types)
NOT_SET, BOOL, INTEGER, DOUBLE, STRING = 0, 1, 2, 3, 4
BYTE_ARRAY, BOOL_ARRAY, INTEGER_ARRAY, DOUBLE_ARRAY, STRING_ARRAY = 5, 6, 7, 8, 9
_ARRAY_TYPES = (BYTE_ARRAY, BOOL_ARRAY, INTEGER_ARRAY, DOUBLE_ARRAY, STRING_ARRAY)
_INT64 = 2 ** 63

#: The parameter services every rclpy/rclcpp node offers (``<node>/<name>``): the parameters
#: capability stands for them, so they are not advertised as services.
PARAMETER_SERVICES = ('describe_parameters', 'get_parameter_types', 'get_parameters',
                      'get_type_description', 'list_parameters', 'set_parameters',
                      'set_parameters_atomically')


class LiveActionError(ValueError):
    """A client's request is refused; the message says why (one line, sent to the client)."""


@dataclass(frozen=True)
class ClientTopic:
    """A topic clients may publish on: its contract name, type, and the fields it carries."""

    name: str
    type_name: str
    fields: tuple


#: Topics clients may publish on (relative contract names; resolved in the run's namespace).
CLIENT_TOPICS = (ClientTopic(contract.PUSH, 'geometry_msgs/msg/Vector3', ('x', 'y', 'z')),
                 ClientTopic(contract.FORCE, 'geometry_msgs/msg/Vector3', ('x', 'y', 'z')),
                 ClientTopic(contract.ESTOP, 'std_msgs/msg/Bool', ('data',)))


@dataclass(frozen=True)
class ServiceInfo:
    """A service of the run: full name, type, and its request and response ros2msg schemas."""

    name: str
    type_name: str
    request_msgdef: str
    response_msgdef: str


class Backend(Protocol):
    """
    The ROS side of the live actions (:mod:`dodo_sim.ros.live_bridge`).

    Parameter values are ``(type, value)`` pairs: ``type`` an rcl_interfaces ParameterType
    value (:data:`BOOL` ...), ``value`` a plain Python value (bytes for a byte array).
    """

    def nodes(self) -> list[str]:
        """Full names of the run's nodes whose parameters are offered."""

    def get_parameters(self, node: str, names: list[str] | None,
                       timeout_s: float) -> dict[str, tuple]:
        """Name -> (type, value) of ``node``'s parameters ``names`` (None: all of them)."""

    def set_parameters(self, node: str, values: dict[str, tuple],
                       timeout_s: float) -> dict[str, str]:
        """Set ``values`` on ``node``; name -> '' (set) or the node's reason for refusing."""

    def call_service(self, name: str, request_cdr: bytes, timeout_s: float) -> bytes:
        """Call service ``name`` with a CDR request; its CDR response."""

    def publish(self, topic: ClientTopic, values: tuple) -> None:
        """Publish one message of ``topic`` with these field values (in ``topic.fields`` order)."""


class TokenBucket:
    """At most ``rate.burst`` at once and ``rate.per_s`` on average (wall clock)."""

    def __init__(self, rate: Rate, clock: Callable[[], float] = time.monotonic):
        self.rate = rate
        self.clock = clock
        self._tokens = float(rate.burst)
        self._last = clock()
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            now = self.clock()
            self._tokens = min(float(self.rate.burst),
                               self._tokens + (now - self._last) * self.rate.per_s)
            self._last = now
            if self._tokens < 1.0:
                return False
            self._tokens -= 1.0
            return True


class ThrottledLog:
    """
    One line per reason (``key``) at most every ``period_s``, with the count of those held back.

    ``counts`` holds how often each reason occurred (refused requests, dropped messages).
    """

    def __init__(self, emit: Callable[[str], None], period_s: float = LOG_PERIOD_S,
                 clock: Callable[[], float] = time.monotonic):
        self.emit = emit
        self.period_s = period_s
        self.clock = clock
        self.counts: dict[str, int] = {}
        self._next: dict[str, float] = {}
        self._held: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, key: str, text: str) -> None:
        with self._lock:
            self.counts[key] = self.counts.get(key, 0) + 1
            now = self.clock()
            if now < self._next.get(key, -math.inf):
                self._held[key] = self._held.get(key, 0) + 1
                return
            self._next[key] = now + self.period_s
            held = self._held.pop(key, 0)
        self.emit(f'live view: {text}'
                  + (f' ({held} more like it in the last {self.period_s:g} s)' if held else ''))


def _stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# -- parameters ---------------------------------------------------------------------------------
def parameter_name(node: str, name: str) -> str:
    """Return the Foxglove name of parameter ``name`` of ``node`` (as foxglove_bridge names it)."""
    return f'{node}.{name}'


def split_parameter_name(full: str, nodes) -> tuple[str, str]:
    """
    Split ``'/ns/controller.apex_height'`` into ``('/ns/controller', 'apex_height')``.

    A node name has no dot, so the first dot ends it (a parameter name may have dots).
    LiveActionError if the name is not text or the node is not one of ``nodes``.
    """
    if not isinstance(full, str) or len(full) > 1024:
        raise LiveActionError(f'parameter name {str(full)[:80]!r}: expected <node>.<parameter>')
    node, dot, name = full.partition('.')
    if not dot or not name:
        raise LiveActionError(f'parameter name {full!r}: expected <node>.<parameter> '
                              f'(e.g. /controller.apex_height)')
    if node not in nodes:
        raise LiveActionError(f'parameter {full!r}: no node {node!r} in this run '
                              f'(nodes: {", ".join(sorted(nodes))})')
    return node, name


def _check_size(name: str, typed: tuple) -> tuple:
    kind, value = typed
    if kind in (STRING, BYTE_ARRAY) and len(value) > MAX_PARAMETER_BYTES:
        raise LiveActionError(f'{name}: value of {len(value)} bytes (at most '
                              f'{MAX_PARAMETER_BYTES})')
    if kind in _ARRAY_TYPES and kind != BYTE_ARRAY:
        if len(value) > MAX_PARAMETER_ELEMENTS:
            raise LiveActionError(f'{name}: {len(value)} elements (at most '
                                  f'{MAX_PARAMETER_ELEMENTS})')
        if kind == STRING_ARRAY and sum(map(len, value)) > MAX_PARAMETER_BYTES:
            raise LiveActionError(f'{name}: strings of more than {MAX_PARAMETER_BYTES} bytes')
    return typed


def _integer(value, name: str) -> int:
    if not -_INT64 <= value < _INT64:
        raise LiveActionError(f'{name}: integer {value} outside int64')
    return int(value)


def ros_parameter_value(name: str, value, current: int = NOT_SET) -> tuple:
    """
    Convert a client's value (foxglove-sdk's native Python value) to ``(type, value)`` for ROS.

    ``current``: the parameter's type on the node. A number the client sent as an integer goes
    to a double parameter as that double (JSON writes 1.0 as 1), a whole double to an integer
    parameter as that integer; anything else keeps the type it came with and the node judges
    it. LiveActionError for what has no ROS type (null: deleting; an object; a mixed array) or
    is too big.
    """
    if value is None:
        raise LiveActionError(f'{name}: no value (deleting a parameter is not supported)')
    if isinstance(value, bool):
        return BOOL, value
    if isinstance(value, int):
        if current == DOUBLE:
            return DOUBLE, float(value)
        return INTEGER, _integer(value, name)
    if isinstance(value, float):
        if current == INTEGER and math.isfinite(value) and value == int(value):
            return INTEGER, _integer(int(value), name)
        return DOUBLE, value
    if isinstance(value, str):
        return _check_size(name, (STRING, value))
    if isinstance(value, (bytes, bytearray)):
        return _check_size(name, (BYTE_ARRAY, bytes(value)))
    if isinstance(value, (list, tuple)):
        return _check_size(name, _ros_array(name, list(value), current))
    raise LiveActionError(f'{name}: a {type(value).__name__} value has no ROS parameter type')


def _ros_array(name: str, items: list, current: int) -> tuple:
    if len(items) > MAX_PARAMETER_ELEMENTS:
        raise LiveActionError(f'{name}: {len(items)} elements (at most '
                              f'{MAX_PARAMETER_ELEMENTS})')
    if not items:
        if current in _ARRAY_TYPES:
            return current, b'' if current == BYTE_ARRAY else []
        raise LiveActionError(f'{name}: an empty array of no known type')
    if all(isinstance(v, bool) for v in items):
        return BOOL_ARRAY, items
    if all(isinstance(v, int) and not isinstance(v, bool) for v in items):
        if current == DOUBLE_ARRAY:
            return DOUBLE_ARRAY, [float(v) for v in items]
        return INTEGER_ARRAY, [_integer(v, name) for v in items]
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
        return DOUBLE_ARRAY, [float(v) for v in items]
    if all(isinstance(v, str) for v in items):
        return STRING_ARRAY, items
    raise LiveActionError(f'{name}: an array mixing types has no ROS parameter type')


def foxglove_parameter(name: str, typed: tuple):
    """``(type, value)`` of ROS -> a foxglove-sdk Parameter (None for an unset parameter)."""
    from foxglove import Parameter, ParameterType
    kind, value = typed
    if kind == DOUBLE:
        return Parameter(name, value=float(value), type=ParameterType.Float64)
    if kind == DOUBLE_ARRAY:
        return Parameter(name, value=[float(v) for v in value],
                         type=ParameterType.Float64Array)
    if kind == BYTE_ARRAY:
        return Parameter(name, value=bytes(value), type=ParameterType.ByteArray)
    if kind in (BOOL, INTEGER, STRING, BOOL_ARRAY, INTEGER_ARRAY, STRING_ARRAY):
        return Parameter(name, value=value)
    return None


# -- client publishing --------------------------------------------------------------------------
def _schema_matches(schema_name: str, type_name: str) -> bool:
    """``geometry_msgs/msg/Vector3`` or ``geometry_msgs/Vector3`` (ROS 1 style) for a type."""
    pkg, _, cls = type_name.split('/')
    return schema_name in (type_name, f'{pkg}/{cls}')


def decode_client_message(topic: ClientTopic, encoding: str, data: bytes) -> tuple:
    """
    Return the field values of a client-published message, checked; LiveActionError if malformed.

    ``cdr``: the encapsulation header then the fields, nothing else (trailing alignment padding
    to 4 bytes aside); ``json``: an object of those fields (absent ones 0/false, others
    refused). Numbers must be finite.
    """
    if len(data) > MAX_CLIENT_MESSAGE_BYTES:
        raise LiveActionError(f'{len(data)} bytes (at most {MAX_CLIENT_MESSAGE_BYTES})')
    is_bool = topic.type_name == 'std_msgs/msg/Bool'
    if encoding == 'cdr':
        values = _decode_cdr(data, len(topic.fields), is_bool)
    elif encoding == 'json':
        values = _decode_json(data, topic.fields, is_bool)
    else:
        raise LiveActionError(f'encoding {encoding!r} (expected cdr or json)')
    if not is_bool and not all(math.isfinite(v) for v in values):
        raise LiveActionError(f'non-finite value in {values}')
    return values


def _decode_cdr(data: bytes, count: int, is_bool: bool) -> tuple:
    if len(data) < 4 or data[0] != 0 or data[1] not in (0, 1):
        raise LiveActionError('not CDR (expected the encapsulation header 00 00 or 00 01)')
    order = '<' if data[1] == 1 else '>'
    body = data[4:]
    size = 1 if is_bool else 8 * count
    if not size <= len(body) <= (size + 3) // 4 * 4 + 4 or any(body[size:]):
        raise LiveActionError(f'CDR body of {len(body)} bytes (expected {size})')
    if is_bool:
        if body[0] not in (0, 1):
            raise LiveActionError(f'bool byte {body[0]}')
        return (bool(body[0]),)
    return struct.unpack_from(f'{order}{count}d', body)


def _decode_json(data: bytes, fields: tuple, is_bool: bool) -> tuple:
    try:
        message = json.loads(bytes(data).decode('utf-8'))
    except (UnicodeDecodeError, ValueError) as exc:
        raise LiveActionError(f'not JSON ({exc})') from None
    if not isinstance(message, dict) or set(message) - set(fields):
        raise LiveActionError(f'expected a JSON object with the fields {list(fields)}')
    values = []
    for name in fields:
        value = message.get(name, False if is_bool else 0.0)
        kind = bool if is_bool else (int, float)
        if not isinstance(value, kind) or (not is_bool and isinstance(value, bool)):
            kind_name = 'bool' if is_bool else 'number'
            raise LiveActionError(f'field {name}: {value!r} is not a {kind_name}')
        values.append(value if is_bool else float(value))
    return tuple(values)


# -- services -----------------------------------------------------------------------------------
def proxied_service(name: str, types, nodes) -> bool:
    """
    Whether a service of the graph is offered to clients: one type, not a parameter service.

    ``nodes``: the full names of the run's nodes (a node's parameter services are
    ``<node>/<service>`` for :data:`PARAMETER_SERVICES`).
    """
    if len(types) != 1:
        return False
    node, _, last = name.rpartition('/')
    return not (last in PARAMETER_SERVICES and node in nodes)


# -- the live view's side -----------------------------------------------------------------------
@dataclass
class _ClientChannel:
    topic: ClientTopic
    encoding: str


@dataclass
class LiveActions:
    """
    Parameters, services and client publishing of a live view (see module docs).

    Fields:
        backend: the ROS side (:class:`Backend`).
        namespace: the run's namespace ('' or ``/left``): client topics resolve in it.
        warn: where refusals are said (one line each, throttled per reason).
    """

    backend: Backend
    namespace: str = ''
    warn: Callable[[str], None] = _stderr
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self):
        self.log = ThrottledLog(self.warn, clock=self.clock)
        self._limits = {kind: TokenBucket(rate, self.clock) for kind, rate in LIMITS.items()}
        self._over = {kind: f'{kind}: over {rate.per_s:g} per second (burst {rate.burst}); '
                      f'dropped' for kind, rate in LIMITS.items()}
        self._in_flight = threading.BoundedSemaphore(MAX_CALLS_IN_FLIGHT)
        # parameter requests block the server's thread of the client that sent them (the SDK
        # calls its listener there): one at a time, so at most one of its threads waits
        self._parameter_lock = threading.Lock()
        self._topics = {contract.resolve(t.name, self.namespace): t for t in CLIENT_TOPICS}
        self._channels: dict[tuple, _ClientChannel] = {}    # (client id, channel id) ->
        self._channels_lock = threading.Lock()
        self._server = None
        self._services: dict[str, ServiceInfo] = {}
        self._services_lock = threading.Lock()
        self._unencodable: set = set()
        self.published = {t.name: 0 for t in CLIENT_TOPICS}      # messages passed to ROS

    # -- server wiring (live_view) -----------------------------------------------------------
    @staticmethod
    def capabilities() -> list:
        from foxglove.websocket import Capability
        return [Capability.Parameters, Capability.Services, Capability.ClientPublish]

    def attach(self, server) -> None:
        """Use the live view's server (started): advertise the services found on it."""
        with self._services_lock:
            self._server = server
            self._advertise(list(self._services.values()))

    def detach(self) -> None:
        self._server = None

    def status(self, text: str) -> None:
        """Send a warning to every client (the protocol's ``status``; the app shows it)."""
        server = self._server
        if server is not None and self._limits['status'].take():
            from foxglove import StatusLevel
            server.publish_status(text, StatusLevel.Warning)

    def refuse(self, key: str, text: str) -> None:
        """Count, log (throttled) and tell the clients why a request is refused."""
        self.log(key, text)
        self.status(f'live view: {text}')

    def _limited(self, kind: str) -> bool:
        """Return True (and say so, throttled) when ``kind`` is over its rate limit."""
        if self._limits[kind].take():
            return False
        self.log(f'rate:{kind}', self._over[kind])       # a flood's cost: no formatting
        return True

    # -- parameters --------------------------------------------------------------------------
    def get_parameters(self, names) -> list:
        """
        Return the foxglove Parameters named ``names`` (empty: every parameter of the run).

        Unknown names are left out, as foxglove_bridge does; a refused request returns none.
        """
        try:
            if self._limited('parameters'):
                return []
            with self._one_parameter_request():
                return self._get(list(names))
        except LiveActionError as exc:
            self.refuse('parameters', f'get parameters: {exc}')
            return []

    def _get(self, names: list) -> list:
        if len(names) > MAX_PARAMETERS_PER_REQUEST:
            raise LiveActionError(f'{len(names)} names (at most {MAX_PARAMETERS_PER_REQUEST})')
        nodes = self.backend.nodes()
        wanted: dict[str, list | None] = dict.fromkeys(nodes) if not names else {}
        for full in names:
            try:
                node, name = split_parameter_name(full, nodes)
            except LiveActionError as exc:
                self.log('parameter_name', f'get parameters: {exc}')
                continue
            wanted.setdefault(node, []).append(name)
        out = []
        deadline = self.clock() + PARAMETER_TIMEOUT_S      # for the whole request
        for node, node_names in wanted.items():
            try:       # a node that does not answer costs its own parameters only
                values = self._call(self.backend.get_parameters, node, node_names,
                                    self._left(deadline))
            except LiveActionError as exc:
                self.log(f'get:{node}', f'get parameters of {node}: {exc}')
                continue
            for name, typed in values.items():
                parameter = foxglove_parameter(parameter_name(node, name), typed)
                if parameter is not None:
                    out.append(parameter)
        return out

    def _left(self, deadline: float) -> float:
        """Seconds left before ``deadline``; LiveActionError once it has passed."""
        left = deadline - self.clock()
        if left <= 0.0:
            raise LiveActionError(f'no time left of the {PARAMETER_TIMEOUT_S:g} s of the request')
        return left

    def set_parameters(self, parameters) -> list:
        """
        Set foxglove Parameters on the run's nodes; return their values afterwards.

        Each goes to its node's ``set_parameters`` service; what the node refuses is said to
        the clients with the node's reason and comes back unchanged.
        """
        try:
            if self._limited('parameters'):
                return []
            with self._one_parameter_request():
                return self._set(list(parameters))
        except LiveActionError as exc:
            self.refuse('parameters', f'set parameters: {exc}')
            return []

    @contextlib.contextmanager
    def _one_parameter_request(self):
        if not self._parameter_lock.acquire(blocking=False):
            raise LiveActionError('busy: another parameter request waits for ROS')
        try:
            yield
        finally:
            self._parameter_lock.release()

    def _set(self, parameters: list) -> list:
        if len(parameters) > MAX_PARAMETERS_PER_REQUEST:
            raise LiveActionError(f'{len(parameters)} parameters (at most '
                                  f'{MAX_PARAMETERS_PER_REQUEST})')
        nodes = self.backend.nodes()
        by_node: dict[str, dict] = {}
        for parameter in parameters:
            try:
                node, name = split_parameter_name(parameter.name, nodes)
            except LiveActionError as exc:
                self.refuse('parameter_name', f'set parameters: {exc}')
                continue
            by_node.setdefault(node, {})[name] = parameter.get_value()
        names = []
        deadline = self.clock() + PARAMETER_TIMEOUT_S      # the sets; the values after: _get
        for node, values in by_node.items():
            current = self._call(self.backend.get_parameters, node, list(values),
                                 self._left(deadline))
            typed = {}
            for name, value in values.items():
                full = parameter_name(node, name)
                if name not in current:
                    self.refuse('parameter_unknown', f'set {full}: {node} has no parameter '
                                f'{name!r}')
                    continue
                try:
                    typed[name] = ros_parameter_value(full, value, current[name][0])
                except LiveActionError as exc:
                    self.refuse(f'refused:{full}', f'set {exc}')
            if typed:
                results = self._call(self.backend.set_parameters, node, typed,
                                     self._left(deadline))
                for name, reason in results.items():
                    if reason:
                        full = parameter_name(node, name)
                        self.refuse(f'refused:{full}', f'set {full} = {_short(typed[name][1])} '
                                    f'refused by {node}: {reason}')
            names += [parameter_name(node, name) for name in values if name in current]
        return self._get(names) if names else []

    def parameter_values(self, node: str, values) -> None:
        """Pass changed parameters of ``node`` (its parameter events) to the subscribed clients."""
        server = self._server
        parameters = [p for name, typed in values
                      for p in (foxglove_parameter(parameter_name(node, name), typed),)
                      if p is not None]
        if server is not None and parameters:
            server.publish_parameter_values(parameters)

    def _call(self, function, *args):
        """Make one request to ROS, at most MAX_CALLS_IN_FLIGHT at once (else refused: busy)."""
        if not self._in_flight.acquire(blocking=False):
            raise LiveActionError(f'busy: {MAX_CALLS_IN_FLIGHT} requests already wait for ROS')
        try:
            return function(*args)
        except TimeoutError as exc:
            raise LiveActionError(f'no answer: {exc}') from None
        finally:
            self._in_flight.release()

    # -- services ----------------------------------------------------------------------------
    def set_services(self, services) -> None:
        """Take the run's services now (ServiceInfo): advertise the new ones, withdraw the gone."""
        services = {s.name: s for s in services}
        if len(services) > MAX_SERVICES:
            self.log('services', f'{len(services)} services on the graph: advertising the '
                     f'first {MAX_SERVICES}')
            services = dict(sorted(services.items())[:MAX_SERVICES])
        with self._services_lock:      # one at a time: attach() and the graph's thread
            gone = [n for n, s in self._services.items() if services.get(n) != s]
            new = [s for n, s in services.items() if self._services.get(n) != s]
            for name in gone:
                del self._services[name]
            self._services.update({s.name: s for s in new})
            if self._server is not None and gone:
                self._server.remove_services(gone)
            self._advertise(new)

    def _advertise(self, services) -> None:
        """Under the services lock: add ``services`` to the server (each refusal said)."""
        if self._server is None:
            return
        for info in services:
            try:
                self._server.add_services([self._foxglove_service(info)])
            except (RuntimeError, ValueError) as exc:
                self.log(f'advertise:{info.name}', f'service {info.name} not offered: {exc}')

    def not_encodable(self, name: str, type_name: str, why: str) -> None:
        """Say once that a service of the run is left out: its type cannot be encoded here."""
        if name not in self._unencodable:
            self._unencodable.add(name)
            self.warn(f'live view: service {name} ({type_name}) not offered: {why}')

    def _foxglove_service(self, info: ServiceInfo):
        from foxglove import MessageSchema, Schema, Service, ServiceSchema

        def schema(suffix: str, msgdef: str):
            return MessageSchema(encoding='cdr', schema=Schema(
                name=f'{info.type_name}_{suffix}', encoding='ros2msg', data=msgdef.encode()))
        return Service(info.name, schema=ServiceSchema(
            info.type_name, request=schema('Request', info.request_msgdef),
            response=schema('Response', info.response_msgdef)), handler=self.call_service)

    def call_service(self, request) -> bytes:
        """
        Handle a call of any service (a foxglove ServiceRequest; on a thread of the server).

        Raises LiveActionError with the reason, which the client gets as the call's failure.
        """
        name = request.service_name
        try:
            if self._limited('services'):
                raise LiveActionError(f'too many service calls (at most '
                                      f'{LIMITS["services"].per_s:g} per second)')
            if name not in self._services:
                raise LiveActionError('no such service in this run')
            if request.encoding != 'cdr':
                raise LiveActionError(f'encoding {request.encoding!r} (expected cdr)')
            payload = bytes(request.payload)
            if len(payload) > MAX_SERVICE_REQUEST_BYTES:
                raise LiveActionError(f'request of {len(payload)} bytes (at most '
                                      f'{MAX_SERVICE_REQUEST_BYTES})')
            return self._call(self.backend.call_service, name, payload, SERVICE_TIMEOUT_S)
        except LiveActionError as exc:
            self.log(f'service:{name}', f'call of {name} refused: {exc}')
            raise
        except Exception as exc:       # the SDK turns it into the client's failure message
            self.log(f'service:{name}', f'call of {name} failed: {exc}')
            raise LiveActionError(f'{name}: {exc}') from None

    # -- client publishing -------------------------------------------------------------------
    def on_client_advertise(self, client_id: int, channel) -> None:
        """Accept a channel a client advertises (foxglove ClientChannel), or say why not."""
        topic = self._topics.get(channel.topic)
        if topic is None:
            self.refuse('client_channel', f'client channel {channel.topic[:200]!r} refused: '
                        f'clients may publish on {", ".join(sorted(self._topics))} only')
            return
        if channel.encoding not in ('cdr', 'json'):
            self.refuse('client_channel', f'client channel {channel.topic}: encoding '
                        f'{channel.encoding[:40]!r} refused (cdr or json)')
            return
        if not _schema_matches(channel.schema_name, topic.type_name):
            self.refuse('client_channel', f'client channel {channel.topic}: schema '
                        f'{channel.schema_name[:200]!r} refused (expected {topic.type_name})')
            return
        with self._channels_lock:
            self._channels[(client_id, channel.id)] = _ClientChannel(topic, channel.encoding)
            while len(self._channels) > MAX_CLIENT_CHANNELS:
                del self._channels[next(iter(self._channels))]

    def on_client_unadvertise(self, client_id: int, channel_id: int) -> None:
        with self._channels_lock:
            self._channels.pop((client_id, channel_id), None)

    def on_message_data(self, client_id: int, channel_id: int, data: bytes) -> None:
        """Check, rate-limit, then publish on ROS a message a client published."""
        channel = self._channels.get((client_id, channel_id))
        if channel is None:
            self.log('client_message', 'message on a refused client channel: dropped')
            return
        topic = channel.topic
        if self._limited(topic.name):
            return
        try:
            values = decode_client_message(topic, channel.encoding, data)
        except LiveActionError as exc:
            self.log(f'malformed:{topic.name}', f'malformed {topic.name} message dropped: {exc}')
            return
        try:
            self.backend.publish(topic, values)
        except Exception as exc:       # a ROS error must not end the server's callback
            self.log(f'publish:{topic.name}', f'cannot publish {topic.name}: {exc}')
            return
        self.published[topic.name] += 1


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + '...'


__all__ = ['LiveActions', 'LiveActionError', 'Backend', 'ServiceInfo', 'ClientTopic',
           'CLIENT_TOPICS', 'LIMITS', 'Rate', 'TokenBucket', 'ThrottledLog', 'parameter_name',
           'split_parameter_name', 'ros_parameter_value', 'foxglove_parameter',
           'decode_client_message', 'proxied_service', 'PARAMETER_SERVICES']
