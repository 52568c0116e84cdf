/**
 * HTTP/0.9's simple request (a request line without a version) against real nginx: a GET is answered
 * with the body alone — no status line, no header — and the connection closes, whatever follows it;
 * another method gets the 400 page alone and nginx's error-log line; `$request` is the method and
 * target and `$server_protocol` is empty.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { waitFor } from '../helpers/wait-for.ts';

const body = (port: number) => `
    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        location / { return 200 "body $request|$server_protocol|\\n"; }
    }
`;

const REQUESTS = ['GET /\r\n', 'GET /a?b\n', 'GET /c\r\nextra bytes', 'POST /\r\n', 'HEAD /\r\n'];

/** What the server sent back before it closed, for each request on a connection of its own. */
async function answers(port: number): Promise<string[]> {
  const out: string[] = [];
  for (const request of REQUESTS) {
    out.push(
      await new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(request));
        let text = '';
        socket.setEncoding('latin1').on('data', (chunk: string) => {
          text += chunk;
        });
        socket.on('error', reject);
        // the page's signature names the server
        socket.on('close', () =>
          resolve(`${JSON.stringify(request)}: ${text.replace(/<hr><center>[^<]*<\/center>/, '<hr>')}`),
        );
      }),
    );
  }
  return out;
}

describe('HTTP/0.9 simple requests, replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body, { replicaArgs: ['--error-log-level', 'info'] });
  });

  after(() => both?.stop());

  test('the same bytes back, then the close', { timeout: 60_000 }, async () => {
    const fromNginx = await answers(both.nginxPort);
    assert.equal(fromNginx[0], '"GET /\\r\\n": body GET /||\n');
    assert.match(fromNginx[3]!, /^"POST \/\\r\\n": <html>\r\n<head><title>400 Bad Request<\/title>/);
    assert.deepEqual(await answers(both.replicaPort), fromNginx);
  });

  test('the same error-log lines for the other methods', async () => {
    const methodLines = (text: string) =>
      text
        .split('\n')
        .filter((line) => line.includes('HTTP/0.9'))
        .map((line) => line.replace(/^.*\*\d+ /, '').replace(/, client: [^,]+/, ''));
    const fromNginx = methodLines(both.nginx.errorLog());
    assert.equal(fromNginx.length, 2, fromNginx.join('\n'));
    await waitFor(() => methodLines(both.replica.process.stderr).length >= 2, {
      message: 'the replica to log both lines',
    }).catch(() => undefined);
    assert.deepEqual(methodLines(both.replica.process.stderr), fromNginx);
  });
});
