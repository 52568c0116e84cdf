/**
 * The simplest Python backend there is, as an upstream for tests: `http.server`'s threading server with
 * `protocol_version = 'HTTP/1.1'` (keep-alive), which writes a response head and its body in two
 * `send`s with Nagle's algorithm on — the way many Python, Ruby and Java servers write.
 *
 * `GET /small` answers 17 bytes of JSON, `GET /large` 256 KiB; a POST is read whole and answered with
 * its length. Every answer says in `X-Connection-Requests` how many requests its connection has
 * served. The server prints its port on its first line.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';

export const LARGE_BODY_BYTES = 256 * 1024;

const SCRIPT = `
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SMALL = b'{"hello":"world"}'
LARGE = b'x' * ${LARGE_BODY_BYTES}

class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    served = 0

    def answer(self, body):
        self.served += 1
        self.send_response(200)
        self.send_header('Content-Type', 'application/octet-stream')
        self.send_header('X-Connection-Requests', str(self.served))
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.answer(LARGE if self.path.endswith('/large') else SMALL)

    def do_POST(self):
        length = int(self.headers.get('Content-Length', '0'))
        self.rfile.read(length)
        self.answer(('read %d' % length).encode())

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
`;

export interface PythonUpstream {
  readonly port: number;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startPythonUpstream(): Promise<PythonUpstream> {
  const child = spawn('python3', ['-c', SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
  running.add(child);
  const exited = once(child, 'exit').then(() => running.delete(child));
  child.stdout!.setEncoding('utf8');
  const [line] = (await once(child.stdout!, 'data')) as [string];
  const port = Number.parseInt(line, 10);
  if (!Number.isInteger(port)) throw new Error(`python http.server did not start: ${line}`);
  return {
    port,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
