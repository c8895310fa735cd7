# Copyright 2026 dodo_sim developers
# SPDX-License-Identifier: BSD-3-Clause

"""
Parameter snapshots: the recorder asks every node on the graph for its parameters.

A node's own declaration event is published before the recorder's subscription can match, so
the recorder calls each node's ``list_parameters`` and ``get_parameters`` services (as ``ros2
param dump`` does) and writes the answer as a ``ParameterEvent`` with ``new_parameters`` on
``/parameter_events`` (docs/bags.md). The nodes whose configuration is in the bag are published,
latched, on ``RECORDED_CONFIGURATIONS`` (the simulator's start gate).

A node that offers no parameter services (a foreign node, e.g. an external controller created
with ``start_parameter_services=False`` or a C++ node without them) has no configuration to ask
for: once the graph has listed its services for :data:`NO_SERVICES_PERIODS` discovery periods
without ``list_parameters``, the recorder writes an empty snapshot for it (the bag says it had
none) and lists it, so the simulator's start gate does not wait for it in vain. Should the
services show up later, it is asked as any other node.
"""
from __future__ import annotations

import time

#: discovery periods a node's parameter services are waited for before its snapshot is given up
MAX_SNAPSHOT_ATTEMPTS = 50
#: period at which parameter snapshots in progress are advanced, s
SNAPSHOT_POLL_S = 0.01
#: discovery periods a node is seen without parameter services before it is recorded as having
#: none (services are discovered with their node; this only absorbs discovery's spread)
NO_SERVICES_PERIODS = 5


def copy_parameter_value(cls, value):
    """
    Copy an rclpy rcl_interfaces/ParameterValue into the rosbags class ``cls``.

    The copy has the same type and fields.
    """
    import numpy as np
    return cls(type=int(value.type), bool_value=bool(value.bool_value),
               integer_value=int(value.integer_value), double_value=float(value.double_value),
               string_value=str(value.string_value),
               byte_array_value=np.frombuffer(b''.join(value.byte_array_value), dtype=np.uint8),
               bool_array_value=np.asarray(list(value.bool_array_value), dtype=bool),
               integer_array_value=np.asarray(list(value.integer_array_value), dtype=np.int64),
               double_array_value=np.asarray(list(value.double_array_value), dtype=float),
               string_array_value=list(value.string_array_value))


class Snapshot:
    """Parameter snapshot of one node: its list/get parameter service clients and progress."""

    def __init__(self, fqn: str):
        self.fqn = fqn
        self.state = 'waiting'       # waiting -> listing -> getting -> done | failed;
        #                              waiting -> none (no parameter services) -> waiting
        self.list_client = None
        self.get_client = None
        self.future = None
        self.names: list = []
        self.attempts = 0
        self.without_services = 0    # discovery periods seen without parameter services


class ParameterSnapshots:
    """The snapshots of every node on the graph, advanced by the recorder's timers."""

    def __init__(self, node, typestore, write_event, publisher=None):
        """
        Ask through ``node``; write with ``write_event(log_ns, data)``.

        ``write_event`` returns False when ``/parameter_events`` is not recorded; ``publisher``
        (std_msgs/String, latched) gets the nodes whose configuration is in the bag.
        """
        self.node = node
        self.typestore = typestore
        self._write_event = write_event
        self._pub_configurations = publisher
        self._snapshots: dict[str, Snapshot] = {}

    def discover(self) -> None:
        """Ask every node on the graph once for its parameters (docs at the top)."""
        from rcl_interfaces.srv import GetParameters, ListParameters
        own = self.node.get_fully_qualified_name()
        present = set()
        for name, namespace in self.node.get_node_names_and_namespaces():
            fqn = namespace.rstrip('/') + '/' + name
            if fqn == own or name.startswith('_'):
                continue
            present.add(fqn)
            snap = self._snapshots.get(fqn)
            if snap is None:
                snap = Snapshot(fqn)
                self._snapshots[fqn] = snap
            if snap.state == 'none' and self._offers_parameters(name, namespace, fqn):
                snap.state = 'waiting'          # its services showed up after all
            if snap.state == 'waiting' and snap.list_client is None:
                snap.list_client = self.node.create_client(ListParameters,
                                                           f'{fqn}/list_parameters')
                snap.get_client = self.node.create_client(GetParameters, f'{fqn}/get_parameters')
            if snap.state == 'waiting' and not snap.list_client.service_is_ready():
                self._look_for_services(snap, name, namespace)
        for fqn, snap in list(self._snapshots.items()):
            if fqn not in present and snap.state not in ('done', 'failed', 'none'):
                self.node.get_logger().warning(f'{fqn} left the graph before answering: its '
                                               f'parameters are not in the bag')
                self._finish(snap, 'failed')
            if snap.state in ('done', 'failed', 'none'):
                if fqn not in present:        # gone: a node of that name later is new
                    del self._snapshots[fqn]
                continue
            snap.attempts += 1                # counted in discovery periods
            if snap.attempts == MAX_SNAPSHOT_ATTEMPTS:
                # never given up while the node is on the graph (a node busy in its constructor
                # answers late; the simulator does not start before its snapshot is here)
                self.node.get_logger().warning(
                    f'{snap.fqn}: no answer from its parameter services yet; still asking '
                    f'(its parameters are not in the bag until it answers)')
        self.advance()

    def _offers_parameters(self, name: str, namespace: str, fqn: str) -> bool:
        """Return whether the graph lists the node's ``list_parameters`` service."""
        from rclpy._rclpy_pybind11 import NodeNameNonExistentError
        try:
            services = self.node.get_service_names_and_types_by_node(name, namespace)
        except NodeNameNonExistentError:
            return True         # the node just left or is not fully known: assume it offers
        return any(service == f'{fqn}/list_parameters' for service, _ in services)

    def _look_for_services(self, snap: Snapshot, name: str, namespace: str) -> None:
        """Count the periods a node shows no parameter services; then record it has none."""
        if self._offers_parameters(name, namespace, snap.fqn):
            snap.without_services = 0
            return
        snap.without_services += 1
        if snap.without_services < NO_SERVICES_PERIODS:
            return
        self._write(snap, [])
        self._finish(snap, 'none')
        self.node.get_logger().info(f'{snap.fqn} offers no parameter services: the bag holds '
                                    f'no configuration of it')
        self._publish_configurations()

    def advance(self) -> None:
        """Take the next step of every snapshot in progress (a service answered)."""
        for snap in list(self._snapshots.values()):
            if snap.state not in ('done', 'failed'):
                self._advance_one(snap)

    def _advance_one(self, snap: Snapshot) -> None:
        from rcl_interfaces.srv import GetParameters, ListParameters
        if snap.state == 'waiting':
            if snap.list_client.service_is_ready() and snap.get_client.service_is_ready():
                snap.future = snap.list_client.call_async(ListParameters.Request(depth=0))
                snap.state = 'listing'
                return
        elif snap.future is not None and snap.future.done():
            response = snap.future.result()
            if response is None:
                snap.state = 'waiting'
            elif snap.state == 'listing':
                snap.names = list(response.result.names)
                snap.future = snap.get_client.call_async(GetParameters.Request(names=snap.names))
                snap.state = 'getting'
                return
            else:
                self._write(snap, response.values)
                self._finish(snap, 'done')
                self._publish_configurations()

    def _publish_configurations(self) -> None:
        """
        Publish the nodes whose configuration is in the bag, latched.

        This message is the simulator's start gate.
        """
        import json

        from std_msgs.msg import String
        done = sorted(f for f, s in self._snapshots.items() if s.state in ('done', 'none'))
        if self._pub_configurations is not None:
            self._pub_configurations.publish(String(data=json.dumps(done)))

    def _finish(self, snap: Snapshot, state: str) -> None:
        snap.state = state
        snap.future = None
        for client in (snap.list_client, snap.get_client):
            if client is not None:
                self.node.destroy_client(client)
        snap.list_client = snap.get_client = None

    def _write(self, snap: Snapshot, values) -> None:
        # serialized with the rosbags typestore: rclpy's serialize_message pads its buffer with
        # up to 8 bytes that rosbags readers reject as a size mismatch
        store = self.typestore
        types = store.types
        value_cls = types['rcl_interfaces/msg/ParameterValue']
        params = [types['rcl_interfaces/msg/Parameter'](name=n, value=copy_parameter_value(
            value_cls, v)) for n, v in zip(snap.names, values)]
        sec, nanosec = divmod(self.node.get_clock().now().nanoseconds, 1_000_000_000)
        event = types['rcl_interfaces/msg/ParameterEvent'](
            stamp=types['builtin_interfaces/msg/Time'](sec=sec, nanosec=nanosec), node=snap.fqn,
            new_parameters=params, changed_parameters=[], deleted_parameters=[])
        if not self._write_event(time.time_ns(), bytes(
                store.serialize_cdr(event, 'rcl_interfaces/msg/ParameterEvent'))):
            return
        if params:
            self.node.get_logger().info(f'parameters of {snap.fqn} recorded ({len(params)})')
