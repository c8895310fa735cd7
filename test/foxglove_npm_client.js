// Copyright 2026 dodo_sim developers
// SPDX-License-Identifier: BSD-3-Clause

// A real Foxglove WebSocket client: the npm `@foxglove/ws-protocol` FoxgloveClient (the protocol
// library of the Foxglove app), decoding with `@foxglove/rosmsg` (parses the advertised ros2msg
// schema) and `@foxglove/rosmsg2-serialization` (CDR), over the npm `ws` WebSocket (node 20 has
// no global WebSocket). test/tools/test_liveview.py installs these packages and runs this script during
// `dodo hop --live`; nothing of ours is used to speak the protocol or to decode.
//
//   node foxglove_npm_client.js URL TOPIC[,TOPIC...] CONNECT_TIMEOUT_S RUN_TIMEOUT_S
//
// Connects (retrying until CONNECT_TIMEOUT_S), subscribes to the listed topics when they are
// advertised, decodes every message received on them with its channel's schema and, when the
// server closes the connection (end of run) or RUN_TIMEOUT_S passes, prints one JSON document
// on stdout: {serverInfo, channels: [advertised channels without schema text], decoded:
// {topic: [{logTimeNs, message}]}, errors: [...]}.

'use strict';

const { FoxgloveClient } = require('@foxglove/ws-protocol');
const { parse } = require('@foxglove/rosmsg');
const { MessageReader } = require('@foxglove/rosmsg2-serialization');
const WebSocket = require('ws');

const [url, topicList, connectTimeoutS, runTimeoutS] = process.argv.slice(2);
const wanted = new Set(topicList.split(','));
const connectDeadline = Date.now() + 1000 * Number(connectTimeoutS);

const result = { serverInfo: null, channels: [], decoded: {}, errors: [] };
const readers = new Map();        // subscription id -> { topic, reader }
let finished = false;

// Typed arrays (float64[] fields) and bigints to plain JSON.
function plain(value) {
  if (ArrayBuffer.isView(value)) {
    return Array.from(value);
  }
  if (typeof value === 'bigint') {
    return value.toString();
  }
  if (Array.isArray(value)) {
    return value.map(plain);
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v)]));
  }
  return value;
}

function finish() {
  if (finished) {
    return;
  }
  finished = true;
  // exit once the pipe has taken it all (writes to a pipe are asynchronous in node)
  process.stdout.write(JSON.stringify(result) + '\n', () => process.exit(0));
}

function connect() {
  // The Foxglove app offers both names; foxglove-sdk >= 0.30 accepts only the newer one.
  const ws = new WebSocket(url, ['foxglove.sdk.v1', FoxgloveClient.SUPPORTED_SUBPROTOCOL]);
  let opened = false;
  ws.on('open', () => { opened = true; });
  ws.on('error', (error) => {
    if (!opened && Date.now() < connectDeadline) {
      return;                     // not listening yet: the 'close' that follows retries
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
  const client = new FoxgloveClient({ ws });
  client.on('serverInfo', (info) => { result.serverInfo = info; });
  client.on('advertise', (channels) => {
    for (const channel of channels) {
      const { schema, ...rest } = channel;
      result.channels.push({ ...rest, schemaLength: schema.length });
      if (!wanted.has(channel.topic)) {
        continue;
      }
      try {
        const reader = new MessageReader(parse(schema, { ros2: true }));
        const id = client.subscribe(channel.id);
        readers.set(id, { topic: channel.topic, reader });
        result.decoded[channel.topic] = [];
      } catch (error) {
        result.errors.push(`${channel.topic}: ${error}`);
      }
    }
  });
  client.on('message', ({ subscriptionId, timestamp, data }) => {
    const entry = readers.get(subscriptionId);
    if (entry === undefined) {
      return;
    }
    try {
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      result.decoded[entry.topic].push({
        logTimeNs: timestamp.toString(), message: plain(entry.reader.readMessage(bytes)) });
    } catch (error) {
      result.errors.push(`${entry.topic}: ${error}`);
    }
  });
  client.on('error', (error) => {
    if (opened) {
      result.errors.push(String(error));
    }
  });
}

setTimeout(() => {
  result.errors.push(`no end of run within ${runTimeoutS} s`);
  finish();
}, 1000 * Number(runTimeoutS));
connect();
