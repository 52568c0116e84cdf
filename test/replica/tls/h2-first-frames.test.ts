/**
 * What an HTTP/2 server says first, against real nginx on the same h2c port (prior knowledge): its
 * SETTINGS, then a WINDOW_UPDATE that opens the connection's window to 2^31 - 1 (ngx_http_v2_init),
 * which clients that wait for it need before they send a request body.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type SideBySide, startSideBySide } from '../../helpers/side-by-side.ts';

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** An empty SETTINGS frame: length 0, type 4, no flags, stream 0. */
const EMPTY_SETTINGS = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
const SETTINGS = 0x4;
const WINDOW_UPDATE = 0x8;
const SETTING_NAMES: Readonly<Record<number, string>> = {
  1: 'HEADER_TABLE_SIZE',
  2: 'ENABLE_PUSH',
  3: 'MAX_CONCURRENT_STREAMS',
  4: 'INITIAL_WINDOW_SIZE',
  5: 'MAX_FRAME_SIZE',
  6: 'MAX_HEADER_LIST_SIZE',
};

const body = (port: number) => `
    server {
        listen 127.0.0.1:${port} http2;
        location / { return 200 "ok"; }
    }
`;

/** The frames a server sends after the client's preface, until its WINDOW_UPDATE on stream 0. */
function firstFrames(port: number): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(Buffer.concat([PREFACE, EMPTY_SETTINGS])));
    let bytes = Buffer.alloc(0);
    const frames: string[] = [];
    socket.setTimeout(5000, () => {
      socket.destroy();
      resolve([...frames, 'nothing more within 5 s']);
    });
    socket.on('data', (chunk: Buffer) => {
      bytes = Buffer.concat([bytes, chunk]);
      while (bytes.length >= 9) {
        const length = bytes.readUIntBE(0, 3);
        if (bytes.length < 9 + length) break;
        const type = bytes[3]!;
        const flags = bytes[4]!;
        const stream = bytes.readUInt32BE(5) & 0x7fffffff;
        const payload = bytes.subarray(9, 9 + length);
        bytes = bytes.subarray(9 + length);
        if (type === SETTINGS && (flags & 1) === 1) continue; // the ack of ours: when it comes varies
        if (type === WINDOW_UPDATE) {
          frames.push(`WINDOW_UPDATE stream ${stream} +${payload.readUInt32BE(0) & 0x7fffffff}`);
          if (stream === 0) {
            socket.destroy();
            resolve(frames);
            return;
          }
        } else if (type === SETTINGS) {
          const settings: string[] = [];
          for (let at = 0; at + 6 <= payload.length; at += 6)
            settings.push(
              `${SETTING_NAMES[payload.readUInt16BE(at)] ?? payload.readUInt16BE(at)}=${payload.readUInt32BE(at + 2)}`,
            );
          frames.push(`SETTINGS ${settings.sort().join(' ')}`);
        } else frames.push(`frame type ${type}`);
      }
    });
    socket.on('error', reject);
  });
}

describe('HTTP/2: the server’s first frames, replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body);
  });

  after(() => both?.stop());

  test('SETTINGS, then the connection window opened to 2^31 - 1', async () => {
    const fromNginx = await firstFrames(both.nginxPort);
    assert.deepEqual(fromNginx, [
      'SETTINGS INITIAL_WINDOW_SIZE=65536 MAX_CONCURRENT_STREAMS=128 MAX_FRAME_SIZE=16777215',
      `WINDOW_UPDATE stream 0 +${2 ** 31 - 1 - 65_535}`,
    ]);
    assert.deepEqual(await firstFrames(both.replicaPort), fromNginx);
  });
});
