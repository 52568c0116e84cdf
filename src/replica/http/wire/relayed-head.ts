/**
 * A relayed answer's fields as nginx writes them: its upstream module takes the server's
 * `Content-Type` and `Content-Length` into fields of its own, which its header filter writes in its
 * own spelling; every other field keeps the server's (checked against nginx 1.22).
 */

/** Respells `content-type` and `content-length` (any case) in `headers` (`[name, value, …]`), in place. */
export function respellNginxFields(headers: string[]): void {
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name.length === 12) {
      if (name !== 'Content-Type' && name.toLowerCase() === 'content-type') headers[i] = 'Content-Type';
    } else if (name.length === 14) {
      if (name !== 'Content-Length' && name.toLowerCase() === 'content-length') headers[i] = 'Content-Length';
    }
  }
}
