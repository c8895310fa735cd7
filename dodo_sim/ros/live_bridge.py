# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
The ROS side of the live view's actions: :class:`dodo_sim.tools.live_actions.Backend` over rclpy.

A hidden node ``_live_view`` in the run's namespace (hidden: the recorder takes no parameter
snapshot of it and ``ros2 node list`` does not show it), spun by its own executor on its own
thread, so the recorder's loop never waits for a viewer's request and a viewer's request never
waits for the recorder. Every :data:`DISCOVERY_PERIOD_S` it looks at the graph: the run's nodes
(the nodes in its namespace but hidden ones and the node hosting the live view), their services
(:func:`dodo_sim.tools.live_actions.proxied_service`) with the schemas of their types, and
creates the clients it needs there, on its own thread. The live view's server threads only call
those clients (``call_async``, thread-safe) and wait for the answer on an event, at most the
timeout they give.

A service request from a client is read by the rosbags typestore (pure Python: a malformed or
hostile request is refused there, bounded by its size) before rclpy deserializes it.
Parameter events of the run's nodes (``parameter_events``) are passed on to subscribed clients.
"""
from __future__ import annotations

import importlib
import struct
import threading

from dodo_sim.tools.live_actions import (BOOL, BOOL_ARRAY, BYTE_ARRAY, CLIENT_TOPICS, DOUBLE,
                                         DOUBLE_ARRAY, INTEGER, INTEGER_ARRAY, LiveActionError,
                                         proxied_service, ServiceInfo, STRING, STRING_ARRAY)

#: How often the graph is looked at for the run's nodes and services, s (wall clock).
DISCOVERY_PERIOD_S = 0.5
#: Name of the bridge's node (hidden: leading underscore).
NODE_NAME = '_live_view'

_VALUE_FIELDS = {BOOL: 'bool_value', INTEGER: 'integer_value', DOUBLE: 'double_value',
                 STRING: 'string_value', BYTE_ARRAY: 'byte_array_value',
                 BOOL_ARRAY: 'bool_array_value', INTEGER_ARRAY: 'integer_array_value',
                 DOUBLE_ARRAY: 'double_array_value', STRING_ARRAY: 'string_array_value'}


def typed_value(value) -> tuple:
    """Convert an rcl_interfaces/ParameterValue to ``(type, plain value)`` (live_actions' form)."""
    kind = int(value.type)
    field = _VALUE_FIELDS.get(kind)
    if field is None:
        return kind, None
    raw = getattr(value, field)
    if kind == BYTE_ARRAY:
        return kind, b''.join(raw)
    if kind in (BOOL_ARRAY, INTEGER_ARRAY, DOUBLE_ARRAY, STRING_ARRAY):
        return kind, [v.item() if hasattr(v, 'item') else v for v in raw]
    return kind, raw


def parameter_value(typed: tuple):
    """Convert ``(type, plain value)`` to an rcl_interfaces/ParameterValue."""
    from rcl_interfaces.msg import ParameterValue
    kind, value = typed
    message = ParameterValue(type=kind)
    if kind == BYTE_ARRAY:
        value = [bytes([b]) for b in value]
    setattr(message, _VALUE_FIELDS[kind], value)
    return message


def srv_class(type_name: str):
    """Return the generated Python class of ``pkg/srv/Name``; ValueError if not importable."""
    parts = type_name.split('/')
    if len(parts) != 3 or parts[1] != 'srv':
        raise ValueError(f'not a service type name: {type_name!r}')
    try:
        return getattr(importlib.import_module(f'{parts[0]}.srv'), parts[2])
    except (ImportError, AttributeError) as exc:
        raise ValueError(f'no Python module for {type_name} here ({exc})') from None


class _Proxy:
    """One service of the run: its rclpy client and the typestore name of its request."""

    def __init__(self, info: ServiceInfo, srv, client, request_key: str):
        self.info = info
        self.srv = srv
        self.client = client
        self.request_key = request_key


class LiveBridge:
    """
    The backend of :class:`~dodo_sim.tools.live_actions.LiveActions` (see module docs).

    ``namespace``: the run's ('' or ``/left``); ``host``: the full name of the node hosting the
    live view (its parameters are left out); ``context``: rclpy's (None: the default one).
    :meth:`start` with the actions, :meth:`stop` at the end (before rclpy shuts down).
    """

    def __init__(self, namespace: str, host: str, context=None):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from dodo_sim.tools.bag import make_typestore
        self.namespace = namespace
        self.host = host
        # no global arguments: the recorder's own (__node:=recorder, its params file) are not
        # this node's; in a namespace its parameter events stay in it (NAMESPACE_REMAPS)
        remaps = ['--ros-args', '-r', '/parameter_events:=parameter_events'] if namespace else []
        self.node = rclpy.create_node(NODE_NAME, namespace=namespace or None, context=context,
                                      use_global_arguments=False, cli_args=remaps,
                                      start_parameter_services=False, enable_rosout=False)
        self._executor = SingleThreadedExecutor(context=context)
        self._executor.add_node(self.node)
        self._typestore = make_typestore()
        self._nodes: list[str] = []
        self._param_clients: dict[str, tuple] = {}      # node -> (list, get, set) clients
        self._proxies: dict[str, _Proxy] = {}
        self._publishers = {}
        self.actions = None
        self._stopping = False
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, actions) -> None:
        """Serve ``actions`` (LiveActions): publishers, parameter events, discovery, thread."""
        from rclpy.clock import Clock, ClockType
        from rcl_interfaces.msg import ParameterEvent
        from dodo_sim.ros import contract
        self.actions = actions
        for topic in CLIENT_TOPICS:
            self._publishers[topic.name] = self.node.create_publisher(
                _message_class(topic.type_name), topic.name, contract.INPUT_DEPTH)
        self.node.create_subscription(ParameterEvent, contract.PARAMETER_EVENTS,
                                      self._on_parameter_event, 100)
        self.node.create_timer(DISCOVERY_PERIOD_S, self._discover,
                               clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._thread = threading.Thread(target=self._spin, name='live-view-ros', daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        self._discover()
        while not self._stopping:
            self._executor.spin_once(timeout_sec=0.1)

    def stop(self) -> None:
        self._stopping = True
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._executor.shutdown()
        self.node.destroy_node()

    # -- the graph (the bridge's thread) -----------------------------------------------------
    def _discover(self) -> None:
        from rcl_interfaces.srv import GetParameters, ListParameters, SetParameters
        from rclpy._rclpy_pybind11 import NodeNameNonExistentError
        namespace = self.namespace or '/'
        nodes = sorted((ns.rstrip('/') + '/' + name)
                       for name, ns in self.node.get_node_names_and_namespaces()
                       if ns == namespace and not name.startswith('_'))
        services = {}
        for fqn in nodes:
            base, _, name = fqn.rpartition('/')
            try:
                found = self.node.get_service_names_and_types_by_node(name, base or '/')
            except NodeNameNonExistentError:      # it left the graph meanwhile
                continue
            for service, types in found:
                if proxied_service(service, types, nodes):
                    services[service] = types[0]
        nodes = [fqn for fqn in nodes if fqn != self.host]
        for fqn in nodes:
            if fqn not in self._param_clients:
                self._param_clients[fqn] = tuple(
                    self.node.create_client(srv, f'{fqn}/{name}') for srv, name in (
                        (ListParameters, 'list_parameters'), (GetParameters, 'get_parameters'),
                        (SetParameters, 'set_parameters')))
        self._nodes = nodes
        for name, type_name in services.items():
            proxy = self._proxies.get(name)
            if proxy is None or proxy.info.type_name != type_name:
                self._add_proxy(name, type_name)
        self.actions.set_services([self._proxies[n].info for n in services
                                   if n in self._proxies])

    def _add_proxy(self, name: str, type_name: str) -> None:
        from rosbags.typesys import TypesysError
        from dodo_sim.tools.bag import register_msg_class
        try:
            srv = srv_class(type_name)
            # the typestore keys types as pkg/msg/Name: a private key for the request and
            # response; the msgdef text does not name its root type
            pkg, _, cls = type_name.split('/')
            keys = (f'{pkg}/msg/{cls}_Request', f'{pkg}/msg/{cls}_Response')
            for key, part in zip(keys, (srv.Request, srv.Response)):
                if key not in self._typestore.fielddefs:
                    register_msg_class(self._typestore, key, part)
            msgdefs = [self._typestore.generate_msgdef(key, ros_version=2)[0] for key in keys]
        except (ValueError, ImportError, AttributeError, KeyError, TypesysError) as exc:
            self.actions.not_encodable(name, type_name, str(exc))
            return
        client = self.node.create_client(srv, name)
        self._proxies[name] = _Proxy(ServiceInfo(name, type_name, *msgdefs), srv, client,
                                     keys[0])

    def _on_parameter_event(self, event) -> None:
        if event.node not in self._nodes:
            return
        values = [(p.name, typed_value(p.value))
                  for p in list(event.new_parameters) + list(event.changed_parameters)]
        if values:
            self.actions.parameter_values(event.node, values)

    # -- Backend (the live view's server threads) --------------------------------------------
    def nodes(self) -> list[str]:
        return self._nodes

    def _wait(self, client, request, timeout_s: float, what: str):
        """Call ``client`` and wait for its answer; TimeoutError after ``timeout_s``."""
        if not client.service_is_ready():
            raise LiveActionError(f'{what}: the service is not available')
        done = threading.Event()
        future = client.call_async(request)
        future.add_done_callback(lambda _future: done.set())
        if not done.wait(timeout_s):
            client.remove_pending_request(future)
            raise TimeoutError(f'{what}: no answer within {timeout_s:g} s')
        return future.result()

    def get_parameters(self, node: str, names, timeout_s: float) -> dict[str, tuple]:
        from rcl_interfaces.srv import GetParameters, ListParameters
        list_client, get_client, _ = self._clients(node)
        # listed first: a node answers a get naming an undeclared parameter with no values
        listed = self._wait(list_client, ListParameters.Request(depth=0), timeout_s,
                            f'{node}/list_parameters')
        declared = list(listed.result.names)
        names = declared if names is None else [n for n in names if n in set(declared)]
        if not names:
            return {}
        answer = self._wait(get_client, GetParameters.Request(names=list(names)), timeout_s,
                            f'{node}/get_parameters')
        return {name: typed for name, value in zip(names, answer.values)
                for typed in (typed_value(value),) if typed[1] is not None}

    def set_parameters(self, node: str, values: dict, timeout_s: float) -> dict[str, str]:
        from rcl_interfaces.msg import Parameter
        from rcl_interfaces.srv import SetParameters
        _, _, set_client = self._clients(node)
        names = list(values)
        request = SetParameters.Request(parameters=[
            Parameter(name=name, value=parameter_value(values[name])) for name in names])
        answer = self._wait(set_client, request, timeout_s, f'{node}/set_parameters')
        return {name: ('' if result.successful else (result.reason or 'refused'))
                for name, result in zip(names, answer.results)}

    def _clients(self, node: str) -> tuple:
        clients = self._param_clients.get(node)
        if clients is None:
            raise LiveActionError(f'{node}: not a node of this run')
        return clients

    def call_service(self, name: str, request_cdr: bytes, timeout_s: float) -> bytes:
        from rclpy.serialization import deserialize_message, serialize_message
        from rosbags.serde import SerdeError
        proxy = self._proxies.get(name)
        if proxy is None:
            raise LiveActionError('no such service in this run')
        # parsed as data first, and nothing after it but padding: rclpy's C deserializer never
        # sees a malformed request
        store = self._typestore
        try:
            parsed = store.deserialize_cdr(request_cdr, proxy.request_key)
            excess = len(request_cdr) - len(store.serialize_cdr(parsed, proxy.request_key))
        except (SerdeError, ValueError, IndexError, struct.error) as exc:
            raise LiveActionError(f'malformed {proxy.info.type_name} request: {exc}') from None
        if not 0 <= excess < 8:
            raise LiveActionError(f'malformed {proxy.info.type_name} request: {excess} bytes '
                                  f'after the message')
        request = deserialize_message(request_cdr, proxy.srv.Request)
        response = self._wait(proxy.client, request, timeout_s, name)
        return bytes(serialize_message(response))

    def publish(self, topic, values: tuple) -> None:
        message = _message_class(topic.type_name)()
        for name, value in zip(topic.fields, values):
            setattr(message, name, value)
        self._publishers[topic.name].publish(message)


def _message_class(type_name: str):
    pkg, kind, cls = type_name.split('/')
    return getattr(importlib.import_module(f'{pkg}.{kind}'), cls)


def start_live_bridge(node, warn):
    """
    Start the live actions of the run of recorder ``node``: the LiveActions and its bridge.

    Returns (actions, bridge); give ``actions`` to the LiveView, :meth:`LiveBridge.stop` the
    bridge when the view has stopped.
    """
    from dodo_sim.tools.live_actions import LiveActions
    namespace = node.get_namespace().rstrip('/')
    bridge = LiveBridge(namespace, node.get_fully_qualified_name())
    actions = LiveActions(bridge, namespace=namespace, warn=warn)
    bridge.start(actions)
    return actions, bridge


__all__ = ['LiveBridge', 'start_live_bridge', 'typed_value', 'parameter_value', 'srv_class',
           'DISCOVERY_PERIOD_S']
