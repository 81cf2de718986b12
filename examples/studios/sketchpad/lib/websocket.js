// A minimal RFC 6455 WebSocket endpoint that echoes text messages.
// Enough for the page's round-trip meter: handshake, masked client frames,
// text echo, ping/pong and close. Fragmented and binary messages are refused.
'use strict';

const crypto = require('node:crypto');

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11'; // fixed by RFC 6455 §1.3
const MAX_PAYLOAD = 60 * 1024; // an echo meter needs no more (and it fits a 16-bit length)

/** Handles an HTTP `upgrade` event; returns false when it is not a WebSocket request. */
function acceptEcho(req, socket) {
  const key = req.headers['sec-websocket-key'];
  const isWs = (req.headers.upgrade || '').toLowerCase() === 'websocket';
  if (!isWs || !key || req.headers['sec-websocket-version'] !== '13') return false;
  const accept = crypto.createHash('sha1').update(key + GUID).digest('base64');
  socket.write(
    'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
      `Sec-WebSocket-Accept: ${accept}\r\n\r\n`,
  );
  socket.setNoDelay(true);
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk) => {
    buffered = Buffer.concat([buffered, chunk]);
    let frame;
    while (!socket.writableEnded && (frame = readFrame(buffered))) {
      buffered = buffered.subarray(frame.length);
      onFrame(socket, frame);
    }
    if (buffered.length > MAX_PAYLOAD + 14) close(socket, 1009);
  });
  socket.on('error', () => socket.destroy());
  return true;
}

/** Parses one complete frame from the front of `buf`, or returns null if more bytes are needed. */
function readFrame(buf) {
  if (buf.length < 2) return null;
  const fin = (buf[0] & 0x80) !== 0;
  const opcode = buf[0] & 0x0f;
  const masked = (buf[1] & 0x80) !== 0;
  let len = buf[1] & 0x7f;
  let offset = 2;
  if (len === 126) {
    if (buf.length < 4) return null;
    len = buf.readUInt16BE(2);
    offset = 4;
  } else if (len === 127) {
    if (buf.length < 10) return null;
    const big = buf.readBigUInt64BE(2);
    len = big > BigInt(MAX_PAYLOAD) ? Infinity : Number(big);
    offset = 10;
  }
  if (len > MAX_PAYLOAD) return { fin, opcode, masked, payload: null, length: buf.length };
  const maskLen = masked ? 4 : 0;
  if (buf.length < offset + maskLen + len) return null;
  const payload = Buffer.from(buf.subarray(offset + maskLen, offset + maskLen + len));
  if (masked) {
    const mask = buf.subarray(offset, offset + 4);
    for (let i = 0; i < payload.length; i++) payload[i] ^= mask[i & 3];
  }
  return { fin, opcode, masked, payload, length: offset + maskLen + len };
}

function onFrame(socket, { fin, opcode, masked, payload }) {
  if (payload === null) return close(socket, 1009); // too big
  if (!masked) return close(socket, 1002); // clients must mask (RFC 6455 §5.1)
  if (opcode === 0x1 && fin) return send(socket, 0x1, payload); // text: echo it
  if (opcode === 0x9) return send(socket, 0xa, payload); // ping -> pong
  if (opcode === 0xa) return; // unsolicited pong
  if (opcode === 0x8) return close(socket, 1000);
  close(socket, 1003); // binary or fragmented: not supported here
}

/** Writes one unmasked, unfragmented server frame. */
function send(socket, opcode, payload) {
  if (socket.destroyed || socket.writableEnded) return;
  let header;
  if (payload.length < 126) {
    header = Buffer.from([0x80 | opcode, payload.length]);
  } else {
    header = Buffer.alloc(4);
    header[0] = 0x80 | opcode;
    header[1] = 126;
    header.writeUInt16BE(payload.length, 2); // MAX_PAYLOAD keeps it within 16 bits
  }
  socket.write(Buffer.concat([header, payload]));
}

function close(socket, code) {
  const body = Buffer.alloc(2);
  body.writeUInt16BE(code, 0);
  send(socket, 0x8, body);
  socket.end();
}

module.exports = { acceptEcho };
