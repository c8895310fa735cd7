// Copyright 2026 dodo_sim developers
// SPDX-License-Identifier: BSD-3-Clause

// A real Foxglove WebSocket client acting on a run: the npm `@foxglove/ws-protocol`
// FoxgloveClient (the protocol library of the Foxglove app), encoding and decoding service calls
// with `@foxglove/rosmsg` + `@foxglove/rosmsg2-serialization` from the schemas the server
// advertises, as the app does; nothing of ours. test/tools/test_live_actions_run.py runs it
// during `dodo hop --live`.
//
//   node foxglove_npm_actions.js URL NAMESPACE APEX_HEIGHT CONNECT_TIMEOUT_S RUN_TIMEOUT_S
//
// Once the server advertises NAMESPACE/simulator/reset and the simulated time (the `time`
// capability) has passed 0.2 s, in order, each waiting for its answer:
//   all       getParameters([]): every parameter of the run
//   set       setParameters NAMESPACE/controller.apex_height = APEX_HEIGHT
//   after     getParameters of it
//   bad       setParameters of it = -1 (out of the node's range)
//   readonly  setParameters NAMESPACE/simulator.integrator = 'event' (read-only)
//   reset     a call of NAMESPACE/simulator/reset (std_srvs/srv/Trigger)
//   flood     as fast as the socket takes them: 20000 zero impulses on NAMESPACE/simulator/push,
//             2000 malformed ones, 2000 messages on a refused channel (NAMESPACE/joint_commands)
//             and 200 malformed reset calls
// then it waits until the simulated time has gone 0.5 s past the end of the flood (the run goes
// on) and prints one JSON document on stdout: {serverInfo, services, parameters: {id: values},
// statuses, reset: {sentAtNs, response}, flood: {...}, times: {...}, errors}.

'use strict';

const { FoxgloveClient } = require('@foxglove/ws-protocol');
const { parse } = require('@foxglove/rosmsg');
const { MessageReader, MessageWriter } = require('@foxglove/rosmsg2-serialization');
const WebSocket = require('ws');

const [url, namespace, apexText, connectTimeoutS, runTimeoutS] = process.argv.slice(2);
const apexHeight = Number(apexText);
const connectDeadline = Date.now() + 1000 * Number(connectTimeoutS);
const resetName = `${namespace}/simulator/reset`;
const apexName = `${namespace}/controller.apex_height`;

const result = {
  serverInfo: null, services: [], parameters: {}, statuses: [], reset: null, flood: null,
  times: { first: null, last: null, floodEnd: null }, errors: [],
};
let client = null;
let timeNs = 0n;
let started = false;
let finished = false;
const waiters = [];        // { test(event) -> bool, resolve }

function finish() {
  if (finished) {
    return;
  }
  finished = true;
  result.times.last = timeNs.toString();
  process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(0));
}

function waitFor(test, what, timeoutMs = 30000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${what} within ${timeoutMs} ms`)),
      timeoutMs);
    waiters.push({ test, resolve: (event) => { clearTimeout(timer); resolve(event); } });
  });
}

function dispatch(kind, event) {
  for (let i = waiters.length - 1; i >= 0; i -= 1) {
    if (waiters[i].test(kind, event)) {
      const [waiter] = waiters.splice(i, 1);
      waiter.resolve(event);
    }
  }
}

function plain(value) {
  if (typeof value === 'bigint') {
    return value.toString();
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

async function parameters(id, send) {
  const answer = waitFor((kind, e) => kind === 'parameterValues' && e.id === id, `${id} values`);
  send();
  result.parameters[id] = (await answer).parameters;
}

async function act() {
  const service = result.services.find((s) => s.name === resetName);
  await parameters('all', () => client.getParameters([], 'all'));
  await parameters('set', () => client.setParameters(
    [{ name: apexName, value: apexHeight, type: 'float64' }], 'set'));
  await parameters('after', () => client.getParameters([apexName], 'after'));
  await parameters('bad', () => client.setParameters(
    [{ name: apexName, value: -1.0, type: 'float64' }], 'bad'));
  await parameters('readonly', () => client.setParameters(
    [{ name: `${namespace}/simulator.integrator`, value: 'event' }], 'readonly'));

  const writer = new MessageWriter(parse(service.request.schema, { ros2: true }));
  const reader = new MessageReader(parse(service.response.schema, { ros2: true }));
  const answer = waitFor((kind, e) => kind === 'response' && e.callId === 1, 'reset response');
  result.reset = { sentAtNs: timeNs.toString() };
  client.sendServiceCallRequest({
    serviceId: service.id, callId: 1, encoding: 'cdr', data: writer.writeMessage({}) });
  const response = await answer;
  result.reset.response = plain(reader.readMessage(response.data));

  // the flood: as fast as the socket takes it
  const floodStart = Date.now();
  const push = client.advertise({
    topic: `${namespace}/simulator/push`, encoding: 'cdr', schemaName: 'geometry_msgs/msg/Vector3' });
  const refused = client.advertise({
    topic: `${namespace}/joint_commands`, encoding: 'cdr', schemaName: 'sensor_msgs/msg/JointState' });
  const vector = new MessageWriter(parse('float64 x\nfloat64 y\nfloat64 z\n', { ros2: true }));
  const zero = vector.writeMessage({ x: 0, y: 0, z: 0 });
  const garbage = new Uint8Array([0, 1, 0, 0, 1, 2, 3]);
  const notCdr = new Uint8Array([9, 9, 9, 9, 1]);
  let failures = 0;
  client.on('serviceCallFailure', () => { failures += 1; });
  for (let k = 0; k < 20000; k += 1) {
    client.sendMessage(push, zero);
    if (k % 10 === 0) {
      client.sendMessage(push, garbage);
      client.sendMessage(refused, garbage);
    }
    if (k % 100 === 0) {
      client.sendServiceCallRequest({
        serviceId: service.id, callId: 1000 + k, encoding: 'cdr', data: notCdr });
    }
  }
  result.times.floodEnd = timeNs.toString();
  const floodEndNs = timeNs;
  // a request answered after every frame of the flood was read by the server
  await parameters('sync', () => client.getParameters([apexName], 'sync'));
  result.flood = { pushes: 20000, malformed: 2000, refused: 2000, calls: 200,
    wallS: (Date.now() - floodStart) / 1000 };
  await waitFor((kind) => kind === 'time' && timeNs > floodEndNs + 500000000n,
    'the simulated time 0.5 s past the flood', 120000);
  result.flood.failures = failures;
  client.close();
  finish();
}

function maybeStart() {
  if (started || timeNs < 200000000n || !result.services.some((s) => s.name === resetName)) {
    return;
  }
  started = true;
  act().catch((error) => { result.errors.push(String(error.stack || error)); finish(); });
}

function connect() {
  const ws = new WebSocket(url, ['foxglove.sdk.v1', FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  let opened = false;
  ws.on('open', () => { opened = true; });
  ws.on('error', (error) => {
    if (!opened && Date.now() < connectDeadline) {
      return;
    }
    result.errors.push(String(error));
  });
  ws.on('close', () => {
    if (!opened && Date.now() < connectDeadline) {
      setTimeout(connect, 100);
    } else {
      finish();
    }
  });
  client = new FoxgloveClient({ ws });
  client.on('serverInfo', (info) => { result.serverInfo = info; });
  client.on('advertise', (channels) => {
    // the server broadcasts its time while someone takes /clock
    for (const channel of channels) {
      if (channel.topic === `${namespace}/clock`) {
        client.subscribe(channel.id);
      }
    }
  });
  client.on('advertiseServices', (services) => {
    result.services.push(...services);
    maybeStart();
  });
  client.on('time', ({ timestamp }) => {
    timeNs = timestamp;
    if (result.times.first === null) {
      result.times.first = timestamp.toString();
    }
    dispatch('time', timestamp);
    maybeStart();
  });
  client.on('parameterValues', (event) => dispatch('parameterValues', event));
  client.on('status', (event) => { result.statuses.push(event); });
  client.on('serviceCallResponse', (event) => dispatch('response', event));
  client.on('serviceCallFailure', (event) => {
    if (event.callId === 1) {
      result.errors.push(`reset failed: ${event.message}`);
    }
  });
  client.on('error', (error) => {
    if (opened) {
      result.errors.push(String(error));
    }
  });
}

setTimeout(() => {
  result.errors.push(`not done within ${runTimeoutS} s`);
  finish();
}, 1000 * Number(runTimeoutS));
connect();
